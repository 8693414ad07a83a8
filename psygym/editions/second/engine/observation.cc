// What a 2nd-edition player sees: the twin of SecondObservation.observe in
// psygym/editions/second/observation.py (its layout is documented there). Hidden information
// (2E-2, 2E-4.3): the player's own hand and face-down discards, the other hand's size and the
// count of the other's face-down discards, the deck's size, the face-up discards, the cards
// paid and the public table; never the other hand or the deck's composition.
//
// Each entry is computed as the reference computes it, in double (Python's float: the same
// correctly rounded divisions), then rounded once to float32 as struct's "f" and numpy's
// float32 arrays do, so the vector is bit-identical to the reference's.
#include <algorithm>

#include "rules.h"

namespace psygym {
namespace second {
namespace {

// Kinds of decision in the first entries (observation.DECISION_*).
constexpr int kDecisionTurn = 0;
constexpr int kDecisionResponse = 1;
constexpr int kDecisionWait = 2;
constexpr int kDecisionOver = 3;
constexpr int kDecisions = 4;
constexpr int kHead = kDecisions + 5 + 5 * kCards + 3 + 1;  // observation.board_start

float f32(double x) { return static_cast<float>(x); }

}  // namespace

std::size_t SecondGame::observation_size() const {
  const int U = sc_.n_units, P = sc_.n_psykers, M = sc_.n_slots;
  const int per_psyker = 5 + M * (3 + sc_.n_powers);
  return static_cast<std::size_t>(kHead + 4 * U + P * per_psyker + 1 + P + M + (U + 1) + 3);
}

void SecondGame::build_views() {
  const double rounds = sc_.battle_rounds;
  for (int phase = 0; phase <= 255; ++phase) {  // every value of the header's phase byte
    round_fraction_.push_back(f32(static_cast<double>(phase / 2 + 1) / rounds));
    phase_fraction_.push_back(f32(static_cast<double>(phase) / (2 * rounds)));
  }
  for (int u = 0; u < sc_.n_units; ++u) {
    const int most = unit(u).max_wounds;
    std::vector<float> fractions;
    if (most <= kWoundFractions)
      for (int w = 0; w <= most; ++w)
        fractions.push_back(f32(static_cast<double>(w) / static_cast<double>(most)));
    wound_fraction_.push_back(std::move(fractions));
  }
  const int U = sc_.n_units, M = sc_.n_slots, N = sc_.n_powers;
  const int per_psyker = 5 + M * (3 + N);
  for (int player = 0; player < 2; ++player) {
    std::vector<float>& v = blank_[player];
    v.assign(observation_size(), 0.0f);
    for (int u = 0; u < U; ++u) v[kHead + 4 * u] = unit(u).owner == player ? 1.0f : 0.0f;
    for (int i = 0; i < sc_.n_psykers; ++i) {
      float* e = v.data() + kHead + 4 * U + per_psyker * i;
      e[0] = psyker(i).side == player ? 1.0f : 0.0f;
      e[2] = static_cast<float>(psyker(i).ml);
      e[4] = psyker(i).hood ? 1.0f : 0.0f;
    }
  }
}

void SecondGame::observe(const uint8_t* s, int player, float* out) const {
  const Header h = load_header(s);
  const int U = sc_.n_units, P = sc_.n_psykers, M = sc_.n_slots, N = sc_.n_powers;
  const std::vector<float>& blank = blank_[player];
  std::copy(blank.begin(), blank.end(), out);  // zeros, and who owns each unit and psyker
  // The decision asked of the player (the tests of facts.current_player).
  int decision = kDecisionWait;
  if (h.stage == kOver) {
    decision = kDecisionOver;
  } else if (h.n_effects) {
    decision = kDecisionWait;
  } else if (h.stage == kTurn) {
    decision = h.to_move == player ? kDecisionTurn : kDecisionWait;
  } else if (h.stage == kResponse) {
    decision = 1 - psyker(h.pending_psyker).side == player ? kDecisionResponse : kDecisionWait;
  }
  out[decision] = 1.0f;
  float* v = out + kDecisions;
  v[0] = active(h.phase) == player ? 1.0f : 0.0f;
  v[1] = round_fraction_[h.phase];
  v[2] = phase_fraction_[h.phase];
  v[3] = static_cast<float>(h.passes);
  v[4] = h.to_move == player ? 1.0f : 0.0f;
  v += 5;
  // Cards: own hand, other hand's size, deck size, face-up discards, paid, unseen by kind,
  // score, own face-down discards, the other's face-down count.
  const uint8_t* hand = pile(s, kHand0 + player);
  const uint8_t* other = pile(s, kHand0 + 1 - player);
  const uint8_t* deck = pile(s, kDeck);
  const uint8_t* discard = pile(s, kDiscard);
  const uint8_t* paid = pile(s, kPaid);
  const uint8_t* own_down = pile(s, kDown0 + player);
  const uint8_t* other_down = pile(s, kDown0 + 1 - player);
  const uint8_t* down0 = pile(s, kDown0);
  const uint8_t* down1 = pile(s, kDown0 + 1);
  int other_size = 0, deck_size = 0, other_down_size = 0;
  for (int k = 0; k < kCards; ++k) {
    other_size += other[k];
    deck_size += deck[k];
    other_down_size += other_down[k];
  }
  float* cards = v;
  for (int k = 0; k < kCards; ++k) {
    const int face_up = discard[k] - down0[k] - down1[k];  // state.face_up
    cards[k] = static_cast<float>(hand[k]);
    cards[kCards + 2 + k] = static_cast<float>(face_up);
    cards[2 * kCards + 2 + k] = static_cast<float>(paid[k]);
    cards[3 * kCards + 2 + k] =
        static_cast<float>(sc_.deck[k] - hand[k] - face_up - paid[k] - own_down[k]);
    cards[4 * kCards + 3 + k] = static_cast<float>(own_down[k]);
  }
  cards[kCards] = static_cast<float>(other_size);
  cards[kCards + 1] = static_cast<float>(deck_size);
  cards[4 * kCards + 2] = f32(player == 0 ? h.score : -h.score);
  cards[5 * kCards + 3] = static_cast<float>(other_down_size);
  // Per unit: mine, alive, wounds left, fraction of wounds left.
  float* units = out + kHead;
  for (int u = 0; u < U; ++u) {
    const int left = wounds(s, u);
    float* e = units + 4 * u;
    e[1] = left > 0 ? 1.0f : 0.0f;
    e[2] = static_cast<float>(left);
    const std::vector<float>& fractions = wound_fraction_[static_cast<std::size_t>(u)];
    e[3] = fractions.empty()
               ? f32(static_cast<double>(left) / static_cast<double>(unit(u).max_wounds))
               : fractions[static_cast<std::size_t>(left)];
  }
  // Per psyker: mine, alive, ML, has cast, hood; per slot: holds a card, in play, in play with
  // Ultimate Force, the power one-hot.
  const int per_psyker = 5 + M * (3 + N);
  float* psykers = units + 4 * U;
  for (int i = 0; i < P; ++i) {
    float* e = psykers + per_psyker * i;
    e[1] = alive_psyker(s, i) ? 1.0f : 0.0f;
    e[3] = used(s, i) ? 1.0f : 0.0f;
    for (int j = 0; j < M; ++j) {
      float* slot = e + 5 + j * (3 + N);
      const int k = power_in(s, i, j);
      const InPlayRec ip = load_in_play(s, layout_, i, j);
      slot[0] = k >= 0 ? 1.0f : 0.0f;
      slot[1] = ip.power >= 0 ? 1.0f : 0.0f;
      slot[2] = ip.power >= 0 && ip.ultimate ? 1.0f : 0.0f;
      if (k >= 0) slot[3 + k] = 1.0f;
    }
  }
  // The power being cast: present, psyker, slot and target one-hot, Force, Ultimate Force,
  // response cards played.
  if (h.has_pending) {
    float* e = psykers + per_psyker * P;
    e[0] = 1.0f;
    e[1 + h.pending_psyker] = 1.0f;
    e[1 + P + h.pending_slot] = 1.0f;
    e[1 + P + M + h.pending_target] = 1.0f;
    float* tail = e + 1 + P + M + U + 1;
    tail[0] = static_cast<float>(h.pending_force);
    tail[1] = h.pending_ultimate ? 1.0f : 0.0f;
    tail[2] = static_cast<float>(h.pending_responses);
  }
}

}  // namespace second
}  // namespace psygym
