// The 2nd-edition psychic phase as a compiled game: the twin of psygym/editions/second/rules.py
// (SecondRules, 2E-1 .. 2E-8), node for node. Each rule section is the twin of its Python module:
// rules.cc (rules.py: the API, the chance tables, the transition loop _settle), psykers.cc
// (psykers.py, 2E-1), deck.cc (deck.py, 2E-2, 2E-3), turns.cc (turns.py, 2E-4), casting.cc
// (casting.py, 2E-5.1, 2E-5.3), responses.cc (responses.py, 2E-5.2, 2E-7 rolls), effects.cc
// (effects.py, 2E-6 .. 2E-8), observation.cc (observation.py), check.cc (the state check).
// The action layout is actions.py's: PASS 0, Energy Drain 1, response cards 2..5, Psychic
// Duel 6 + i P + k, end a power in play end_base + i M + j, Nullify one nullify_base + i M + j,
// cast cast_base + ((i M + j)(U + 1) + t) 5 + pay.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "game.h"
#include "scenario.h"
#include "state.h"
#include "tables.h"

namespace psygym {
namespace second {

// actions.py's constants.
constexpr int kPass = 0;
constexpr int kEnergyDrain = 1;
constexpr int kNullifyAction = 2;
constexpr int kDestroyAction = 3;
constexpr int kReflectionAction = 4;
constexpr int kDaemonicAction = 5;
constexpr int kDuelBase = 6;
constexpr int kPayOptions = 5;
constexpr int kPayUltimate = 4;

class SecondGame : public Game {
 public:
  explicit SecondGame(ScenarioSpec spec);

  std::size_t state_size() const override { return layout_.size; }
  std::string check_state(const uint8_t* s) const override;  // check.cc
  void initial_state(uint8_t* out) const override;            // psykers.cc
  int current_player(const uint8_t* s) const override;
  void legal_actions(const uint8_t* s, std::vector<int32_t>* out) const override;
  void chance_outcomes(const uint8_t* s, std::vector<Outcome>* out) const override;
  void apply(const uint8_t* s, int32_t action, uint8_t* out) const override;
  void returns(const uint8_t* s, double out[2]) const override;
  std::size_t observation_size() const override;                          // observation.cc
  void observe(const uint8_t* s, int player, float* out) const override;  // observation.cc
  int32_t sample_chance(const uint8_t* s, Pcg64& rng,
                        std::vector<Outcome>& scratch) const override;

 private:
  // A state being built in place: its header, its bytes, and its effects in a buffer long
  // enough for every effect a transition lists at once (the upkeep of every power in play).
  struct Work {
    Header h;
    uint8_t* b;
    EffectRec* fx;
    int n_fx;
  };

  // The bytes of a state (accessors of state.h's layout).
  uint8_t* pile(uint8_t* b, int which) const { return b + layout_.cards + kCards * which; }
  const uint8_t* pile(const uint8_t* b, int which) const {
    return b + layout_.cards + kCards * which;
  }
  int wounds(const uint8_t* b, int unit) const {
    return get_u16(b, layout_.wounds + 2 * static_cast<std::size_t>(unit));
  }
  int power_in(const uint8_t* b, int psyker, int slot) const {
    const std::size_t at = layout_.powers + static_cast<std::size_t>(psyker * sc_.n_slots + slot);
    return static_cast<int8_t>(b[at]);
  }
  bool used(const uint8_t* b, int psyker) const { return get_bit(b, layout_.used, psyker); }
  const UnitData& unit(int u) const { return sc_.units[static_cast<std::size_t>(u)]; }
  const PsykerData& psyker(int i) const { return sc_.psykers[static_cast<std::size_t>(i)]; }
  const PowerData& power(int k) const { return sc_.powers[static_cast<std::size_t>(k)]; }
  const EffectSpec& effect_spec(int k, int force) const { return power(k).effect[force]; }
  int active(int phase) const { return (sc_.first_player + phase) % 2; }
  // facts.current_player over a header and the effects waiting.
  int player_of(const Header& h, int n_effects) const;

  // The state `b` to work on, its waiting effects copied into `buffer` (kMaxUnits records: the
  // constructor bounds the effects that can wait at once by the units).
  Work load_work(uint8_t* b, EffectRec* buffer) const;
  void store_work(Work& w) const;

  // rules.py: the chance tables and the transition loop.
  void outcomes_of(const Header& h, const uint8_t* b, const EffectRec* first,
                   std::vector<Outcome>* out) const;
  void dispatch(Work& w, int action) const;
  void apply_chance(Work& w, int outcome) const;
  void settle(Work& w) const;

  // psykers.py (2E-1).
  int next_draw(const uint8_t* b) const;
  int usable_psykers(const uint8_t* b) const;
  // The powers psyker i may hold: its draw pool (2E-1.1), or its fixed cards.
  std::vector<int> holdable(int i) const;
  bool alive_psyker(const uint8_t* b, int i) const { return wounds(b, psyker(i).unit) > 0; }
  void setup_outcomes(const uint8_t* b, std::vector<Outcome>* out) const;
  void draw_power(Work& w, int outcome) const;

  // deck.py (2E-2, 2E-3).
  int flux_dice(const uint8_t* b) const;
  void deal_outcomes(const uint8_t* b, std::vector<Outcome>* out) const;
  void deal(Work& w, int card) const;
  void flux(Work& w, int outcome) const;

  // turns.py (2E-4).
  bool turn_actions(const Header& h, const uint8_t* b, std::vector<int32_t>* out) const;
  void apply_turn(Work& w, int action) const;
  void play_card(Work& w, int player, int card) const;
  void pass(Work& w) const;
  void end_phase(Work& w) const;

  // casting.py (2E-5.1, 2E-5.3).
  void cast(Work& w, int action) const;
  void finish_pending(Work& w, bool reflected, bool stopped) const;

  // responses.py (2E-5.2, 2E-7).
  std::pair<int, bool> nullify_need(const uint8_t* b, int side, int caster) const;
  void response_actions(const Header& h, const uint8_t* b, std::vector<int32_t>* out) const;
  void apply_response(Work& w, int action) const;
  void apply_roll(Work& w, int outcome) const;
  void roll_outcomes(const Header& h, const uint8_t* b, std::vector<Outcome>* out) const;

  // effects.py (2E-6 .. 2E-8).
  std::pair<int, int> effect_units(const EffectRec& e) const;
  bool rolls_dice(const uint8_t* b, const EffectRec& e) const;
  void add_effects(Work& w, int psyker, int power, int force, int target, bool reflected) const;
  void pop_effect(Work& w) const;
  void wound(Work& w, int unit, int amount) const;
  void effect_outcomes(const uint8_t* b, const EffectRec& e, std::vector<Outcome>* out) const;
  const CapTable& attack_table(int power, int force, int attacker, int victim) const;
  void build_tables();

  ScenarioSpec sc_;
  Layout layout_;
  int end_base_ = 0, nullify_base_ = 0, cast_base_ = 0, num_actions_ = 0;
  int work_effects_ = 0;  // the longest list of effects a transition holds at once
  // Exact tables, built once (effects.cc, responses.cc, deck.cc).
  std::vector<std::vector<Outcome>> flux_;      // by dice, 1..kMaxFluxDice
  std::vector<std::vector<Outcome>> nullify_;   // by need * 2 + reroll
  std::vector<std::vector<Outcome>> daemonic_;  // by psyker
  std::vector<DuelTable> duel_roll_;            // by (ML - 1) * 4 + (enemy ML - 1)
  std::vector<CapTable> mortal_;                // by power * 4 + force
  std::vector<CapTable> duel_effect_;           // by ((power * 4 + force) * 4 + ML - 1) * 4 + ..
  // A deal's probabilities k / n (deck.cc) by n * (most_of_a_kind_ + 1) + k for every deck size
  // n and count k the scenario's deck allows; empty for a deck too large to tabulate.
  void build_deal_ratios();
  // sample_chance at a deal from the table: the draw of table_index (random.h) over
  // deal_outcomes, the same sums in the same order, without building the list.
  int32_t sample_deal(const uint8_t* b, Pcg64& rng) const;
  // sample_chance at a set-up draw: table_index over setup_outcomes without the list.
  int32_t sample_setup(const uint8_t* b, Pcg64& rng) const;
  // The observation's ratios as float32 (observation.cc): per phase byte the round and phase
  // fractions, per unit each wound fraction (units of at most kWoundFractions wounds), and
  // each player's blank vector (zeros, who owns each unit and psyker, ML, hood).
  void build_views();
  static constexpr int kWoundFractions = 1024;
  std::vector<float> round_fraction_, phase_fraction_;
  std::vector<float> blank_[2];  // a player's vector before the state is read
  std::vector<std::vector<float>> wound_fraction_;
  static constexpr int kDealRatios = 16384;
  int most_of_a_kind_ = 0;
  std::vector<double> deal_ratio_;
  // Attack tables by ((power * 4 + force) * U + attacker) * U + victim, made on first use.
  std::unique_ptr<std::atomic<const CapTable*>[]> attacks_;
  mutable std::mutex attack_mutex_;
  mutable std::vector<std::unique_ptr<CapTable>> attack_store_;
};

std::unique_ptr<Game> make_second(const ScenarioData& data);

}  // namespace second
}  // namespace psygym
