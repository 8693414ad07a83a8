// Casting a power (2E-5.1, 2E-5.3): the twin of casting.py (SecondCasting): paying for a power
// opens the response window (the cards paid lie on the table, 2E-5.2); the power being cast is
// then finished: it takes effect (and may stay in play, 2E-6), or it is stopped or reflected,
// and the cards paid go to the discard pile.
#include <cstring>

#include "rules.h"

namespace psygym {
namespace second {

void SecondGame::cast(Work& w, int action) const {
  // casting._cast and _cast_plan: Ultimate Force pays the highest Force with one card, else one
  // Force card per Force (2E-5.1).
  Header& h = w.h;
  int rest = action - cast_base_;
  const int pay = rest % kPayOptions;
  rest /= kPayOptions;
  const int target = rest % (sc_.n_units + 1);
  rest /= sc_.n_units + 1;
  const int i = rest / sc_.n_slots, j = rest % sc_.n_slots;
  const int p = h.to_move;
  const int k = power_in(w.b, i, j);
  const bool ultimate = pay == kPayUltimate;
  const int force = ultimate ? power(k).hi : pay;
  const int card = ultimate ? kUltimateCard : kForce;
  const int n = ultimate ? 1 : pay;
  pile(w.b, kHand0 + p)[card] = static_cast<uint8_t>(pile(w.b, kHand0 + p)[card] - n);
  set_bit(w.b, layout_.used, i);
  uint8_t* paid = pile(w.b, kPaid);
  std::memset(paid, 0, kCards);
  paid[card] = static_cast<uint8_t>(n);
  h.passes = 0;
  h.stage = kResponse;
  h.has_pending = 1;
  h.pending_psyker = static_cast<uint8_t>(i);
  h.pending_slot = static_cast<uint8_t>(j);
  h.pending_power = static_cast<uint8_t>(k);
  h.pending_target = static_cast<uint8_t>(target);
  h.pending_force = static_cast<uint8_t>(force);
  h.pending_ultimate = ultimate;
  h.pending_responses = 0;
}

void SecondGame::finish_pending(Work& w, bool reflected, bool stopped) const {
  // casting._finish_pending (2E-5.3): the power takes effect (staying in play if it remains,
  // 2E-6), or it is stopped, or reflected on its caster (2E-5.2); paid cards are discarded.
  Header& h = w.h;
  const int i = h.pending_psyker, k = h.pending_power;
  const int side = psyker(i).side;
  if (!stopped) {
    if (power(k).remain_in_play)
      store_in_play(InPlayRec{static_cast<int8_t>(k), h.pending_target, h.pending_force,
                              h.pending_ultimate},
                    w.b, layout_, i, h.pending_slot);
    add_effects(w, i, k, h.pending_force, h.pending_target, false);
  } else if (reflected) {
    add_effects(w, i, k, h.pending_force, h.pending_target, true);
  }
  h.has_pending = 0;
  h.pending_psyker = h.pending_slot = h.pending_power = h.pending_target = 0;
  h.pending_force = h.pending_ultimate = h.pending_responses = 0;
  h.stage = kTurn;
  h.to_move = static_cast<uint8_t>(1 - side);
  uint8_t* paid = pile(w.b, kPaid);
  uint8_t* discard = pile(w.b, kDiscard);
  for (int c = 0; c < kCards; ++c) discard[c] = static_cast<uint8_t>(discard[c] + paid[c]);
  std::memset(paid, 0, kCards);
}

}  // namespace second
}  // namespace psygym
