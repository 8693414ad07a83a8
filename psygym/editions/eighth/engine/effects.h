// Exact distributions of the 8th-edition dice, as exact integer weights over one total: the twin
// of psygym/editions/eighth/effects.py (and of the parts of psygym/dice.py and psygym/combat.py
// it uses). A probability is one correctly rounded division (exact_ratio), bit-identical to the
// reference's float(Fraction) (STYLE.md 7.4). Tables are built once, when the game is made
// (attack tables, which depend on the wounds left model by model, once per key on first use).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exact.h"
#include "game.h"

namespace psygym {
namespace eighth {

// Largest total a table may have: sums of weights and the long division of exact_ratio stay
// within 128 bits. The codec refuses scenarios past it (MAX_TABLE_BITS in engine/__init__.py).
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

// Exact distribution of the total of a dice expression (dice.distribution), over sides^count.
Weights dice_weights(const DiceExpr& e);

// 2D6 totals 2..12 (8E-4.1): effects.two_d6.
const std::vector<Outcome>& test_outcomes();
// Denied (1) or not (0) for a test total 0..12 (8E-5.2): rules._exact_chance's "deny" table,
// outcomes of probability 0 left out.
const std::vector<Outcome>& deny_outcomes(int total);
// Whether some Deny the Witch roll beats the test total (rules._deniable).
bool deniable(int total);

// A distribution capped at the wounds left, min(value, remaining) and never below 0
// (combat.capped), for every remaining at once: the outcomes below the cap keep their own
// probability and the cap takes the rest (effects.mortal_distribution, rolloff_distribution).
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
  int top_ = 0;                  // largest value with weight (0 at least)
  std::vector<double> own_;      // P(value == v), for v in [0, top]
  std::vector<double> rest_;     // P(value >= v)
  std::vector<uint8_t> has_;     // value v has weight
  std::vector<int> before_;      // how many values in [0, v) have weight
  int first_ = 0;                // lowest value with weight
};

// Wounds lost to a Leadership roll-off (effects.rolloff_distribution) before the cap: caster and
// target each roll `dice` + Leadership; a higher caster deals `win` (or the difference), a tie
// deals `tie`. False (and `why`) if its total would pass kMaxTableBits.
bool rolloff_weights(const DiceExpr& dice, bool difference, const DiceExpr& win,
                     const DiceExpr& tie, int caster_ld, int target_ld, Weights* out,
                     std::string* why);

// An attack effect against one target (effects.attack_distribution): automatic hits, each
// unsaved with probability unsaved_num / unsaved_den, dealing `damage` to the model already
// wounded (per_model wounds a model), excess lost.
struct Attack {
  Weights hits;
  Weights damage;
  int max_hits = 0;  // max(hits, 0) at most
  Wide unsaved_num = 0;
  Wide unsaved_den = 1;
  Wide total = 1;    // den(hits) * unsaved_den^max_hits * den(damage)^max_hits
};

// The attack of `hits`, `damage` with that unsaved chance; false (and `why`) past kMaxTableBits.
bool make_attack(const DiceExpr& hits, const DiceExpr& damage, Wide unsaved_num,
                 Wide unsaved_den, Attack* out, std::string* why);
// Its outcomes against a target with `remaining` wounds in models of `per_model` wounds.
void attack_outcomes(const Attack& a, int remaining, int per_model, std::vector<Outcome>* out);

}  // namespace eighth
}  // namespace psygym
