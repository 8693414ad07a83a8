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

}  // namespace rogue_trader
}  // namespace psygym
