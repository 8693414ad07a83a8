#include "scenario.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace psygym {
namespace seventh {
namespace {

// Reads the numbers in order, refusing any outside its allowed range.
class Reader {
 public:
  explicit Reader(const ScenarioData& data) : data_(data) {}

  int next(int lo, int hi, const char* what) {
    if (pos_ >= data_.ints.size()) fail(std::string("the numbers end before ") + what);
    const int64_t v = data_.ints[pos_++];
    if (v < lo || v > hi)
      fail(std::string(what) + " is " + std::to_string(v) + " (allowed " + std::to_string(lo) +
           " to " + std::to_string(hi) + ")");
    return static_cast<int>(v);
  }
  bool flag(const char* what) { return next(0, 1, what) == 1; }
  Dice dice(const char* what) {
    Dice d;
    d.count = next(0, kMaxDiceCount, what);
    d.sides = next(0, kMaxDieSides, what);
    d.modifier = next(-kMaxModifier, kMaxModifier, what);
    if ((d.count == 0) != (d.sides == 0)) fail(std::string(what) + ": a die needs a count");
    return d;
  }
  double real(double lo, double hi, const char* what) {
    if (rpos_ >= data_.reals.size()) fail(std::string("the reals end before ") + what);
    const double v = data_.reals[rpos_++];
    if (!(v >= lo && v <= hi))
      fail(std::string(what) + " is out of range (allowed " + std::to_string(lo) + " to " +
           std::to_string(hi) + ")");
    return v;
  }
  void done() const {
    if (pos_ != data_.ints.size() || rpos_ != data_.reals.size())
      fail("more numbers than the scenario has");
  }
  [[noreturn]] static void fail(const std::string& what) {
    throw EngineError(ErrorCode::kScenario, "7th scenario numbers: " + what);
  }

 private:
  const ScenarioData& data_;
  std::size_t pos_ = 0, rpos_ = 0;
};

// The smallest total of a dice expression.
int lowest(const Dice& d) { return d.sides == 0 ? d.modifier : d.count + d.modifier; }

constexpr double kMaxValue = 1000.0;   // scenario.MAX_VALUE
constexpr double kMaxInches = 1000.0;  // scenario.MAX_INCHES

}  // namespace

ScenarioNumbers read_scenario(const ScenarioData& data) {
  Reader in(data);
  ScenarioNumbers s;
  in.next(kFormat, kFormat, "the format");
  s.units = in.next(2, kMaxUnits, "units");
  s.powers = in.next(0, kMaxPowers, "powers");
  s.disciplines = in.next(0, kMaxDisciplines, "disciplines");
  s.max_dice = in.next(6, kMaxPool, "max_dice");
  s.total_phases = in.next(1, kMaxPhases - 1, "total phases");
  s.rounds = in.next(1, kMaxPhases, "battle rounds");
  if (s.rounds < (s.total_phases + 1) / 2) Reader::fail("fewer battle rounds than phases need");
  s.first_player = in.next(0, 1, "first player");
  s.generate_powers = in.flag("generate_powers");
  s.instant_death = in.flag("instant_death");
  s.pool_bonus[0] = in.next(0, 10, "pool bonus");
  s.pool_bonus[1] = in.next(0, 10, "pool bonus");
  for (int roll = 1; roll <= 6; ++roll) {
    PerilsRow& row = s.perils[roll];
    row.ld_test = in.flag("perils ld_test");
    row.on_pass = in.next(kWound, kNothing, "perils on_pass");
    row.on_fail = in.next(kWound, kNothing, "perils on_fail");
    row.extra = in.next(kExtraNone, kExtraDrain, "perils extra");
  }
  s.removed_hits = in.dice("removed hits");
  if (lowest(s.removed_hits) < 0) Reader::fail("removed hits that can roll below 0");
  s.removed_strength = in.next(1, 10, "removed hits strength");
  s.removed_ap = in.next(1, 6, "removed hits ap");
  s.warp_surge_value = in.real(0.0, kMaxValue, "warp_surge_value");

  int side_size[2] = {0, 0};
  for (int u = 0; u < s.units; ++u) {
    UnitData d;
    d.owner = in.next(0, 1, "unit owner");
    if (u > 0 && d.owner < s.unit.back().owner) Reader::fail("units out of side order");
    ++side_size[d.owner];
    d.models = in.next(1, 100, "models");
    d.wounds = in.next(1, 100, "wounds");
    d.max_wounds = d.models * d.wounds;
    d.toughness = in.next(1, 10, "toughness");
    d.save = in.next(2, 7, "save");
    d.invulnerable = in.next(0, 6, "invulnerable");
    if (d.invulnerable == 1) Reader::fail("invulnerable is 1 (allowed 0 for none, or 2 to 6)");
    d.leadership = in.next(2, 10, "leadership");
    d.ballistic_skill = in.next(1, 10, "ballistic_skill");
    d.psyker = in.flag("psyker");
    d.mastery = in.next(d.psyker ? 1 : 0, d.psyker ? kMaxMastery : 0, "mastery");
    d.adamantium_will = in.flag("adamantium_will");
    d.daemon = in.flag("daemon");
    d.grey_knight = in.flag("grey_knight");
    const int n_disc = in.next(0, s.generate_powers ? kMaxDisciplines : 0, "psyker disciplines");
    for (int k = 0; k < n_disc; ++k)
      d.disciplines.push_back(in.next(0, s.disciplines - 1, "psyker discipline"));
    const int n_powers = in.next(0, s.powers, "psyker powers");
    for (int k = 0; k < n_powers; ++k) {
      d.initial_powers.push_back(in.next(0, s.powers - 1, "psyker power"));
      if (k > 0 && d.initial_powers[k] <= d.initial_powers[k - 1])
        Reader::fail("psyker powers are not sorted");
    }
    if (!d.psyker && (n_disc > 0 || n_powers > 0)) Reader::fail("powers of a unit with no psyker");
    d.value_per_wound = in.real(0.0, kMaxValue, "value_per_wound");
    s.unit.push_back(d);
  }
  if (side_size[0] == 0 || side_size[1] == 0) Reader::fail("a side without units");

  for (int p = 0; p < s.powers; ++p) {
    PowerData d;
    d.warp_charge = in.next(1, 3, "warp_charge");
    d.target = in.next(kSelf, kNoTarget, "power target");
    d.effect = in.next(kAttack, kValue, "power effect");
    d.doubles_perils_unless = in.next(kNever, kDaemon, "doubles_perils_unless");
    d.perils_on_fail = in.flag("perils_on_fail");
    d.minus_target_ld = in.flag("minus_target_ld");
    d.dice = in.dice("power dice");
    d.area = in.next(0, 4, "area hits");
    if (d.area == 1) Reader::fail("area hits is 1 (allowed 0, 2, 3 or 4)");
    d.to_hit_bs = in.flag("to_hit");
    d.strength = in.dice("strength");
    d.ap_none = in.flag("ap none");
    d.ap = in.dice("ap");
    d.damage = in.dice("damage");
    d.heal_caster = in.flag("heal_caster");
    d.always_wounds_on = in.next(0, 6, "always_wounds_on");
    if (d.always_wounds_on == 1) Reader::fail("always_wounds_on is 1 (allowed 0 or 2 to 6)");
    if (d.effect == kAttack && d.area == 0 && lowest(d.dice) < 0)
      Reader::fail("attack hits that can roll below 0 (the reference lists no outcome)");
    d.range = in.real(0.0, kMaxInches, "power range");
    d.value = in.real(-kMaxValue, kMaxValue, "power value");
    s.power.push_back(d);
  }
  for (int k = 0; k < s.disciplines; ++k) {
    s.primaris.push_back(in.next(-1, s.powers - 1, "primaris power"));
    const int n = in.next(0, s.powers, "numbered powers");
    std::vector<int> list;
    for (int i = 0; i < n; ++i) {
      list.push_back(in.next(0, s.powers - 1, "numbered power"));
      if (i > 0 && list[i] <= list[i - 1]) Reader::fail("numbered powers are not sorted");
    }
    s.numbered.push_back(list);
  }
  const std::size_t cells =
      static_cast<std::size_t>(s.rounds) * static_cast<std::size_t>(s.units) * s.units;
  s.distance.reserve(cells);
  for (std::size_t i = 0; i < cells; ++i) s.distance.push_back(in.real(0.0, 1e300, "distance"));
  in.done();

  // The largest pool (rules.max_dice): the action layout depends on it.
  int most = 0;
  for (int side = 0; side < 2; ++side) {
    int ml = s.pool_bonus[side];
    for (const UnitData& d : s.unit)
      if (d.owner == side) ml += d.mastery;
    most = std::max(most, 6 + ml);
  }
  if (most != s.max_dice) Reader::fail("max_dice does not match the psykers and pool bonuses");
  return s;
}

}  // namespace seventh
}  // namespace psygym
