// What the 7th-edition players see: the twin of views.py's Observer (layout in its observe's
// docstring). 7th edition has no hidden information (7E-1), so both players see the whole state
// from their own side.
//
// Each entry is computed as the reference computes it, in double (Python's float: the same
// correctly rounded divisions), then rounded once to float32 as the reference's float32 vector
// does, so the vector is bit-identical to the reference's.
#include <algorithm>

#include "rules.h"

namespace psygym {
namespace seventh {
namespace {

constexpr int kHead = 11;        // decision kind (6), round, own phase, both pools, phases left
constexpr int kUnitFixed = 6;    // own, alive, wounds, psyker, mastery, Warp Surge
constexpr int kCastScalars = 5;  // dice, successes, warp charge, deny threshold, perils

// views._KIND_INDEX: the one-hot decision kind of a stage (5: none, every chance stage).
int kind_of(int stage) {
  switch (stage) {
    case kDiscipline:
      return 0;
    case kSwap:
      return 1;
    case kSelect:
      return 2;
    case kDice:
      return 3;
    case kDeny:
      return 4;
    default:
      return 5;
  }
}

float f32(double x) { return static_cast<float>(x); }
float flag(bool on) { return on ? 1.0f : 0.0f; }

}  // namespace

std::size_t SeventhGame::observation_size() const {  // rules.observation_size
  const int u = n_.units, r = n_.powers;
  return static_cast<std::size_t>(kHead + u * (kUnitFixed + 3 * r) + 2 * u + r + kCastScalars +
                                  u + n_.disciplines + r);
}

void SeventhGame::build_views() {
  const int units = n_.units, powers = n_.powers, total = n_.total_phases;
  const int round_div = std::max(1, (total + 1) / 2);
  for (int k = 0; k <= std::max(kMaxPool, kMaxDiceCount * 6); ++k)
    tenths_.push_back(f32(static_cast<double>(k) / 10.0));
  for (int phase = 0; phase <= 255; ++phase) {  // every value of the state's phase byte
    phase_round_.push_back(
        f32(static_cast<double>(phase / 2 + 1) / static_cast<double>(round_div)));
    phases_left_.push_back(
        f32(static_cast<double>(std::max(0, total - phase)) / static_cast<double>(total)));
  }
  for (int t = 0; t < units; ++t) {
    const int most = n_.unit[static_cast<std::size_t>(t)].max_wounds;
    std::vector<float> fractions;
    if (most <= kWoundFractions)
      for (int w = 0; w <= most; ++w)
        fractions.push_back(f32(static_cast<double>(w) / static_cast<double>(most)));
    wound_fraction_.push_back(std::move(fractions));
  }
  const int unit_width = kUnitFixed + 3 * powers;
  for (int rank = 0; rank < static_cast<int>(value_powers_.size()); ++rank)
    for (int t = 0; t < units; ++t)
      for (int owner = 0; owner < 2; ++owner)
        in_force_entry_.push_back(kHead + t * unit_width + kUnitFixed + 2 * powers +
                                  value_powers_[static_cast<std::size_t>(rank)]);
  for (int player = 0; player < 2; ++player) {
    std::vector<float>& v = blank_[player];
    v.assign(observation_size(), 0.0f);
    for (int t = 0; t < units; ++t) {
      const UnitData& spec = n_.unit[static_cast<std::size_t>(t)];
      float* u = v.data() + kHead + t * (kUnitFixed + 3 * powers);
      u[0] = flag(spec.owner == player);
      u[4] = f32(static_cast<double>(spec.mastery) / 4.0);
    }
  }
}

void SeventhGame::observe(const uint8_t* bytes, int player, float* out) const {
  const ConstState s(bytes, layout_);
  const int units = n_.units, powers = n_.powers;
  const std::vector<float>& blank = blank_[player];
  std::copy(blank.begin(), blank.end(), out);  // zeros, each unit's side and mastery
  out[kind_of(s.stage())] = 1.0f;
  const int phase = s.phase();
  out[6] = phase_round_[static_cast<std::size_t>(phase)];
  out[7] = flag(s.active() == player);
  out[8] = tenths_[static_cast<std::size_t>(s.pool(player))];
  out[9] = tenths_[static_cast<std::size_t>(s.pool(1 - player))];
  out[10] = phases_left_[static_cast<std::size_t>(phase)];
  // Per unit (Observer._with_units, and the attempted and in-force blocks of observe).
  for (int t = 0; t < units; ++t) {
    float* v = out + kHead + t * (kUnitFixed + 3 * powers);
    const int wounds = s.wounds(t);
    const std::vector<float>& fractions = wound_fraction_[static_cast<std::size_t>(t)];
    v[1] = flag(wounds > 0);
    v[2] = fractions.empty()
               ? f32(static_cast<double>(wounds) /
                     static_cast<double>(n_.unit[static_cast<std::size_t>(t)].max_wounds))
               : fractions[static_cast<std::size_t>(wounds)];
    v[3] = flag(s.psyker(t));
    v[5] = flag(s.surge(t));
    // Only set bits are written (the block is zero): a scan of the bitsets, not a read per
    // power, as most of the block is 0.
    const int k = layout_.slot[static_cast<std::size_t>(t)];
    if (k >= 0) {
      float* known = v + kUnitFixed;
      scan_bits(bytes, layout_.bits, layout_.known_bit + k * powers, powers,
                [&](int p) { return known[p] = 1.0f, false; });
      float* tried = v + kUnitFixed + powers;
      scan_bits(bytes, layout_.bits, layout_.attempted_bit + k * powers, powers,
                [&](int p) { return tried[p] = 1.0f, false; });
    }
  }
  // Powers in force, either side's (bit (rank * U + unit) * 2 + owner): one scan of the set.
  scan_bits(bytes, layout_.bits, layout_.effects_bit, static_cast<int>(in_force_entry_.size()),
            [&](int b) { return out[in_force_entry_[static_cast<std::size_t>(b)]] = 1.0f, false; });
  // The pending cast, then power generation.
  float* c = out + kHead + units * (kUnitFixed + 3 * powers);
  if (s.has_cast()) {
    const PowerData& power = n_.power[static_cast<std::size_t>(s.power())];
    c[s.caster()] = 1.0f;
    c[units + s.power()] = 1.0f;
    c[units + powers + s.target()] = 1.0f;
    float* x = c + 2 * units + powers;
    x[0] = tenths_[static_cast<std::size_t>(s.dice())];
    x[1] = tenths_[static_cast<std::size_t>(s.successes())];
    x[2] = f32(static_cast<double>(power.warp_charge) / 3.0);
    x[3] = f32(static_cast<double>(deny_threshold(s)) / 6.0);  // 7E-5.2
    x[4] = flag(s.perils());
  }
  if (s.gen_unit() >= 0) {
    float* g = c + 2 * units + powers + kCastScalars;
    g[s.gen_unit()] = 1.0f;
    if (s.gen_disc() >= 0) g[units + s.gen_disc()] = 1.0f;
    if (s.gen_power() >= 0) g[units + n_.disciplines + s.gen_power()] = 1.0f;
  }
}

}  // namespace seventh
}  // namespace psygym
