// Exact chances of Rogue Trader psionics: the twin of chances.py (RT-2.3, RT-3, RT-4.3), with
// the dice distributions of psygym/dice.py and the rolls of psygym/combat.py it reads.
//
// Every table is a list of whole-number weights over one whole-number total (a dice
// expression's sides^count, times 36 for a 2D6 save and 36 for a D6 wound and a D6 armour
// save), so a probability is one correctly rounded division, the value Python's
// float(Fraction) gives (STYLE.md 7.4). The codec refuses totals past 128 bits.
#pragma once

#include <cstdint>
#include <vector>

#include "exact.h"
#include "game.h"

namespace psygym {
namespace rogue_trader {

// A dice expression "count D sides + modifier" (sides == 0: the constant `modifier`).
struct Dice {
  int count = 0;
  int sides = 0;
  int modifier = 0;
};

// dice.distribution: the totals in increasing order with their weights over `total`.
struct DiceTable {
  std::vector<int> values;
  std::vector<Wide> weights;
  Wide total = 1;

  int max() const { return values.empty() ? 0 : values.back(); }
  int min() const { return values.empty() ? 0 : values.front(); }
};

// Bits of the largest total a dice expression's table may have (the codec's MAX_TABLE_BITS).
constexpr int kMaxDiceBits = 100;

// dice.distribution(expr); the caller keeps count, sides and the total within kMaxDiceBits.
DiceTable dice_table(const Dice& d);

// combat.capped: the distribution of max(0, min(value, cap)).
DiceTable capped(const DiceTable& t, int cap);

// chances.two_d6_at_most as a count of the 36 throws of 2D6 (RT-2.3, RT-3.1).
int two_d6_at_most(int n);

// combat.roll_chance as sixths: a D6 meeting `needed` (a natural 1 always fails; kNever or
// above 6: impossible).
constexpr int kNever = 1000;
int roll_sixths(int needed);

// combat.to_wound_rt (RT-4.2): 2+ at S >= T+2 ... 6+ at S = T-2, kNever at S <= T-3.
int to_wound_rt(int strength, int toughness);

// chances.armour_needed (RT-4.3): the save roll against physical attacks with an aura of
// `aura` levels, kNever for none.
int armour_needed(int save, int aura);

// chances.attack_outcomes: 0 saved (p_save = save36 / 36), 1 no wound, 1 + w for w wounds of
// a hit that wounds unsaved with chance p36 / 36, capped at `cap`.
void attack_outcomes(int save36, int p36, const DiceTable& damage, int cap,
                     std::vector<Outcome>* out);

// effects.resolve_distribution of Steal Mind (RT-4.5): 0 saved or no turn lost, else the
// duration d > 0 rolled.
void steal_mind_outcomes(int save36, const DiceTable& duration, std::vector<Outcome>* out);

// The outcomes of a table as they are listed (value, weight / total), without impossible ones.
void table_outcomes(const DiceTable& t, std::vector<Outcome>* out);

}  // namespace rogue_trader
}  // namespace psygym
