// Exact distributions of the 8th-edition dice, as exact integer weights over one total: the twin
// of psygym/editions/eighth/effects.py, over the shared dice tables (dice_tables.h: the parts of
// psygym/dice.py and psygym/combat.py it uses). A probability is one correctly rounded division (exact_ratio), bit-identical to the
// reference's float(Fraction) (STYLE.md 7.4). Tables are built once, when the game is made
// (attack tables, which depend on the wounds left model by model, once per key on first use).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dice_tables.h"
#include "exact.h"
#include "game.h"

namespace psygym {
namespace eighth {

// 2D6 totals 2..12 (8E-4.1): effects.two_d6.
const std::vector<Outcome>& test_outcomes();
// Denied (1) or not (0) for a test total 0..12 (8E-5.2): rules._exact_chance's "deny" table,
// outcomes of probability 0 left out.
const std::vector<Outcome>& deny_outcomes(int total);
// Whether some Deny the Witch roll beats the test total (rules._deniable).
bool deniable(int total);

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
