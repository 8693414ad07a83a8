// The 7th-edition state as bytes: the twin of state.py's State (STYLE.md 7.2).
//
// Layout (sizes depend on the scenario's units U, so small scenarios have small states; every
// byte is written by a transition or left zero, so equal states are equal bytes). Powers take
// kPowerBits bits wherever they index a set, whatever the scenario's count R: the codec reads
// a reference State, which does not say R, so the layout may depend on U (len(units)) only.
//
//   0   double score                  player 0's score (7E-8.2), never -0.0
//   8   uint8  stage                  Stage (state.py)
//   9   uint8  phase, active, pool[0], pool[1]
//   13  uint8  has_cast, caster, power, target, dice, successes, perils, deny_dice
//   21  uint8  perils_roll, gen_unit + 1, gen_pick, gen_disc + 1, gen_power + 1
//   26  uint8  U (the layout's unit count)
//   27  units, U records of kUnitFixed + kPowerBits / 8 bytes:
//         uint16 wounds (little-endian), uint8 psyker, uint8 surge, uint8 generated count,
//         uint8 generated[4] (discipline indices, rest 0), known powers as a bitset
//   then attempted   bitset of U * kPowerBits bits, bit caster * kPowerBits + power (7E-4.2)
//   then effects     bitset of kPowerBits * U * 2 bits, bit (power * U + unit) * 2 + owner (7E-7.2)
//   then targets     bitset of U bits: the units still to resolve the manifested power
//                    against (always ascending in the reference, so a set holds it)
// A Cast of None is has_cast 0 with its fields 0.
#pragma once

#include <cstdint>
#include <cstring>

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
  kStage = 8, kPhase, kActive, kPool0, kPool1,
  kHasCast, kCaster, kPower, kTarget, kDiceField, kSuccesses, kPerilsFlag, kDenyDice,
  kPerilsRoll, kGenUnit, kGenPick, kGenDisc, kGenPower, kUnitCount,
  kHeaderSize,
};
static_assert(kHeaderSize == 27, "the header is 27 bytes");

constexpr int kPowerBits = 104;  // powers a set can index (>= scenario.MAX_POWERS, bytes whole)

constexpr int kUnitFixed = 9;  // wounds (2), psyker, surge, generated count, generated[4]
constexpr int kMaxGenerated = 4;

// Byte offsets of one scenario's state layout.
struct Layout {
  int units = 0, powers = 0;
  int unit_stride = 0;  // kUnitFixed + power bitset bytes
  int attempted = 0, effects = 0, targets = 0, size = 0;

  Layout() = default;
  explicit Layout(int n_units) : units(n_units), powers(kPowerBits) {
    const int n_powers = kPowerBits;
    unit_stride = kUnitFixed + n_powers / 8;
    attempted = kHeaderSize + n_units * unit_stride;
    effects = attempted + (n_units * n_powers + 7) / 8;
    targets = effects + (n_powers * n_units * 2 + 7) / 8;
    size = targets + (n_units + 7) / 8;
  }
  int unit(int u) const { return kHeaderSize + u * unit_stride; }
};

inline bool get_bit(const uint8_t* s, int base, int i) { return (s[base + i / 8] >> (i % 8)) & 1; }
inline void set_bit(uint8_t* s, int base, int i, bool on) {
  if (on) {
    s[base + i / 8] = static_cast<uint8_t>(s[base + i / 8] | (1u << (i % 8)));
  } else {
    s[base + i / 8] = static_cast<uint8_t>(s[base + i / 8] & ~(1u << (i % 8)));
  }
}

inline double get_score(const uint8_t* s) {
  double v;
  std::memcpy(&v, s, sizeof v);
  return v;
}
inline void set_score(uint8_t* s, double v) {
  if (v == 0.0) v = 0.0;  // one zero: -0.0 compares equal in the reference
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
  int stage() const { return s_[kStage]; }
  int phase() const { return s_[kPhase]; }
  int active() const { return s_[kActive]; }
  int pool(int side) const { return s_[kPool0 + side]; }
  bool has_cast() const { return s_[kHasCast] != 0; }
  int caster() const { return s_[kCaster]; }
  int power() const { return s_[kPower]; }
  int target() const { return s_[kTarget]; }
  int dice() const { return s_[kDiceField]; }
  int successes() const { return s_[kSuccesses]; }
  bool perils() const { return s_[kPerilsFlag] != 0; }
  int deny_dice() const { return s_[kDenyDice]; }
  int perils_roll() const { return s_[kPerilsRoll]; }
  int gen_unit() const { return static_cast<int>(s_[kGenUnit]) - 1; }
  int gen_pick() const { return s_[kGenPick]; }
  int gen_disc() const { return static_cast<int>(s_[kGenDisc]) - 1; }
  int gen_power() const { return static_cast<int>(s_[kGenPower]) - 1; }
  double score() const { return get_score(s_); }

  int wounds(int u) const { return s_[l_.unit(u)] | (s_[l_.unit(u) + 1] << 8); }
  bool psyker(int u) const { return s_[l_.unit(u) + 2] != 0; }
  bool surge(int u) const { return s_[l_.unit(u) + 3] != 0; }
  int generated_count(int u) const { return s_[l_.unit(u) + 4]; }
  int generated(int u, int k) const { return s_[l_.unit(u) + 5 + k]; }
  bool knows(int u, int p) const { return get_bit(s_, l_.unit(u) + kUnitFixed, p); }
  bool attempted(int c, int p) const { return get_bit(s_, l_.attempted, c * l_.powers + p); }
  bool effect(int p, int t, int owner) const {
    return get_bit(s_, l_.effects, (p * l_.units + t) * 2 + owner);
  }
  bool targeted(int t) const { return get_bit(s_, l_.targets, t); }
  int first_target() const {
    for (int t = 0; t < l_.units; ++t)
      if (targeted(t)) return t;
    return -1;
  }

  // Writers (only on a writable state).
  void set(int field, int v) const { s_[field] = static_cast<uint8_t>(v); }
  void set_gen_unit(int v) const { set(kGenUnit, v + 1); }
  void set_gen_disc(int v) const { set(kGenDisc, v + 1); }
  void set_gen_power(int v) const { set(kGenPower, v + 1); }
  void set_score(double v) const { seventh::set_score(s_, v); }
  void clear_cast() const { std::memset(s_ + kHasCast, 0, kDenyDice - kHasCast + 1); }
  void set_wounds(int u, int w) const {
    s_[l_.unit(u)] = static_cast<uint8_t>(w & 0xff);
    s_[l_.unit(u) + 1] = static_cast<uint8_t>((w >> 8) & 0xff);
  }
  void set_psyker(int u, bool v) const { s_[l_.unit(u) + 2] = v ? 1 : 0; }
  void set_surge(int u, bool v) const { s_[l_.unit(u) + 3] = v ? 1 : 0; }
  void add_generated(int u, int disc) const {
    const int n = s_[l_.unit(u) + 4];
    s_[l_.unit(u) + 5 + n] = static_cast<uint8_t>(disc);
    s_[l_.unit(u) + 4] = static_cast<uint8_t>(n + 1);
  }
  void set_known(int u, int p, bool on) const { set_bit(s_, l_.unit(u) + kUnitFixed, p, on); }
  void set_attempted(int c, int p) const { set_bit(s_, l_.attempted, c * l_.powers + p, true); }
  void clear_attempted() const { std::memset(s_ + l_.attempted, 0, l_.effects - l_.attempted); }
  void set_effect(int p, int t, int owner, bool on) const {
    set_bit(s_, l_.effects, (p * l_.units + t) * 2 + owner, on);
  }
  void set_targeted(int t, bool on) const { set_bit(s_, l_.targets, t, on); }
  void clear_targets() const { std::memset(s_ + l_.targets, 0, l_.size - l_.targets); }

 private:
  Byte* s_;
  const Layout& l_;
};

using ConstState = StateRef<const uint8_t>;
using Draft = StateRef<uint8_t>;

}  // namespace seventh
}  // namespace psygym
