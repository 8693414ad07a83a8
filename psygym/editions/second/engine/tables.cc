#include "tables.h"

#include <algorithm>

namespace psygym {
namespace second {
Weights difference_weights(const Weights& d, int plus_a, int plus_b) {
  // effects.dice_difference: the caller checks that den^2 stays within kMaxTableBits.
  Weights out;
  const int n = static_cast<int>(d.w.size());
  out.lo = (d.lo + plus_a) - (d.hi() + plus_b);
  out.w.assign(static_cast<std::size_t>(2 * n - 1), 0);
  out.den = d.den * d.den;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      out.w[static_cast<std::size_t>(i - j + n - 1)] +=
          d.w[static_cast<std::size_t>(i)] * d.w[static_cast<std::size_t>(j)];
  return out;
}

int roll_sixths(int needed) { return needed > 6 ? 0 : 7 - std::max(needed, 2); }

DuelTable::DuelTable(const Weights& diff) {
  auto weight = [&](int d) -> Wide {
    const int i = d - diff.lo;
    return i < 0 || i >= static_cast<int>(diff.w.size()) ? 0 : diff.w[static_cast<std::size_t>(i)];
  };
  auto build = [&](Side* side, int sign) {
    side->top = std::max(0, sign > 0 ? diff.hi() : -diff.lo);
    const std::size_t n = static_cast<std::size_t>(side->top) + 2;
    side->own.assign(n, 0.0);
    side->rest.assign(n, 0.0);
    side->has.assign(n, 0);
    side->has_rest.assign(n, 0);
    Wide rest = 0;
    for (int v = side->top; v >= 1; --v) {
      const Wide w = weight(sign * v);
      const std::size_t i = static_cast<std::size_t>(v);
      rest += w;
      side->has[i] = w > 0;
      side->own[i] = exact_ratio(w, diff.den);
      side->has_rest[i] = rest > 0;
      side->rest[i] = exact_ratio(rest, diff.den);
    }
  };
  build(&pos_, 1);
  build(&neg_, -1);
  const Wide z = weight(0);
  has_zero_ = z > 0;
  zero_ = exact_ratio(z, diff.den);
}

void DuelTable::outcomes(int mine, int enemy, std::vector<Outcome>* out) const {
  // Your psyker loses min(-d, mine) for d < 0: the cap -mine takes every d <= -mine.
  for (int v = std::min(mine, neg_.top); v >= 1; --v) {
    const std::size_t i = static_cast<std::size_t>(v);
    if (v == mine ? neg_.has_rest[i] : neg_.has[i])
      out->push_back({-v, v == mine ? neg_.rest[i] : neg_.own[i]});
  }
  if (has_zero_) out->push_back({0, zero_});
  for (int v = 1; v <= std::min(enemy, pos_.top); ++v) {
    const std::size_t i = static_cast<std::size_t>(v);
    if (v == enemy ? pos_.has_rest[i] : pos_.has[i])
      out->push_back({v, v == enemy ? pos_.rest[i] : pos_.own[i]});
  }
}

bool attack_weights(const Weights& hits, Wide pn, Wide pd, const Weights& damage, int per_model,
                    int most, Weights* out, std::string* why) {
  const int max_hits = std::max(0, hits.hi());
  Wide total = 0, pd_all = 0, dd_all = 0;
  if (hits.lo < 0) {
    *why = "an attack's hits can roll below 0";
    return false;
  }
  if (!checked_pow(pd, max_hits, &pd_all) || !checked_pow(damage.den, max_hits, &dd_all) ||
      !checked_mul(hits.den, pd_all, &total) || !checked_mul(total, dd_all, &total)) {
    *why = "an attack's exact table needs more than 2^" + std::to_string(kMaxTableBits);
    return false;
  }
  const Wide qn = pd - pn;
  const Wide dd = damage.den;
  const std::size_t size = static_cast<std::size_t>(most) + 1;
  // dmg[v]: weight (over dd) of one unsaved wound dealing v, capped at the wounds of a model.
  std::vector<Wide> dmg(static_cast<std::size_t>(std::min(per_model, most)) + 1, 0);
  for (std::size_t j = 0; j < damage.w.size(); ++j) {
    const int d = damage.lo + static_cast<int>(j);
    dmg[static_cast<std::size_t>(std::min(std::max(d, 0), std::min(per_model, most)))] +=
        damage.w[j];
  }
  // conv[k][w]: weight (over dd^k) of k unsaved wounds dealing w in all (w >= most counts as
  // most: the cap at the wounds left is at most the pool).
  std::vector<std::vector<Wide>> conv(1, std::vector<Wide>(size, 0));
  conv[0][0] = 1;
  for (int k = 1; k <= max_hits; ++k) {
    std::vector<Wide> next(size, 0);
    const std::vector<Wide>& prev = conv.back();
    for (std::size_t a = 0; a < size; ++a) {
      if (prev[a] == 0) continue;
      for (std::size_t v = 0; v < dmg.size(); ++v)
        if (dmg[v]) next[std::min(a + v, size - 1)] += prev[a] * dmg[v];
    }
    conv.push_back(std::move(next));
  }
  std::vector<Wide> pd_pow(static_cast<std::size_t>(max_hits) + 1, 1);
  std::vector<Wide> dd_pow(static_cast<std::size_t>(max_hits) + 1, 1);
  for (int i = 1; i <= max_hits; ++i) {
    pd_pow[static_cast<std::size_t>(i)] = pd_pow[static_cast<std::size_t>(i) - 1] * pd;
    dd_pow[static_cast<std::size_t>(i)] = dd_pow[static_cast<std::size_t>(i) - 1] * dd;
  }
  out->lo = 0;
  out->w.assign(size, 0);
  out->den = total;
  std::vector<Wide> row;
  for (std::size_t hi = 0; hi < hits.w.size(); ++hi) {
    const Wide wh = hits.w[hi];
    const int h = hits.lo + static_cast<int>(hi);
    if (wh == 0) continue;
    row.assign(1, 1);  // Pascal's row of h: the binomial's C(h, k)
    for (int r = 1; r <= h; ++r) {
      row.push_back(1);
      for (int c = r - 1; c >= 1; --c)
        row[static_cast<std::size_t>(c)] += row[static_cast<std::size_t>(c) - 1];
    }
    for (int k = 0; k <= h; ++k) {
      // binomial(h, p): C(h, k) pn^k qn^(h-k) over pd^h, scaled to the common total.
      Wide pk = row[static_cast<std::size_t>(k)];
      for (int i = 0; i < k; ++i) pk *= pn;
      for (int i = k; i < h; ++i) pk *= qn;
      if (pk == 0) continue;
      const Wide scale = wh * pk * pd_pow[static_cast<std::size_t>(max_hits - h)] *
                         dd_pow[static_cast<std::size_t>(max_hits - k)];
      const std::vector<Wide>& dist = conv[static_cast<std::size_t>(k)];
      for (std::size_t w = 0; w < size; ++w)
        if (dist[w]) out->w[w] += scale * dist[w];
    }
  }
  return true;
}

}  // namespace second
}  // namespace psygym
