// The compiled twin of rules.py (SeventhRules and the modules it mixes in): legality, chance
// and transitions of one 7th-edition scenario over the byte states of state.h. rules.cc holds
// the structure, the legal actions and the chance tables; transitions.cc the handlers, one per
// stage, as SeventhRules._on_stage; views.cc the observation (views.py's Observer).
#pragma once

#include <string>
#include <vector>

#include "game.h"
#include "odds.h"
#include "scenario.h"
#include "state.h"
#include "table_cache.h"

namespace psygym {
namespace seventh {

class SeventhGame : public Game {
 public:
  explicit SeventhGame(ScenarioNumbers numbers);

  std::size_t state_size() const override { return static_cast<std::size_t>(layout_.size); }
  std::string check_state(const uint8_t* s) const override;
  void initial_state(uint8_t* out) const override;
  int current_player(const uint8_t* s) const override;
  void legal_actions(const uint8_t* s, std::vector<int32_t>* out) const override;
  void chance_outcomes(const uint8_t* s, std::vector<Outcome>* out) const override;
  void apply(const uint8_t* s, int32_t action, uint8_t* out) const override;
  void returns(const uint8_t* s, double out[2]) const override;
  void horizon(const uint8_t* s, int32_t out[2]) const override;        // horizon.cc
  void phase_horizon(const uint8_t* s, int32_t out[2]) const override;  // horizon.cc
  bool has_horizon() const override { return true; }
  // SeventhRules.sample_chance: ChanceTable.sample over the node's table (one uniform number
  // even for a single outcome, unlike the default's weighted_choice).
  int32_t sample_chance(const uint8_t* s, Pcg64& rng,
                        std::vector<Outcome>& scratch) const override;
  // views.py's Observer (views.cc).
  std::size_t observation_size() const override;
  void observe(const uint8_t* s, int player, float* out) const override;

 private:
  // Action layout (actions.py's ActionLayout).
  int cast_action(int c, int p, int t) const { return kCast + (c * n_.powers + p) * n_.units + t; }
  static constexpr int kCast = 1;
  int dice_base_ = 0, deny_base_ = 0, disc_base_ = 0, swap_base_ = 0;

  // Structure and facts (rules.cc).
  int round_of(int phase) const { return phase / 2 < last_round_ ? phase / 2 : last_round_; }
  bool in_range(int a, int b, double range, int round) const {
    return n_.dist(round, a, b) <= range;
  }
  int living_ml(const ConstState& s, int side) const;
  bool can_cast(const ConstState& s, int side) const;
  bool both_sides_alive(const ConstState& s) const;
  // The legal casts into `out`, ascending; with `out` null, whether there is one.
  bool legal_casts(const ConstState& s, std::vector<int32_t>* out) const;
  bool has_legal_cast(const ConstState& s) const { return legal_casts(s, nullptr); }
  bool discipline_open(const ConstState& s, int unit, int discipline) const;
  int open_disciplines(const ConstState& s, int unit, int* first) const;  // returns the count
  // The enemy units a nova of `caster` reaches this round (rules.nova_targets: alive too).
  const std::vector<int>& reach(const ConstState& s, int caster, int power) const {
    return reach_[(static_cast<std::size_t>(round_of(s.phase())) * n_.units + caster) *
                      n_.powers + power];
  }
  int deny_threshold(const ConstState& s) const;
  bool doubles_peril(int caster, int power) const;
  const Table& table(const ConstState& s) const;
  const Table& effect_table(const ConstState& s, int target) const;
  Table build_effect(int power, int caster, int target, int wounds, bool surge) const;
  Table build_removed_hits(int unit, int wounds) const;

  // Transitions (transitions.cc), each named after the reference's method.
  void on_select(const Draft& d, int a) const;
  void on_phase_roll(const Draft& d, int a) const;
  void on_gen_roll(const Draft& d, int a) const;
  void on_ld_test(const Draft& d, int a) const;
  void on_purge(const Draft& d, int a) const;
  void on_drain(const Draft& d, int a) const;
  void on_deny_roll(const Draft& d, int a) const;
  void on_effect(const Draft& d, int a) const;
  void next_generation(const Draft& d, int after) const;
  void begin_pick(const Draft& d) const;
  void finish_pick(const Draft& d, bool swap) const;
  void focus(const Draft& d) const;
  void start_phase(const Draft& d, int phase) const;
  void settle_select(const Draft& d) const;
  void cast_rolled(const Draft& d, int successes, bool perils) const;
  void perils(const Draft& d, int roll) const;
  void perils_outcome(const Draft& d, int outcome) const;
  void after_perils(const Draft& d) const;
  void deny(const Draft& d, int dice) const;
  void manifest(const Draft& d) const;
  void next_target(const Draft& d) const;
  void score(const Draft& d, int side, double value) const;
  void wound(const Draft& d, int unit, int amount) const;
  void heal(const Draft& d, int unit) const;

  ScenarioNumbers n_;
  Layout layout_;
  int last_round_ = 0;
  std::vector<std::vector<int>> side_units_;
  std::vector<std::vector<int>> side_psykers_;  // the units with a psyker profile, per side
  // Per round, caster and power: candidate targets (rules._candidates) and, for a nova, the
  // enemy units in range (rules._cast_plan's reach); index (round * U + c) * R + p.
  std::vector<std::vector<int>> candidates_;
  std::vector<std::vector<int>> reach_;
  std::vector<int> deny_needs_;  // [caster * U + t] (rules._deny_needs)
  std::vector<int> value_powers_;  // the powers in force (effect kValue): value_powers_[rank]
  Table d6_, d3_;
  std::vector<Table> ld_tables_;  // per unit
  std::vector<double> uniform_;   // uniform_[n] = 1 / n
  std::vector<uint8_t> initial_;
  // The observation's fixed entries and its ratios, as float32 (views.cc): a player's vector
  // before the state is read, tenths (pools, dice, successes), per phase the round and the
  // phases left, per unit every wound fraction up to kWoundFractions wounds.
  void build_views();
  static constexpr int kWoundFractions = 1024;
  std::vector<float> blank_[2];
  std::vector<float> tenths_, phase_round_, phases_left_;
  std::vector<std::vector<float>> wound_fraction_;
  std::vector<int> in_force_entry_;  // the entry of each in-force bit (rank, unit, owner)
  TableCache tables_;  // the tables built once per key (casting, deny, hits, effects)
};

}  // namespace seventh
}  // namespace psygym
