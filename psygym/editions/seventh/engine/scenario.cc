#include "scenario.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "scenario_reader.h"

namespace psygym {
namespace seventh {
namespace {

// The smallest total of a dice expression.
int lowest(const Dice& d) { return d.sides == 0 ? d.modifier : d.count + d.modifier; }

constexpr double kMaxValue = 1000.0;   // scenario.MAX_VALUE
constexpr double kMaxInches = 1000.0;  // scenario.MAX_INCHES

}  // namespace

ScenarioNumbers read_scenario(const ScenarioData& data) {
  ScenarioReader in(data, "7th scenario data");
  ScenarioNumbers s;
  in.small("the format", kFormat, kFormat);
  s.units = in.small("units", 2, kMaxUnits);
  s.powers = in.small("powers", 0, kMaxPowers);
  s.disciplines = in.small("disciplines", 0, kMaxDisciplines);
  s.max_dice = in.small("max_dice", 6, kMaxPool);
  s.total_phases = in.small("total phases", 1, kMaxPhases - 1);
  s.rounds = in.small("battle rounds", 1, kMaxPhases);
  if (s.rounds < (s.total_phases + 1) / 2) in.fail("fewer battle rounds than phases need");
  s.first_player = in.small("first player", 0, 1);
  s.generate_powers = in.flag("generate_powers");
  s.instant_death = in.flag("instant_death");
  s.pool_bonus[0] = in.small("pool bonus", 0, 10);
  s.pool_bonus[1] = in.small("pool bonus", 0, 10);
  for (int roll = 1; roll <= 6; ++roll) {
    PerilsRow& row = s.perils[roll];
    row.ld_test = in.flag("perils ld_test");
    row.on_pass = in.small("perils on_pass", kWound, kNothing);
    row.on_fail = in.small("perils on_fail", kWound, kNothing);
    row.extra = in.small("perils extra", kExtraNone, kExtraDrain);
  }
  s.removed_hits = in.dice<Dice>("removed hits", true);
  if (lowest(s.removed_hits) < 0) in.fail("removed hits that can roll below 0");
  s.removed_strength = in.small("removed hits strength", 1, 10);
  s.removed_ap = in.small("removed hits ap", 1, 6);
  s.warp_surge_value = in.real("warp_surge_value", 0.0, kMaxValue);

  int side_size[2] = {0, 0};
  for (int u = 0; u < s.units; ++u) {
    UnitData d;
    d.owner = in.small("unit owner", 0, 1);
    if (u > 0 && d.owner < s.unit.back().owner) in.fail("units out of side order");
    ++side_size[d.owner];
    d.models = in.small("models", 1, 100);
    d.wounds = in.small("wounds", 1, 100);
    d.max_wounds = d.models * d.wounds;
    d.toughness = in.small("toughness", 1, 10);
    d.save = in.small("save", 2, 7);
    d.invulnerable = in.small("invulnerable", 0, 6);
    if (d.invulnerable == 1) in.fail("invulnerable is 1 (allowed 0 for none, or 2 to 6)");
    d.leadership = in.small("leadership", 2, 10);
    d.ballistic_skill = in.small("ballistic_skill", 1, 10);
    d.psyker = in.flag("psyker");
    d.mastery = in.small("mastery", d.psyker ? 1 : 0, d.psyker ? kMaxMastery : 0);
    d.adamantium_will = in.flag("adamantium_will");
    d.daemon = in.flag("daemon");
    d.grey_knight = in.flag("grey_knight");
    const int n_disc = in.small("psyker disciplines", 0, s.generate_powers ? kMaxDisciplines : 0);
    for (int k = 0; k < n_disc; ++k)
      d.disciplines.push_back(in.small("psyker discipline", 0, s.disciplines - 1));
    const int n_powers = in.small("psyker powers", 0, s.powers);
    for (int k = 0; k < n_powers; ++k) {
      d.initial_powers.push_back(in.small("psyker power", 0, s.powers - 1));
      if (k > 0 && d.initial_powers[k] <= d.initial_powers[k - 1])
        in.fail("psyker powers are not sorted");
    }
    if (!d.psyker && (n_disc > 0 || n_powers > 0)) in.fail("powers of a unit with no psyker");
    d.value_per_wound = in.real("value_per_wound", 0.0, kMaxValue);
    s.unit.push_back(d);
  }
  if (side_size[0] == 0 || side_size[1] == 0) in.fail("a side without units");

  for (int p = 0; p < s.powers; ++p) {
    PowerData d;
    d.warp_charge = in.small("warp_charge", 1, 3);
    d.target = in.small("power target", kSelf, kNoTarget);
    d.effect = in.small("power effect", kAttack, kValue);
    d.doubles_perils_unless = in.small("doubles_perils_unless", kNever, kDaemon);
    d.perils_on_fail = in.flag("perils_on_fail");
    d.minus_target_ld = in.flag("minus_target_ld");
    d.dice = in.dice<Dice>("power dice", true);
    d.area = in.small("area hits", 0, 4);
    if (d.area == 1) in.fail("area hits is 1 (allowed 0, 2, 3 or 4)");
    d.to_hit_bs = in.flag("to_hit");
    d.strength = in.dice<Dice>("strength", true);
    d.ap_none = in.flag("ap none");
    d.ap = in.dice<Dice>("ap", true);
    d.damage = in.dice<Dice>("damage", true);
    d.heal_caster = in.flag("heal_caster");
    d.always_wounds_on = in.small("always_wounds_on", 0, 6);
    if (d.always_wounds_on == 1) in.fail("always_wounds_on is 1 (allowed 0 or 2 to 6)");
    if (d.effect == kAttack && d.area == 0 && lowest(d.dice) < 0)
      in.fail("attack hits that can roll below 0 (the reference lists no outcome)");
    d.range = in.real("power range", 0.0, kMaxInches);
    d.value = in.real("power value", -kMaxValue, kMaxValue);
    s.power.push_back(d);
  }
  for (int k = 0; k < s.disciplines; ++k) {
    s.primaris.push_back(in.small("primaris power", -1, s.powers - 1));
    const int n = in.small("numbered powers", 0, s.powers);
    std::vector<int> list;
    for (int i = 0; i < n; ++i) {
      list.push_back(in.small("numbered power", 0, s.powers - 1));
      if (i > 0 && list[i] <= list[i - 1]) in.fail("numbered powers are not sorted");
    }
    s.numbered.push_back(list);
  }
  const std::size_t cells =
      static_cast<std::size_t>(s.rounds) * static_cast<std::size_t>(s.units) * s.units;
  s.distance.reserve(cells);
  for (std::size_t i = 0; i < cells; ++i) s.distance.push_back(in.real("distance", 0.0, 1e300));
  in.finish();

  // The largest pool (rules.max_dice): the action layout depends on it.
  int most = 0;
  for (int side = 0; side < 2; ++side) {
    int ml = s.pool_bonus[side];
    for (const UnitData& d : s.unit)
      if (d.owner == side) ml += d.mastery;
    most = std::max(most, 6 + ml);
  }
  if (most != s.max_dice) in.fail("max_dice does not match the psykers and pool bonuses");
  return s;
}

}  // namespace seventh
}  // namespace psygym
