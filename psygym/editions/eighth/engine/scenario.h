// The scenario as the compiled rules use it: the numbers the codec (engine/__init__.py) encodes
// from a validated EighthRules (spec.py's units, powers and game settings, with the geometry of
// rules.py already resolved into candidate lists), read and range-checked once.
#pragma once

#include <cstdint>
#include <vector>

#include "effects.h"
#include "game.h"

namespace psygym {
namespace eighth {

// Capacities of the compiled state (the codec refuses larger scenarios, naming the limit).
constexpr int kMaxUnits = 120;    // int8 unit indices; psygym.scenario allows 2 x 30
constexpr int kMaxPowers = 120;   // int8 power indices; psygym.scenario allows 100
constexpr int kMaxWounds = 65535; // uint16 wound pools; psygym.scenario allows 100 x 100
constexpr int kMaxRounds = 250;   // uint8 battle rounds; psygym.scenario allows 20
constexpr int kMaxLeadership = 30;
constexpr int kFormat = 2;        // the codec's format version (FORMAT in engine/__init__.py)

// What a manifested power does (spec.Effect): exactly one kind.
enum EffectKind : int {
  kValueEffect = 0,
  kMortalEffect = 1,
  kRolloffEffect = 2,
  kAttackEffect = 3,
};

struct UnitData {
  int side = 0;                // rules.side_of
  bool psyker = false;         // spec.Unit.psyker (8E-1.2)
  int max_wounds = 1;          // rules.max_wounds: models x wounds (8E-1.1)
  int per_model = 1;           // spec.Unit.wounds: wounds of one model (attack damage, 8E-7.3)
  int manifest = 0;            // spec.Unit.manifest (8E-1.2)
  int full_deny = 0;           // deny attempts at the start of a phase, 0 for non-psykers
  int leadership = 0;          // for roll-off effects
  double value_per_wound = 0;  // score of one wound (8E-8.2)
  std::vector<int> known;                 // rules.known: power indices it knows
  std::vector<std::vector<int>> targets;  // rules.targets[c][p], in preference order
  std::vector<int> deny_candidates;       // rules.deny_candidates (8E-5.1)
  std::vector<int> blast_candidates;      // rules.blast_candidates (8E-6.2)
};

struct PowerData {
  int warp_charge = 0;  // 8E-4.1
  int escalation = 0;   // 8E-4.2
  bool repeatable = false;
  bool chosen_target = false;  // the caster chooses among targets (rules.PowerDef)
  int kind = kValueEffect;
  double value = 0;     // value effects, after game.power_values (8E-7.3)
  DiceExpr mortal;      // mortal_wounds (8E-7.2)
  int boosted_at = 0;   // 0: none
  DiceExpr boosted;
  DiceExpr dice, win, tie;  // rolloff
  bool difference = false;
  DiceExpr hits, damage;    // attack
  std::vector<Wide> unsaved_num, unsaved_den;  // attack: unsaved chance against each unit
};

struct ScenarioSpec {
  int n_units = 0;
  int n_powers = 0;
  int first_player = 0;
  int battle_rounds = 1;
  int phase_limit = 0;  // 0: none
  DiceExpr perils;      // game.perils_mortal_wounds (8E-6.1)
  DiceExpr blast;       // game.perils_blast_mortal_wounds (8E-6.2)
  std::vector<int> side_psykers[2];  // rules.side_psykers
  std::vector<UnitData> units;
  std::vector<PowerData> powers;
};

// The scenario in `data`, or EngineError(kScenario) naming the first number out of range.
ScenarioSpec read_scenario(const ScenarioData& data);

}  // namespace eighth
}  // namespace psygym
