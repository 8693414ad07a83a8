// Effects of powers, wounds and scores (2E-6, 2E-7, 2E-8): the twin of effects.py
// (SecondEffects) and of the exact tables every chance node reads (effect_distribution,
// duel_distribution, responses.nullify_chance and daemonic_chance, the warp flux), built when
// the game is made (attack tables on first use, once per key).
#include <algorithm>
#include <cstring>

#include "rules.h"

namespace psygym {
namespace second {
namespace {

// Outcomes 0 (failure) and 1 (success) of a roll that succeeds `num` times in `den`, leaving
// out a probability of 0 (rules.chance_distribution). Both are below 2^53, so the double
// division is the correctly rounded float(Fraction).
std::vector<Outcome> success_outcomes(int num, int den) {
  std::vector<Outcome> out;
  if (den - num > 0) out.push_back({0, static_cast<double>(den - num) / den});
  if (num > 0) out.push_back({1, static_cast<double>(num) / den});
  return out;
}

// to_wound_rt (2E-6): the D6 score to wound, 7 where it cannot.
int to_wound(int strength, int toughness) {
  const int diff = strength - toughness;
  if (diff >= 2) return 2;
  if (diff <= -3) return 7;
  return 4 - diff;
}

}  // namespace

void SecondGame::build_tables() {
  const Settings& st = sc_.settings;
  // The warp flux, 1D6 .. 6D6 (2E-3.1): totals over 6^n < 2^53.
  flux_.resize(kMaxFluxDice + 1);
  for (int d = 1; d <= kMaxFluxDice; ++d) {
    const Weights wt = dice_weights(DiceExpr{d, 6, 0});
    const double den = static_cast<double>(wt.den);
    for (std::size_t i = 0; i < wt.w.size(); ++i)
      flux_[static_cast<std::size_t>(d)].push_back(
          {wt.lo + static_cast<int>(i), static_cast<double>(wt.w[i]) / den});
  }
  // responses.nullify_chance: p = roll_chance(need), with a re-roll p + (1 - p) p, in 36ths.
  for (int need = 0; need <= 6; ++need)
    for (int reroll = 0; reroll < 2; ++reroll) {
      const int a = roll_sixths(need);
      nullify_.push_back(success_outcomes(reroll ? 6 * a + (6 - a) * a : 6 * a, 36));
    }
  // responses.daemonic_chance: D6 + ML below daemonic_attack_below slays the caster.
  for (const PsykerData& ps : sc_.psykers) {
    int slain = 0;
    for (int d = 1; d <= 6; ++d) slain += d + ps.ml < st.daemonic_attack_below;
    daemonic_.push_back(success_outcomes(slain, 6));
  }
  // The Psychic Duel roll (2E-7): each side rolls psychic_duel_dice (+ ML).
  const Weights duel = dice_weights(st.duel_dice);
  Wide square = 0;
  if (!checked_mul(duel.den, duel.den, &square))
    throw EngineError(ErrorCode::kScenario,
                      "2nd scenario data: psychic_duel_dice is past the exact tables' 2^126");
  for (int a = 1; a <= 4; ++a)
    for (int b = 1; b <= 4; ++b)
      duel_roll_.emplace_back(difference_weights(duel, st.duel_add_ml ? a : 0,
                                                 st.duel_add_ml ? b : 0));
  // Mortal wounds and duel effects (2E-6), by power and Force; attacks are checked here and
  // made on first use (attack_table).
  const std::size_t n = static_cast<std::size_t>(sc_.n_powers);
  mortal_.resize(4 * n);
  duel_effect_.resize(4 * n * 16);
  std::string why;
  for (std::size_t k = 0; k < n; ++k)
    for (int f = 0; f < 4; ++f) {
      const EffectSpec& e = sc_.powers[k].effect[f];
      const std::size_t pf = k * 4 + static_cast<std::size_t>(f);
      if (e.kind == kMortal) {
        mortal_[pf] = CapTable(dice_weights(e.dice));
      } else if (e.kind == kDuel) {
        const Weights d = dice_weights(e.dice);
        if (!checked_mul(d.den, d.den, &square))
          throw EngineError(ErrorCode::kScenario,
                            "2nd scenario data: a duel effect's dice are past the exact tables");
        for (int a = 1; a <= 4; ++a)
          for (int b = 1; b <= 4; ++b)
            duel_effect_[pf * 16 + static_cast<std::size_t>((a - 1) * 4 + b - 1)] =
                CapTable(difference_weights(d, a, b));
      } else if (e.kind == kAttack) {
        Weights probe;
        if (!attack_weights(dice_weights(e.hits), 0, kUnsavedDen, dice_weights(e.damage), 1, 0,
                            &probe, &why))
          throw EngineError(ErrorCode::kScenario, "2nd scenario data: " + why);
      }
    }
  const std::size_t u = static_cast<std::size_t>(sc_.n_units);
  attacks_.reset(new std::atomic<const CapTable*>[4 * n * u * u]());
}

const CapTable& SecondGame::attack_table(int power_index, int force, int attacker,
                                         int victim) const {
  const std::size_t u = static_cast<std::size_t>(sc_.n_units);
  const std::size_t at =
      ((static_cast<std::size_t>(power_index) * 4 + static_cast<std::size_t>(force)) * u +
       static_cast<std::size_t>(attacker)) * u + static_cast<std::size_t>(victim);
  if (const CapTable* t = attacks_[at].load(std::memory_order_acquire)) return *t;
  std::lock_guard<std::mutex> lock(attack_mutex_);
  if (const CapTable* t = attacks_[at].load(std::memory_order_acquire)) return *t;
  // effects.effect_distribution (2E-6): hit (automatic, or on BS), wound by the 2nd-edition
  // chart, armour saves worsened by Strength (invulnerable saves not); damage per unsaved wound
  // capped at the victim's wounds per model; the sum capped at the wounds left.
  const EffectSpec& e = effect_spec(power_index, force);
  const UnitData &shooter = unit(attacker), &target = unit(victim);
  const int hit = e.to_hit_bs ? roll_sixths(std::max(2, 7 - shooter.ballistic_skill)) : 6;
  const int wound_on = roll_sixths(to_wound(e.strength, target.toughness));
  int unsaved = 6;
  if (e.saves) {
    const int armour = target.save + std::max(0, e.strength - 3);  // strength_save_modifier
    int best = 7;
    if (target.save < 7 && armour <= 6) best = armour;
    if (target.invulnerable && target.invulnerable <= 6) best = std::min(best, target.invulnerable);
    unsaved = 6 - (best <= 6 ? roll_sixths(best) : 0);
  }
  Wide pn = static_cast<Wide>(hit * wound_on * unsaved), pd = kUnsavedDen;
  const Wide g = gcd_wide(pn, pd);
  pn /= g;
  pd /= g;
  Weights w;
  std::string why;
  attack_weights(dice_weights(e.hits), pn, pd, dice_weights(e.damage), target.per_model,
                 target.max_wounds, &w, &why);  // the totals were checked in build_tables
  attack_store_.push_back(std::make_unique<CapTable>(w));
  const CapTable* made = attack_store_.back().get();
  attacks_[at].store(made, std::memory_order_release);
  return *made;
}

std::pair<int, int> SecondGame::effect_units(const EffectRec& e) const {
  // facts.effect_units: (attacker unit, victim unit), Reflection included (2E-5.2).
  const int caster = psyker(e.psyker).unit;
  if (!e.reflected) return {caster, e.target};
  if (effect_spec(e.power, e.force).kind == kDuel) return {e.target, caster};
  return {caster, caster};
}

bool SecondGame::rolls_dice(const uint8_t* b, const EffectRec& e) const {
  // effects._rolls_dice: not a value effect, and its victim still stands.
  if (effect_spec(e.power, e.force).kind == kValue) return false;
  const int victim = e.reflected ? effect_units(e).second : e.target;
  return wounds(b, victim) > 0;
}

void SecondGame::add_effects(Work& w, int caster, int power_index, int force, int target,
                             bool reflected) const {
  // effects._effects: one effect per unit hit (every living unit of the area for 'every enemy
  // unit in range', the caster's own unit when such a power is reflected).
  auto push = [&](int unit_index, bool refl) {
    if (w.n_fx >= work_effects_)  // the constructor's bound makes this unreachable
      throw EngineError(ErrorCode::kValue, "more effects at once than the compiled game holds");
    w.fx[w.n_fx++] = EffectRec{static_cast<uint8_t>(power_index), static_cast<uint8_t>(force),
                               static_cast<uint8_t>(caster), static_cast<uint8_t>(unit_index),
                               static_cast<uint8_t>(refl)};
  };
  if (target < sc_.n_units) {
    push(target, reflected);
  } else if (reflected) {
    push(psyker(caster).unit, true);
  } else {
    for (int v : psyker(caster).area[static_cast<std::size_t>(power_index)])
      if (wounds(w.b, v) > 0) push(v, false);
  }
}

void SecondGame::pop_effect(Work& w) const {
  std::memmove(w.fx, w.fx + 1, sizeof(EffectRec) * static_cast<std::size_t>(w.n_fx - 1));
  --w.n_fx;
}

void SecondGame::wound(Work& w, int unit_index, int amount) const {
  // effects._wound (2E-8): wounds off the unit, scored for the other side; a slain psyker's
  // powers end, with their effects still waiting; a side with no unit left ends the game.
  const int left = wounds(w.b, unit_index);
  amount = std::min(amount, left);
  if (amount <= 0) return;
  const UnitData& u = unit(unit_index);
  set_u16(w.b, layout_.wounds + 2 * static_cast<std::size_t>(unit_index), left - amount);
  const double value = amount * u.value_per_wound;
  w.h.score = w.h.score + (u.owner == 1 ? value : -value);
  if (left - amount != 0) return;
  if (u.psyker >= 0) {
    for (int j = 0; j < sc_.n_slots; ++j)
      store_in_play(InPlayRec{-1, 0, 0, 0}, w.b, layout_, u.psyker, j);
    int kept = 0;
    for (int k = 0; k < w.n_fx; ++k)
      if (w.fx[k].psyker != u.psyker) w.fx[kept++] = w.fx[k];
    w.n_fx = kept;
  }
  for (int v : sc_.side_units[u.owner])
    if (wounds(w.b, v) > 0) return;
  Header& h = w.h;  // the game ends: no pending power, no roll
  h.stage = kOver;
  h.has_pending = 0;
  h.pending_psyker = h.pending_slot = h.pending_power = h.pending_target = 0;
  h.pending_force = h.pending_ultimate = h.pending_responses = 0;
  h.has_roll = 0;
  h.roll_kind = 0;
  h.roll_a = h.roll_b = 0;
  h.roll_need = h.roll_reroll = h.roll_player = 0;
}

void SecondGame::effect_outcomes(const uint8_t* b, const EffectRec& e,
                                 std::vector<Outcome>* out) const {
  // effects.effect_distribution against the wounds the victim has left.
  const std::pair<int, int> units = effect_units(e);
  const int left = wounds(b, units.second);
  const EffectSpec& spec = effect_spec(e.power, e.force);
  const std::size_t pf = static_cast<std::size_t>(e.power) * 4 + e.force;
  if (spec.kind == kAttack) {
    attack_table(e.power, e.force, units.first, units.second).outcomes(left, out);
  } else if (spec.kind == kMortal) {
    mortal_[pf].outcomes(left, out);
  } else if (spec.kind == kDuel) {
    const int a = psyker(unit(units.first).psyker).ml, d = psyker(unit(units.second).psyker).ml;
    duel_effect_[pf * 16 + static_cast<std::size_t>((a - 1) * 4 + d - 1)].outcomes(left, out);
  } else {
    out->push_back({0, 1.0});
  }
}

}  // namespace second
}  // namespace psygym
