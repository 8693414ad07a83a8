// The 8th-edition state as bytes: the twin of psygym/editions/eighth/state.py.
//
// One fixed 24-byte header (the scalar fields, the scenario's sizes and zeroed padding), then
// arrays sized by the scenario (N units, P powers), so a small scenario has a small state:
//
//   wounds      uint16[N]   wounds left per unit (8E-1.1); 0 = destroyed (8E-1.3)
//   deny_left   uint8[N]    deny attempts left this phase (8E-1.2)
//   attempts    uint8[P]    attempts of each power by the active army this phase (8E-3, 8E-4.2)
//   selected    bits[N]     units selected this phase (8E-2.3)
//   blast       bits[N]     units still to suffer a Perils blast (8E-6.2); the reference's
//                           tuple is always in increasing unit order, so a set holds it exactly
//   unit_powers bits[P]     powers the selected unit attempted (8E-3.3)
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
namespace eighth {

// Stage of state.py: decisions (D) or chance nodes (C).
enum Stage : uint8_t {
  kSelect = 0,    // D active: a PSYKER unit, or end the phase (8E-2.1)
  kPower = 1,     // D active: a power and target, or stop (8E-2.2, 8E-3)
  kDeny = 2,      // D opponent: which PSYKER denies, or none (8E-5.1)
  kTest = 3,      // C: the psychic test total, 2..12 (8E-4.1, 8E-4.3)
  kPerils = 4,    // C: wounds the perilling caster loses (8E-6.1)
  kBlast = 5,     // C: wounds the next unit near a slain caster loses (8E-6.2)
  kDenyRoll = 6,  // C: denied (1) or not (0) (8E-5.2)
  kEffect = 7,    // C: wounds the manifested power's target loses (8E-7)
  kOver = 8,      // terminal (8E-8.1)
};
constexpr int kStages = 9;

// The scalar fields of state.py's State (same names), and the scenario's sizes so that the
// bytes describe themselves to the Python codec.
struct Header {
  double score;            // player 0's score (8E-8.2)
  uint16_t warp_charge;    // of the pending attempt (8E-4.2)
  uint8_t stage;           // Stage
  uint8_t round;           // battle round, 1-based (8E-8.1)
  uint8_t phase;           // 0: the first player's Psychic phase of the round, 1: the second's
  uint8_t phases_played;   // Psychic phases started before this one (game.phase_limit)
  uint8_t active;          // player whose Psychic phase it is
  uint8_t manifests_left;  // powers the selected unit may still attempt (8E-2.2)
  uint8_t total;           // psychic test total (8E-4.1)
  int8_t caster;           // the selected unit, -1: none
  int8_t power;            // power being attempted, -1: none
  int8_t target;           // its target unit, -1: none
  int8_t denier;           // unit attempting to deny, -1: none (8E-5)
  uint8_t n_units;         // N of the scenario
  uint8_t n_powers;        // P of the scenario
  uint8_t pad;             // always 0
};
static_assert(sizeof(Header) == 24, "the header has no hidden padding");
static_assert(offsetof(Header, warp_charge) == 8 && offsetof(Header, pad) == 23,
              "the header layout is the codec's");

// Byte offsets of the arrays for a scenario of n units and p powers.
struct Layout {
  int n = 0;
  int p = 0;
  std::size_t wounds = 0, deny_left = 0, attempts = 0, selected = 0, blast = 0, unit_powers = 0;
  std::size_t unit_bytes = 0, power_bytes = 0, size = 0;

  Layout() = default;
  Layout(int units, int powers) : n(units), p(powers) {
    unit_bytes = (static_cast<std::size_t>(n) + 7) / 8;
    power_bytes = (static_cast<std::size_t>(p) + 7) / 8;
    wounds = sizeof(Header);
    deny_left = wounds + 2 * static_cast<std::size_t>(n);
    attempts = deny_left + static_cast<std::size_t>(n);
    selected = attempts + static_cast<std::size_t>(p);
    blast = selected + unit_bytes;
    unit_powers = blast + unit_bytes;
    size = unit_powers + power_bytes;
  }
};

inline Header load_header(const uint8_t* s) {
  Header h;
  std::memcpy(&h, s, sizeof h);
  return h;
}

inline void store_header(const Header& h, uint8_t* s) { std::memcpy(s, &h, sizeof h); }

// The lowest set bit of a bitset of `bits` bits, or -1 if none is set.
inline int lowest_bit(const uint8_t* s, std::size_t at, int bits) {
  for (int i = 0; i < bits; ++i)
    if (get_bit(s, at, i)) return i;
  return -1;
}

}  // namespace eighth
}  // namespace psygym
