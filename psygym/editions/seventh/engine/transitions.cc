// The transitions of transitions.py: apply() copies the state once into `out` (the draft) and
// runs the stage's handler on it, as SeventhRules._step does (no events: the core builds none).
#include <cstring>

#include "rules.h"

namespace psygym {
namespace seventh {

void SeventhGame::apply(const uint8_t* s, int32_t a, uint8_t* out) const {
  // A state is a few words (state.h): copied a word at a time, inline.
  for (int i = 0; out != s && i < layout_.size; i += 8) {
    uint64_t word;
    std::memcpy(&word, s + i, 8);
    std::memcpy(out + i, &word, 8);
  }
  Draft d(out, layout_);
  switch (d.stage()) {
    case kSelect:
      return on_select(d, a);
    case kDice:  // _on_dice (7E-4.3)
      d.set_stage(kCastRoll);
      d.set(kDiceField, a - dice_base_ + 1);
      return;
    case kDeny:
      return deny(d, a - deny_base_);
    case kDiscipline:  // _on_discipline (7E-2.1)
      d.set_stage(kGenRoll);
      d.set_gen_disc(a - disc_base_);
      return;
    case kSwap:
      return finish_pick(d, a == swap_base_ + 1);
    case kPhaseRoll:
      return on_phase_roll(d, a);
    case kGenRoll:
      return on_gen_roll(d, a);
    case kCastRoll:
      return cast_rolled(d, a / 2, (a % 2) != 0);
    case kPerils:
      return perils(d, a);
    case kLdTest:
      return on_ld_test(d, a);
    case kPerilsHits:  // _on_perils_hits (7E-6.1)
      wound(d, d.caster(), a);
      return after_perils(d);
    case kPurge:
      return on_purge(d, a);
    case kDrain:
      return on_drain(d, a);
    case kDenyRoll:
      return on_deny_roll(d, a);
    case kEffect:
      return on_effect(d, a);
    default:  // kOver: nothing applies (the bindings refuse every action there)
      return;
  }
}

void SeventhGame::on_select(const Draft& d, int a) const {
  if (a == 0) return start_phase(d, d.phase() + 1);  // 7E-4.1: end the phase
  const int k = (a - kCast) / n_.units, t = (a - kCast) % n_.units;
  d.set_stage(kDice);
  d.begin_cast(k / n_.powers, k % n_.powers, t);
}

void SeventhGame::on_phase_roll(const Draft& d, int a) const {
  // 7E-3.1: the roll plus the living psykers' mastery levels, plus the active side's bonus.
  const int active = d.active();
  const int p0 = a + living_ml(d, 0) + (active == 0 ? n_.pool_bonus[0] : 0);
  const int p1 = a + living_ml(d, 1) + (active == 1 ? n_.pool_bonus[1] : 0);
  d.set(kPool0, p0);
  d.set(kPool1, p1);
  d.set_stage(kSelect);
  settle_select(d);
}

void SeventhGame::on_gen_roll(const Draft& d, int a) const {
  d.set_gen_power(a);
  const int prim = n_.primaris[static_cast<std::size_t>(d.gen_disc())];
  if (prim < 0 || d.knows(d.gen_unit(), prim)) return finish_pick(d, false);
  d.set_stage(kSwap);  // 7E-2.2
}

void SeventhGame::on_ld_test(const Draft& d, int a) const {
  const PerilsRow& row = n_.perils[d.perils_roll()];
  perils_outcome(d, a != 0 ? row.on_pass : row.on_fail);
}

void SeventhGame::on_purge(const Draft& d, int a) const {
  d.set_known(d.caster(), a, false);  // 7E-6.2
  after_perils(d);
}

void SeventhGame::on_drain(const Draft& d, int a) const {
  d.set(kPool0, d.pool(0) > a ? d.pool(0) - a : 0);  // 7E-6.3
  d.set(kPool1, d.pool(1) > a ? d.pool(1) - a : 0);
  after_perils(d);
}

void SeventhGame::on_deny_roll(const Draft& d, int a) const {
  if (a != 0) {  // denied
    d.set_stage(kSelect);
    d.clear_cast();
    return settle_select(d);
  }
  manifest(d);
}

void SeventhGame::on_effect(const Draft& d, int a) const {
  const int target = d.first_target();
  wound(d, target, a);
  const PowerData& power = n_.power[d.power()];
  if (a > 0 && power.effect == kAttack && power.heal_caster) heal(d, d.caster());
  d.set_targeted(target, false);
  next_target(d);
}

// ----------------------------------------------------------------------------- generation 7E-2
void SeventhGame::next_generation(const Draft& d, int after) const {
  for (int u = after + 1; u < n_.units; ++u) {
    if (n_.unit[u].psyker && !n_.unit[u].disciplines.empty()) {
      d.set_gen_unit(u);
      d.set_gen_pick(0);
      return begin_pick(d);
    }
  }
  d.set_gen_unit(-1);
  d.set_gen_pick(0);
  d.set_gen_disc(-1);
  d.set_gen_power(-1);
  start_phase(d, 0);
}

void SeventhGame::begin_pick(const Draft& d) const {
  const int unit = d.gen_unit();
  if (d.gen_pick() >= n_.unit[unit].mastery) return focus(d);
  int first = -1;
  const int n = open_disciplines(d, unit, &first);
  if (n == 0) return focus(d);
  if (n == 1) {
    d.set_stage(kGenRoll);
    d.set_gen_disc(first);
  } else {
    d.set_stage(kDiscipline);
    d.set_gen_disc(-1);
    d.set_gen_power(-1);
  }
}

void SeventhGame::finish_pick(const Draft& d, bool swap) const {
  const int unit = d.gen_unit(), disc = d.gen_disc();
  const int power = swap ? n_.primaris[static_cast<std::size_t>(disc)] : d.gen_power();
  d.set_known(unit, power, true);
  if (d.generated_count(unit) < kMaxGenerated) d.add_generated(unit, disc);
  d.set_gen_pick(d.gen_pick() + 1);
  d.set_gen_disc(-1);
  d.set_gen_power(-1);
  begin_pick(d);
}

void SeventhGame::focus(const Draft& d) const {
  const int unit = d.gen_unit();
  const int n = d.generated_count(unit);
  bool same = n > 0;
  for (int k = 1; k < n; ++k) same = same && d.generated(unit, k) == d.generated(unit, 0);
  if (same) {  // 7E-2.3 Psychic Focus
    const int prim = n_.primaris[static_cast<std::size_t>(d.generated(unit, 0))];
    if (prim >= 0 && !d.knows(unit, prim)) d.set_known(unit, prim, true);
  }
  next_generation(d, unit);
}

// ----------------------------------------------------------------------------- phases 7E-3, 7E-8
void SeventhGame::start_phase(const Draft& d, int phase) const {
  while (true) {
    if (phase >= n_.total_phases || !both_sides_alive(d)) {
      d.set_stage(kOver);
      d.set(kPhase, phase);
      d.clear_cast();
      d.clear_targets();
      return;
    }
    const int active = phase % 2 == 0 ? n_.first_player : 1 - n_.first_player;
    d.set(kPhase, phase);
    d.set_active(active);
    d.set(kPool0, 0);
    d.set(kPool1, 0);
    d.clear_cast();
    // Blessings, maledictions and Warp Surge end at their owner's next phase (7E-6.6); no
    // power is attempted yet and none resolving.
    d.start_phase_sets(active);
    if (can_cast(d, active)) {
      d.set_stage(kPhaseRoll);
      return;
    }
    ++phase;
  }
}

// Stay in the casting decision while there is a cast to make, else end the phase; a side with
// no units left ends the game at once (7E-8.1).
void SeventhGame::settle_select(const Draft& d) const {
  if (d.pool(d.active()) > 0 && both_sides_alive(d) && has_legal_cast(d)) return;
  d.set_stage(kSelect);
  start_phase(d, d.phase() + 1);
}

// ----------------------------------------------------------------------------- casting 7E-4, 7E-5
void SeventhGame::cast_rolled(const Draft& d, int successes, bool perils_rolled) const {
  const PowerData& power = n_.power[d.power()];
  const int active = d.active();
  d.set(kPool0 + active, d.pool(active) - d.dice());
  d.set_attempted(d.caster(), d.power());
  const bool passed = successes >= power.warp_charge;
  d.set(kSuccesses, successes);
  if (perils_rolled || (power.perils_on_fail && !passed)) {  // 7E-4.4, Vortex of Doom
    d.set_stage(kPerils);
    d.set_perils(perils_rolled);
    return;
  }
  d.set(kDiceField, 0);  // no Perils: the dice are forgotten at once
  after_perils(d);
}

void SeventhGame::perils(const Draft& d, int roll) const {
  d.set(kPerilsRoll, roll);
  if (n_.perils[roll].ld_test) {
    d.set_stage(kLdTest);
    return;
  }
  perils_outcome(d, n_.perils[roll].on_pass);
}

void SeventhGame::perils_outcome(const Draft& d, int outcome) const {
  const int caster = d.caster();
  const PerilsRow& row = n_.perils[d.perils_roll()];
  if (outcome == kWound) {
    wound(d, caster, 1);
  } else if (outcome == kSurge) {
    d.set_surge(caster, true);
    score(d, n_.unit[caster].owner, n_.warp_surge_value);
  } else if (outcome == kRemoved) {
    const int per_model = n_.unit[caster].wounds;
    const int lost = d.wounds(caster) % per_model != 0 ? d.wounds(caster) % per_model : per_model;
    wound(d, caster, lost);
    d.set_psyker(caster, false);
    if (d.wounds(caster) > 0) {
      d.set_stage(kPerilsHits);
      return;
    }
  }
  if (row.extra == kExtraPurge && d.wounds(caster) > 0 && d.known_count(caster) > 0) {
    d.set_stage(kPurge);
  } else if (row.extra == kExtraDrain) {
    d.set_stage(kDrain);
  } else {
    after_perils(d);
  }
}

void SeventhGame::after_perils(const Draft& d) const {
  // Once the roll and any Perils are resolved only the successes matter (7E-5.3).
  const PowerData& power = n_.power[d.power()];
  d.set(kPerilsRoll, 0);
  // 7E-6 note: a power aimed at a unit needs that unit still on the table.
  const bool aimed = power.target == kEnemy || power.target == kFriendly || power.target == kSelf;
  if (d.successes() < power.warp_charge || (aimed && d.wounds(d.target()) <= 0)) {
    d.set_stage(kSelect);
    d.clear_cast();
    return settle_select(d);
  }
  d.set(kDiceField, 0);
  d.set_perils(false);
  if (d.pool(1 - d.active()) > 0) {
    d.set_stage(kDeny);
    return;
  }
  manifest(d);
}

void SeventhGame::deny(const Draft& d, int dice) const {
  if (dice == 0) return manifest(d);
  const int denier = 1 - d.active();
  d.set(kPool0 + denier, d.pool(denier) - dice);
  d.set_stage(kDenyRoll);
  d.set(kDenyDice, dice);
}

void SeventhGame::manifest(const Draft& d) const {
  const PowerData& power = n_.power[d.power()];
  const int side = n_.unit[d.caster()].owner;
  if (power.effect == kValue) {
    score(d, side, power.value);
    d.set_effect(d.power(), d.target(), side, true);
    d.set_stage(kSelect);
    d.clear_cast();
    return settle_select(d);
  }
  d.clear_targets();
  if (power.target == kEnemies) {
    for (int t : reach(d, d.caster(), d.power()))
      if (d.wounds(t) > 0) d.set_targeted(t, true);
  } else {
    d.set_targeted(d.target(), true);
  }
  next_target(d);
}

// Resolve the manifested power's targets; deterministic results need no chance node.
void SeventhGame::next_target(const Draft& d) const {
  const PowerData& power = n_.power[d.power()];
  for (int target = d.first_target(); target >= 0; target = d.first_target()) {
    if (d.wounds(target) > 0) {
      const Table& dist = effect_table(d, target);
      if (dist.outcomes.size() > 1) {
        d.set_stage(kEffect);
        return;
      }
      const int wounds = dist.outcomes.empty() ? 0 : dist.outcomes[0].action;
      wound(d, target, wounds);
      if (wounds != 0 && power.effect == kAttack && power.heal_caster) heal(d, d.caster());
    }
    d.set_targeted(target, false);
  }
  d.set_stage(kSelect);
  d.clear_cast();
  settle_select(d);
}

// ----------------------------------------------------------------------------- wounds, score
void SeventhGame::score(const Draft& d, int side, double value) const {
  d.set_score(d.score() + (side == 0 ? value : -value));
}

void SeventhGame::wound(const Draft& d, int unit, int amount) const {
  const int left_before = d.wounds(unit);
  if (amount > left_before) amount = left_before;
  if (amount <= 0) return;
  const int left = left_before - amount;
  d.set_wounds(unit, left);
  if (left <= 0) d.set_psyker(unit, false);  // a destroyed unit has no psyker
  // 7E-8.2: the wounded unit's owner loses the value, the other side gains it.
  score(d, 1 - n_.unit[unit].owner, static_cast<double>(amount) * n_.unit[unit].value_per_wound);
}

void SeventhGame::heal(const Draft& d, int unit) const {
  const int w = d.wounds(unit);
  if (w <= 0 || w >= n_.unit[unit].max_wounds) return;
  d.set_wounds(unit, w + 1);
  score(d, n_.unit[unit].owner, n_.unit[unit].value_per_wound);
}

}  // namespace seventh
}  // namespace psygym
