// Rogue Trader psionics as a compiled game: the twin of psygym/editions/rogue_trader/rules.py
// (RT-1 .. RT-6), node for node. The action layout is actions.py's (REST 0, END 1, ability
// 2 + a, target 2 + A + t, number 2 + A + N + k), the chance outcomes and their order are
// rules.py's, and nodes that offer one action or one outcome are advanced at once (rules.py's
// _settle). The secret bids (RT-3.4) are two decisions in a row, as the reference has them.
//
// Each rule section sits where the reference keeps it: generation.cc (RT-1, generation.py),
// casting.cc (RT-2, casting.py), bids.cc (RT-3, bids.py), effects.cc (RT-3.1, RT-4,
// effects.py), turns.cc (RT-5, RT-6, turns.py), views.cc (the observation, views.py),
// check.cc (which bytes are a state), rules.cc (the API, the chance tables and the loop).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chances.h"
#include "game.h"
#include "scenario.h"
#include "state.h"

namespace psygym {
namespace rogue_trader {

constexpr int kRest = 0;         // actions.REST
constexpr int kEnd = 1;          // actions.END
constexpr int kAbilityBase = 2;  // actions.ABILITY_BASE

class RogueTraderGame : public Game {
 public:
  explicit RogueTraderGame(ScenarioSpec spec);

  std::size_t state_size() const override { return layout_.size; }
  std::string check_state(const uint8_t* s) const override;  // check.cc
  void initial_state(uint8_t* out) const override;
  int current_player(const uint8_t* s) const override;
  void legal_actions(const uint8_t* s, std::vector<int32_t>* out) const override;
  void chance_outcomes(const uint8_t* s, std::vector<Outcome>* out) const override;
  void apply(const uint8_t* s, int32_t action, uint8_t* out) const override;
  void returns(const uint8_t* s, double out[2]) const override;
  std::size_t observation_size() const override { return obs_size_; }
  void observe(const uint8_t* s, int player, float* out) const override;  // views.cc
  // turns.horizon: (battle round, player turn within it), one unit of search per turn.
  void horizon(const uint8_t* s, int32_t out[2]) const override;
  bool has_horizon() const override { return true; }
  // bids.simultaneous_info (bids.cc): the two secret bids as a matrix game (RT-3.4).
  bool simultaneous(const uint8_t* s, std::vector<int32_t>* rows,
                    std::vector<int32_t>* cols) const override;
  bool has_simultaneous() const override { return true; }
  // turns.rest_bounds (turns.cc): a side of the bounds is 0 where nothing left can move the
  // score that way (RT-6.2).
  void rest_bounds(const uint8_t* s, double out[2]) const override;

 private:
  // A state being built in place: its header, and its bytes for the unit records.
  struct Work {
    Header h;
    uint8_t* b;
  };
  // A chance node's outcomes: a cached table, or `own` filled for this node.
  struct Table {
    const std::vector<Outcome>* cached = nullptr;
    std::vector<Outcome> own;
    const std::vector<Outcome>& outcomes() const { return cached ? *cached : own; }
  };

  const UnitData& unit_data(int i) const { return sc_.units[static_cast<std::size_t>(i)]; }
  const AbilityData& ability_data(int a) const {
    return sc_.abilities[static_cast<std::size_t>(a)];
  }
  const std::vector<int>& cands(int u, int a) const {
    return unit_data(u).cands[static_cast<std::size_t>(a)];
  }
  bool is_cand(int u, int a, int t) const {
    return (unit_data(u).cand_bits[static_cast<std::size_t>(a)] >> t) & 1;
  }
  Unit unit(const uint8_t* b, int i) const { return load_unit(b, layout_, i); }
  void put(Work& w, int i, const Unit& u) const { store_unit(u, w.b, layout_, i); }
  // facts.will_power (RT-4.7).
  int will_power(const uint8_t* b, int t) const {
    return unit_data(t).will_power + unit(b, t).wp_bonus;
  }

  // rules.py: the chance table of a node and the loop over single-choice nodes.
  void chance_table(const Header& h, const uint8_t* b, Table* out) const;
  void resolve_table(const Header& h, const uint8_t* b, Table* out) const;
  void binary(int s36, std::vector<Outcome>* out) const;
  void step(Work& w, int a) const;
  void settle(Work& w) const;
  void build_initial(uint8_t* out) const;

  // casting.py (RT-2): legality, then a psyker's choice, the test and what follows.
  // Where legal() lists actions: into a vector, or only counted (stopping at `limit`).
  struct Sink {
    std::vector<int32_t>* out = nullptr;
    int limit = 1 << 30;
    int count = 0;
    int32_t first = -1;
    bool push(int32_t a) {  // false once `limit` actions are found
      if (count++ == 0) first = a;
      if (out) out->push_back(a);
      return count < limit;
    }
  };
  void legal(const Header& h, const uint8_t* b, Sink& sink) const;
  bool usable(const uint8_t* b, int u, int a) const;
  bool valid(const uint8_t* b, int u, int a, int t) const;
  int max_amount(const Header& h, const uint8_t* b) const;
  bool can_act(const uint8_t* b, int u) const;
  int cost(const Header& h) const;
  void choose(Work& w, int a) const;
  void after_target(Work& w, int ability, int target, int amount) const;
  void attempt(Work& w, int ability, int target, int amount) const;
  void tested(Work& w, bool works) const;
  void after_ability(Work& w) const;

  // bids.py (RT-3).
  bool can_augment(const uint8_t* b, int t) const;
  int attack_cap(const Header& h, const uint8_t* b) const;
  int save_cap(const Header& h, const uint8_t* b) const;
  void bids_in(Work& w, int j) const;

  // effects.py (RT-3.1, RT-4).
  void resolve(Work& w, int outcome) const;
  void take_effect(Work& w, int outcome) const;
  void wound(Work& w, int t, int wounds) const;
  static void credit(Work& w, int side, double amount);

  // turns.py (RT-5, RT-6).
  void begin_turn(Work& w, int turn, int p) const;
  bool close_turn(Work& w, int* next_turn) const;
  void end_turn(Work& w) const;
  void recover_from(Work& w, int start) const;
  void recovered(Work& w, bool ok) const;
  void next_actor(Work& w, int after) const;
  int first_actor(const uint8_t* b, int active, int after) const;
  static void game_over(Work& w);
  // turns.score_moves for every (psyker, ability): (target, way) pairs, into moves_.
  void build_moves();
  std::size_t move_slot(int u, int a) const {
    return static_cast<std::size_t>(u) * static_cast<std::size_t>(sc_.n_abilities) +
           static_cast<std::size_t>(a);
  }
  const std::vector<std::pair<int, int>>& moves(int u, int a) const {
    return moves_[move_slot(u, a)];
  }

  // generation.py (RT-1).
  void setup_from(Work& w, int u, bool count_stage) const;
  void set_level(Work& w, int level) const;
  void set_count(Work& w, int count) const;
  void draw(Work& w, int a) const;
  int draw_pool(const uint8_t* b, int u, std::vector<Outcome>* out) const;

  // check.cc: the phase's own conditions on an otherwise well-formed state.
  std::string check_phase(const Header& h, const uint8_t* s) const;

  ScenarioSpec sc_;
  Layout layout_;
  std::size_t obs_size_ = 0, unit_size_ = 0, units_offset_ = 0;
  std::vector<double> over36_;     // float(Fraction(k, 36)) for k = 0 .. 36
  std::vector<double> one_over_;   // float(Fraction(1, m)) for a draw among m abilities
  std::vector<std::vector<Outcome>> level_outcomes_, count_outcomes_;  // by unit
  std::vector<std::vector<int>> wound36_;  // [ability][unit * 5 + aura]: p36 of an attack
  std::vector<std::vector<std::pair<int, int>>> moves_;  // [unit * A + ability]: score_moves
  mutable std::mutex resolve_mutex_;
  mutable std::unordered_map<uint64_t, std::vector<Outcome>> resolve_cache_;
};

std::unique_ptr<Game> make_rogue_trader(const ScenarioData& data);

}  // namespace rogue_trader
}  // namespace psygym
