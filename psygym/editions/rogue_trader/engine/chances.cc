#include "chances.h"

#include <algorithm>

namespace psygym {
namespace rogue_trader {

DiceTable dice_table(const Dice& d) {
  DiceTable t;
  if (d.sides == 0) {  // a constant
    t.values.push_back(d.modifier);
    t.weights.push_back(1);
    return t;
  }
  // dice._dice_sum: the ways to throw each total, over sides^count throws.
  std::vector<Wide> ways{1};  // ways[k]: totals of k + (dice thrown so far)
  for (int k = 0; k < d.count; ++k) {
    std::vector<Wide> next(ways.size() + static_cast<std::size_t>(d.sides) - 1, 0);
    for (std::size_t i = 0; i < ways.size(); ++i)
      for (int f = 0; f < d.sides; ++f) next[i + static_cast<std::size_t>(f)] += ways[i];
    ways.swap(next);
    t.total *= static_cast<Wide>(d.sides);
  }
  for (std::size_t i = 0; i < ways.size(); ++i) {
    t.values.push_back(d.count + static_cast<int>(i) + d.modifier);
    t.weights.push_back(ways[i]);
  }
  return t;
}

DiceTable capped(const DiceTable& t, int cap) {
  DiceTable out;
  out.total = t.total;
  for (std::size_t i = 0; i < t.values.size(); ++i) {
    const int k = std::max(0, std::min(t.values[i], cap));
    if (!out.values.empty() && out.values.back() == k) {
      out.weights.back() += t.weights[i];
    } else {
      out.values.push_back(k);
      out.weights.push_back(t.weights[i]);
    }
  }
  return out;
}

int two_d6_at_most(int n) {
  int count = 0;
  for (int a = 1; a <= 6; ++a)
    for (int b = 1; b <= 6; ++b)
      if (a + b <= n) ++count;
  return count;
}

int roll_sixths(int needed) {
  if (needed > 6) return 0;
  return 7 - std::max(needed, 2);
}

int to_wound_rt(int strength, int toughness) {
  const int diff = strength - toughness;
  if (diff >= 2) return 2;
  if (diff <= -3) return kNever;
  return 4 - diff;  // {1: 3, 0: 4, -1: 5, -2: 6}
}

int armour_needed(int save, int aura) {
  if (aura <= 0) return save <= 6 ? save : kNever;
  return std::min(save, 7) - aura;
}

void attack_outcomes(int save36, int p36, const DiceTable& damage, int cap,
                     std::vector<Outcome>* out) {
  // Over 36 (psychic save) x 36 (the hit wounds unsaved) x the damage dice's total.
  const Wide t = damage.total;
  const Wide den = 36 * 36 * t;
  const Wide failed = static_cast<Wide>(36 - save36);
  const DiceTable wounds = capped(damage, cap);
  // Outcome 1 + w for w in wounds' values (increasing, w >= 0): outcome 1 takes w = 0 too.
  std::vector<Wide> num(wounds.values.empty() ? 2 : 2 + static_cast<std::size_t>(wounds.max()),
                        0);
  num[0] = static_cast<Wide>(save36) * 36 * t;
  num[1] = failed * static_cast<Wide>(36 - p36) * t;
  for (std::size_t i = 0; i < wounds.values.size(); ++i)
    num[1 + static_cast<std::size_t>(wounds.values[i])] +=
        failed * static_cast<Wide>(p36) * wounds.weights[i];
  for (std::size_t o = 0; o < num.size(); ++o)
    if (num[o] > 0) out->push_back({static_cast<int32_t>(o), exact_ratio(num[o], den)});
}

void steal_mind_outcomes(int save36, const DiceTable& duration, std::vector<Outcome>* out) {
  const Wide t = duration.total;
  const Wide den = 36 * t;
  const Wide failed = static_cast<Wide>(36 - save36);
  Wide lost = 0;  // durations of no turn at all
  for (std::size_t i = 0; i < duration.values.size(); ++i)
    if (duration.values[i] <= 0) lost += duration.weights[i];
  const Wide saved = static_cast<Wide>(save36) * t + failed * lost;
  if (saved > 0) out->push_back({0, exact_ratio(saved, den)});
  for (std::size_t i = 0; i < duration.values.size(); ++i) {
    const Wide w = failed * duration.weights[i];
    if (duration.values[i] > 0 && w > 0)
      out->push_back({duration.values[i], exact_ratio(w, den)});
  }
}

void table_outcomes(const DiceTable& t, std::vector<Outcome>* out) {
  for (std::size_t i = 0; i < t.values.size(); ++i)
    if (t.weights[i] > 0) out->push_back({t.values[i], exact_ratio(t.weights[i], t.total)});
}

}  // namespace rogue_trader
}  // namespace psygym
