// Exact distributions of dice expressions as whole-number weights over one total, shared by the
// twins whose tables fit 128 bits: the twin of psygym/dice.py's distribution and of
// psygym/combat.py's capped. A probability is one correctly rounded division (exact_ratio),
// bit-identical to the reference's float(Fraction) (STYLE.md 7.4).
#pragma once

#include <cstdint>
#include <vector>

#include "exact.h"
#include "game.h"

namespace psygym {

// Largest total a table may have: sums of weights and the long division of exact_ratio stay
// within 128 bits. Each codec refuses scenarios past it (its MAX_TABLE_BITS).
constexpr int kMaxTableBits = 126;

// A parsed dice expression count x D sides + modifier (sides == 0: the constant modifier).
struct DiceExpr {
  int count = 0;
  int sides = 0;
  int modifier = 0;
  int min() const { return sides ? count + modifier : modifier; }
  int max() const { return sides ? count * sides + modifier : modifier; }
};

// Value lo + i has weight w[i] out of den (every weight counted, zeros included).
struct Weights {
  int lo = 0;
  std::vector<Wide> w;
  Wide den = 1;
  int hi() const { return lo + static_cast<int>(w.size()) - 1; }
};

// a * b, or false if it would pass 2^kMaxTableBits.
bool checked_mul(Wide a, Wide b, Wide* out);
// a^n, or false if it would pass 2^kMaxTableBits.
bool checked_pow(Wide a, int n, Wide* out);

// Exact distribution of the total of a dice expression (dice.distribution), over sides^count.
Weights dice_weights(const DiceExpr& e);

// A distribution capped at the wounds left, min(value, remaining) and never below 0
// (combat.capped), for every remaining at once: the outcomes below the cap keep their own
// probability and the cap takes the rest.
class CapTable {
 public:
  CapTable() : CapTable(Weights{0, {1}, 1}) {}  // certain 0
  explicit CapTable(const Weights& d);
  // The outcomes for a unit with `remaining` wounds, ascending (the reference's sorted order).
  void outcomes(int remaining, std::vector<Outcome>* out) const;
  // How many outcomes there are, and the first (the only one when there is one).
  int count(int remaining) const;
  int first(int remaining) const;

 private:
  int top_ = 0;               // largest value with weight (0 at least)
  std::vector<double> own_;   // P(value == v), for v in [0, top]
  std::vector<double> rest_;  // P(value >= v)
  std::vector<uint8_t> has_;  // value v has weight
  std::vector<int> before_;   // how many values in [0, v) have weight
  int first_ = 0;             // lowest value with weight
};

}  // namespace psygym
