// Using an ability (RT-2): the twin of casting.py. Legal choices, targets and costs, the
// psyker's choice (rest, end its turn or an ability, RT-2.1, RT-5), the amount of Cure Wounds
// (RT-4.6), the 2D6 test below no_test_at points (RT-2.3), the cost deducted either way
// (RT-2.4) and a failed Cure Injury wounding its target (RT-2.5).
#include <algorithm>

#include "rules.h"

namespace psygym {
namespace rogue_trader {

void RogueTraderGame::legal(const Header& h, const uint8_t* b, Sink& sink) const {
  // casting._legal / _find_legal: sorted, as the reference lists them.
  const int nb = sc_.number_base;
  switch (h.phase) {
    case kChoose: {
      const int u = h.actor;
      if (!sink.push(h.used == 0 ? kRest : kEnd)) return;
      if (h.used >= sc_.per_turn) return;
      each_held(b, layout_, u, [&](int a) {  // in id order
        return !usable(b, u, a) || sink.push(kAbilityBase + a);
      });
      return;
    }
    case kTarget:  // casting.targets
      for (int t : cands(h.actor, h.ability))
        if (valid(b, h.actor, h.ability, t) && !sink.push(sc_.target_base + t)) return;
      return;
    case kAmount: {
      const int most = max_amount(h, b);
      for (int k = 1; k <= most; ++k)
        if (!sink.push(nb + k)) return;
      return;
    }
    case kAttackBid:
    case kSaveBid: {  // RT-3.2, RT-3.3: 0 up to a cap
      const int cap = h.phase == kAttackBid ? attack_cap(h, b) : save_cap(h, b);
      for (int k = 0; k <= cap; ++k)
        if (!sink.push(nb + k)) return;
      return;
    }
    default:
      return;
  }
}

bool RogueTraderGame::usable(const uint8_t* b, int u, int a) const {
  // casting._usable: psyker u may attempt ability a now (RT-2.2 and a legal target).
  if (ability_data(a).cost > unit(b, u).points) return false;
  for (int t : cands(u, a))
    if (valid(b, u, a, t)) return true;
  return false;
}

bool RogueTraderGame::valid(const uint8_t* b, int u, int a, int t) const {
  // casting._valid: unit t is a target of ability a of psyker u now (RT-4).
  const AbilityData& ab = ability_data(a);
  const Unit ts = unit(b, t);
  if (!ts.fighting()) return false;
  switch (ab.effect) {
    case kMental:
    case kMissile:
    case kRemove:
    case kValue:
      return true;
    case kAura:
      return ab.aura > ts.aura;
    case kStealMind:
      return ts.stolen == 0;
    case kConfuse:
      return !ts.confused();
    case kFear:
      return !ts.afraid();
    case kDestroyAura:
      return 1 <= ts.aura && ts.aura <= ab.aura;
    case kTransferAura:
      return unit(b, u).aura > ts.aura;
    case kCureInjury:
      return ts.hp == unit_data(t).max_hp - 1;
    case kCureWounds:
      return ts.hp < unit_data(t).max_hp;
    case kStrengthOfMind:
      return ts.wp_bonus == 0;
    default:
      return false;
  }
}

int RogueTraderGame::max_amount(const Header& h, const uint8_t* b) const {
  // casting._max_amount: wounds lost, points (RT-4.6) and the largest number action.
  const int cost = ability_data(h.ability).cost;
  const int by_points = cost ? unit(b, h.actor).points / cost : sc_.max_number;
  const int lost = unit_data(h.target).max_hp - unit(b, h.target).hp;
  return std::min({lost, by_points, sc_.max_number});
}

bool RogueTraderGame::can_act(const uint8_t* b, int u) const {
  // casting._can_act: in the fight with its mind free and unconfused (RT-4.5).
  const Unit us = unit(b, u);
  return us.fighting() && us.stolen == 0 && !us.confused();
}

int RogueTraderGame::cost(const Header& h) const {
  // casting._cost: per wound for Cure Wounds (RT-2.4).
  const AbilityData& ab = ability_data(h.ability);
  return ab.effect == kCureWounds ? ab.cost * h.amount : ab.cost;
}

void RogueTraderGame::choose(Work& w, int a) const {
  // casting._choose: psyker `actor` rests (RT-5), ends its turn or picks an ability (RT-2.1).
  const int u = w.h.actor;
  if (a == kRest) {
    Unit us = unit(w.b, u);
    us.set(kResting, true);
    put(w, u, us);
    next_actor(w, u);
    return;
  }
  if (a == kEnd) {
    next_actor(w, u);
    return;
  }
  const int ability = a - kAbilityBase;
  const std::vector<int>& c = cands(u, ability);
  if (c.size() == 1 && c[0] == u) {
    after_target(w, ability, u, 0);
    return;
  }
  w.h.ability = static_cast<int8_t>(ability);
  w.h.target = -1;
  w.h.amount = 0;
  w.h.phase = kTarget;
}

void RogueTraderGame::after_target(Work& w, int ability, int target, int amount) const {
  // casting._after_target: Cure Wounds asks how much (RT-4.6), others are attempted.
  if (ability_data(ability).effect == kCureWounds) {
    w.h.ability = static_cast<int8_t>(ability);
    w.h.target = static_cast<int8_t>(target);
    w.h.amount = static_cast<uint16_t>(amount);
    w.h.phase = kAmount;
    return;
  }
  attempt(w, ability, target, amount);
}

void RogueTraderGame::attempt(Work& w, int ability, int target, int amount) const {
  // casting._attempt: psyker `actor` uses `ability` on `target` (RT-2.2); a test below 12.
  const int points = unit(w.b, w.h.actor).points;
  w.h.ability = static_cast<int8_t>(ability);
  w.h.target = static_cast<int8_t>(target);
  w.h.amount = static_cast<uint16_t>(amount);
  w.h.phase = kTest;
  if (points >= sc_.no_test_at) tested(w, true);  // no test (RT-2.3)
}

void RogueTraderGame::tested(Work& w, bool works) const {
  // casting._tested: the cost is deducted either way (RT-2.4).
  const int u = w.h.actor;
  const AbilityData& ab = ability_data(w.h.ability);
  Unit us = unit(w.b, u);
  us.points = static_cast<uint16_t>(us.points - cost(w.h));
  put(w, u, us);
  if (!works) {
    if (ab.effect == kCureInjury) wound(w, w.h.target, 1);  // RT-2.5
    after_ability(w);
    return;
  }
  if (ab.psychic_save) {  // RT-3: the secret bids come first
    w.h.phase = kAttackBid;
    w.h.attack_bid = w.h.save_bid = 0;
    return;
  }
  if (ab.effect == kMental || ab.effect == kMissile || ab.effect == kStealMind) {
    w.h.phase = kResolve;
    w.h.attack_bid = w.h.save_bid = 0;
    return;
  }
  take_effect(w, 1);
  after_ability(w);
}

void RogueTraderGame::after_ability(Work& w) const {
  // casting._after_ability: the game may end (RT-6.1), else the psyker or the next acts.
  for (int p = 0; p < 2; ++p) {
    bool fighting = false;
    for (int i : sc_.side_units[p])
      if (unit(w.b, i).fighting()) {
        fighting = true;
        break;
      }
    if (!fighting) {
      game_over(w);
      return;
    }
  }
  const int u = w.h.actor;
  const int used = w.h.used + 1;
  if (used < sc_.per_turn && can_act(w.b, u)) {
    bool any = false;
    each_held(w.b, layout_, u, [&](int a) { return !(any = usable(w.b, u, a)); });
    if (any) {
      w.h.used = static_cast<uint8_t>(used);
      w.h.ability = w.h.target = -1;
      w.h.amount = w.h.attack_bid = w.h.save_bid = 0;
      w.h.phase = kChoose;
      return;
    }
  }
  next_actor(w, u);
}

}  // namespace rogue_trader
}  // namespace psygym
