// The transitions of transitions.py (_select .. _next_phase), building the next state in one copy as
// the reference does; no events (STYLE.md 7.7).
#include <cstring>

#include "rules.h"

namespace psygym {
namespace eighth {

void EighthGame::select(Work& w, int a) const {
  if (a == end_phase_) {  // 8E-2.1
    next_phase(w);
    advance(w);
    return;
  }
  w.h.stage = kPower;
  w.h.caster = static_cast<int8_t>(a);
  w.h.manifests_left = static_cast<uint8_t>(sc_.units[static_cast<std::size_t>(a)].manifest);
  std::memset(w.b + layout_.unit_powers, 0, layout_.power_bytes);
  set_bit(w.b, layout_.selected, a);  // 8E-2.3
}

void EighthGame::power(Work& w, int a) const {
  if (a == stop_) {  // 8E-2.2
    reset_unit(w);
    advance(w);
    return;
  }
  const int p = (a - cast_) / sc_.n_units, t = (a - cast_) % sc_.n_units;
  const PowerData& pw = sc_.powers[static_cast<std::size_t>(p)];
  uint8_t& attempts = w.b[layout_.attempts + static_cast<std::size_t>(p)];
  w.h.warp_charge = static_cast<uint16_t>(pw.warp_charge + pw.escalation * attempts);  // 8E-4.2
  attempts = static_cast<uint8_t>(attempts + 1);
  w.h.stage = kTest;
  set_bit(w.b, layout_.unit_powers, p);
  w.h.manifests_left = static_cast<uint8_t>(w.h.manifests_left - 1);
  w.h.power = static_cast<int8_t>(p);
  w.h.target = static_cast<int8_t>(t);
  w.h.total = 0;
}

void EighthGame::deny(Work& w, int a) const {
  if (a == no_deny_) {
    enter_chance(w, to_effect(w));
    return;
  }
  const int d = a - deny_;
  uint8_t& left = w.b[layout_.deny_left + static_cast<std::size_t>(d)];
  left = static_cast<uint8_t>(left - 1);
  w.h.stage = kDenyRoll;
  w.h.denier = static_cast<int8_t>(d);
}

bool EighthGame::chance_step(Work& w, int a) const {
  Header& h = w.h;
  switch (h.stage) {
    case kTest:  // 8E-4.1, 8E-4.3
      h.total = static_cast<uint8_t>(a);
      if (is_perils_total(a)) {
        h.stage = kPerils;
        return true;
      }
      if (passed(h)) return to_deny(w);
      after_attempt(w);
      return false;
    case kPerils:  // 8E-6.1
      hurt(w, h.caster, a);
      if (wounds(w.b, h.caster) == 0) {  // 8E-6.2: the power fails, then the blast
        bool any = false;
        for (int j : sc_.units[static_cast<std::size_t>(h.caster)].blast_candidates) {
          if (wounds(w.b, j) > 0) {
            set_bit(w.b, layout_.blast, j);
            any = true;
          }
        }
        if (any) {
          h.stage = kBlast;
          return true;
        }
        after_attempt(w);
        return false;
      }
      if (passed(h)) return to_deny(w);
      after_attempt(w);
      return false;
    case kBlast: {  // 8E-6.2
      const int unit = lowest_bit(w.b, layout_.blast, sc_.n_units);
      hurt(w, unit, a);
      clear_bit(w.b, layout_.blast, unit);
      if (lowest_bit(w.b, layout_.blast, sc_.n_units) >= 0) return true;
      after_attempt(w);
      return false;
    }
    case kDenyRoll:  // 8E-5.2
      if (a) {
        after_attempt(w);
        return false;
      }
      return to_effect(w);
    case kEffect:  // 8E-7
      hurt(w, h.target, a);
      after_attempt(w);
      return false;
    default:
      return false;
  }
}

void EighthGame::enter_chance(Work& w, bool enter) const {
  // rules._enter_chance: a chance node with a single outcome is resolved at once.
  int outcome = 0;
  while (enter && single_outcome(w.h, w.b, &outcome)) enter = chance_step(w, outcome);
}

bool EighthGame::to_deny(Work& w) const {
  if (any_denier(w.h, w.b, nullptr)) {  // 8E-5.1
    w.h.stage = kDeny;
    return false;
  }
  return to_effect(w);
}

bool EighthGame::to_effect(Work& w) const {
  const PowerData& pw = sc_.powers[static_cast<std::size_t>(w.h.power)];
  if (pw.kind == kValueEffect) {  // value effects score for the caster (8E-7.3, 8E-8.2)
    const double sign = w.h.active == 0 ? 1.0 : -1.0;
    w.h.score = w.h.score + sign * pw.value;
    after_attempt(w);
    return false;
  }
  w.h.stage = kEffect;
  return true;
}

void EighthGame::hurt(Work& w, int unit, int amount) const {
  // Wounds spill over models (8E-7.2) and score for the other side (8E-8.2).
  if (amount <= 0) return;
  const std::size_t at = layout_.wounds + 2 * static_cast<std::size_t>(unit);
  const UnitData& u = sc_.units[static_cast<std::size_t>(unit)];
  set_u16(w.b, at, get_u16(w.b, at) - amount);
  const double delta = static_cast<double>(amount) * u.value_per_wound;
  w.h.score = w.h.score + (u.side ? delta : -delta);
}

void EighthGame::after_attempt(Work& w) const {
  w.h.stage = kPower;
  w.h.power = w.h.target = w.h.denier = -1;
  w.h.warp_charge = 0;
  w.h.total = 0;
  std::memset(w.b + layout_.blast, 0, layout_.unit_bytes);
  advance(w);
}

void EighthGame::reset_unit(Work& w) const {
  w.h.stage = kSelect;
  w.h.caster = -1;
  w.h.manifests_left = 0;
  std::memset(w.b + layout_.unit_powers, 0, layout_.power_bytes);
}

void EighthGame::advance(Work& w) const {
  // Skip decisions the rules leave no choice in; end the game when it is over (8E-8.1).
  if (w.h.stage == kOver) return;
  bool alive[2] = {false, false};
  for (int i = 0; i < sc_.n_units; ++i)
    if (wounds(w.b, i) > 0) alive[sc_.units[static_cast<std::size_t>(i)].side] = true;
  if (!(alive[0] && alive[1])) {
    w.h.stage = kOver;
    return;
  }
  while (true) {
    // A decision with more than one legal action is asked (the last one is stop/end).
    if (w.h.stage == kPower) {
      if (wounds(w.b, w.h.caster) > 0 && w.h.manifests_left > 0 &&
          cast_option(w.b, w.h.caster, true, nullptr))
        return;
      reset_unit(w);
    } else if (w.h.stage == kSelect) {
      for (int i : sc_.side_psykers[w.h.active])
        if (selectable(w.b, i)) return;
      next_phase(w);
    } else {
      return;
    }
  }
}

void EighthGame::next_phase(Work& w) const {
  // The next Psychic phase (8E-8.1), or the end of the game.
  Header& h = w.h;
  const int played = h.phases_played + 1;
  const int phase = h.phase == 0 ? 1 : 0;
  const int rnd = h.phase == 0 ? h.round : h.round + 1;
  if ((sc_.phase_limit > 0 && played >= sc_.phase_limit) || rnd > sc_.battle_rounds) {
    h.stage = kOver;
    h.caster = -1;
    return;
  }
  // Wounds and score carry over; everything else starts afresh (8E-1.2, 8E-2).
  h.stage = kSelect;
  h.caster = h.power = h.target = h.denier = -1;
  h.manifests_left = 0;
  h.warp_charge = 0;
  h.total = 0;
  std::memset(w.b + layout_.selected, 0, layout_.unit_bytes);
  std::memset(w.b + layout_.blast, 0, layout_.unit_bytes);
  std::memset(w.b + layout_.unit_powers, 0, layout_.power_bytes);
  std::memset(w.b + layout_.attempts, 0, static_cast<std::size_t>(sc_.n_powers));
  for (int i = 0; i < sc_.n_units; ++i)
    w.b[layout_.deny_left + static_cast<std::size_t>(i)] =
        static_cast<uint8_t>(sc_.units[static_cast<std::size_t>(i)].full_deny);
  h.round = static_cast<uint8_t>(rnd);
  h.phase = static_cast<uint8_t>(phase);
  h.phases_played = static_cast<uint8_t>(played);
  const int first = sc_.first_player;
  h.active = static_cast<uint8_t>(phase == 0 ? first : 1 - first);
}

}  // namespace eighth
}  // namespace psygym
