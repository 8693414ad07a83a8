// Exact distributions of the 2nd-edition dice beyond the shared dice tables (dice_tables.h), as
// exact integer weights over one total: the twin of the parts of psygym/combat.py and
// effects.py that effects.py and responses.py use (wound_distribution, dice_difference, the
// duel). A probability is one correctly rounded division (exact_ratio), bit-identical to the
// reference's float(Fraction) (STYLE.md 7.4). Every table is built once: when the game is made,
// or on first use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dice_tables.h"
#include "exact.h"
#include "game.h"

namespace psygym {
namespace second {

// The largest denominator of the chance that one hit wounds unsaved: to hit (x/6, or 1), to
// wound (x/6), unsaved (x/6, or 1) (effects.SecondEffects.effect_distribution).
constexpr int kUnsavedDen = 216;

// (x + plus_a) - (y + plus_b) of two independent rolls of `d` (effects.dice_difference).
Weights difference_weights(const Weights& d, int plus_a, int plus_b);

// The chance that one D6 meets `needed` (combat.roll_chance), in sixths: 0 past 6, a natural 1
// always fails.
int roll_sixths(int needed);

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
