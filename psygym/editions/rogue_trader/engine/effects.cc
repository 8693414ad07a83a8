// Effects of Rogue Trader abilities (RT-3.1, RT-4): the twin of effects.py. The resolution
// node's outcome (its table: rules.cc's resolve_table) and the effect on the target, with the
// score it brings (RT-6.2). Scores are added in the reference's order, so they match to the bit.
#include <algorithm>

#include "rules.h"

namespace psygym {
namespace rogue_trader {

void RogueTraderGame::resolve(Work& w, int outcome) const {
  // effects._resolve: 0 the psychic save is made, else the effect.
  if (outcome != 0) take_effect(w, outcome);
  after_ability(w);
}

void RogueTraderGame::take_effect(Work& w, int outcome) const {
  // effects._take_effect: the effect of `ability` on `target` (RT-4).
  const int a = w.h.ability, u = w.h.actor, t = w.h.target;
  const AbilityData& ab = ability_data(a);
  const int caster = unit_data(u).owner;
  Unit ts = unit(w.b, t);
  switch (ab.effect) {
    case kMental:
    case kMissile: {  // RT-4.1, RT-4.4: outcome 1 + w is w wounds
      const int wounds = outcome - 1;
      if (wounds == 0) return;  // no wound, and no value either
      wound(w, t, wounds);
      break;
    }
    case kStealMind:  // RT-4.5: the duration rolled
      ts.stolen = static_cast<uint16_t>(outcome);
      put(w, t, ts);
      break;
    case kRemove: {  // Rout, Change Allegiance: out of the fight
      const int hp = ts.hp;
      ts.set(kOut, true);
      put(w, t, ts);
      if (sc_.removal_scores_wounds) credit(w, caster, hp * unit_data(t).vpw);
      break;
    }
    case kConfuse:
      ts.set(kConfused, true);
      put(w, t, ts);
      break;
    case kFear:
      ts.set(kAfraid, true);
      put(w, t, ts);
      break;
    case kAura:  // RT-4.3: a new aura replaces the old one
      ts.aura = static_cast<uint8_t>(ab.aura);
      put(w, t, ts);
      break;
    case kDestroyAura:
      ts.aura = 0;
      put(w, t, ts);
      break;
    case kTransferAura: {  // the caster's aura onto the target (the caster's first)
      Unit us = unit(w.b, u);
      const uint8_t level = us.aura;
      us.aura = 0;
      put(w, u, us);
      ts = unit(w.b, t);
      ts.aura = level;
      put(w, t, ts);
      break;
    }
    case kCureInjury:
    case kCureWounds: {  // RT-2.5, RT-4.6: healing gives the wounds' value back
      int heal = ab.effect == kCureInjury ? 1 : w.h.amount;
      heal = std::min(heal, unit_data(t).max_hp - ts.hp);
      ts.hp = static_cast<uint16_t>(ts.hp + heal);
      put(w, t, ts);
      credit(w, unit_data(t).owner, heal * unit_data(t).vpw);
      break;
    }
    case kStrengthOfMind:  // RT-4.7
      ts.wp_bonus = 1;
      put(w, t, ts);
      break;
    default:  // kValue: no fighting effect (RT-4.8)
      break;
  }
  if (ab.value != 0.0) credit(w, caster, ab.value);
}

void RogueTraderGame::wound(Work& w, int t, int wounds) const {
  // effects._wound: unit t loses `wounds` (at most what it has left), scored (RT-6.2).
  Unit ts = unit(w.b, t);
  wounds = std::min(wounds, static_cast<int>(ts.hp));
  const double loss = wounds * unit_data(t).vpw;
  w.h.score = w.h.score + (unit_data(t).owner == 1 ? loss : -loss);
  ts.hp = static_cast<uint16_t>(ts.hp - wounds);
  put(w, t, ts);
}

void RogueTraderGame::credit(Work& w, int side, double amount) {
  // effects._credit: zero-sum, from player 0's view.
  w.h.score = w.h.score + (side == 0 ? amount : -amount);
}

}  // namespace rogue_trader
}  // namespace psygym
