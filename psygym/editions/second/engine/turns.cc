// Alternating play in a Psychic phase (2E-4): the twin of turns.py (SecondTurns): a turn's legal
// actions and their play, passes (two in a row end the phase, 2E-4.3) and the end of the phase
// (hands discarded, face down unless public_discards, non-Force cards kept with
// retain_specials).
#include <algorithm>
#include <cstring>

#include "rules.h"

namespace psygym {
namespace second {

bool SecondGame::turn_actions(const Header& h, const uint8_t* b,
                              std::vector<int32_t>* out) const {
  // turns._turn_actions (2E-4, 2E-5.1, 2E-7), in increasing order but for the powers in play
  // (then sorted). With `out` null: whether the turn has any action but PASS.
  const int p = h.to_move, P = sc_.n_psykers, M = sc_.n_slots, U = sc_.n_units;
  const uint8_t* hand = pile(b, kHand0 + p);
  if (out) {
    out->clear();
    out->push_back(kPass);
  }
#define PSYGYM_ADD(action)            \
  do {                                \
    if (!out) return true;            \
    out->push_back(action);           \
  } while (false)
  if (hand[kDrainCard]) PSYGYM_ADD(kEnergyDrain);
  if (hand[kDuelCard]) {  // 2E-7: your living psyker against a living enemy psyker
    for (int i : sc_.side_psykers[p]) {
      if (!alive_psyker(b, i)) continue;
      for (int k : sc_.side_psykers[1 - p])
        if (alive_psyker(b, k)) PSYGYM_ADD(kDuelBase + i * P + k);
    }
  }
  bool any_in_play = false;
  for (int i = 0; i < P; ++i)
    for (int j = 0; j < M; ++j) {
      const InPlayRec ip = load_in_play(b, layout_, i, j);
      if (ip.power < 0) continue;
      any_in_play = true;
      if (psyker(i).side == p) {
        if (!used(b, i)) PSYGYM_ADD(end_base_ + i * M + j);  // end your own (2E-6)
      } else if (hand[kNullifyCard] && !ip.ultimate) {
        // 2E-4.1; 2E-5.1: paid with Ultimate Force, it cannot be nullified in play either.
        PSYGYM_ADD(nullify_base_ + i * M + j);
      }
    }
  const int forces = hand[kForce];
  const bool ultimate = hand[kUltimateCard] > 0;
  for (int i : sc_.side_psykers[p]) {  // each living psyker that has not cast (2E-4.2)
    if (used(b, i) || !alive_psyker(b, i)) continue;
    const PsykerData& ps = psyker(i);
    for (int j = 0; j < M; ++j) {
      const int k = power_in(b, i, j);
      if (k < 0 || load_in_play(b, layout_, i, j).power >= 0) continue;
      const int lo = power(k).lo, top = std::min(power(k).hi, forces);  // pay lo..top Force
      if (top < lo && !ultimate) continue;
      for (int t : ps.targets[static_cast<std::size_t>(k)]) {
        if (t < U) {
          if (wounds(b, t) <= 0) continue;
        } else {
          bool any = false;
          for (int v : ps.area[static_cast<std::size_t>(k)]) any = any || wounds(b, v) > 0;
          if (!any) continue;
        }
        const int base = cast_base_ + ((i * M + j) * (U + 1) + t) * kPayOptions;
        for (int pay = lo; pay <= top; ++pay) PSYGYM_ADD(base + pay);
        if (ultimate) PSYGYM_ADD(base + kPayUltimate);  // 2E-5.1: Ultimate Force
      }
    }
  }
#undef PSYGYM_ADD
  if (!out) return false;
  if (any_in_play) std::sort(out->begin(), out->end());
  return out->size() > 1;
}

void SecondGame::apply_turn(Work& w, int action) const {
  // turns._apply_turn (2E-4.1): pass, Energy Drain, duel, end or Nullify one in play, cast.
  Header& h = w.h;
  const int p = h.to_move;
  if (action == kPass) {
    pass(w);
    return;
  }
  if (action == kEnergyDrain) {  // 2E-4.3: the phase ends at once
    play_card(w, p, kDrainCard);
    end_phase(w);
    return;
  }
  if (action < end_base_) {  // 2E-7: Psychic Duel
    const int i = (action - kDuelBase) / sc_.n_psykers, k = (action - kDuelBase) % sc_.n_psykers;
    h.stage = kRoll;
    h.has_roll = 1;
    h.roll_kind = kRollDuel;
    h.roll_a = static_cast<int8_t>(i);
    h.roll_b = static_cast<int8_t>(k);
    h.roll_need = 0;
    h.roll_reroll = 0;
    h.roll_player = static_cast<uint8_t>(p);
    h.passes = 0;
    play_card(w, p, kDuelCard);
    return;
  }
  if (action < cast_base_) {
    const bool nullify = action >= nullify_base_;
    const int rel = action - (nullify ? nullify_base_ : end_base_);
    const int i = rel / sc_.n_slots, j = rel % sc_.n_slots;
    if (!nullify) {  // end your own power in play: that psyker's action this phase
      set_bit(w.b, layout_.used, i);
      h.to_move = static_cast<uint8_t>(1 - p);
      h.passes = 0;
      store_in_play(InPlayRec{-1, 0, 0, 0}, w.b, layout_, i, j);
      return;
    }
    const std::pair<int, bool> need = nullify_need(w.b, p, i);  // 2E-4.1
    h.stage = kRoll;
    h.has_roll = 1;
    h.roll_kind = kRollNullifyInPlay;
    h.roll_a = static_cast<int8_t>(i);
    h.roll_b = static_cast<int8_t>(j);
    h.roll_need = static_cast<uint8_t>(need.first);
    h.roll_reroll = need.second;
    h.roll_player = static_cast<uint8_t>(p);
    h.passes = 0;
    play_card(w, p, kNullifyCard);
    return;
  }
  cast(w, action);  // casting.cc
}

void SecondGame::play_card(Work& w, int player, int card) const {
  // turns._played: one card from the player's hand to the discard pile, face up.
  pile(w.b, kHand0 + player)[card] -= 1;
  pile(w.b, kDiscard)[card] += 1;
}

void SecondGame::pass(Work& w) const {  // turns._pass: two passes in a row end the phase
  if (w.h.passes + 1 >= 2) {
    end_phase(w);
    return;
  }
  w.h.passes = static_cast<uint8_t>(w.h.passes + 1);
  w.h.to_move = static_cast<uint8_t>(1 - w.h.to_move);
}

void SecondGame::end_phase(Work& w) const {
  // turns._end_phase (2E-4.3): hands are discarded (face down unless public_discards), keeping
  // non-Force cards with retain_specials; the next phase's warp flux, or the end (2E-8).
  Header& h = w.h;
  const Settings& st = sc_.settings;
  uint8_t* discard = pile(w.b, kDiscard);
  for (int p = 0; p < 2; ++p) {
    uint8_t* hand = pile(w.b, kHand0 + p);
    uint8_t* down = pile(w.b, kDown0 + p);
    for (int k = 0; k < kCards; ++k) {
      const int thrown = st.retain_specials && k != kForce ? 0 : hand[k];
      discard[k] = static_cast<uint8_t>(discard[k] + thrown);
      if (!st.public_discards) down[k] = static_cast<uint8_t>(down[k] + thrown);
      hand[k] = static_cast<uint8_t>(hand[k] - thrown);
    }
  }
  const int phase = h.phase + 1;
  h.stage = phase < 2 * sc_.battle_rounds ? kFlux : kOver;
  h.phase = static_cast<uint8_t>(phase);
  std::memset(w.b + layout_.used, 0, layout_.used_bytes);
  h.passes = 0;
  h.to_deal = 0;
  h.to_move = static_cast<uint8_t>(active(phase));
}

}  // namespace second
}  // namespace psygym
