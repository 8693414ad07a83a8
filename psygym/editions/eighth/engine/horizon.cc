// EighthRules.horizon and phase_horizon (rules.py): the search agent's units of lookahead.
#include "rules.h"

namespace psygym {
namespace eighth {

// (battle round, step): a step runs from a choice of psyker or power through the resolution
// of that attempt (8E-2 to 8E-7). Every stage but SELECT and POWER is inside a cast whose
// attempt is already counted, so it counts one less, as the reference's `in_cast`.
void EighthGame::horizon(const uint8_t* s, int32_t out[2]) const {
  const Header h = load_header(s);
  int attempts = 0;
  for (int p = 0; p < layout_.p; ++p) attempts += s[layout_.attempts + static_cast<std::size_t>(p)];
  const bool in_cast = h.stage != kSelect && h.stage != kPower;
  out[0] = h.round;
  out[1] = h.phase * 256 + attempts - (in_cast ? 1 : 0);
}

// (battle round, phase within it), as EighthRules.phase_horizon.
void EighthGame::phase_horizon(const uint8_t* s, int32_t out[2]) const {
  const Header h = load_header(s);
  out[0] = h.round;
  out[1] = h.phase;
}

}  // namespace eighth
}  // namespace psygym
