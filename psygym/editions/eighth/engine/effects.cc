#include "effects.h"

#include <algorithm>
#include <map>

namespace psygym {
namespace eighth {
namespace {

// Ways for 2D6 to total t (out of 36).
Wide two_d6_ways(int t) {
  return (t < 2 || t > 12) ? 0 : static_cast<Wide>(6 - (t > 7 ? t - 7 : 7 - t));
}

// Ways for a Deny the Witch 2D6 to be strictly greater than `total` (effects.deny_chance).
Wide deny_ways(int total) {
  Wide ways = 0;
  for (int t = 2; t <= 12; ++t)
    if (t > total) ways += two_d6_ways(t);
  return ways;
}

Weights from_map(const std::map<int, Wide>& m, Wide den) {
  Weights out;
  out.den = den;
  if (m.empty()) {
    out.w = {den};
    return out;
  }
  out.lo = m.begin()->first;
  out.w.assign(static_cast<std::size_t>(m.rbegin()->first - out.lo + 1), 0);
  for (const auto& kv : m) out.w[static_cast<std::size_t>(kv.first - out.lo)] += kv.second;
  return out;
}

}  // namespace

const std::vector<Outcome>& test_outcomes() {  // 8E-4.1
  static const std::vector<Outcome> table = [] {
    std::vector<Outcome> t;
    for (int total = 2; total <= 12; ++total)
      t.push_back({total, exact_ratio(two_d6_ways(total), 36)});
    return t;
  }();
  return table;
}

const std::vector<Outcome>& deny_outcomes(int total) {  // 8E-5.2
  static const std::vector<std::vector<Outcome>> tables = [] {
    std::vector<std::vector<Outcome>> all;
    for (int t = 0; t <= 12; ++t) {
      const Wide q = deny_ways(t);
      std::vector<Outcome> out;
      if (36 - q > 0) out.push_back({0, exact_ratio(36 - q, 36)});
      if (q > 0) out.push_back({1, exact_ratio(q, 36)});
      all.push_back(out);
    }
    return all;
  }();
  return tables[static_cast<std::size_t>(std::min(std::max(total, 0), 12))];
}

bool deniable(int total) { return deny_ways(total) > 0; }

bool rolloff_weights(const DiceExpr& dice, bool difference, const DiceExpr& win,
                     const DiceExpr& tie, int caster_ld, int target_ld, Weights* out,
                     std::string* why) {
  const Weights roll = dice_weights(dice);
  const Weights won = difference ? Weights{0, {1}, 1} : dice_weights(win);
  const Weights tied = dice_weights(tie);
  Wide den = 0;
  if (!checked_mul(roll.den, roll.den, &den) || !checked_mul(den, won.den, &den) ||
      !checked_mul(den, tied.den, &den)) {
    *why = "a roll-off's exact table needs more than 2^" + std::to_string(kMaxTableBits);
    return false;
  }
  std::map<int, Wide> m;
  for (std::size_t i = 0; i < roll.w.size(); ++i) {
    const int a = roll.lo + static_cast<int>(i) + caster_ld;
    for (std::size_t j = 0; j < roll.w.size(); ++j) {
      const int b = roll.lo + static_cast<int>(j) + target_ld;
      const Wide base = roll.w[i] * roll.w[j];
      if (a > b) {
        if (difference) {
          m[a - b] += base * tied.den;
        } else {
          for (std::size_t k = 0; k < won.w.size(); ++k)
            m[won.lo + static_cast<int>(k)] += base * won.w[k] * tied.den;
        }
      } else if (a == b) {
        for (std::size_t k = 0; k < tied.w.size(); ++k)
          m[tied.lo + static_cast<int>(k)] += base * tied.w[k] * won.den;
      } else {
        m[0] += base * won.den * tied.den;
      }
    }
  }
  *out = from_map(m, den);
  return true;
}

bool make_attack(const DiceExpr& hits, const DiceExpr& damage, Wide unsaved_num,
                 Wide unsaved_den, Attack* out, std::string* why) {
  out->hits = dice_weights(hits);
  out->damage = dice_weights(damage);
  out->max_hits = std::max(0, out->hits.hi());
  out->unsaved_num = unsaved_num;
  out->unsaved_den = unsaved_den;
  Wide total = out->hits.den;
  for (int i = 0; i < out->max_hits; ++i) {
    if (!checked_mul(total, unsaved_den, &total) || !checked_mul(total, out->damage.den, &total)) {
      *why = "an attack's exact table needs more than 2^" + std::to_string(kMaxTableBits);
      return false;
    }
  }
  out->total = total;
  return true;
}

void attack_outcomes(const Attack& a, int remaining, int per_model, std::vector<Outcome>* out) {
  const int rem = std::max(remaining, 0);
  const std::size_t size = static_cast<std::size_t>(rem) + 1;
  const Wide dd = a.damage.den;
  const Wide pn = a.unsaved_num, pd = a.unsaved_den, qn = pd - pn;
  // by_unsaved[i][left]: weight (out of dd^i) of `left` wounds after i unsaved wounds.
  std::vector<std::vector<Wide>> by_unsaved(1, std::vector<Wide>(size, 0));
  by_unsaved[0][static_cast<std::size_t>(rem)] = 1;
  std::vector<Wide> lost(size, 0);
  std::vector<Wide> row = {1};
  std::vector<Wide> pd_pow(static_cast<std::size_t>(a.max_hits) + 1, 1);
  std::vector<Wide> dd_pow(static_cast<std::size_t>(a.max_hits) + 1, 1);
  for (int i = 1; i <= a.max_hits; ++i) {
    pd_pow[static_cast<std::size_t>(i)] = pd_pow[static_cast<std::size_t>(i) - 1] * pd;
    dd_pow[static_cast<std::size_t>(i)] = dd_pow[static_cast<std::size_t>(i) - 1] * dd;
  }
  auto grow = [&](int k) {
    while (static_cast<int>(by_unsaved.size()) <= k) {
      const std::vector<Wide>& prev = by_unsaved.back();
      std::vector<Wide> next(size, 0);
      for (std::size_t left = 0; left < size; ++left) {
        const Wide q = prev[left];
        if (q == 0) continue;
        if (left == 0) {  // effects._damage_step: nothing left to lose
          next[0] += q * dd;
          continue;
        }
        const int l = static_cast<int>(left);
        const int current = (l - 1) % per_model + 1;  // wounds of the model being damaged
        for (std::size_t j = 0; j < a.damage.w.size(); ++j) {
          const int d = a.damage.lo + static_cast<int>(j);
          const int lost = std::min(std::max(d, 0), current);
          next[static_cast<std::size_t>(l - lost)] += q * a.damage.w[j];
        }
      }
      by_unsaved.push_back(std::move(next));
    }
  };
  for (std::size_t hi = 0; hi < a.hits.w.size(); ++hi) {
    const Wide wh = a.hits.w[hi];
    if (wh == 0) continue;
    const int h = std::max(0, a.hits.lo + static_cast<int>(hi));
    // binomial(h, p): C(h, k) pn^k qn^(h-k) out of pd^h (Pascal's row of h; both chances > 0).
    const bool sure = pn == 0 || qn == 0;
    if (!sure) {
      row.assign(1, 1);
      for (int r = 1; r <= h; ++r) {
        row.push_back(1);
        for (int c = r - 1; c >= 1; --c)
          row[static_cast<std::size_t>(c)] += row[static_cast<std::size_t>(c) - 1];
      }
    }
    for (int k = 0; k <= h; ++k) {
      Wide pk = 1;
      if (sure) {
        if ((pn == 0 && k != 0) || (qn == 0 && k != h)) continue;
      } else {
        pk = row[static_cast<std::size_t>(k)];
        for (int i = 0; i < k; ++i) pk *= pn;
        for (int i = k; i < h; ++i) pk *= qn;
      }
      grow(k);
      const Wide scale = wh * pk * pd_pow[static_cast<std::size_t>(a.max_hits - h)] *
                         dd_pow[static_cast<std::size_t>(a.max_hits - k)];
      const std::vector<Wide>& dist = by_unsaved[static_cast<std::size_t>(k)];
      for (std::size_t left = 0; left < size; ++left)
        if (dist[left] > 0) lost[static_cast<std::size_t>(rem) - left] += scale * dist[left];
    }
  }
  for (std::size_t w = 0; w < size; ++w)
    if (lost[w] > 0) out->push_back({static_cast<int32_t>(w), exact_ratio(lost[w], a.total)});
}

}  // namespace eighth
}  // namespace psygym
