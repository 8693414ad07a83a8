// What a player sees of a Rogue Trader game: the twin of views.py's RTViews.observe, bit for
// bit. Each value is computed in double as the reference computes it in Python, then rounded
// once to float32 as numpy stores it. The attacker's pending bid is shown to the attacker only
// (RT-3.4).
#include <algorithm>

#include "rules.h"

namespace psygym {
namespace rogue_trader {
namespace {

constexpr std::size_t kGlobal = 10;        // views._GLOBAL
constexpr std::size_t kUnitFeatures = 16;  // views._UNIT_FEATURES
constexpr std::size_t kActing = 15;        // views._ACTING
constexpr double kNorm = 20.0;             // views._NORM

// views._KIND_OF: the one-hot kind of decision, 5 for none (a chance node or the end).
std::size_t kind_of(int phase) {
  switch (phase) {
    case kChoose:
      return 0;
    case kTarget:
      return 1;
    case kAmount:
      return 2;
    case kAttackBid:
      return 3;
    case kSaveBid:
      return 4;
    default:
      return 5;
  }
}

float f32(double v) { return static_cast<float>(v); }

}  // namespace

void RogueTraderGame::observe(const uint8_t* s, int player, float* out) const {
  if (player != 0 && player != 1) throw EngineError(ErrorCode::kValue, "player must be 0 or 1");
  const Header h = load_header(s);
  const int n = sc_.n_units, na = sc_.n_abilities;
  std::fill(out, out + obs_size_, 0.0f);
  // Per unit (views._unit_row), "acting now" off.
  for (int i = 0; i < n; ++i) {
    const UnitData& d = unit_data(i);
    const Unit us = unit(s, i);
    float* row = out + units_offset_ + static_cast<std::size_t>(i) * unit_size_;
    row[0] = d.owner == player ? 1.0f : 0.0f;
    row[1] = d.psyker ? 1.0f : 0.0f;
    row[2] = f32(static_cast<double>(us.hp) / d.max_hp);
    row[3] = us.fighting() ? 1.0f : 0.0f;
    row[4] = us.out() ? 1.0f : 0.0f;
    row[5] = f32(us.aura / 4.0);
    row[6] = f32(us.stolen / 6.0);
    row[7] = us.confused() ? 1.0f : 0.0f;
    row[8] = us.afraid() ? 1.0f : 0.0f;
    row[9] = f32((d.will_power + us.wp_bonus) / 12.0);
    row[10] = f32(us.points / kNorm);
    row[11] = f32(us.level / kNorm);
    row[12] = us.points >= sc_.no_test_at ? 1.0f : 0.0f;
    row[13] = us.resting() ? 1.0f : 0.0f;
    row[14] = static_cast<float>(us.wp_bonus);
    each_held(s, layout_, i, [&](int a) {
      row[kUnitFeatures + static_cast<std::size_t>(a)] = 1.0f;
      return true;
    });
  }
  // The head (views.observe).
  out[kind_of(h.phase)] = 1.0f;
  out[6] = current_player(s) == player ? 1.0f : 0.0f;
  out[7] = h.active == player ? 1.0f : 0.0f;
  const double turns = sc_.turns;
  out[8] = f32(h.turn / turns);
  out[9] = f32((sc_.turns - h.turn) / turns);
  if (h.ability >= 0) out[kGlobal + static_cast<std::size_t>(h.ability)] = 1.0f;
  const std::size_t base = kGlobal + static_cast<std::size_t>(na);
  const std::size_t un = static_cast<std::size_t>(n);
  const bool shown = is_decision(h.phase) || h.phase == kTest || h.phase == kResolve;
  if (h.actor >= 0 && shown) {
    out[base + static_cast<std::size_t>(h.actor)] = 1.0f;
    if (is_decision(h.phase))
      out[units_offset_ + static_cast<std::size_t>(h.actor) * unit_size_ + kActing] = 1.0f;
  }
  if (h.target >= 0) out[base + un + static_cast<std::size_t>(h.target)] = 1.0f;
  if (h.phase == kSaveBid && player == h.active)  // only the attacker sees its bid (RT-3.4)
    out[base + 2 * un] = f32(static_cast<double>(h.attack_bid) / std::max(1, sc_.bid_limit));
  out[base + 2 * un + 1] = f32(static_cast<double>(h.amount) / std::max(1, sc_.max_number));
}

}  // namespace rogue_trader
}  // namespace psygym
