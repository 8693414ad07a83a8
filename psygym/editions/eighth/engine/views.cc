// What the 8th-edition players see: the twin of EighthView.observe in
// psygym/editions/eighth/views.py (layout: EighthRules.observe's docstring). 8th edition has no
// hidden information (8E-1), so both players see the whole state from their own side.
//
// Each entry is computed as the reference computes it, in double (Python's float: the same
// correctly rounded divisions), then rounded once to float32 as numpy's float32 array does, so
// the vector is bit-identical to the reference's.
#include "random.h"
#include "rules.h"

namespace psygym {
namespace eighth {
namespace {

constexpr int kDecisionKinds = 5;  // views.DECISION_KINDS: select, power, deny, chance, over
constexpr int kGlobals = 8;        // views.GLOBALS
constexpr int kUnitFeatures = 10;  // views.UNIT_FEATURES
constexpr int kPowerFeatures = 4;  // views.POWER_FEATURES
constexpr int kHead = kDecisionKinds + kGlobals;
constexpr int kScore = kHead - 1;  // the score is the last global entry

// views._KIND: the one-hot node kind of a stage (every chance stage is "chance").
int kind_of(int stage) {
  switch (stage) {
    case kSelect:
      return 0;
    case kPower:
      return 1;
    case kDeny:
      return 2;
    case kOver:
      return 4;
    default:
      return 3;
  }
}

// float(deny_chance(total)) (8E-5.2), 0 for a total of 0 (views.EighthView._deny).
double deny_probability(int total) {
  if (total == 0) return 0.0;
  for (const Outcome& o : deny_outcomes(total))
    if (o.action == 1) return o.probability;
  return 0.0;
}

float f32(double x) { return static_cast<float>(x); }

}  // namespace

std::size_t EighthGame::observation_size() const {  // views.observation_size
  return static_cast<std::size_t>(kHead + kUnitFeatures * sc_.n_units +
                                  kPowerFeatures * sc_.n_powers);
}

void EighthGame::observe(const uint8_t* s, int player, float* out) const {
  const Header h = load_header(s);
  const std::size_t size = observation_size();
  for (std::size_t i = 0; i < size; ++i) out[i] = 0.0f;
  // The node kind and the globals (views.EighthView._head).
  out[kind_of(h.stage)] = 1.0f;
  const bool pending = h.power >= 0;
  const int total = pending ? h.total : 0;
  float* g = out + kDecisionKinds;
  g[0] = f32(static_cast<double>(h.round) / static_cast<double>(sc_.battle_rounds));
  g[1] = h.active == player ? 1.0f : 0.0f;
  g[2] = sc_.first_player == player ? 1.0f : 0.0f;
  g[3] = f32(static_cast<double>(total) / 12.0);
  g[4] = pending ? f32(static_cast<double>(h.warp_charge) / 12.0) : 0.0f;
  g[5] = is_perils_total(total) ? 1.0f : 0.0f;  // 8E-4.3
  g[6] = f32(deny_probability(total));
  out[kScore] = f32(player == 0 ? h.score : -h.score);
  // Per unit (views.EighthView._units and _flag_positions).
  for (int i = 0; i < sc_.n_units; ++i) {
    const UnitData& u = sc_.units[static_cast<std::size_t>(i)];
    const int w = wounds(s, i);
    float* v = out + kHead + kUnitFeatures * i;
    v[0] = u.side == player ? 1.0f : 0.0f;
    v[1] = w > 0 ? 1.0f : 0.0f;
    v[2] = f32(static_cast<double>(w) / static_cast<double>(u.max_wounds));
    v[3] = static_cast<float>(w);
    v[4] = u.psyker ? 1.0f : 0.0f;
    v[5] = static_cast<float>(s[layout_.deny_left + static_cast<std::size_t>(i)]);
    v[6] = get_bit(s, layout_.selected, i) ? 1.0f : 0.0f;  // selected this phase (8E-2.3)
    v[7] = h.caster == i ? 1.0f : 0.0f;
    v[8] = h.target == i ? 1.0f : 0.0f;
    v[9] = h.denier == i ? 1.0f : 0.0f;
  }
  // Per power (views.EighthView._powers): the known powers are the selected unit's.
  float* powers = out + kHead + kUnitFeatures * sc_.n_units;
  for (int p = 0; p < sc_.n_powers; ++p) {
    const PowerData& pw = sc_.powers[static_cast<std::size_t>(p)];
    const int tries = s[layout_.attempts + static_cast<std::size_t>(p)];
    float* v = powers + kPowerFeatures * p;
    v[0] = f32(static_cast<double>(pw.warp_charge + pw.escalation * tries) / 12.0);  // 8E-4.2
    v[1] = static_cast<float>(tries);
    if (h.caster >= 0)
      for (int k : sc_.units[static_cast<std::size_t>(h.caster)].known)
        if (k == p) v[2] = 1.0f;
    v[3] = h.power == p ? 1.0f : 0.0f;
  }
}

// The reference env walks chance with rules.py's fast walk (sample_chance_run and
// _decide_and_walk), which draws with ChanceTable.sample: one number at every chance node, a
// single outcome included (RulesBase.sample_chance would draw none there).
int32_t EighthGame::sample_chance(const uint8_t* s, Pcg64& rng,
                                  std::vector<Outcome>& outcomes) const {
  chance_outcomes(s, &outcomes);
  if (outcomes.empty()) throw EngineError(ErrorCode::kValue, "not a chance node");
  return outcomes[table_index(outcomes, rng)].action;
}

}  // namespace eighth
}  // namespace psygym
