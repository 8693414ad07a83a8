// Exact 7th-edition chance tables: the twin of the Fraction sums in odds.py and chances.py
// (cast_distribution, deny_chance, ld_pass, _rolloff_win, allocate_wounds, _attack_wounds,
// _effect_distribution, _removed_hits_dist).
//
// Every table is a list of whole-number weights over one whole-number total, so a probability
// is one correctly rounded division, the value Python's float(Fraction) gives (STYLE.md 7.4).
// The weights are unbounded integers (BigUInt): a 20D20 dice expression or a 136-dice casting
// roll counts past 128 bits, and the tables are built once per key, off the hot path.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "game.h"

namespace psygym {
namespace seventh {

// An unsigned integer of any size (little-endian 32-bit limbs, no leading zero limbs).
class BigUInt {
 public:
  BigUInt() = default;
  explicit BigUInt(uint64_t v);

  bool is_zero() const { return limbs_.empty(); }
  int bit_length() const;
  int compare(const BigUInt& other) const;  // -1, 0 or 1
  BigUInt& operator+=(const BigUInt& other);
  BigUInt& operator-=(const BigUInt& other);  // requires *this >= other
  BigUInt operator*(const BigUInt& other) const;
  BigUInt shifted_left(int bits) const;
  bool bit(int i) const;
  static BigUInt power(uint64_t base, int exponent);

 private:
  void trim();
  std::vector<uint32_t> limbs_;
};

// num / den correctly rounded to the nearest double (ties to even, subnormals included);
// 0 <= num <= den, den > 0.
double big_ratio(const BigUInt& num, const BigUInt& den);

// A dice expression "count D sides + modifier" (sides == 0: the constant `modifier`).
struct Dice {
  int count = 0;
  int sides = 0;
  int modifier = 0;
};

// An exact distribution: value -> weight, over `total` (the weights sum to `total`, or less
// where the reference's own sums drop mass, as binomial() of a negative count does).
struct WeightedDist {
  std::map<int, BigUInt> weights;
  BigUInt total{1};
};

// Distribution of a dice expression (psygym.dice.distribution).
WeightedDist dice_distribution(const Dice& dice);
// min(value, cap), never below 0 (psygym.combat.capped).
WeightedDist capped(const WeightedDist& dist, int cap);

// The outcomes of a chance node, sorted by action, zero weights dropped (rules._exact).
std::vector<Outcome> outcomes_of(const WeightedDist& dist);
// Outcomes 0 (1 - p) and 1 (p) for p = num / den, zero ones dropped (rules._binary).
std::vector<Outcome> binary_outcomes(uint64_t num, uint64_t den);
std::vector<Outcome> binary_outcomes(const BigUInt& num, const BigUInt& den);

// Outcomes 2 * successes + perils of a casting roll of `dice` dice (cast_distribution,
// 7E-4.3, 7E-4.4): 4+ succeeds; Perils on two or more 6s, or on any double (doubles_peril).
std::vector<Outcome> cast_outcomes(int dice, bool doubles_peril);
// Denied (1) or not (0): at least `successes` of `dice` dice roll `threshold`+ (deny_chance,
// 7E-5.2, 7E-5.3).
std::vector<Outcome> deny_outcomes(int dice, int threshold, int successes);
// Passed (1) or failed (0) a 2D6 Leadership test (ld_pass, 7E-6).
std::vector<Outcome> leadership_outcomes(int leadership);
// Ways out of 36 that D6 + ld_a beats D6 + ld_b (_rolloff_win).
int rolloff_wins(int ld_a, int ld_b);

// combat.roll_chance as sixths: 7 - max(needed, 2), or 0 for needed > 6 or none (needed <= 0).
int roll_sixths(int needed);
// combat.to_wound_7th: the roll needed, or 0 where the wound is impossible.
int to_wound_7th(int strength, int toughness);
// 1 - combat.save_chance(armour, invulnerable) in sixths, as unsaved_chance_7th (7E-7.1);
// invulnerable 0: none; ap_none: the attack has no AP.
int unsaved_sixths(int save, int invulnerable, bool ap_none, int ap);

// Wounds lost to `hits` hits, each an unsaved wound with chance p_num / p_den, each taking
// `damage` wounds from the model being hit (never more than it has left), or the whole model
// with `instant` (rules._attack_wounds with allocate_wounds).
WeightedDist attack_wounds(const WeightedDist& hits, uint64_t p_num, uint64_t p_den,
                           const WeightedDist& damage, int wounds_left, int per_model,
                           bool instant);

}  // namespace seventh
}  // namespace psygym
