#include "scenario.h"

#include <cmath>
#include <string>

#include "scenario_reader.h"

namespace psygym {
namespace eighth {

ScenarioSpec read_scenario(const ScenarioData& data) {
  ScenarioReader r(data, "8th scenario data");
  ScenarioSpec sc;
  r.small("format", kFormat, kFormat);
  const int n = sc.n_units = r.small("units", 2, kMaxUnits);
  const int p = sc.n_powers = r.small("powers", 0, kMaxPowers);
  sc.first_player = r.small("first_player", 0, 1);
  sc.battle_rounds = r.small("battle_rounds", 1, kMaxRounds);
  sc.phase_limit = r.small("phase_limit", 0, 2 * kMaxRounds);
  sc.perils = r.dice<DiceExpr>("perils_mortal_wounds", false);
  sc.blast = r.dice<DiceExpr>("perils_blast_mortal_wounds", false);
  for (auto& side : sc.side_psykers) side = r.list("side_psykers", n, 0, n - 1, false);
  sc.units.resize(static_cast<std::size_t>(n));
  for (UnitData& u : sc.units) {
    u.side = r.small("unit side", 0, 1);
    u.psyker = r.small("unit psyker", 0, 1) != 0;
    u.max_wounds = r.small("unit wounds", 1, kMaxWounds);
    u.per_model = r.small("unit wounds per model", 1, kMaxWounds);
    u.manifest = r.small("unit manifest", 0, 255);
    u.full_deny = r.small("unit deny", 0, 255);
    u.leadership = r.small("unit leadership", 0, kMaxLeadership);
    u.value_per_wound = r.real("unit value_per_wound");
    u.known = r.list("unit known powers", p, 0, p - 1, false);
    u.deny_candidates = r.list("unit deny candidates", n, 0, n - 1, false);
    u.blast_candidates = r.list("unit blast candidates", n, 0, n - 1, false);
    for (int k = 0; k < p; ++k) u.targets.push_back(r.list("unit targets", n, 0, n - 1, false));
  }
  // A side's psykers are the indices the legal SELECT actions list (8E-2.1).
  for (int side = 0; side < 2; ++side)
    for (int i : sc.side_psykers[side])
      if (sc.units[static_cast<std::size_t>(i)].side != side)
        throw EngineError(ErrorCode::kScenario, "8th scenario data: a psyker of the wrong side");
  sc.powers.resize(static_cast<std::size_t>(p));
  for (PowerData& pw : sc.powers) {
    pw.warp_charge = r.small("power warp_charge", 0, 255);
    pw.escalation = r.small("power escalation", 0, 255);
    pw.repeatable = r.small("power repeatable", 0, 1) != 0;
    pw.chosen_target = r.small("power chosen_target", 0, 1) != 0;
    pw.kind = r.small("power effect kind", kValueEffect, kAttackEffect);
    pw.value = r.real("power value");
    if (pw.kind == kMortalEffect) {
      pw.mortal = r.dice<DiceExpr>("mortal_wounds", false);
      pw.boosted_at = r.small("boosted_at", 0, 255);
      pw.boosted = r.dice<DiceExpr>("boosted", false);
    } else if (pw.kind == kRolloffEffect) {
      pw.dice = r.dice<DiceExpr>("rolloff dice", false);
      pw.difference = r.small("rolloff difference", 0, 1) != 0;
      pw.win = r.dice<DiceExpr>("rolloff win", false);
      pw.tie = r.dice<DiceExpr>("rolloff tie", false);
    } else if (pw.kind == kAttackEffect) {
      pw.hits = r.dice<DiceExpr>("attack hits", false);
      pw.damage = r.dice<DiceExpr>("attack damage", false);
      for (int j = 0; j < n; ++j) {
        const int64_t num = r.next("attack unsaved numerator", 0, int64_t{1} << 40);
        const int64_t den = r.next("attack unsaved denominator", 1, int64_t{1} << 40);
        if (num > den)
          throw EngineError(ErrorCode::kScenario, "8th scenario data: an unsaved chance above 1");
        pw.unsaved_num.push_back(static_cast<Wide>(num));
        pw.unsaved_den.push_back(static_cast<Wide>(den));
      }
    }
  }
  r.finish();
  return sc;
}

}  // namespace eighth
}  // namespace psygym
