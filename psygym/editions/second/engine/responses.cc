// Answering a power (2E-5.2) and the rolls of the phase: the twin of responses.py
// (SecondResponses): the response cards, Nullify (against the power being cast or one in play,
// 2E-4.1, with the psychic hood's re-roll), Destroy Power, Reflection, Daemonic Attack and the
// Psychic Duel's roll (2E-7).
#include <algorithm>

#include "rules.h"

namespace psygym {
namespace second {
namespace {

// responses._RESPONSES: response actions and the card each plays, in action order.
constexpr int kResponses[4][2] = {{kNullifyAction, kNullifyCard},
                                  {kDestroyAction, kDestroyCard},
                                  {kReflectionAction, kReflectionCard},
                                  {kDaemonicAction, kDaemonicCard}};

void clear_roll(Header& h) {
  h.has_roll = 0;
  h.roll_kind = 0;
  h.roll_a = h.roll_b = 0;
  h.roll_need = h.roll_reroll = h.roll_player = 0;
}

}  // namespace

std::pair<int, bool> SecondGame::nullify_need(const uint8_t* b, int side, int caster) const {
  // responses.nullify_need and nullify_roll_needed (2E-5.2): nullify_target shifted one
  // nullify_ml_step per ML of the side's best living psyker (0 with none) above the caster's,
  // limited to nullify_best..nullify_worst; a living psyker's hood allows one re-roll.
  const Settings& st = sc_.settings;
  int best = 0;
  bool hood = false;
  for (int i : sc_.side_psykers[side]) {
    if (!alive_psyker(b, i)) continue;
    best = std::max(best, psyker(i).ml);
    hood = hood || psyker(i).hood;
  }
  const int need = st.nullify_target - st.nullify_ml_step * (best - psyker(caster).ml);
  return {std::min(std::max(need, st.nullify_best), st.nullify_worst), hood};
}

void SecondGame::response_actions(const Header& h, const uint8_t* b,
                                  std::vector<int32_t>* out) const {
  // responses._response_actions: PASS, and the response cards the responder holds.
  out->push_back(kPass);
  if (h.pending_responses >= sc_.settings.responses_per_power) return;
  const uint8_t* hand = pile(b, kHand0 + 1 - psyker(h.pending_psyker).side);
  for (const auto& rc : kResponses)
    if (hand[rc[1]] && !(rc[1] == kNullifyCard && h.pending_ultimate)) out->push_back(rc[0]);
}

void SecondGame::apply_response(Work& w, int action) const {
  // responses._apply_response (2E-5.2).
  Header& h = w.h;
  if (action == kPass) {
    finish_pending(w, false, false);
    return;
  }
  const int p = 1 - psyker(h.pending_psyker).side;  // the responder
  int card = kNullifyCard;
  for (const auto& rc : kResponses)
    if (rc[0] == action) card = rc[1];
  play_card(w, p, card);
  if (action == kNullifyAction) {
    const std::pair<int, bool> need = nullify_need(w.b, p, h.pending_psyker);
    h.stage = kRoll;
    h.has_roll = 1;
    h.roll_kind = kRollNullify;
    h.roll_a = static_cast<int8_t>(h.pending_psyker);
    h.roll_b = -1;
    h.roll_need = static_cast<uint8_t>(need.first);
    h.roll_reroll = need.second;
    h.roll_player = static_cast<uint8_t>(p);
    return;
  }
  if (action == kDestroyAction) {
    if (sc_.settings.destroy_lose_card)  // the power card is lost for the rest of the game
      w.b[layout_.powers + static_cast<std::size_t>(h.pending_psyker * sc_.n_slots +
                                                    h.pending_slot)] = static_cast<uint8_t>(-1);
    finish_pending(w, false, true);
    return;
  }
  if (action == kReflectionAction) {
    finish_pending(w, sc_.settings.reflection_caster, true);
    return;
  }
  const int caster = h.pending_psyker;  // Daemonic Attack: the caster rolls D6 + ML
  finish_pending(w, false, true);
  h.stage = kRoll;
  h.has_roll = 1;
  h.roll_kind = kRollDaemonic;
  h.roll_a = static_cast<int8_t>(caster);
  h.roll_b = -1;
  h.roll_need = 0;
  h.roll_reroll = 0;
  h.roll_player = static_cast<uint8_t>(p);
}

void SecondGame::apply_roll(Work& w, int outcome) const {
  // responses._apply_roll: every roll ends with no roll and a turn (or the response step
  // again after a failed Nullify).
  Header& h = w.h;
  const int kind = h.roll_kind, a = h.roll_a, b = h.roll_b, player = h.roll_player;
  clear_roll(h);
  h.stage = kTurn;
  if (kind == kRollNullify) {  // 2E-5.2
    if (outcome) {
      finish_pending(w, false, true);
      return;
    }
    h.stage = kResponse;
    h.pending_responses = static_cast<uint8_t>(h.pending_responses + 1);
    return;
  }
  if (kind == kRollNullifyInPlay) {  // 2E-4.1
    h.to_move = static_cast<uint8_t>(1 - player);
    if (outcome) store_in_play(InPlayRec{-1, 0, 0, 0}, w.b, layout_, a, b);
    return;
  }
  if (kind == kRollDaemonic) {  // 2E-5.2: the caster is dragged into the warp
    h.to_move = static_cast<uint8_t>(player);
    if (outcome) {
      const int u = psyker(a).unit;
      wound(w, u, wounds(w.b, u));
    }
    return;
  }
  h.to_move = static_cast<uint8_t>(1 - player);  // 2E-7: Psychic Duel
  if (outcome > 0) wound(w, psyker(b).unit, outcome);
  if (outcome < 0) wound(w, psyker(a).unit, -outcome);
}

void SecondGame::roll_outcomes(const Header& h, const uint8_t* b,
                               std::vector<Outcome>* out) const {
  // rules.chance_distribution of a roll: success (1) or failure (0), or a duel's result.
  if (!h.has_roll) return;
  if (h.roll_kind == kRollDuel) {
    const PsykerData &mine = psyker(h.roll_a), &enemy = psyker(h.roll_b);
    const std::size_t at = static_cast<std::size_t>((mine.ml - 1) * 4 + enemy.ml - 1);
    duel_roll_[at].outcomes(wounds(b, mine.unit), wounds(b, enemy.unit), out);
    return;
  }
  const std::vector<Outcome>& t =
      h.roll_kind == kRollDaemonic
          ? daemonic_[static_cast<std::size_t>(h.roll_a)]
          : nullify_[static_cast<std::size_t>(h.roll_need * 2 + (h.roll_reroll ? 1 : 0))];
  out->insert(out->end(), t.begin(), t.end());
}

}  // namespace second
}  // namespace psygym
