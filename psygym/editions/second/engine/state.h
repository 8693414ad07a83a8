// The 2nd-edition state as bytes: the twin of psygym/editions/second/state.py (SecondState).
//
// One fixed 40-byte header (the scalar fields, the pending power, the pending roll, the
// scenario's sizes and zeroed padding), the seven card multisets, then arrays sized by the
// scenario (U units, P psykers, M power slots), so a small scenario has a small state:
//
//   cards     uint8[7][8]   deck, discard, hand 0, hand 1, paid, face-down 0, face-down 1, each
//                           a count per card kind in data.Card order (2E-2, 2E-4.3)
//   wounds    uint16[U]     wounds left per unit (2E-8)
//   powers    int8[P * M]   the power card in each slot, -1: none (2E-1.1)
//   used      bits[P]       psykers that have cast (or ended a power) this phase (2E-4.2)
//   in_play   InPlay[P * M] the power of psyker i's slot j that remains in play (2E-6), or a
//                           record of zeros with power -1; the reference's tuple is sorted by
//                           (psyker, slot) and holds one entry per slot at most, so one record a
//                           slot holds it exactly
//   effects   Effect[U]     the effects waiting to resolve (2E-6), n_effects of them, the rest 0
//
// Every byte is zero-initialised and written only through these helpers, so two states are
// equal in the reference iff their bytes are equal (STYLE.md 7.2). Multi-byte fields are in the
// machine's byte order; the Python codec packs them with struct's native order ("=").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "state_bytes.h"

namespace psygym {
namespace second {

// Stages of state.py: decisions (D) or chance nodes (C).
enum Stage : uint8_t {
  kSetup = 0,     // C: a psyker draws a power card from its disciplines (2E-1.1)
  kFlux = 1,      // C: the warp flux roll (2E-3.1)
  kDeal = 2,      // C: one warp card is dealt (2E-3.3)
  kTurn = 3,      // D to_move: a turn of alternating play (2E-4)
  kResponse = 4,  // D the caster's opponent: answer the power being cast (2E-5.2)
  kRoll = 5,      // C: a Nullify, Daemonic Attack or Psychic Duel roll
  kOver = 6,      // terminal
};

// Kinds of pending roll (state.py's ROLL_*).
enum RollKind : uint8_t {
  kRollNullify = 0,        // Nullify against the power being cast (2E-5.2)
  kRollNullifyInPlay = 1,  // Nullify against an enemy power in play (2E-4.1)
  kRollDaemonic = 2,       // Daemonic Attack (2E-5.2)
  kRollDuel = 3,           // Psychic Duel (2E-7)
};

// Kinds of warp card (data.Card), the index of a card multiset.
enum Card : int {
  kForce = 0,
  kNullifyCard = 1,
  kDaemonicCard = 2,
  kDestroyCard = 3,
  kDuelCard = 4,
  kReflectionCard = 5,
  kUltimateCard = 6,
  kDrainCard = 7,
};
constexpr int kCards = 8;

// The card multisets of the state, in their order in the bytes.
enum Pile : int {
  kDeck = 0,
  kDiscard = 1,
  kHand0 = 2,  // kHand0 + player
  kPaid = 4,
  kDown0 = 5,  // kDown0 + player: face-down discards (2E-4.3)
};
constexpr int kPiles = 7;

// The scalar fields of SecondState (same names), the Pending and Roll records, and the
// scenario's sizes so that the bytes describe themselves to the Python codec.
struct Header {
  double score;               // player 0's zero-sum score (2E-8), never -0.0
  uint8_t stage;              // Stage
  uint8_t phase;              // Psychic phases before this one (battle round phase / 2 + 1)
  uint8_t to_move;            // the player to move in the alternation (2E-4)
  uint8_t passes;             // passes in a row (2E-4.3)
  uint8_t to_deal;            // cards still to deal (2E-3.3)
  uint8_t deal_to;            // the player the next card goes to
  uint8_t n_effects;          // effects waiting (2E-6)
  uint8_t n_units;            // U of the scenario
  uint8_t n_psykers;          // P of the scenario
  uint8_t n_slots;            // M of the scenario
  uint8_t has_pending;        // a power is being cast (state.Pending, 2E-5)
  uint8_t pending_psyker;     // its caster
  uint8_t pending_slot;       // the caster's slot
  uint8_t pending_power;      // the power in it
  uint8_t pending_target;     // a unit, or U: every enemy unit in range
  uint8_t pending_force;      // Force paid
  uint8_t pending_ultimate;   // paid with Ultimate Force (cannot be nullified)
  uint8_t pending_responses;  // response cards played against it
  uint8_t has_roll;           // a roll is pending (state.Roll)
  uint8_t roll_kind;          // RollKind
  int8_t roll_a;              // see state.Roll
  int8_t roll_b;
  uint8_t roll_need;
  uint8_t roll_reroll;
  uint8_t roll_player;
  uint8_t pad[7];             // always 0
};
static_assert(sizeof(Header) == 40, "the header has no hidden padding");
static_assert(offsetof(Header, stage) == 8 && offsetof(Header, has_pending) == 18 &&
                  offsetof(Header, has_roll) == 26 && offsetof(Header, pad) == 33,
              "the header layout is the codec's");

// state.InPlay without its key (the record's place is psyker * M + slot).
struct InPlayRec {
  int8_t power;  // -1: no power of this slot is in play
  uint8_t target;
  uint8_t force;
  uint8_t ultimate;
};
static_assert(sizeof(InPlayRec) == 4, "an in-play record is 4 bytes");

// state.Effect.
struct EffectRec {
  uint8_t power;
  uint8_t force;
  uint8_t psyker;  // the casting psyker
  uint8_t target;  // the unit it affects
  uint8_t reflected;
};
static_assert(sizeof(EffectRec) == 5, "an effect record is 5 bytes");

// Byte offsets of the parts for a scenario of u units, p psykers and m slots.
struct Layout {
  int u = 0, p = 0, m = 0;
  std::size_t cards = 0, wounds = 0, powers = 0, used = 0, in_play = 0, effects = 0, size = 0;
  std::size_t used_bytes = 0;

  Layout() = default;
  Layout(int units, int psykers, int slots) : u(units), p(psykers), m(slots) {
    const std::size_t U = static_cast<std::size_t>(u), PM = static_cast<std::size_t>(p * m);
    used_bytes = (static_cast<std::size_t>(p) + 7) / 8;
    cards = sizeof(Header);
    wounds = cards + kPiles * kCards;
    powers = wounds + 2 * U;
    used = powers + PM;
    in_play = used + used_bytes;
    effects = in_play + sizeof(InPlayRec) * PM;
    size = effects + sizeof(EffectRec) * U;
  }
};

inline Header load_header(const uint8_t* s) {
  Header h;
  std::memcpy(&h, s, sizeof h);
  return h;
}

inline void store_header(const Header& h, uint8_t* s) { std::memcpy(s, &h, sizeof h); }

inline InPlayRec load_in_play(const uint8_t* s, const Layout& l, int psyker, int slot) {
  InPlayRec r;
  std::memcpy(&r, s + l.in_play + sizeof r * static_cast<std::size_t>(psyker * l.m + slot),
              sizeof r);
  return r;
}

inline void store_in_play(const InPlayRec& r, uint8_t* s, const Layout& l, int psyker,
                          int slot) {
  std::memcpy(s + l.in_play + sizeof r * static_cast<std::size_t>(psyker * l.m + slot), &r,
              sizeof r);
}

}  // namespace second
}  // namespace psygym
