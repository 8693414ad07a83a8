// The 7th-edition state as bytes: the twin of state.py's State (STYLE.md 7.2).
//
// The layout is sized by the scenario (Layout below), so small scenarios have small states:
// U units, P of them with a psyker profile (the psyker slots, in unit order), R powers, V of
// them value powers (blessings and maledictions, the only powers ever in force on a unit), G
// whether powers are generated (7E-2), and wounds of one byte where every unit's pool fits
// one. Every byte is written by a transition or left zero, so equal states are equal bytes.
//
//   0   double score                  player 0's score (7E-8.2), never -0.0
//   8   uint8  stage (bits 0-3), active (bit 4), has_cast (bit 5), the cast's perils (bit 6)
//   9   uint8  phase, pool[0], pool[1]
//   12  uint8  the cast's caster, power, target, dice, successes, deny_dice
//   18  uint8  perils_roll
//   19  G only: uint8 gen_unit + 1, gen_pick, gen_disc + 1, gen_power + 1
//   wounds    U of them, uint8 (or uint16 little-endian)
//   generated G only, P psyker records: uint8 count, generated[4] (discipline indices, rest 0)
//   bits      one bitset, in this order: psyker (U bits, a living psyker in the unit), surge
//             (U, Warp Surge, 7E-6.6), known (P * R, bit slot * R + power), attempted (P * R,
//             bit slot * R + power, 7E-4.2), effects (V * U * 2, bit (rank * U + unit) * 2 +
//             owner, 7E-7.2), targets (U: the units still to resolve the manifested power
//             against, always ascending in the reference, so a set holds it)
//   padding   zero bytes to a whole number of 8-byte words (the solver hashes and compares
//             states a word at a time: a shorter tail costs more than the bytes it saves)
// A Cast of None is has_cast 0 with its fields 0. A unit without a psyker profile knows and
// attempts no power, and only value powers are ever in force, so those bits do not exist.
// The Python codec (engine/__init__.py, _Layout) lays out the same bytes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "scenario.h"

namespace psygym {
namespace seventh {

enum Stage : uint8_t {
  kDiscipline = 0,  // D owner: discipline for the next generated power (7E-2.1)
  kGenRoll = 1,     // C: the numbered power rolled, duplicates re-rolled (7E-2.1)
  kSwap = 2,        // D owner: keep it or take the Primaris power (7E-2.2)
  kPhaseRoll = 3,   // C: the D6 that sets both pools (7E-3.1)
  kSelect = 4,      // D active: psyker, power and target, or end the phase (7E-4.1)
  kDice = 5,        // D active: how many dice (7E-4.1)
  kCastRoll = 6,    // C: (successes, perils) of the casting dice (7E-4.3, 7E-4.4)
  kPerils = 7,      // C: the Perils of the Warp D6 (7E-6)
  kLdTest = 8,      // C: the periling psyker's Leadership test (7E-6)
  kPerilsHits = 9,  // C: wounds from D6 S6 AP1 hits after Dragged into the Warp (7E-6.1)
  kPurge = 10,      // C: which power Mental Purge takes (7E-6.2)
  kDrain = 11,      // C: dice Power Drain takes from both pools (7E-6.3)
  kDeny = 12,       // D opponent: how many dice to deny with (7E-5.1)
  kDenyRoll = 13,   // C: denied or not (7E-5.2, 7E-5.3)
  kEffect = 14,     // C: wounds a manifested power inflicts on the next target (7E-7)
  kOver = 15,       // terminal
};

enum HeaderField : int {
  kFlags = 8, kPhase, kPool0, kPool1,
  kCaster, kPower, kTarget, kDiceField, kSuccesses, kDenyDice,
  kPerilsRoll,
  kHeaderSize,
};
static_assert(kHeaderSize == 19, "the header is 19 bytes");
enum FlagBits : uint8_t {
  kStageMask = 0x0f, kActiveBit = 0x10, kCastBit = 0x20, kPerilsBit = 0x40,
};
enum GenField : int { kGenUnit = 0, kGenPick, kGenDisc, kGenPower, kGenSize };

constexpr int kMaxGenerated = 4;  // generated[] entries of a psyker record

// Byte offsets (and bit offsets in the bitset) of one scenario's state layout.
struct Layout {
  int units = 0, powers = 0, psykers = 0, value_powers = 0;
  bool generate = false;  // the gen fields and the generated lists exist
  bool wide = false;      // wounds take two bytes
  int gen = 0;            // byte offset of the gen fields (G only)
  int wounds = 0;         // byte offset of the wounds
  int generated = 0;      // byte offset of the psyker records (G only)
  int bits = 0;           // byte offset of the bitset
  // Bit offsets in the bitset.
  int psyker_bit = 0, surge_bit = 0, known_bit = 0, attempted_bit = 0, effects_bit = 0;
  int targets_bit = 0, bit_count = 0;
  std::vector<int> slot;  // per unit: its psyker slot, -1 without a psyker profile
  std::vector<int> rank;  // per power: its rank among the value powers, -1 for others
  // Per active side, the bitset's bytes ANDed at the start of its Psychic phase: they end the
  // side's Warp Surge and effects (7E-6.6) and clear the attempted powers and the targets.
  std::vector<uint8_t> phase_keep[2];
  int size = 0;

  Layout() = default;
  explicit Layout(const ScenarioNumbers& n);
};

inline Layout::Layout(const ScenarioNumbers& n)
    : units(n.units), powers(n.powers), generate(n.generate_powers) {
  for (const PowerData& p : n.power) {
    rank.push_back(p.effect == kValue ? value_powers : -1);
    if (p.effect == kValue) ++value_powers;
  }
  for (const UnitData& u : n.unit) {
    wide = wide || u.max_wounds > 255;
    slot.push_back(u.psyker ? psykers : -1);
    if (u.psyker) ++psykers;
  }
  int at = kHeaderSize;
  if (generate) {
    gen = at;
    at += kGenSize;
  }
  wounds = at;
  at += units * (wide ? 2 : 1);
  generated = at;
  if (generate) at += psykers * (1 + kMaxGenerated);
  bits = at;
  psyker_bit = 0;
  surge_bit = units;
  known_bit = 2 * units;
  attempted_bit = known_bit + psykers * powers;
  effects_bit = attempted_bit + psykers * powers;
  targets_bit = effects_bit + value_powers * units * 2;
  bit_count = targets_bit + units;
  size = (bits + (bit_count + 7) / 8 + 7) / 8 * 8;
  for (int side = 0; side < 2; ++side) {
    std::vector<uint8_t>& keep = phase_keep[side];
    keep.assign(static_cast<std::size_t>(size - bits), 0xff);
    auto clear = [&](int bit) {
      keep[static_cast<std::size_t>(bit / 8)] &= static_cast<uint8_t>(~(1u << (bit % 8)));
    };
    for (int u = 0; u < units; ++u)
      if (n.unit[static_cast<std::size_t>(u)].owner == side) clear(surge_bit + u);
    for (int i = attempted_bit; i < effects_bit; ++i) clear(i);
    for (int i = effects_bit + side; i < targets_bit; i += 2) clear(i);
    for (int i = targets_bit; i < bit_count; ++i) clear(i);
  }
}

inline bool get_bit(const uint8_t* s, int base, unsigned i) {
  return (s[base + static_cast<int>(i / 8)] >> (i % 8)) & 1;
}
inline void set_bit(uint8_t* s, int base, unsigned i, bool on) {
  uint8_t& b = s[base + static_cast<int>(i / 8)];
  b = static_cast<uint8_t>(on ? b | (1u << (i % 8)) : b & ~(1u << (i % 8)));
}

// Sets are read and written a byte at a time, as the fields around them are: a wider load of
// bytes just stored waits for the stores (no store forwarding), which costs more than it saves.

// The bits of byte `b` of the state within the bits [from, end) of the state.
inline unsigned byte_bits(const uint8_t* s, unsigned b, unsigned from, unsigned end) {
  unsigned bits = s[b];
  if (b == from / 8) bits &= 0xffu << (from % 8);
  if (b == (end - 1) / 8) bits &= 0xffu >> (7 - (end - 1) % 8);
  return bits;
}

// Calls f(k) for every bit first + k set among the `count` bits from bit `first` at byte
// `base`, k ascending, until f returns true; returns whether one did. The bits are taken 56 at
// a time: the bytes that hold them gathered into one word (a byte at a time, as the note above
// says), then that word's set bits in order.
template <typename F>
bool scan_bits(const uint8_t* s, int base, int first, int count, F&& f) {
  const uint8_t* bytes = s + base;
  for (int done = 0; done < count;) {
    const int n = count - done < 56 ? count - done : 56;
    const unsigned from = static_cast<unsigned>(first + done);
    const unsigned shift = from % 8, used = (shift + static_cast<unsigned>(n) + 7) / 8;
    uint64_t word = 0;
    for (unsigned i = 0; i < used; ++i)
      word |= static_cast<uint64_t>(bytes[from / 8 + i]) << (8 * i);
    word = (word >> shift) & ((uint64_t{1} << n) - 1);
    for (; word != 0; word &= word - 1)
      if (f(done + __builtin_ctzll(word))) return true;
    done += n;
  }
  return false;
}

// The first bit set among the `count` bits from bit `first` at byte `base` (as an offset from
// `first`), or -1.
inline int first_bit(const uint8_t* s, int base, int first, int count) {
  int found = -1;
  scan_bits(s, base, first, count, [&](int k) { return found = k, true; });
  return found;
}

// Clears the `count` bits from bit `first` at byte `base`.
inline void clear_bits(uint8_t* s, int base, int first, int count) {
  if (count <= 0) return;
  const unsigned from = 8u * static_cast<unsigned>(base) + static_cast<unsigned>(first);
  const unsigned end = from + static_cast<unsigned>(count);
  for (unsigned b = from / 8; b <= (end - 1) / 8; ++b)
    s[b] = static_cast<uint8_t>(s[b] & ~byte_bits(s, b, from, end));
}

inline double get_score(const uint8_t* s) {
  double v;
  std::memcpy(&v, s, sizeof v);
  return v;
}
inline void set_score(uint8_t* s, double v) {
  v += 0.0;  // one zero (-0.0 + 0.0 is 0.0): -0.0 compares equal in the reference
  std::memcpy(s, &v, sizeof v);
}

// A state's fields by name, over bytes of one layout (read-only or writable).
template <typename Byte>
class StateRef {
 public:
  StateRef(Byte* s, const Layout& layout) : s_(s), l_(layout) {}

  // A writable state reads as a read-only one.
  operator StateRef<const uint8_t>() const { return StateRef<const uint8_t>(s_, l_); }  // NOLINT

  Byte* bytes() const { return s_; }
  int stage() const { return s_[kFlags] & kStageMask; }
  int active() const { return (s_[kFlags] & kActiveBit) != 0 ? 1 : 0; }
  bool has_cast() const { return (s_[kFlags] & kCastBit) != 0; }
  bool perils() const { return (s_[kFlags] & kPerilsBit) != 0; }
  int phase() const { return s_[kPhase]; }
  int pool(int side) const { return s_[kPool0 + side]; }
  int caster() const { return s_[kCaster]; }
  int power() const { return s_[kPower]; }
  int target() const { return s_[kTarget]; }
  int dice() const { return s_[kDiceField]; }
  int successes() const { return s_[kSuccesses]; }
  int deny_dice() const { return s_[kDenyDice]; }
  int perils_roll() const { return s_[kPerilsRoll]; }
  int gen_unit() const { return gen_field(kGenUnit) - 1; }
  int gen_pick() const { return gen_field(kGenPick); }
  int gen_disc() const { return gen_field(kGenDisc) - 1; }
  int gen_power() const { return gen_field(kGenPower) - 1; }
  double score() const { return get_score(s_); }

  int wounds(int u) const {
    return l_.wide ? s_[l_.wounds + 2 * u] | (s_[l_.wounds + 2 * u + 1] << 8) : s_[l_.wounds + u];
  }
  bool psyker(int u) const { return bit(l_.psyker_bit + u); }
  bool surge(int u) const { return bit(l_.surge_bit + u); }
  int generated_count(int u) const {
    const int k = l_.slot[static_cast<std::size_t>(u)];
    return k >= 0 && l_.generate ? s_[record(k)] : 0;
  }
  int generated(int u, int i) const {
    return s_[record(l_.slot[static_cast<std::size_t>(u)]) + 1 + i];
  }
  bool knows(int u, int p) const {
    const int k = l_.slot[static_cast<std::size_t>(u)];
    return k >= 0 && bit(l_.known_bit + k * l_.powers + p);
  }
  // Calls f(power) for every power unit `u` knows, ascending, until f returns true; returns
  // whether one did.
  template <typename F>
  bool each_known(int u, F&& f) const {
    const int k = l_.slot[static_cast<std::size_t>(u)];
    return k >= 0 && scan_bits(s_, l_.bits, l_.known_bit + k * l_.powers, l_.powers, f);
  }
  int known_count(int u) const {
    int n = 0;
    each_known(u, [&](int) { return ++n, false; });
    return n;
  }
  bool attempted(int c, int p) const {
    const int k = l_.slot[static_cast<std::size_t>(c)];
    return k >= 0 && bit(l_.attempted_bit + k * l_.powers + p);
  }
  // len(state.attempted).
  int attempted_count() const {
    int n = 0;
    scan_bits(s_, l_.bits, l_.attempted_bit, l_.psykers * l_.powers, [&](int) {
      return ++n, false;
    });
    return n;
  }
  bool effect(int p, int t, int owner) const {
    const int r = l_.rank[static_cast<std::size_t>(p)];
    return r >= 0 && bit(l_.effects_bit + (r * l_.units + t) * 2 + owner);
  }
  bool targeted(int t) const { return bit(l_.targets_bit + t); }
  int first_target() const { return first_bit(s_, l_.bits, l_.targets_bit, l_.units); }

  // Writers (only on a writable state). A set no bit holds (the powers of a unit without a
  // psyker profile, a power that is never in force) stays empty: check_state refuses the
  // states that would need one.
  void set(int field, int v) const { s_[field] = static_cast<uint8_t>(v); }
  void set_stage(int v) const {
    s_[kFlags] = static_cast<uint8_t>((s_[kFlags] & ~kStageMask) | v);
  }
  void set_active(int v) const { set_flag(kActiveBit, v != 0); }
  void set_perils(bool v) const { set_flag(kPerilsBit, v); }
  // A new cast: the fields of the last one cleared.
  void begin_cast(int caster, int power, int target) const {
    clear_cast();
    set_flag(kCastBit, true);
    set(kCaster, caster);
    set(kPower, power);
    set(kTarget, target);
  }
  void clear_cast() const {
    s_[kFlags] = static_cast<uint8_t>(s_[kFlags] & ~(kCastBit | kPerilsBit));
    std::memset(s_ + kCaster, 0, kDenyDice - kCaster + 1);
  }
  void set_gen_unit(int v) const { set_gen(kGenUnit, v + 1); }
  void set_gen_pick(int v) const { set_gen(kGenPick, v); }
  void set_gen_disc(int v) const { set_gen(kGenDisc, v + 1); }
  void set_gen_power(int v) const { set_gen(kGenPower, v + 1); }
  void set_score(double v) const { seventh::set_score(s_, v); }
  void set_wounds(int u, int w) const {
    if (l_.wide) {
      s_[l_.wounds + 2 * u] = static_cast<uint8_t>(w & 0xff);
      s_[l_.wounds + 2 * u + 1] = static_cast<uint8_t>((w >> 8) & 0xff);
    } else {
      s_[l_.wounds + u] = static_cast<uint8_t>(w);
    }
  }
  void set_psyker(int u, bool v) const { set_bit(s_, l_.bits, l_.psyker_bit + u, v); }
  void set_surge(int u, bool v) const { set_bit(s_, l_.bits, l_.surge_bit + u, v); }
  void add_generated(int u, int disc) const {
    const int k = l_.slot[static_cast<std::size_t>(u)];
    if (k < 0 || !l_.generate) return;
    const int n = s_[record(k)];
    s_[record(k) + 1 + n] = static_cast<uint8_t>(disc);
    s_[record(k)] = static_cast<uint8_t>(n + 1);
  }
  void set_known(int u, int p, bool on) const {
    const int k = l_.slot[static_cast<std::size_t>(u)];
    if (k >= 0) set_bit(s_, l_.bits, l_.known_bit + k * l_.powers + p, on);
  }
  void set_attempted(int c, int p) const {
    const int k = l_.slot[static_cast<std::size_t>(c)];
    if (k >= 0) set_bit(s_, l_.bits, l_.attempted_bit + k * l_.powers + p, true);
  }
  void set_effect(int p, int t, int owner, bool on) const {
    const int r = l_.rank[static_cast<std::size_t>(p)];
    if (r >= 0) set_bit(s_, l_.bits, l_.effects_bit + (r * l_.units + t) * 2 + owner, on);
  }
  // The sets at the start of `active`'s Psychic phase (Layout::phase_keep).
  void start_phase_sets(int active) const {
    const std::vector<uint8_t>& keep = l_.phase_keep[active];
    Byte* set = s_ + l_.bits;
    for (std::size_t i = 0; i < keep.size(); ++i) set[i] = static_cast<uint8_t>(set[i] & keep[i]);
  }
  void set_targeted(int t, bool on) const { set_bit(s_, l_.bits, l_.targets_bit + t, on); }
  void clear_targets() const { clear_bits(s_, l_.bits, l_.targets_bit, l_.units); }

 private:
  bool bit(int i) const { return get_bit(s_, l_.bits, static_cast<unsigned>(i)); }
  int record(int slot) const { return l_.generated + slot * (1 + kMaxGenerated); }
  int gen_field(int k) const { return l_.generate ? s_[l_.gen + k] : 0; }
  void set_gen(int k, int v) const {
    if (l_.generate) s_[l_.gen + k] = static_cast<uint8_t>(v);
  }
  void set_flag(uint8_t flag, bool on) const {
    s_[kFlags] = static_cast<uint8_t>(on ? (s_[kFlags] | flag) : (s_[kFlags] & ~flag));
  }

  Byte* s_;
  const Layout& l_;
};

using ConstState = StateRef<const uint8_t>;
using Draft = StateRef<uint8_t>;

}  // namespace seventh
}  // namespace psygym
