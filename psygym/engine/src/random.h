// The caller's random numbers, drawn in C++ exactly as numpy draws them: the engine never seeds
// itself (STYLE.md section 7.5). Pcg64 is numpy's PCG64 bit generator (128-bit LCG, XSL-RR
// output), started from the state numpy reports (Generator.bit_generator.state), and
// next_double() is Generator.random(); weighted_index() is psygym.kernel.weighted_choice's
// draw. So a game stepped in the core with a copy of a generator's state makes the same draws,
// and reaches the same states, as the reference with that generator.
#pragma once

#include <cstdint>
#include <vector>

#include "game.h"

namespace psygym {

class Pcg64 {
 public:
  using u128 = unsigned __int128;

  Pcg64(u128 state, u128 inc) : state_(state), inc_(inc) {}

  u128 state() const { return state_; }
  u128 inc() const { return inc_; }

  uint64_t next64() {
    state_ = state_ * kMultiplier + inc_;
    const uint64_t xored = static_cast<uint64_t>(state_ >> 64) ^ static_cast<uint64_t>(state_);
    const unsigned rot = static_cast<unsigned>(state_ >> 122);
    return (xored >> rot) | (xored << ((64 - rot) & 63));
  }

  // numpy's Generator.random(): 53 random bits over 2^53.
  double next_double() { return static_cast<double>(next64() >> 11) * (1.0 / 9007199254740992.0); }

 private:
  static constexpr u128 kMultiplier =
      (static_cast<u128>(0x2360ED051FC65DA4ULL) << 64) | 0x4385DF649FCCF645ULL;
  u128 state_;
  u128 inc_;
};

// psygym.kernel.weighted_choice over the outcomes' probabilities: no draw for one outcome, else
// one uniform number against the running sums (bisect_right), the last index if it runs off.
inline std::size_t weighted_index(const std::vector<Outcome>& outcomes, Pcg64& rng) {
  const std::size_t n = outcomes.size();
  if (n <= 1) return 0;
  double total = 0.0;
  for (const Outcome& o : outcomes) total += o.probability;
  const double x = rng.next_double() * total;
  double running = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    running += outcomes[i].probability;
    if (running > x) return i;
  }
  return n - 1;
}

// psygym.kernel.ChanceTable.sample: one uniform number against the running sums even for a
// single outcome (where weighted_index draws none), the last index if it runs off.
inline std::size_t table_index(const std::vector<Outcome>& outcomes, Pcg64& rng) {
  const std::size_t n = outcomes.size();
  double total = 0.0;
  for (const Outcome& o : outcomes) total += o.probability;
  const double x = rng.next_double() * total;
  double running = 0.0;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    running += outcomes[i].probability;
    if (running > x) return i;
  }
  return n ? n - 1 : 0;
}

// psygym.kernel.uniform_choice over n items (n >= 1): weighted_index with n weights 1.0 / n,
// the same running sums, and no draw for n == 1.
inline std::size_t uniform_index(std::size_t n, Pcg64& rng) {
  if (n <= 1) return 0;
  const double w = 1.0 / static_cast<double>(n);
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) total += w;
  const double x = rng.next_double() * total;
  double running = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    running += w;
    if (running > x) return i;
  }
  return n - 1;
}

}  // namespace psygym
