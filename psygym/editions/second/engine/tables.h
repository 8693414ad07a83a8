// Exact distributions of the 2nd-edition dice, as exact integer weights over one total: the
// twin of the parts of psygym/dice.py and psygym/combat.py that effects.py and responses.py use
// (distribution, capped, wound_distribution, dice_difference). A probability is one correctly
// rounded division (exact_ratio), bit-identical to the reference's float(Fraction)
// (STYLE.md 7.4). Every table is built once: when the game is made, or on first use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exact.h"
#include "game.h"

namespace psygym {
namespace second {

// Largest total a table may have: sums of weights and the long division of exact_ratio stay
// within 128 bits. The codec refuses scenarios past it (MAX_TABLE_BITS in engine/__init__.py).
constexpr int kMaxTableBits = 126;
// The largest denominator of the chance that one hit wounds unsaved: to hit (x/6, or 1), to
// wound (x/6), unsaved (x/6, or 1) (effects.SecondEffects.effect_distribution).
constexpr int kUnsavedDen = 216;

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
// (x + plus_a) - (y + plus_b) of two independent rolls of `d` (effects.dice_difference).
Weights difference_weights(const Weights& d, int plus_a, int plus_b);

// The chance that one D6 meets `needed` (combat.roll_chance), in sixths: 0 past 6, a natural 1
// always fails.
int roll_sixths(int needed);

// A distribution capped at the wounds left, max(0, min(value, remaining)) (combat.capped), for
// every remaining at once: the outcomes below the cap keep their own probability and the cap
// takes the rest.
class CapTable {
 public:
  CapTable() : CapTable(Weights{0, {1}, 1}) {}  // certain 0
  explicit CapTable(const Weights& d);
  // The outcomes for a unit with `remaining` wounds, ascending (the reference's sorted order).
  void outcomes(int remaining, std::vector<Outcome>* out) const;

 private:
  int top_ = 0;              // largest value with weight (0 at least)
  std::vector<double> own_;  // P(value == v), for v in [0, top]
  std::vector<double> rest_; // P(value >= v)
  std::vector<uint8_t> has_; // value v has weight
};

// A Psychic Duel's result (effects.SecondEffects.duel_distribution, 2E-7): the difference d of
// the two rolls, +min(d, enemy's wounds left) for d > 0, -min(-d, own wounds left) below.
class DuelTable {
 public:
  DuelTable() : DuelTable(Weights{0, {1}, 1}) {}
  explicit DuelTable(const Weights& diff);
  // The outcomes for psykers with mine >= 1 and enemy >= 1 wounds left, ascending.
  void outcomes(int mine, int enemy, std::vector<Outcome>* out) const;

 private:
  // For one sign: P(|d| == v) and P(|d| >= v) of the differences of that sign, v in [1, top].
  struct Side {
    int top = 0;
    std::vector<double> own, rest;
    std::vector<uint8_t> has, has_rest;
  };
  Side pos_, neg_;
  double zero_ = 0.0;
  bool has_zero_ = false;
};

// The wounds an attack inflicts before the cap at the wounds left (combat.wound_distribution):
// `hits` hits (never below 0), each an unsaved wound with chance pn / pd, each unsaved wound
// dealing `damage` capped at `per_model` (effects.SecondEffects.effect_distribution), the sum
// capped at `most` (the victim's wound pool: no unit has more left). False (and `why`) if the
// table's total would pass 2^kMaxTableBits.
bool attack_weights(const Weights& hits, Wide pn, Wide pd, const Weights& damage, int per_model,
                    int most, Weights* out, std::string* why);

}  // namespace second
}  // namespace psygym
