#include "scenario.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "scenario_reader.h"

namespace psygym {
namespace rogue_trader {
namespace {

EngineError problem(const std::string& what) {
  return EngineError(ErrorCode::kScenario, "rt scenario data: " + what);
}

bool targeted(int effect) {
  return effect != kAura && effect != kStrengthOfMind && effect != kValue;
}

// abilities.py's AbilitySpec._consistent, where the twin relies on it.
void read_ability(ScenarioReader& r, AbilityData& ab) {
  ab.cost = r.small("ability cost", 0, 100);
  ab.effect = r.small("ability effect", kMental, kValue);
  ab.target = r.small("ability target", kEnemy, kSelf);
  ab.strength = r.small("ability strength", 0, 10);
  ab.damage = r.dice<Dice>("ability damage", true);
  ab.aura = r.small("ability aura", 0, 4);
  ab.duration = r.dice<Dice>("ability duration", true);
  ab.psychic_save = r.flag("ability psychic_save");
  ab.value = r.real("ability value");
  const bool saved = ab.effect == kMental || ab.effect == kStealMind || ab.effect == kRemove ||
                     ab.effect == kConfuse || ab.effect == kFear;
  if (ab.psychic_save && (!saved || ab.target != kEnemy))
    throw problem("a psychic save on an effect or target that has none");
  if (targeted(ab.effect) && ab.target == kSelf)
    throw problem("a targeted effect aimed at the caster only");
  ab.damage_table = dice_table(ab.damage);
  ab.duration_table = dice_table(ab.duration);
  if (ab.duration_table.max() > kMaxPoints) throw problem("a Steal Mind duration past 65535");
}

// rules._candidates' static conditions (side, kind, single model, self), all but the range,
// which the codec has measured: the twin then never aims an ability where the reference could
// not.
void check_candidates(const ScenarioSpec& sc, int u, const AbilityData& ab,
                      const std::vector<int>& cands) {
  if (ab.target == kSelf || !targeted(ab.effect)) {
    if (cands.size() != 1 || cands[0] != u) throw problem("a self ability aimed at another unit");
    return;
  }
  const int side = sc.units[static_cast<std::size_t>(u)].owner;
  for (int t : cands) {
    const UnitData& unit = sc.units[static_cast<std::size_t>(t)];
    if ((ab.target == kEnemy) == (unit.owner == side))
      throw problem("a candidate target of the wrong side");
    const bool cure = ab.effect == kCureInjury || ab.effect == kCureWounds;
    if ((cure || ab.effect == kTransferAura) && !unit.single)
      throw problem("a cure or an aura aimed at a squad");
    if (ab.effect == kTransferAura && t == u) throw problem("an aura transferred to its bearer");
  }
}

void read_psyker(ScenarioReader& r, ScenarioSpec& sc, UnitData& u, int index) {
  const int a = sc.n_abilities;
  u.psi_level = r.small("psi_level", -1, kMaxPoints);
  u.psi_points = r.small("psi_points", -1, kMaxPoints);
  u.typical_level = r.small("typical psi-level", 0, kMaxPoints);
  u.random_level = r.flag("random psi-level");
  u.random_abilities = r.flag("random abilities");
  u.held = r.list("abilities held", a, 0, a - 1, true);
  const Dice level = r.dice<Dice>("random psi-level dice", true);
  const Dice count = r.dice<Dice>("random abilities dice", true);
  const int count_cap = r.small("abilities cap", 0, a);
  const int row_count = r.small("typical number of abilities", 0, kMaxDraws);
  u.pool = r.list("chart abilities", a, 0, a - 1, true);
  if (u.random_level) {
    if (u.psi_level >= 0) throw problem("a random psi-level beside an explicit one");
    u.level_table = dice_table(level);
    if (u.level_table.min() < 0 || u.level_table.max() > kMaxPoints)
      throw problem("a random psi-level outside 0 to 65535");
  }
  if (u.random_abilities) {
    if (!u.held.empty()) throw problem("random abilities beside given ones");
    if (u.pool.empty()) throw problem("random abilities without a chart to draw from");
    if (sc.random_count) u.count_table = capped(dice_table(count), count_cap);
    u.typical_count = std::min(row_count, count_cap);
  }
  u.cands.resize(static_cast<std::size_t>(a));
  u.cand_bits.assign(static_cast<std::size_t>(a), 0);
  for (int k = 0; k < a; ++k) {
    std::vector<int>& cands = u.cands[static_cast<std::size_t>(k)];
    const int len = r.small("candidate targets", 0, sc.n_units);
    for (int i = 0; i < len; ++i) cands.push_back(r.small("candidate target", 0, sc.n_units - 1));
    check_candidates(sc, index, sc.abilities[static_cast<std::size_t>(k)], cands);
    for (std::size_t i = 1; i < cands.size(); ++i)
      if (cands[i] <= cands[i - 1]) throw problem("candidate targets are not in increasing order");
    for (int t : cands) u.cand_bits[static_cast<std::size_t>(k)] |= uint64_t{1} << t;
  }
}

}  // namespace

ScenarioSpec read_scenario(const ScenarioData& data) {
  ScenarioReader r(data, "rt scenario data");
  ScenarioSpec sc;
  r.small("format", kFormat, kFormat);
  const int n = sc.n_units = r.small("units", 2, kMaxUnits);
  const int a = sc.n_abilities = r.small("abilities", 1, kMaxAbilities);
  sc.first_player = r.small("first_player", 0, 1);
  sc.turns = r.small("turns", 1, kMaxTurns);
  sc.per_turn = r.small("abilities_per_turn", 1, kMaxPerTurn);
  sc.no_test_at = r.small("no_test_at", 1, kMaxPoints);
  sc.max_bid = r.small("max_bid", -1, kMaxPoints);
  sc.random_count = r.flag("ability_count");
  sc.removal_scores_wounds = r.flag("removal_scores_wounds");
  sc.augment_breaks_rest = r.flag("augment_breaks_rest");
  sc.abilities.resize(static_cast<std::size_t>(a));
  for (AbilityData& ab : sc.abilities) read_ability(r, ab);
  sc.units.resize(static_cast<std::size_t>(n));
  // Every unit's profile first: the psykers' candidate targets are checked against them.
  for (int i = 0; i < n; ++i) {
    UnitData& u = sc.units[static_cast<std::size_t>(i)];
    u.owner = r.small("unit side", 0, 1);
    u.models = r.small("unit models", 1, kMaxWounds);
    u.per_model = r.small("unit wounds", 1, kMaxWounds);
    if (static_cast<int64_t>(u.models) * u.per_model > kMaxWounds)
      throw problem("a unit of more than 65535 wounds");
    u.max_hp = u.models * u.per_model;
    u.single = u.models == 1;
    u.toughness = r.small("unit toughness", 1, 10);
    u.save = r.small("unit save", 2, 7);
    u.will_power = r.small("unit will_power", 0, 20);
    u.vpw = r.real("unit value_per_wound");
    u.psyker = r.flag("unit psyker");
    if (i > 0 && u.owner < sc.units[static_cast<std::size_t>(i) - 1].owner)
      throw problem("side 0's units do not come first");
    sc.side_units[u.owner].push_back(i);
    if (u.psyker) sc.psykers_of[u.owner].push_back(i);
  }
  if (sc.side_units[0].empty() || sc.side_units[1].empty()) throw problem("a side has no unit");
  for (int i = 0; i < n; ++i)
    if (sc.units[static_cast<std::size_t>(i)].psyker)
      read_psyker(r, sc, sc.units[static_cast<std::size_t>(i)], i);
  r.finish();
  // facts.RTFacts.build: the largest bid and number, and the action layout (actions.py).
  int cure_max = 0;
  for (const UnitData& u : sc.units) {
    if (u.single) cure_max = std::max(cure_max, u.max_hp);
    if (!u.psyker) continue;
    const int most = u.psi_level >= 0 ? u.psi_level
                     : u.random_level ? u.level_table.max()
                                      : u.typical_level;  // facts._most_points (RT-1.1)
    sc.max_psi_points = std::max(sc.max_psi_points, most);
  }
  sc.bid_limit = sc.max_bid < 0 ? sc.max_psi_points : std::min(sc.max_bid, sc.max_psi_points);
  sc.max_number = std::max(sc.bid_limit, cure_max);
  sc.target_base = 2 + a;
  sc.number_base = sc.target_base + n;
  sc.num_actions = sc.number_base + sc.max_number + 1;
  return sc;
}

}  // namespace rogue_trader
}  // namespace psygym
