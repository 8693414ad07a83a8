// Turns, resting and the end of a Rogue Trader game (RT-5, RT-6): the twin of turns.py. At
// the start of a turn the active player's psykers that rested regain a point, never above their
// psi-level (RT-5), and its confused units try to recover; its psykers then act one after the
// other in scenario order (RT-2.1), skipping a stolen or confused mind (RT-4.5); at the end of
// the turn its stolen minds count one turn. The game ends after the last turn or when a side
// has no unit left in the fight (RT-6.1).
//
// The reference's _end_turn and _begin_turn call each other while nobody can act; here
// begin_turn loops over such turns instead, so nothing recurses.
#include <algorithm>
#include <limits>

#include "rules.h"

namespace psygym {
namespace rogue_trader {

void RogueTraderGame::begin_turn(Work& w, int turn, int p) const {
  // turns._begin_turn: turn `turn` of player p starts; resting psykers regain a point (RT-5).
  while (true) {
    for (int i : sc_.psykers_of[p]) {
      Unit us = unit(w.b, i);
      if (!us.resting()) continue;
      us.points = static_cast<uint16_t>(std::min(us.points + 1, static_cast<int>(us.level)));
      us.set(kResting, false);
      put(w, i, us);
    }
    w.h.turn = static_cast<uint8_t>(turn);
    w.h.active = static_cast<uint8_t>(p);
    w.h.left = 0;
    w.h.used = 0;
    w.h.ability = w.h.target = -1;
    w.h.amount = w.h.attack_bid = w.h.save_bid = 0;
    for (int i : sc_.side_units[p]) {
      const Unit us = unit(w.b, i);
      if (us.confused() && us.fighting()) {
        w.h.phase = kRecover;
        w.h.actor = static_cast<int8_t>(i);
        return;
      }
    }
    const int i = first_actor(w.b, p, -1);
    w.h.phase = kChoose;
    w.h.actor = static_cast<int8_t>(i);
    if (i >= 0) return;
    // Nobody of player p can act: the turn ends at once (turns._end_turn).
    if (close_turn(w, &turn)) return;
    p = 1 - p;
  }
}

bool RogueTraderGame::close_turn(Work& w, int* next_turn) const {
  // turns._end_turn, first half: the active player's stolen minds count one turn (RT-4.5);
  // the game ends after the last turn (RT-6.1). False: turn *next_turn comes.
  for (int i : sc_.side_units[w.h.active]) {
    Unit us = unit(w.b, i);
    if (us.stolen) {
      us.stolen = static_cast<uint16_t>(us.stolen - 1);
      put(w, i, us);
    }
  }
  const int turn = w.h.turn + 1;
  if (turn >= sc_.turns) {
    game_over(w);
    w.h.turn = static_cast<uint8_t>(turn);
    return true;
  }
  *next_turn = turn;
  return false;
}

void RogueTraderGame::end_turn(Work& w) const {
  // turns._end_turn: the other player's turn, or the end.
  int turn = 0;
  if (!close_turn(w, &turn)) begin_turn(w, turn, 1 - w.h.active);
}

void RogueTraderGame::recover_from(Work& w, int start) const {
  // turns._recover_from: the next confused unit from `start` on tries to recover.
  for (int i : sc_.side_units[w.h.active]) {
    const Unit us = unit(w.b, i);
    if (i >= start && us.confused() && us.fighting()) {
      w.h.phase = kRecover;
      w.h.actor = static_cast<int8_t>(i);
      return;
    }
  }
  next_actor(w, -1);
}

void RogueTraderGame::recovered(Work& w, bool ok) const {
  // turns._recovered: confused unit `actor` made its psychic save, or stays confused.
  const int u = w.h.actor;
  if (ok) {
    Unit us = unit(w.b, u);
    us.set(kConfused, false);
    put(w, u, us);
  }
  recover_from(w, u + 1);
}

void RogueTraderGame::next_actor(Work& w, int after) const {
  // turns._next_actor: the next psyker of the active player after `after` chooses.
  const int i = first_actor(w.b, w.h.active, after);
  if (i < 0) {
    end_turn(w);
    return;
  }
  w.h.phase = kChoose;
  w.h.actor = static_cast<int8_t>(i);
  w.h.used = 0;
  w.h.ability = w.h.target = -1;
  w.h.amount = w.h.attack_bid = w.h.save_bid = 0;
}

int RogueTraderGame::first_actor(const uint8_t* b, int active, int after) const {
  // turns._first_actor: the first psyker able to act (RT-2.1, RT-4.5), or -1.
  for (int i : sc_.psykers_of[active]) {
    if (i <= after) continue;
    const Unit us = unit(b, i);
    if (!us.fighting() || us.stolen || us.confused()) continue;
    return i;
  }
  return -1;
}

void RogueTraderGame::game_over(Work& w) {
  // turns._game_over: the terminal state (RT-6.2).
  w.h.phase = kOver;
  w.h.actor = -1;
  w.h.used = 0;
  w.h.ability = w.h.target = -1;
  w.h.amount = w.h.attack_bid = w.h.save_bid = 0;
}

void RogueTraderGame::rest_bounds(const uint8_t* s, double out[2]) const {
  // turns.rest_bounds: per side with a turn left, the ways its fighting psykers' abilities can
  // move the score against candidate targets still in the fight (1 raise its score, 2 lower
  // it), and those of an ability under way; a side of the bounds is 0 where no way leads
  // there. Before the abilities are drawn (set-up): unbounded.
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const Header h = load_header(s);
  out[0] = out[1] = 0.0;
  if (h.phase == kOver) return;
  if (h.phase == kSetupLevel || h.phase == kSetupCount || h.phase == kSetupDraw) {
    out[0] = -kInf;
    out[1] = kInf;
    return;
  }
  int ways[2] = {0, 0};
  if (h.ability >= 0)
    for (const auto& [t, way] : moves(h.actor, h.ability)) ways[h.active] |= way;
  const int sides = std::min(sc_.turns - static_cast<int>(h.turn), 2);
  for (int k = 0; k < sides; ++k) {
    const int p = k == 0 ? h.active : 1 - h.active;
    for (int u : sc_.psykers_of[p]) {
      if (!unit(s, u).fighting()) continue;
      each_held(s, layout_, u, [&](int a) {
        for (const auto& [t, way] : moves(u, a))
          if (unit(s, t).fighting()) ways[p] |= way;
        return true;
      });
    }
  }
  if ((ways[0] & 2) || (ways[1] & 1)) out[0] = -kInf;
  if ((ways[0] & 1) || (ways[1] & 2)) out[1] = kInf;
}

void RogueTraderGame::build_moves() {
  // turns.score_moves: wounds move the score by the target's value per wound against its side
  // (a heal for it), a removal credits the caster with the wounds it takes off, an ability's
  // own value credits the caster (RT-4, RT-2.5, RT-6.2).
  const int n = sc_.n_units, na = sc_.n_abilities;
  moves_.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(na), {});
  for (int u = 0; u < n; ++u) {
    if (!unit_data(u).psyker) continue;
    for (int a = 0; a < na; ++a) {
      const AbilityData& ab = ability_data(a);
      auto& out = moves_[move_slot(u, a)];
      for (int t : cands(u, a)) {
        int way = (ab.value > 0 ? 1 : 0) | (ab.value < 0 ? 2 : 0);
        const double vpw = unit_data(t).vpw;
        const int up = vpw > 0 ? 1 : 2;
        const int mine = unit_data(t).owner == unit_data(u).owner ? up : 3 - up;
        if (vpw != 0.0) {
          if (ab.effect == kMental || ab.effect == kMissile) way |= 3 - mine;
          else if (ab.effect == kRemove && sc_.removal_scores_wounds) way |= up;
          else if (ab.effect == kCureWounds) way |= mine;
          else if (ab.effect == kCureInjury) way |= 3;
        }
        if (way) out.emplace_back(t, way);
      }
    }
  }
}

}  // namespace rogue_trader
}  // namespace psygym
