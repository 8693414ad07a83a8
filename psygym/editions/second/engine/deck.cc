// The warp deck (2E-2, 2E-3): the twin of deck.py (SecondDeck): the warp flux roll, capped by
// the psykers that can use powers (2E-3.2), and the cards dealt one at a time alternately
// (2E-3.3: a chance node per card, a card kind with probability count / deck size, 2E-2).
#include <algorithm>

#include "random.h"
#include "rules.h"

namespace psygym {
namespace second {

int SecondGame::flux_dice(const uint8_t* b) const {
  // deck.flux_dice: warp_flux_dice, capped by the psykers that can use powers (2E-3.2).
  int n = sc_.settings.warp_flux_dice;
  if (sc_.settings.flux_cap_both_sides) n = std::min(n, usable_psykers(b));
  return n;
}

void SecondGame::build_deal_ratios() {
  int total = 0;
  for (int k = 0; k < kCards; ++k) {
    total += sc_.deck[k];
    most_of_a_kind_ = std::max(most_of_a_kind_, sc_.deck[k]);
  }
  const int width = most_of_a_kind_ + 1;
  if ((total + 1) * width > kDealRatios) return;
  deal_ratio_.assign(static_cast<std::size_t>((total + 1) * width), 0.0);
  for (int n = 1; n <= total; ++n)
    for (int k = 0; k <= std::min(n, most_of_a_kind_); ++k)
      deal_ratio_[static_cast<std::size_t>(n * width + k)] =
          static_cast<double>(k) / static_cast<double>(n);
}

void SecondGame::deal_outcomes(const uint8_t* b, std::vector<Outcome>* out) const {
  // deck._deal_outcomes (2E-2): k / n in double is the correctly rounded float(Fraction(k, n)).
  // The cards are conserved kind by kind (check.cc), so n and k are within the table.
  const uint8_t* deck = pile(b, kDeck);
  int n = 0;
  for (int k = 0; k < kCards; ++k) n += deck[k];
  if (!deal_ratio_.empty()) {
    const double* ratio = deal_ratio_.data() + static_cast<std::size_t>(n * (most_of_a_kind_ + 1));
    for (int k = 0; k < kCards; ++k)
      if (deck[k]) out->push_back({k, ratio[deck[k]]});
    return;
  }
  for (int k = 0; k < kCards; ++k)
    if (deck[k]) out->push_back({k, static_cast<double>(deck[k]) / static_cast<double>(n)});
}

int32_t SecondGame::sample_deal(const uint8_t* b, Pcg64& rng) const {
  const uint8_t* deck = pile(b, kDeck);
  int n = 0, last = -1;
  for (int k = 0; k < kCards; ++k) n += deck[k];
  const double* ratio = deal_ratio_.data() + static_cast<std::size_t>(n * (most_of_a_kind_ + 1));
  double total = 0.0;
  for (int k = 0; k < kCards; ++k)
    if (deck[k]) {
      total += ratio[deck[k]];
      last = k;
    }
  if (last < 0) throw EngineError(ErrorCode::kValue, "a deal from an empty deck");
  const double x = rng.next_double() * total;
  double running = 0.0;
  for (int k = 0; k < last; ++k)
    if (deck[k]) {
      running += ratio[deck[k]];
      if (running > x) return k;
    }
  return last;
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
