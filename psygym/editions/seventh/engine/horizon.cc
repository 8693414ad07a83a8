// SeventhRules.horizon and phase_horizon (rules.py): the search agent's units of lookahead.
#include "rules.h"

#include <cstring>

namespace psygym {
namespace seventh {
namespace {

// Set bits in a 64-bit word (no library call where the popcnt instruction is not built in).
inline int popcount64(uint64_t w) {
  w = w - ((w >> 1) & 0x5555555555555555ULL);
  w = (w & 0x3333333333333333ULL) + ((w >> 2) & 0x3333333333333333ULL);
  w = (w + (w >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<int>((w * 0x0101010101010101ULL) >> 56);
}

// Set bits among the `count` bits from bit `first` of the bytes at `base`, a word at a time:
// the search asks the horizon of every state it reaches.
int count_bits(const uint8_t* s, int base, int first, int count) {
  int n = 0, i = first;
  const int end = first + count;
  for (; i < end && i % 8 != 0; ++i) n += get_bit(s, base, static_cast<unsigned>(i));
  for (; end - i >= 64; i += 64) {
    uint64_t w;
    std::memcpy(&w, s + base + i / 8, sizeof w);
    n += popcount64(w);
  }
  for (; end - i >= 8; i += 8) n += popcount64(s[base + i / 8]);
  for (; i < end; ++i) n += get_bit(s, base, static_cast<unsigned>(i));
  return n;
}

}  // namespace

// (battle round, step). Round 0 is power generation (7E-2), a step per psyker's pick. In a
// battle round a step runs from a choice at SELECT through that cast's resolution (7E-4 to
// 7E-7); from the Perils test on, the cast is already among the attempted (7E-4.3), so it
// counts one less, as the reference's `rolled`.
void SeventhGame::horizon(const uint8_t* s, int32_t out[2]) const {
  const ConstState st(s, layout_);
  const int stage = st.stage();
  if (stage == kDiscipline || stage == kGenRoll || stage == kSwap) {
    out[0] = 0;
    out[1] = 1 + st.gen_unit() * 16 + st.gen_pick();
    return;
  }
  // len(state.attempted): the bits of the attempted set (ConstState::attempted_count).
  const int attempted =
      count_bits(s, layout_.bits, layout_.attempted_bit, layout_.psykers * layout_.powers);
  const bool rolled = stage == kPerils || stage == kLdTest || stage == kPerilsHits ||
                      stage == kPurge || stage == kDrain || stage == kDeny ||
                      stage == kDenyRoll || stage == kEffect;
  const int phase = st.phase();
  out[0] = phase / 2 + 1;
  out[1] = (phase % 2) * 64 + attempted - (rolled ? 1 : 0);
}

// (battle round, phase within it), as SeventhRules.phase_horizon: power generation keeps its
// steps (there is no Psychic phase yet), every state of a battle round's phase is one unit.
void SeventhGame::phase_horizon(const uint8_t* s, int32_t out[2]) const {
  const ConstState st(s, layout_);
  const int stage = st.stage();
  if (stage == kDiscipline || stage == kGenRoll || stage == kSwap) {
    horizon(s, out);
    return;
  }
  const int phase = st.phase();
  out[0] = phase / 2 + 1;
  out[1] = phase % 2;
}

}  // namespace seventh
}  // namespace psygym
