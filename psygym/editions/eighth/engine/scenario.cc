#include "scenario.h"

#include <cmath>
#include <string>

namespace psygym {
namespace eighth {
namespace {

class Reader {
 public:
  explicit Reader(const ScenarioData& data) : data_(data) {}

  int64_t next(const char* what, int64_t lo, int64_t hi) {
    if (at_ >= data_.ints.size())
      throw EngineError(ErrorCode::kScenario,
                        std::string("8th scenario data ends before ") + what);
    const int64_t v = data_.ints[at_++];
    if (v < lo || v > hi)
      throw EngineError(ErrorCode::kScenario, std::string("8th scenario data: ") + what + " is " +
                                                  std::to_string(v) + ", allowed " +
                                                  std::to_string(lo) + " to " + std::to_string(hi));
    return v;
  }
  int small(const char* what, int lo, int hi) { return static_cast<int>(next(what, lo, hi)); }

  std::vector<int> list(const char* what, int max_len, int n_items) {
    const int len = small(what, 0, max_len);
    std::vector<int> out;
    for (int i = 0; i < len; ++i) out.push_back(small(what, 0, n_items - 1));
    return out;
  }

  DiceExpr dice(const char* what) {
    DiceExpr e;
    e.count = small(what, 0, 20);   // psygym.scenario.MAX_DICE
    e.sides = small(what, 0, 20);   // MAX_DIE_SIDES
    e.modifier = small(what, -20, 20);  // MAX_DICE_MODIFIER
    return e;
  }

  double real(const char* what) {
    if (real_at_ >= data_.reals.size())
      throw EngineError(ErrorCode::kScenario,
                        std::string("8th scenario data ends before ") + what);
    const double v = data_.reals[real_at_++];
    if (!std::isfinite(v) || std::fabs(v) > 1e6)
      throw EngineError(ErrorCode::kScenario,
                        std::string("8th scenario data: ") + what + " is not a finite value");
    return v;
  }

  void finish() const {
    if (at_ != data_.ints.size() || real_at_ != data_.reals.size())
      throw EngineError(ErrorCode::kScenario, "8th scenario data has numbers left over");
  }

 private:
  const ScenarioData& data_;
  std::size_t at_ = 0;
  std::size_t real_at_ = 0;
};

}  // namespace

ScenarioSpec read_scenario(const ScenarioData& data) {
  Reader r(data);
  ScenarioSpec sc;
  r.small("format", kFormat, kFormat);
  const int n = sc.n_units = r.small("units", 2, kMaxUnits);
  const int p = sc.n_powers = r.small("powers", 0, kMaxPowers);
  sc.first_player = r.small("first_player", 0, 1);
  sc.battle_rounds = r.small("battle_rounds", 1, kMaxRounds);
  sc.phase_limit = r.small("phase_limit", 0, 2 * kMaxRounds);
  sc.perils = r.dice("perils_mortal_wounds");
  sc.blast = r.dice("perils_blast_mortal_wounds");
  for (auto& side : sc.side_psykers) side = r.list("side_psykers", n, n);
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
    u.known = r.list("unit known powers", p, p);
    u.deny_candidates = r.list("unit deny candidates", n, n);
    u.blast_candidates = r.list("unit blast candidates", n, n);
    for (int k = 0; k < p; ++k) u.targets.push_back(r.list("unit targets", n, n));
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
      pw.mortal = r.dice("mortal_wounds");
      pw.boosted_at = r.small("boosted_at", 0, 255);
      pw.boosted = r.dice("boosted");
    } else if (pw.kind == kRolloffEffect) {
      pw.dice = r.dice("rolloff dice");
      pw.difference = r.small("rolloff difference", 0, 1) != 0;
      pw.win = r.dice("rolloff win");
      pw.tie = r.dice("rolloff tie");
    } else if (pw.kind == kAttackEffect) {
      pw.hits = r.dice("attack hits");
      pw.damage = r.dice("attack damage");
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
