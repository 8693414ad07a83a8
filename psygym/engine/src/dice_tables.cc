#include "dice_tables.h"

#include <algorithm>

namespace psygym {
namespace {

constexpr Wide kLimit = static_cast<Wide>(1) << kMaxTableBits;

}  // namespace

bool checked_mul(Wide a, Wide b, Wide* out) {
  if (a == 0 || b == 0) {
    *out = 0;
    return true;
  }
  if (a > kLimit / b) return false;
  *out = a * b;
  return *out <= kLimit;
}

bool checked_pow(Wide a, int n, Wide* out) {
  Wide r = 1;
  for (int i = 0; i < n; ++i)
    if (!checked_mul(r, a, &r)) return false;
  *out = r;
  return true;
}

Weights dice_weights(const DiceExpr& e) {
  Weights out;
  if (e.sides <= 0 || e.count <= 0) {  // a constant (dice.distribution)
    out.lo = e.modifier;
    out.w = {1};
    out.den = 1;
    return out;
  }
  // The sum of `count` dice, one die at a time (dice._dice_sum): 20^20 < 2^87 at most.
  std::vector<Wide> sum = {1};  // sum[i]: ways to total i over the dice rolled so far
  for (int d = 0; d < e.count; ++d) {
    std::vector<Wide> next(sum.size() + static_cast<std::size_t>(e.sides), 0);
    for (std::size_t i = 0; i < sum.size(); ++i)
      for (int f = 1; f <= e.sides; ++f) next[i + static_cast<std::size_t>(f)] += sum[i];
    sum.swap(next);
    out.den *= static_cast<Wide>(e.sides);
  }
  out.lo = e.count + e.modifier;
  out.w.assign(sum.begin() + e.count, sum.end());
  return out;
}

CapTable::CapTable(const Weights& d) {
  // combat.capped's floor: every value at or below 0 counts as 0.
  const int hi = std::max(0, d.hi());
  std::vector<Wide> agg(static_cast<std::size_t>(hi) + 1, 0);
  for (std::size_t i = 0; i < d.w.size(); ++i)
    agg[static_cast<std::size_t>(std::max(0, d.lo + static_cast<int>(i)))] += d.w[i];
  top_ = 0;
  for (int v = 0; v <= hi; ++v)
    if (agg[static_cast<std::size_t>(v)] > 0) top_ = v;
  const std::size_t n = static_cast<std::size_t>(top_) + 1;
  own_.assign(n, 0.0);
  rest_.assign(n, 0.0);
  has_.assign(n, 0);
  before_.assign(n + 1, 0);
  Wide rest = 0;
  for (int v = top_; v >= 0; --v) {
    const std::size_t i = static_cast<std::size_t>(v);
    rest += agg[i];
    rest_[i] = exact_ratio(rest, d.den);
    if (agg[i] > 0) {
      has_[i] = 1;
      own_[i] = exact_ratio(agg[i], d.den);
    }
  }
  first_ = top_;
  for (int v = 0; v <= top_; ++v) {
    const std::size_t i = static_cast<std::size_t>(v);
    before_[i + 1] = before_[i] + has_[i];
  }
  for (int v = 0; v <= top_; ++v)
    if (has_[static_cast<std::size_t>(v)]) {
      first_ = v;
      break;
    }
}

void CapTable::outcomes(int remaining, std::vector<Outcome>* out) const {
  const int r = std::max(remaining, 0);
  if (r >= top_) {
    for (int v = 0; v <= top_; ++v)
      if (has_[static_cast<std::size_t>(v)]) out->push_back({v, own_[static_cast<std::size_t>(v)]});
    return;
  }
  for (int v = 0; v < r; ++v)
    if (has_[static_cast<std::size_t>(v)]) out->push_back({v, own_[static_cast<std::size_t>(v)]});
  out->push_back({r, rest_[static_cast<std::size_t>(r)]});
}

int CapTable::count(int remaining) const {
  const int r = std::max(remaining, 0);
  if (r >= top_) return before_[static_cast<std::size_t>(top_) + 1];
  return before_[static_cast<std::size_t>(r)] + 1;
}

int CapTable::first(int remaining) const { return std::min(first_, std::max(remaining, 0)); }

}  // namespace psygym
