#include "scenario.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "scenario_reader.h"

namespace psygym {
namespace second {
namespace {

void fail(const std::string& what) {
  throw EngineError(ErrorCode::kScenario, "2nd scenario data: " + what);
}

EffectSpec read_effect(ScenarioReader& r) {
  EffectSpec e;
  e.kind = r.small("effect kind", kNoEffect, kDuel);
  if (e.kind == kAttack) {
    e.hits = r.dice<DiceExpr>("attack hits", false);
    e.to_hit_bs = r.flag("attack to_hit");
    e.strength = r.small("attack strength", 1, 10);
    e.damage = r.dice<DiceExpr>("attack damage", false);
    e.saves = r.flag("attack saves");
  } else if (e.kind == kMortal || e.kind == kDuel) {
    e.dice = r.dice<DiceExpr>("effect dice", false);
  } else if (e.kind == kValue) {
    e.value = r.real("value effect") + 0.0;  // -0.0 scores as 0.0: keep states clear of -0.0
  }
  return e;
}

}  // namespace

ScenarioSpec read_scenario(const ScenarioData& data) {
  ScenarioReader r(data, "2nd scenario data");
  ScenarioSpec sc;
  r.small("format", kFormat, kFormat);
  const int u = sc.n_units = r.small("units", 2, kMaxUnits);
  const int p = sc.n_psykers = r.small("psykers", 0, std::min(u, kMaxPsykers));
  const int m = sc.n_slots = r.small("slots", 1, kMaxSlots);
  const int n = sc.n_powers = r.small("powers", 1, kMaxPowers);
  sc.first_player = r.small("first_player", 0, 1);
  sc.battle_rounds = r.small("battle_rounds", 1, kMaxRounds);
  Settings& st = sc.settings;
  st.warp_flux_dice = r.small("warp_flux_dice", 1, kMaxFluxDice);
  st.flux_cap_both_sides = r.flag("flux_cap");
  st.deal_first_active = r.flag("deal_first");
  st.retain_specials = r.flag("retain_specials");
  st.public_discards = r.flag("public_discards");
  st.responses_per_power = r.small("responses_per_power", 0, kMaxResponses);
  st.nullify_target = r.small("nullify_target", 2, 6);
  st.nullify_ml_step = r.small("nullify_ml_step", 0, 3);
  st.nullify_best = r.small("nullify_best", 2, 6);
  st.nullify_worst = r.small("nullify_worst", st.nullify_best, 6);
  st.destroy_lose_card = r.flag("destroy_power");
  st.reflection_caster = r.flag("reflection");
  st.daemonic_attack_below = r.small("daemonic_attack_below", 0, 12);
  st.duel_dice = r.dice<DiceExpr>("psychic_duel_dice", false);
  st.duel_add_ml = r.flag("psychic_duel_add_ml");
  int cards = 0;
  for (int& count : sc.deck) cards += count = r.small("deck count", 0, kMaxCardCount);
  if (cards < 1) fail("the deck has no cards");
  sc.units.resize(static_cast<std::size_t>(u));
  for (int i = 0; i < u; ++i) {
    UnitData& unit = sc.units[static_cast<std::size_t>(i)];
    unit.owner = r.small("unit side", 0, 1);
    unit.max_wounds = r.small("unit wounds", 1, kMaxWounds);
    unit.per_model = r.small("unit wounds per model", 1, unit.max_wounds);
    unit.toughness = r.small("unit toughness", 1, 10);
    unit.save = r.small("unit save", 2, 7);
    unit.invulnerable = r.small("unit invulnerable", 0, 6);
    unit.ballistic_skill = r.small("unit ballistic_skill", 1, 10);
    unit.value_per_wound = r.real("unit value_per_wound") + 0.0;
    sc.side_units[unit.owner].push_back(i);
  }
  if (sc.side_units[0].empty() || sc.side_units[1].empty()) fail("a side has no unit");
  sc.psykers.resize(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) {
    PsykerData& ps = sc.psykers[static_cast<std::size_t>(i)];
    const int after = i == 0 ? 0 : sc.psykers[static_cast<std::size_t>(i) - 1].unit + 1;
    ps.unit = r.small("psyker unit", after, u - 1);  // psykers in the order of their units
    UnitData& unit = sc.units[static_cast<std::size_t>(ps.unit)];
    unit.psyker = i;
    ps.side = unit.owner;
    sc.side_psykers[ps.side].push_back(i);
    ps.ml = r.small("psyker mastery", 1, 4);
    ps.hood = r.flag("psyker psychic_hood");
    ps.draws = r.flag("psyker draws");
    ps.pool = r.list("psyker draw pool", n, 0, n - 1, true);
    if (ps.draws && (static_cast<int>(ps.pool.size()) < ps.ml || ps.ml > m))
      fail("a psyker draws more power cards than its pool or slots hold");
    for (int j = 0; j < m; ++j) {
      ps.initial.push_back(r.small("psyker power", -1, n - 1));
      if (ps.draws && ps.initial.back() != -1) fail("a psyker that draws its cards holds one");
    }
    for (int k = 0; k < n; ++k) {
      ps.targets.push_back(r.list("psyker targets", u, 0, u, true));
      ps.area.push_back(r.list("psyker area", u, 0, u - 1, true));
    }
  }
  sc.powers.resize(static_cast<std::size_t>(n));
  for (PowerData& pw : sc.powers) {
    pw.remain_in_play = r.flag("power remain_in_play");
    pw.lo = r.small("power lowest Force", 0, 3);
    pw.hi = r.small("power highest Force", pw.lo, 3);
    for (EffectSpec& e : pw.effect) e = read_effect(r);
    for (int f = pw.lo; f <= pw.hi; ++f)
      if (pw.effect[f].kind == kNoEffect) fail("a power has no effect for a Force it may be paid");
  }
  r.finish();
  return sc;
}

}  // namespace second
}  // namespace psygym
