// Psykers and their power cards (2E-1): the twin of psykers.py (SecondPsykers) and of
// facts.next_drawer: the first state, set-up draws and the psykers that can use powers.
#include <cstring>

#include "random.h"
#include "rules.h"

namespace psygym {
namespace second {

void SecondGame::initial_state(uint8_t* out) const {
  // psykers._first_state, then _settle.
  std::memset(out, 0, layout_.size);
  EffectRec buffer[kMaxUnits];
  Work w = load_work(out, buffer);
  w.h.stage = kSetup;
  w.h.to_move = static_cast<uint8_t>(sc_.first_player);
  w.h.n_units = static_cast<uint8_t>(sc_.n_units);
  w.h.n_psykers = static_cast<uint8_t>(sc_.n_psykers);
  w.h.n_slots = static_cast<uint8_t>(sc_.n_slots);
  for (int k = 0; k < kCards; ++k) pile(out, kDeck)[k] = static_cast<uint8_t>(sc_.deck[k]);
  for (int u = 0; u < sc_.n_units; ++u)
    set_u16(out, layout_.wounds + 2 * static_cast<std::size_t>(u), unit(u).max_wounds);
  for (int i = 0; i < sc_.n_psykers; ++i)
    for (int j = 0; j < sc_.n_slots; ++j) {
      out[layout_.powers + static_cast<std::size_t>(i * sc_.n_slots + j)] =
          static_cast<uint8_t>(psyker(i).initial[static_cast<std::size_t>(j)]);
      store_in_play(InPlayRec{-1, 0, 0, 0}, out, layout_, i, j);
    }
  settle(w);
  store_work(w);
}

int SecondGame::next_draw(const uint8_t* b) const {
  // facts.next_drawer (2E-1.1): the first psyker with a draw pool and fewer cards than its ML.
  for (int i = 0; i < sc_.n_psykers; ++i) {
    const PsykerData& ps = psyker(i);
    if (!ps.draws) continue;
    int empty = 0;
    for (int j = 0; j < sc_.n_slots; ++j) empty += power_in(b, i, j) < 0;
    if (empty > sc_.n_slots - ps.ml) return i;
  }
  return -1;
}

int SecondGame::usable_psykers(const uint8_t* b) const {
  // 2E-3.2: living psykers with at least one power card left.
  int n = 0;
  for (int i = 0; i < sc_.n_psykers; ++i) {
    if (!alive_psyker(b, i)) continue;
    for (int j = 0; j < sc_.n_slots; ++j)
      if (power_in(b, i, j) >= 0) {
        ++n;
        break;
      }
  }
  return n;
}

void SecondGame::setup_outcomes(const uint8_t* b, std::vector<Outcome>* out) const {
  // psykers._setup_distribution: one power card of the pool the psyker does not hold, each
  // with the same chance (2E-1.1). 1 / n in double is float(Fraction(1, n)), correctly rounded.
  const int i = next_draw(b);
  if (i < 0) return;
  const std::size_t start = out->size();
  for (int k : psyker(i).pool) {
    bool held = false;
    for (int j = 0; j < sc_.n_slots; ++j) held = held || power_in(b, i, j) == k;
    if (!held) out->push_back({k, 0.0});
  }
  const double p = 1.0 / static_cast<double>(out->size() - start);
  for (std::size_t n = start; n < out->size(); ++n) (*out)[n].probability = p;
}

int32_t SecondGame::sample_setup(const uint8_t* b, Pcg64& rng) const {
  const int i = next_draw(b);
  if (i < 0) throw EngineError(ErrorCode::kValue, "not a set-up draw");
  const std::vector<int>& pool = psyker(i).pool;
  auto held = [&](int k) {
    for (int j = 0; j < sc_.n_slots; ++j)
      if (power_in(b, i, j) == k) return true;
    return false;
  };
  int n = 0;
  for (int k : pool) n += !held(k);
  if (n == 0) throw EngineError(ErrorCode::kValue, "a set-up draw from an empty pool");
  const double p = 1.0 / static_cast<double>(n);
  double total = 0.0;
  for (int m = 0; m < n; ++m) total += p;
  const double x = rng.next_double() * total;
  double running = 0.0;
  int seen = 0;
  for (int k : pool) {
    if (held(k)) continue;
    if (++seen == n) return k;  // the last outcome: no sum to test
    running += p;
    if (running > x) return k;
  }
  throw EngineError(ErrorCode::kValue, "a set-up draw past its pool");  // unreachable
}

void SecondGame::draw_power(Work& w, int outcome) const {
  // rules._apply_chance at set-up: the card goes to the psyker's first empty slot (2E-1.1).
  const int i = next_draw(w.b);
  if (i < 0) return;  // not a set-up draw (apply checks the outcome first)
  for (int j = 0; j < sc_.n_slots; ++j)
    if (power_in(w.b, i, j) < 0) {
      w.b[layout_.powers + static_cast<std::size_t>(i * sc_.n_slots + j)] =
          static_cast<uint8_t>(outcome);
      return;
    }
}

}  // namespace second
}  // namespace psygym
