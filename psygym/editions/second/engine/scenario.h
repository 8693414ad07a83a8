// The scenario as the compiled rules use it: the twin of facts.py's SecondFacts, read from the
// numbers the codec (engine/__init__.py) encodes from a validated SecondRules (spec.py's units,
// psykers and rule settings, data.py's powers and deck, with the geometry of casting.py already
// resolved into target lists), range-checked once.
#pragma once

#include <cstdint>
#include <vector>

#include "game.h"
#include "state.h"
#include "tables.h"

namespace psygym {
namespace second {

// Capacities of the compiled state (the codec refuses larger scenarios, naming the limit).
constexpr int kMaxUnits = 60;        // uint8 unit indices; psygym.scenario allows 2 x 30
constexpr int kMaxPsykers = 60;      // every unit a psyker at most
constexpr int kMaxSlots = 4;         // spec.MAX_POWER_CARDS
constexpr int kMaxPowers = 120;      // int8 power indices; psygym.scenario allows 100
constexpr int kMaxWounds = 65535;    // uint16 wound pools; psygym.scenario allows 100 x 100
constexpr int kMaxRounds = 100;      // uint8 phases; psygym.scenario allows 20 rounds
constexpr int kMaxCardCount = 100;   // uint8 card counts; data.DeckCounts allows 100 a kind
constexpr int kMaxFluxDice = 6;      // spec.RuleSettings.warp_flux_dice
constexpr int kMaxResponses = 8;     // spec.RuleSettings.responses_per_power
constexpr int kFormat = 1;           // the codec's format version (FORMAT in engine/__init__.py)

// What a power does when paid a given Force (data.py's effect vocabulary, 2E-6).
enum EffectKind : int {
  kNoEffect = 0,  // no effect for this Force
  kAttack = 1,    // data.AttackEffect
  kMortal = 2,    // data.MortalEffect
  kValue = 3,     // data.ValueEffect
  kDuel = 4,      // data.DuelEffect
};

struct EffectSpec {
  int kind = kNoEffect;
  DiceExpr hits;        // attack
  bool to_hit_bs = false;
  int strength = 0;
  DiceExpr damage;
  bool saves = true;
  DiceExpr dice;        // mortal: the wounds; duel: each side's roll
  double value = 0.0;   // value: the score after the scenario's power_values (rules._values)
};

struct PowerData {
  bool remain_in_play = false;  // 2E-6
  int lo = 0, hi = 0;           // facts.force_range (2E-1.1, variable_min_force)
  EffectSpec effect[4];         // by Force paid, 0..3
};

struct UnitData {
  int owner = 0;           // its side
  int max_wounds = 1;      // models x wounds (facts.max_wounds)
  int per_model = 1;       // wounds of one model (the cap of an attack's damage, 2E-6)
  int toughness = 1;
  int save = 7;            // 7: none
  int invulnerable = 0;    // 0: none
  int ballistic_skill = 1;
  int psyker = -1;         // facts.unit_psyker
  double value_per_wound = 0.0;
};

struct PsykerData {
  int unit = 0;                  // facts.psyker_unit
  int side = 0;                  // facts.psyker_side
  int ml = 1;                    // mastery level
  bool hood = false;             // psychic hood (2E-5.2)
  bool draws = false;            // has a draw pool (disciplines, 2E-1.1)
  std::vector<int> pool;         // facts.draw_pools, ascending
  std::vector<int> initial;      // facts.initial_powers: M slots, -1 empty
  // Per power: the units it may target, U for every enemy unit in range (rules._specs, empty
  // where ml_limits_power_level forbids the power), and the enemies such a power hits
  // (rules._area).
  std::vector<std::vector<int>> targets, area;
};

struct Settings {  // spec.RuleSettings (2E-1 .. 2E-7)
  int warp_flux_dice = 2;
  bool flux_cap_both_sides = true;
  bool deal_first_active = true;
  bool retain_specials = false;
  bool public_discards = false;
  int responses_per_power = 1;
  int nullify_target = 4, nullify_ml_step = 1, nullify_best = 2, nullify_worst = 6;
  bool destroy_lose_card = true;
  bool reflection_caster = true;
  int daemonic_attack_below = 4;
  DiceExpr duel_dice;
  bool duel_add_ml = true;
};

struct ScenarioSpec {
  int n_units = 0, n_psykers = 0, n_slots = 1, n_powers = 0;
  int first_player = 0;
  int battle_rounds = 1;
  Settings settings;
  int deck[kCards] = {};          // facts.deck_counts (2E-2)
  std::vector<UnitData> units;
  std::vector<PsykerData> psykers;
  std::vector<PowerData> powers;
  std::vector<int> side_units[2];    // facts.side_units
  std::vector<int> side_psykers[2];  // facts.side_psykers
};

// The scenario in `data`, or EngineError(kScenario) naming the first number out of range.
ScenarioSpec read_scenario(const ScenarioData& data);

}  // namespace second
}  // namespace psygym
