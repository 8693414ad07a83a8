// The warp deck (2E-2, 2E-3): the twin of deck.py (SecondDeck): the warp flux roll, capped by
// the psykers that can use powers (2E-3.2), and the cards dealt one at a time alternately
// (2E-3.3: a chance node per card, a card kind with probability count / deck size, 2E-2).
#include <algorithm>

#include "rules.h"

namespace psygym {
namespace second {

int SecondGame::flux_dice(const uint8_t* b) const {
  // deck.flux_dice: warp_flux_dice, capped by the psykers that can use powers (2E-3.2).
  int n = sc_.settings.warp_flux_dice;
  if (sc_.settings.flux_cap_both_sides) n = std::min(n, usable_psykers(b));
  return n;
}

void SecondGame::deal_outcomes(const uint8_t* b, std::vector<Outcome>* out) const {
  // deck._deal_outcomes (2E-2): k / n in double is the correctly rounded float(Fraction(k, n)).
  const uint8_t* deck = pile(b, kDeck);
  int n = 0;
  for (int k = 0; k < kCards; ++k) n += deck[k];
  for (int k = 0; k < kCards; ++k)
    if (deck[k]) out->push_back({k, static_cast<double>(deck[k]) / static_cast<double>(n)});
}

void SecondGame::deal(Work& w, int card) const {
  // deck._apply_deal (2E-3.3): the card goes to deal_to's hand; the next to the other player.
  const int p = w.h.deal_to;
  pile(w.b, kHand0 + p)[card] += 1;
  pile(w.b, kDeck)[card] -= 1;
  w.h.to_deal = static_cast<uint8_t>(w.h.to_deal - 1);
  w.h.deal_to = static_cast<uint8_t>(1 - p);
}

void SecondGame::flux(Work& w, int outcome) const {
  // deck._flux (2E-3.1): deal that many cards, the active player first unless deal_first says
  // otherwise (2E-3.3).
  const int active_player = active(w.h.phase);
  w.h.stage = kDeal;
  w.h.to_deal = static_cast<uint8_t>(outcome);
  w.h.deal_to = static_cast<uint8_t>(sc_.settings.deal_first_active ? active_player
                                                                     : 1 - active_player);
}

}  // namespace second
}  // namespace psygym
