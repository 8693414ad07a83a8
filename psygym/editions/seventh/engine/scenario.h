// A 7th-edition scenario as the core receives it: the numbers the Python codec
// (engine/__init__.py, encode_scenario) makes of a validated SeventhRules, read back and
// range-checked here (a malformed number is EngineError(kScenario), never trusted).
#pragma once

#include <cstdint>
#include <vector>

#include "game.h"
#include "odds.h"

namespace psygym {
namespace seventh {

constexpr int kFormat = 1;          // version of the numbers (FORMAT in __init__.py)
constexpr int kMaxUnits = 60;       // two sides of MAX_UNITS (unit indices are uint8)
constexpr int kMaxPowers = 104;     // powers of a scenario (MAX_POWERS in the codec)
constexpr int kMaxDisciplines = 120;
constexpr int kMaxMastery = 4;      // generated powers per psyker (Psyker.mastery <= 4)
constexpr int kMaxWounds = 65535;   // a unit's wound pool (uint16)
constexpr int kMaxPhases = 250;     // Psychic phases (the phase is a uint8)
constexpr int kMaxPool = 250;       // warp charge dice in a pool (uint8)
constexpr int kMaxDiceCount = 20;   // dice in an expression (scenario.MAX_DICE)
constexpr int kMaxDieSides = 20;    // sides of a die (scenario.MAX_DIE_SIDES)
constexpr int kMaxModifier = 20;    // added number (scenario.MAX_DICE_MODIFIER)

enum Target : int { kSelf = 0, kFriendly = 1, kEnemy = 2, kEnemies = 3, kNoTarget = 4 };
enum EffectKind : int { kAttack = 0, kMortal = 1, kRolloff = 2, kValue = 3 };
enum PerilsOutcome : int { kWound = 0, kRemoved = 1, kSurge = 2, kNothing = 3 };
enum PerilsExtra : int { kExtraNone = 0, kExtraPurge = 1, kExtraDrain = 2 };
enum DoublesUnless : int { kNever = 0, kGreyKnight = 1, kDaemon = 2 };

struct UnitData {
  int owner = 0;
  int models = 1;
  int wounds = 1;  // per model
  int toughness = 4;
  int save = 7;
  int invulnerable = 0;  // 0: none
  int leadership = 8;
  int ballistic_skill = 4;
  bool psyker = false;
  int mastery = 0;  // 0 without a psyker profile
  bool adamantium_will = false;
  bool daemon = false;
  bool grey_knight = false;
  std::vector<int> disciplines;  // indices into the scenario's disciplines, as listed
  std::vector<int> initial_powers;  // fixed powers and Force, sorted (7E-2.4)
  double value_per_wound = 1.0;
  int max_wounds = 1;  // models x wounds
};

struct PowerData {
  int warp_charge = 1;
  int target = kEnemy;
  int effect = kValue;
  int doubles_perils_unless = kNever;
  bool perils_on_fail = false;
  bool minus_target_ld = false;
  Dice dice;       // mortal / rolloff_mortal expression, or an attack's hits
  int area = 0;    // an attack's area hits (3, 2, 4), 0: `dice` hits
  bool to_hit_bs = false;
  Dice strength;
  bool ap_none = true;
  Dice ap;
  Dice damage;
  bool heal_caster = false;
  int always_wounds_on = 0;  // 0: none
  double range = 0.0;
  double value = 0.0;  // effect kValue only
};

struct PerilsRow {
  bool ld_test = false;
  int on_pass = kNothing;
  int on_fail = kNothing;
  int extra = kExtraNone;
};

struct ScenarioNumbers {
  int units = 0, powers = 0, disciplines = 0, max_dice = 0;
  int total_phases = 0, rounds = 0, first_player = 0;
  bool generate_powers = false, instant_death = false;
  int pool_bonus[2] = {0, 0};
  PerilsRow perils[7];  // by roll 1..6
  Dice removed_hits;
  int removed_strength = 6, removed_ap = 1;
  std::vector<UnitData> unit;
  std::vector<PowerData> power;
  std::vector<int> primaris;               // per discipline, -1: none
  std::vector<std::vector<int>> numbered;  // per discipline, ascending
  double warp_surge_value = 1.0;
  std::vector<double> distance;  // [round][a][b], centre to centre (rules._distances)

  double dist(int round, int a, int b) const {
    return distance[(static_cast<std::size_t>(round) * units + a) * units + b];
  }
};

// Read and check the numbers; EngineError(kScenario) naming the first bad one.
ScenarioNumbers read_scenario(const ScenarioData& data);

}  // namespace seventh
}  // namespace psygym
