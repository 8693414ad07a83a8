// The scenario as the compiled rules use it: the twin of facts.py's RTFacts, built from the
// numbers the codec (engine/__init__.py) encodes from a validated RogueTraderRules (spec.py's
// game settings and units, abilities.toml's abilities, charts.toml's rows, and rules.py's
// static candidate targets already measured), read and range-checked once.
#pragma once

#include <cstdint>
#include <vector>

#include "chances.h"
#include "game.h"

namespace psygym {
namespace rogue_trader {

// Capacities of the compiled state (the codec refuses larger scenarios, naming the limit).
constexpr int kMaxUnits = 64;       // int8 unit indices; psygym.scenario allows 2 x 30
constexpr int kMaxAbilities = 120;  // int8 ability ids; psygym.scenario allows 100
constexpr int kMaxWounds = 65535;   // uint16 wounds; psygym.scenario allows 100 x 100
constexpr int kMaxPoints = 65535;   // uint16 psi-points, levels, bids and amounts
constexpr int kMaxTurns = 255;      // uint8 turn counter; spec.RTGame allows 200
constexpr int kMaxPerTurn = 255;    // uint8 abilities used; spec.RTGame allows 10
constexpr int kMaxDraws = 255;      // uint8 abilities left to draw; the charts allow 10
constexpr int kFormat = 1;          // the codec's format version (FORMAT in engine/__init__.py)

// abilities.py's Effect vocabulary, in its order.
enum Effect : int {
  kMental = 0,
  kMissile = 1,
  kAura = 2,
  kDestroyAura = 3,
  kTransferAura = 4,
  kStealMind = 5,
  kRemove = 6,
  kConfuse = 7,
  kFear = 8,
  kCureInjury = 9,
  kCureWounds = 10,
  kStrengthOfMind = 11,
  kValue = 12,
};

// AbilitySpec.target.
enum TargetKind : int { kEnemy = 0, kFriend = 1, kSelf = 2 };

struct AbilityData {
  int cost = 0;          // psi-points (per wound for Cure Wounds, RT-2.4)
  int effect = kValue;   // Effect
  int target = kSelf;    // TargetKind
  int strength = 0;      // attacks (RT-4.2)
  Dice damage;           // wounds of a damaging hit
  DiceTable damage_table;  // distribution(damage)
  int aura = 0;          // aura level given or dispelled (RT-4.3)
  Dice duration;         // turns of Steal Mind (RT-4.5)
  bool psychic_save = false;
  double value = 0.0;    // facts.value: what it scores when it works (RT-4.8)
  DiceTable duration_table;  // distribution(duration)
};

struct UnitData {
  int owner = 0;
  int models = 1;
  int per_model = 1;      // facts.per_model: wounds of one model
  int max_hp = 1;         // facts.max_hp: wounds x models
  bool single = true;     // facts.single: a character
  int toughness = 4;
  int save = 7;           // 7: none
  int will_power = 7;     // RT-3.1
  double vpw = 0.0;       // facts.vpw: score of one wound (RT-6.2)
  bool psyker = false;    // mastery above 0 (RT-1)
  // Psykers only (RT-1.1, RT-1.3): the set-up of generation.py.
  int psi_level = -1;     // spec.psi_level, -1: none
  int psi_points = -1;    // spec.psi_points, -1: none
  int typical_level = 0;  // the mastery row's psi_level
  bool random_level = false;
  bool random_abilities = false;
  std::vector<int> held;   // the abilities given (sorted), empty for random ones
  DiceTable level_table;   // distribution(row.random_psi_level)
  DiceTable count_table;   // capped(distribution(row.random_abilities), count_cap)
  int typical_count = 0;   // min(row.abilities, count_cap)
  std::vector<int> pool;   // data.by_level(mastery): the abilities it may draw, sorted
  // rules._cands[(u, a)] for every ability a: the units it could ever aim a at (static).
  std::vector<std::vector<int>> cands;
  std::vector<uint64_t> cand_bits;  // the same as a set per ability (kMaxUnits bits)
};

struct ScenarioSpec {
  int n_units = 0;
  int n_abilities = 0;
  int first_player = 0;
  int turns = 6;
  int per_turn = 1;           // game.abilities_per_turn (RT-2.1)
  int no_test_at = 12;        // RT-2.3
  int max_bid = -1;           // game.max_bid, -1: none (RT-3.2, RT-3.3)
  bool random_count = false;  // game.ability_count == "random"
  bool removal_scores_wounds = true;
  bool augment_breaks_rest = true;
  std::vector<AbilityData> abilities;
  std::vector<UnitData> units;
  std::vector<int> side_units[2];  // facts.side_units
  std::vector<int> psykers_of[2];  // facts.psykers_of
  // facts.py's derived sizes and the action layout of actions.py.
  int max_psi_points = 0;
  int bid_limit = 0;
  int max_number = 0;
  int target_base = 0;
  int number_base = 0;
  int num_actions = 0;
};

// The scenario in `data`, or EngineError(kScenario) naming the first number out of range.
ScenarioSpec read_scenario(const ScenarioData& data);

}  // namespace rogue_trader
}  // namespace psygym
