// The secret bids of Rogue Trader (RT-3): the twin of bids.py. The attacker bids k points of
// enhanced attack (kAttackBid, RT-3.2), then the target, if it is a psyker, bids j points of
// augmented save (kSaveBid, RT-3.3) without seeing k; both are deducted whatever happens
// (RT-3.4). As in the reference, the pair is two decisions in a row: the state holds the
// pending bid, which the target's observation never shows (views.cc).
#include <algorithm>

#include "rules.h"

namespace psygym {
namespace rogue_trader {

bool RogueTraderGame::can_augment(const uint8_t* b, int t) const {
  // bids._can_augment: a fighting psyker, mind free (RT-3.3).
  const Unit ts = unit(b, t);
  return unit_data(t).psyker && ts.fighting() && ts.stolen == 0;
}

int RogueTraderGame::attack_cap(const Header& h, const uint8_t* b) const {
  // RT-3.2: any of the attacker's points, or the optional house cap (casting._legal).
  return std::min(static_cast<int>(unit(b, h.actor).points), sc_.bid_limit);
}

int RogueTraderGame::save_cap(const Header& h, const uint8_t* b) const {
  // RT-3.3: the target's points if it may augment, else only 0 (casting._legal).
  const int t = h.target;
  return can_augment(b, t) ? std::min(static_cast<int>(unit(b, t).points), sc_.bid_limit) : 0;
}

bool RogueTraderGame::simultaneous(const uint8_t* s, std::vector<int32_t>* rows,
                                   std::vector<int32_t>* cols) const {
  // bids.simultaneous_info: at the attacker's bid, where both sides have a real choice; the
  // target's bids are those of the save-bid node whatever the attacker bid (a probe with 0).
  Header h = load_header(s);
  if (h.phase != kAttackBid) return false;
  legal_actions(s, rows);
  h.attack_bid = 0;
  h.phase = kSaveBid;
  std::vector<uint8_t> probe(s, s + layout_.size);
  store_header(h, probe.data());
  legal_actions(probe.data(), cols);
  return rows->size() >= 2 && cols->size() >= 2;
}

void RogueTraderGame::bids_in(Work& w, int j) const {
  // bids._bids_in: both secret bids are known; deduct them whatever happens (RT-3.4).
  const int u = w.h.actor, t = w.h.target, k = w.h.attack_bid;
  Unit us = unit(w.b, u);
  us.points = static_cast<uint16_t>(us.points - k);
  put(w, u, us);
  if (j) {
    Unit ts = unit(w.b, t);
    // Spending points on an augmented save is psychic activity: it cancels a rest (RT-5).
    ts.set(kResting, ts.resting() && !sc_.augment_breaks_rest);
    ts.points = static_cast<uint16_t>(ts.points - j);
    put(w, t, ts);
  }
  w.h.save_bid = static_cast<uint16_t>(j);
  w.h.phase = kResolve;
}

}  // namespace rogue_trader
}  // namespace psygym
