// check_state: which bytes are a state of this scenario.
//
// Every index, count, enum and flag is range-checked against the scenario, and each phase's
// preconditions hold (a psyker acting, an ability under way with a candidate target, the points
// it costs, a pool to draw from), so every method is memory-safe on an accepted state, every
// decision has a legal action and every chance node an outcome. The accepted set is closed
// under apply: every state reached from an accepted one is accepted too.
#include <cmath>
#include <string>

#include "rules.h"

namespace psygym {
namespace rogue_trader {

std::string RogueTraderGame::check_state(const uint8_t* s) const {
  const Header h = load_header(s);
  const int n = sc_.n_units, na = sc_.n_abilities;
  if (h.n_units != n || h.n_abilities != na) return "the sizes are another scenario's";
  if (!std::isfinite(h.score)) return "the score is not a finite number";
  if (h.score == 0.0 && std::signbit(h.score)) return "the score is -0.0 (states hold 0.0)";
  if (h.phase >= kPhases) return "phase " + std::to_string(h.phase) + " is not a phase (0 to 11)";
  if (h.active > 1) return "the active player is not 0 or 1";
  if (h.phase == kOver ? h.turn > sc_.turns : h.turn >= sc_.turns)
    return "turn " + std::to_string(h.turn) + " is past the game's turns";
  if (h.actor < -1 || h.actor >= n || h.target < -1 || h.target >= n)
    return "a unit index is out of range";
  if (h.ability < -1 || h.ability >= na) return "the ability is out of range";
  if (h.used >= sc_.per_turn) return "more abilities used than a turn allows";
  if (h.amount > sc_.max_number) return "the amount is past the largest number";
  if (h.attack_bid > sc_.bid_limit || h.save_bid > sc_.bid_limit)
    return "a bid is past the largest bid";
  for (int i = 0; i < n; ++i) {
    const UnitData& d = unit_data(i);
    const Unit u = unit(s, i);
    if (u.hp > d.max_hp) return "a unit has more wounds than it starts with";
    if (u.aura > 4) return "an aura is past level 4";
    if (u.wp_bonus > 1) return "a will power bonus is past 1";
    if (u.flags & ~kAllFlags) return "a unit's flags are out of range";
    for (int a = na; a < static_cast<int>(8 * layout_.ability_bytes); ++a)
      if (holds(s, layout_, i, a)) return "an ability bit is past the abilities";
    if (d.psyker) continue;
    if (u.points || u.level || u.resting()) return "a unit that is no psyker has psi-points";
    for (int a = 0; a < na; ++a)
      if (holds(s, layout_, i, a)) return "a unit that is no psyker has abilities";
  }
  return check_phase(h, s);
}

std::string RogueTraderGame::check_phase(const Header& h, const uint8_t* s) const {
  const int phase = h.phase;
  if (phase == kOver) return "";
  if (phase == kRecover) {
    if (h.actor < 0 || unit_data(h.actor).owner != h.active)
      return "the recovering unit is not the active player's";
    return "";
  }
  if (phase <= kSetupDraw) {  // set-up (RT-1): a psyker with something random, in order
    if (h.actor < 0 || !unit_data(h.actor).psyker) return "set-up is not about a psyker";
    const UnitData& d = unit_data(h.actor);
    if (phase == kSetupLevel && !d.random_level) return "a psi-level that is not random";
    if (phase != kSetupLevel && !d.random_abilities) return "abilities that are not random";
    if (phase == kSetupCount && !sc_.random_count) return "a count that is not random";
    if (phase == kSetupDraw && (h.left < 1 || draw_pool(s, h.actor, nullptr) < 1))
      return "a draw with nothing left to draw";
    for (int i = h.actor + (phase == kSetupDraw ? 1 : 0); i < sc_.n_units; ++i) {
      if (!unit_data(i).random_abilities) continue;
      for (int a = 0; a < sc_.n_abilities; ++a)
        if (holds(s, layout_, i, a)) return "a psyker not set up yet holds abilities";
    }
    return "";
  }
  // The active player's psyker acts (RT-2.1).
  if (h.actor < 0 || !unit_data(h.actor).psyker || unit_data(h.actor).owner != h.active)
    return "the acting unit is not a psyker of the active player";
  if (phase == kChoose) return "";
  if (h.ability < 0) return "no ability under way";
  const AbilityData& ab = ability_data(h.ability);
  if (phase == kTarget) {
    if (ab.cost > unit(s, h.actor).points) return "an ability the psyker cannot pay for";
    Sink sink;
    sink.limit = 1;
    legal(h, s, sink);
    return sink.count ? "" : "an ability with no legal target";
  }
  if (h.target < 0 || !is_cand(h.actor, h.ability, h.target))
    return "the target is not one the ability can take";
  if (phase == kAmount) {
    if (ab.effect != kCureWounds) return "an amount for an ability that heals none";
    return max_amount(h, s) >= 1 ? "" : "no wound to heal";
  }
  if (phase == kTest && cost(h) > unit(s, h.actor).points)
    return "a test of an ability the psyker cannot pay for";
  if ((phase == kAttackBid || phase == kSaveBid) && !ab.psychic_save)
    return "bids on an ability without a psychic save";
  if (phase == kSaveBid && h.attack_bid > attack_cap(h, s))
    return "an enhanced attack past the attacker's points";
  return "";
}

}  // namespace rogue_trader
}  // namespace psygym
