// Set-up of a Rogue Trader game (RT-1): the twin of generation.py. Each random psi-level
// (kSetupLevel, RT-1.1), each random number of abilities (kSetupCount) and each ability drawn
// (kSetupDraw): a repeated roll is re-rolled (RT-1.3), which is a uniform draw among the
// abilities of the psyker's levels it does not hold yet.
#include <algorithm>

#include "rules.h"

namespace psygym {
namespace rogue_trader {

void RogueTraderGame::setup_from(Work& w, int u, bool count_stage) const {
  // generation._setup_from: the next set-up node from psyker u on, else the first turn.
  for (int i = u; i < sc_.n_units; ++i) {
    const UnitData& d = unit_data(i);
    if (!count_stage && d.random_level) {
      w.h.phase = kSetupLevel;
      w.h.actor = static_cast<int8_t>(i);
      return;
    }
    count_stage = false;
    if (!d.random_abilities) continue;
    if (sc_.random_count) {
      w.h.phase = kSetupCount;
      w.h.actor = static_cast<int8_t>(i);
      return;
    }
    if (d.typical_count > 0) {
      w.h.phase = kSetupDraw;
      w.h.actor = static_cast<int8_t>(i);
      w.h.left = static_cast<uint8_t>(d.typical_count);
      return;
    }
  }
  begin_turn(w, 0, sc_.first_player);  // generation._start_game (RT-6.1)
}

void RogueTraderGame::set_level(Work& w, int level) const {
  // generation._set_level: the psi-level rolled; its points start there (RT-1.1).
  const int u = w.h.actor;
  const UnitData& d = unit_data(u);
  Unit us = unit(w.b, u);
  us.level = static_cast<uint16_t>(level);
  us.points = static_cast<uint16_t>(d.psi_points < 0 ? level : std::min(d.psi_points, level));
  put(w, u, us);
  setup_from(w, u, true);
}

void RogueTraderGame::set_count(Work& w, int count) const {
  // generation._set_count: `count` random abilities, drawn next (RT-1.1).
  if (count > 0) {
    w.h.phase = kSetupDraw;
    w.h.left = static_cast<uint8_t>(count);
    return;
  }
  setup_from(w, w.h.actor + 1, false);
}

void RogueTraderGame::draw(Work& w, int a) const {
  // generation._draw: ability a, one the psyker does not hold yet (RT-1.3).
  const int u = w.h.actor;
  give(w.b, layout_, u, a);
  w.h.left = static_cast<uint8_t>(w.h.left - 1);
  if (w.h.left > 0 && draw_pool(w.b, u, nullptr) > 0) return;
  w.h.left = 0;
  setup_from(w, u + 1, false);
}

int RogueTraderGame::draw_pool(const uint8_t* b, int u, std::vector<Outcome>* out) const {
  // generation._draw_pool: of its levels, not held yet, each as likely (RT-1.3). Returns the
  // pool's size; `out` (if given) gets the outcomes.
  const std::vector<int>& pool = unit_data(u).pool;
  int m = 0;
  for (int a : pool)
    if (!holds(b, layout_, u, a)) ++m;
  if (out && m > 0) {
    const double p = one_over_[static_cast<std::size_t>(m)];
    for (int a : pool)
      if (!holds(b, layout_, u, a)) out->push_back({a, p});
  }
  return m;
}

}  // namespace rogue_trader
}  // namespace psygym
