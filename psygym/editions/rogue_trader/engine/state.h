// The Rogue Trader state as bytes: the twin of psygym/editions/rogue_trader/state.py.
//
// One fixed 24-byte header (the State's scalar fields, the scenario's sizes), then one record
// per unit of the scenario (N units, in scenario order), so a small scenario has a small state:
//
//   hp        uint16   wounds left over the whole unit (0: slain)
//   points    uint16   psi-points left (RT-1.1)
//   level     uint16   psi-level, the most psi-points it can hold
//   stolen    uint16   its own turns still lost to Steal Mind (RT-4.5)
//   aura      uint8    level of the aura it bears, 0 for none (RT-4.3)
//   wp_bonus  uint8    will power added by Strength of Mind (RT-4.7)
//   flags     uint8    kOut | kConfused | kAfraid | kResting (UnitState's booleans)
//   abilities bits[A]  ids of its abilities: the reference's sorted tuple as a set
//
// Every byte is zero-initialised and written only through these helpers, so two states are
// equal in the reference iff their bytes are equal (STYLE.md 7.2). Multi-byte fields are in the
// machine's byte order; the Python codec packs them with struct's native order ("=").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace psygym {
namespace rogue_trader {

// state.py's Phase: chance (C), decision (D) or terminal.
enum Phase : uint8_t {
  kSetupLevel = 0,  // C: random psi-level of psyker `actor` (RT-1.1)
  kSetupCount = 1,  // C: random number of abilities of psyker `actor` (RT-1.1)
  kSetupDraw = 2,   // C: one random ability of psyker `actor` from the charts (RT-1.3)
  kRecover = 3,     // C: confused unit `actor` makes a psychic save to recover
  kChoose = 4,      // D: psyker `actor` uses an ability, rests or ends its turn (RT-2.1, RT-5)
  kTarget = 5,      // D: the target of `ability`
  kAmount = 6,      // D: how many wounds Cure Wounds heals (RT-4.6)
  kTest = 7,        // C: the 2D6 test of an ability used with fewer than 12 points (RT-2.3)
  kAttackBid = 8,   // D: the attacker's secret enhanced-attack bid (RT-3.2)
  kSaveBid = 9,     // D: the target's secret augmented-save bid (RT-3.3)
  kResolve = 10,    // C: saves, wounds and durations of the ability (RT-3.1, RT-4)
  kOver = 11,       // terminal
};
constexpr int kPhases = 12;

// state.DECISIONS.
inline bool is_decision(int phase) {
  return phase == kChoose || phase == kTarget || phase == kAmount || phase == kAttackBid ||
         phase == kSaveBid;
}

// The scalar fields of state.py's State (same names), and the scenario's sizes so that the
// bytes describe themselves to the Python codec.
struct Header {
  double score;         // zero-sum score from player 0's point of view (RT-6.2)
  uint16_t amount;      // wounds Cure Wounds heals (0 otherwise)
  uint16_t attack_bid;  // the attacker's enhanced-attack bid (secret at kSaveBid, RT-3.4)
  uint16_t save_bid;    // the target's augmented-save bid
  uint8_t turn;         // player turns completed
  uint8_t active;       // the player whose turn it is
  uint8_t phase;        // Phase
  int8_t actor;         // the unit the node is about, -1: none
  uint8_t used;         // abilities `actor` used this turn (RT-2.1)
  int8_t ability;       // the ability being used, -1: none
  int8_t target;        // its target unit, -1: none
  uint8_t left;         // random abilities still to draw at kSetupDraw
  uint8_t n_units;      // N of the scenario
  uint8_t n_abilities;  // A of the ability data
};
static_assert(sizeof(Header) == 24, "the header has no hidden padding");
static_assert(offsetof(Header, amount) == 8 && offsetof(Header, turn) == 14 &&
                  offsetof(Header, n_abilities) == 23,
              "the header layout is the codec's");

// UnitState's booleans, in the unit's flags byte.
enum UnitFlag : uint8_t {
  kOut = 1,        // out of the fight without being slain (Rout, Change Allegiance)
  kConfused = 2,   // confused until it makes a psychic save (Cause Confusion)
  kAfraid = 4,     // subject to fear (Cause Fear)
  kResting = 8,    // rested this turn: regains a point at the start of its next turn (RT-5)
};
constexpr uint8_t kAllFlags = kOut | kConfused | kAfraid | kResting;

// One unit's fields but its abilities, as the record holds them.
struct Unit {
  uint16_t hp;
  uint16_t points;
  uint16_t level;
  uint16_t stolen;
  uint8_t aura;
  uint8_t wp_bonus;
  uint8_t flags;

  bool out() const { return flags & kOut; }
  bool confused() const { return flags & kConfused; }
  bool afraid() const { return flags & kAfraid; }
  bool resting() const { return flags & kResting; }
  // UnitState.fighting: still in the fight, not slain and not removed.
  bool fighting() const { return hp > 0 && !out(); }
  void set(UnitFlag flag, bool on) {
    flags = static_cast<uint8_t>(on ? flags | flag : flags & ~flag);
  }
};
constexpr std::size_t kUnitFixed = 11;  // bytes of a record before its abilities

// Byte offsets of a scenario of n units and a abilities.
struct Layout {
  int n = 0;
  int a = 0;
  std::size_t ability_bytes = 0, stride = 0, size = 0;

  Layout() = default;
  Layout(int units, int abilities) : n(units), a(abilities) {
    ability_bytes = (static_cast<std::size_t>(a) + 7) / 8;
    stride = kUnitFixed + ability_bytes;
    size = sizeof(Header) + static_cast<std::size_t>(n) * stride;
  }
  std::size_t unit(int i) const { return sizeof(Header) + static_cast<std::size_t>(i) * stride; }
  std::size_t abilities(int i) const { return unit(i) + kUnitFixed; }
};

inline Header load_header(const uint8_t* s) {
  Header h;
  std::memcpy(&h, s, sizeof h);
  return h;
}

inline void store_header(const Header& h, uint8_t* s) { std::memcpy(s, &h, sizeof h); }

inline Unit load_unit(const uint8_t* s, const Layout& l, int i) {
  const uint8_t* p = s + l.unit(i);
  Unit u;
  std::memcpy(&u.hp, p, 2);
  std::memcpy(&u.points, p + 2, 2);
  std::memcpy(&u.level, p + 4, 2);
  std::memcpy(&u.stolen, p + 6, 2);
  u.aura = p[8];
  u.wp_bonus = p[9];
  u.flags = p[10];
  return u;
}

inline void store_unit(const Unit& u, uint8_t* s, const Layout& l, int i) {
  uint8_t* p = s + l.unit(i);
  std::memcpy(p, &u.hp, 2);
  std::memcpy(p + 2, &u.points, 2);
  std::memcpy(p + 4, &u.level, 2);
  std::memcpy(p + 6, &u.stolen, 2);
  p[8] = u.aura;
  p[9] = u.wp_bonus;
  p[10] = u.flags;
}

// Whether unit i holds ability a.
inline bool holds(const uint8_t* s, const Layout& l, int i, int a) {
  return (s[l.abilities(i) + static_cast<std::size_t>(a) / 8] >> (a % 8)) & 1;
}

// The abilities unit i holds, in id order, each passed to visit(a) until it returns false.
template <typename Visit>
inline void each_held(const uint8_t* s, const Layout& l, int i, Visit&& visit) {
  const uint8_t* bits = s + l.abilities(i);
  for (std::size_t k = 0; k < l.ability_bytes; ++k)
    for (unsigned byte = bits[k]; byte != 0; byte &= byte - 1)
      if (!visit(static_cast<int>(8 * k) + __builtin_ctz(byte))) return;
}

inline void give(uint8_t* s, const Layout& l, int i, int a) {
  s[l.abilities(i) + static_cast<std::size_t>(a) / 8] |= static_cast<uint8_t>(1u << (a % 8));
}

}  // namespace rogue_trader
}  // namespace psygym
