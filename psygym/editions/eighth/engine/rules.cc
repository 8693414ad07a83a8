#include "rules.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

namespace psygym {
namespace eighth {
namespace {

constexpr int kLd = kMaxLeadership + 1;

bool any_bit(const uint8_t* b, std::size_t at, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i)
    if (b[at + i]) return true;
  return false;
}

}  // namespace

EighthGame::EighthGame(ScenarioSpec spec)
    : sc_(std::move(spec)), layout_(sc_.n_units, sc_.n_powers) {
  const int n = sc_.n_units, p = sc_.n_powers;
  end_phase_ = n;
  cast_ = n + 1;
  stop_ = n + 1 + p * n;
  deny_ = stop_ + 1;
  no_deny_ = deny_ + n;
  perils_ = CapTable(dice_weights(sc_.perils));
  blast_ = CapTable(dice_weights(sc_.blast));
  std::set<int> ld;
  for (const UnitData& u : sc_.units) ld.insert(u.leadership);
  mortal_.resize(static_cast<std::size_t>(p));
  boosted_.resize(static_cast<std::size_t>(p));
  rolloff_.resize(static_cast<std::size_t>(p));
  std::string why;
  for (int k = 0; k < p; ++k) {
    const PowerData& pw = sc_.powers[static_cast<std::size_t>(k)];
    const std::size_t i = static_cast<std::size_t>(k);
    if (pw.kind == kMortalEffect) {
      mortal_[i] = CapTable(dice_weights(pw.mortal));
      boosted_[i] = CapTable(dice_weights(pw.boosted));
    } else if (pw.kind == kRolloffEffect) {
      rolloff_[i].resize(static_cast<std::size_t>(kLd * kLd));
      for (int a : ld)
        for (int b : ld) {
          Weights w;
          if (!rolloff_weights(pw.dice, pw.difference, pw.win, pw.tie, a, b, &w, &why))
            throw EngineError(ErrorCode::kScenario, "8th scenario data: " + why);
          rolloff_[i][static_cast<std::size_t>(a * kLd + b)] = CapTable(w);
        }
    } else if (pw.kind == kAttackEffect) {
      // Checked here for every target; each table is made on first use (attack_table).
      for (int j = 0; j < n; ++j) {
        Attack at;
        if (!make_attack(pw.hits, pw.damage, pw.unsaved_num[static_cast<std::size_t>(j)],
                         pw.unsaved_den[static_cast<std::size_t>(j)], &at, &why))
          throw EngineError(ErrorCode::kScenario, "8th scenario data: " + why);
      }
    }
  }
}

// ------------------------------------------------------------------ the state's checks

std::string EighthGame::check_state(const uint8_t* s) const {
  const Header h = load_header(s);
  const int n = sc_.n_units, p = sc_.n_powers;
  if (h.n_units != n || h.n_powers != p) return "the sizes are another scenario's";
  if (h.pad != 0) return "padding is not zero";
  if (!std::isfinite(h.score)) return "the score is not finite";
  if (h.stage >= kStages) return "stage out of range";
  if (h.round < 1 || h.round > sc_.battle_rounds) return "battle round out of range";
  if (h.phase > 1 || h.active > 1) return "phase or active player out of range";
  if (h.total > 12) return "test total out of range";
  if (h.caster < -1 || h.caster >= n || h.target < -1 || h.target >= n || h.denier < -1 ||
      h.denier >= n)
    return "unit index out of range";
  if (h.power < -1 || h.power >= p) return "power index out of range";
  // Stages that act on the selected unit, and those with an attempt pending (rules.py).
  if (h.stage >= kPower && h.stage <= kEffect && h.caster < 0) return "no caster at this stage";
  if (h.stage >= kDeny && h.stage <= kEffect && (h.power < 0 || h.target < 0))
    return "no pending power at this stage";
  for (int i = 0; i < n; ++i) {
    const UnitData& u = sc_.units[static_cast<std::size_t>(i)];
    if (wounds(s, i) > u.max_wounds) return "wounds out of range";
    if (s[layout_.deny_left + static_cast<std::size_t>(i)] > u.full_deny)
      return "deny attempts out of range";
  }
  // Bits past the last unit or power stay clear.
  for (int i = n; i < static_cast<int>(8 * layout_.unit_bytes); ++i)
    if (get_bit(s, layout_.selected, i) || get_bit(s, layout_.blast, i))
      return "unit bits out of range";
  for (int i = p; i < static_cast<int>(8 * layout_.power_bytes); ++i)
    if (get_bit(s, layout_.unit_powers, i)) return "power bits out of range";
  const bool blasting = any_bit(s, layout_.blast, layout_.unit_bytes);
  if (blasting != (h.stage == kBlast)) return "the Perils blast does not match the stage";
  return "";
}

// ------------------------------------------------------------------ game API

void EighthGame::initial_state(uint8_t* out) const {
  std::memset(out, 0, layout_.size);
  Work w{Header{}, out};
  w.h.stage = kSelect;
  w.h.round = 1;
  w.h.active = static_cast<uint8_t>(sc_.first_player);
  w.h.caster = w.h.power = w.h.target = w.h.denier = -1;
  w.h.n_units = static_cast<uint8_t>(sc_.n_units);
  w.h.n_powers = static_cast<uint8_t>(sc_.n_powers);
  for (int i = 0; i < sc_.n_units; ++i) {
    const UnitData& u = sc_.units[static_cast<std::size_t>(i)];
    set_u16(out, layout_.wounds + 2 * static_cast<std::size_t>(i), u.max_wounds);
    out[layout_.deny_left + static_cast<std::size_t>(i)] = static_cast<uint8_t>(u.full_deny);
  }
  advance(w);  // the first phase is not reported (rules.py's docstring)
  store_header(w.h, out);
}

int EighthGame::current_player(const uint8_t* s) const {
  const Header h = load_header(s);
  if (h.stage <= kPower) return h.active;  // 8E-2.1
  if (h.stage == kDeny) return 1 - h.active;  // 8E-5.1
  if (h.stage == kOver) return kTerminal;
  return kChance;
}

void EighthGame::legal_actions(const uint8_t* s, std::vector<int32_t>* out) const {
  out->clear();
  const Header h = load_header(s);
  if (h.stage == kSelect) {  // 8E-2.1
    for (int i : sc_.side_psykers[h.active])
      if (selectable(s, i)) out->push_back(i);
    out->push_back(end_phase_);
  } else if (h.stage == kPower) {  // 8E-2.2, 8E-3
    cast_option(s, h.caster, true, out);
    out->push_back(stop_);
  } else if (h.stage == kDeny) {  // 8E-5.1
    any_denier(h, s, out);
    out->push_back(no_deny_);
  }
}

void EighthGame::chance_outcomes(const uint8_t* s, std::vector<Outcome>* out) const {
  out->clear();
  const Header h = load_header(s);
  if (current_player(s) != kChance) return;
  outcomes_of(h, s, out);
}

void EighthGame::returns(const uint8_t* s, double out[2]) const {  // 8E-8.2
  const Header h = load_header(s);
  out[0] = h.score;
  out[1] = -h.score;
}

void EighthGame::apply(const uint8_t* s, int32_t action, uint8_t* out) const {
  if (out != s) std::memcpy(out, s, layout_.size);
  Work w{load_header(out), out};
  switch (w.h.stage) {
    case kSelect:
      select(w, action);
      break;
    case kPower:
      power(w, action);
      break;
    case kDeny:
      deny(w, action);
      break;
    case kOver:
      break;
    default:
      enter_chance(w, chance_step(w, action));
  }
  store_header(w.h, out);
}

// ------------------------------------------------------------------ legality helpers

bool EighthGame::cast_option(const uint8_t* b, int c, bool own, std::vector<int32_t>* out) const {
  // rules._find_cast_options: known, not locked out (8E-3.2, 8E-3.3), with a living target.
  const UnitData& u = sc_.units[static_cast<std::size_t>(c)];
  const std::size_t start = out ? out->size() : 0;
  for (int p : u.known) {
    const PowerData& pw = sc_.powers[static_cast<std::size_t>(p)];
    if (pw.repeatable) {
      if (own && get_bit(b, layout_.unit_powers, p)) continue;  // 8E-3.3
    } else if (b[layout_.attempts + static_cast<std::size_t>(p)]) {  // 8E-3.2
      continue;
    }
    for (int t : u.targets[static_cast<std::size_t>(p)]) {
      if (wounds(b, t) <= 0) continue;
      if (!out) return true;
      out->push_back(cast_ + p * sc_.n_units + t);
      if (!pw.chosen_target) break;  // the lowest-index (or closest) living target
    }
  }
  if (!out) return false;
  std::sort(out->begin() + static_cast<std::ptrdiff_t>(start), out->end());
  return out->size() > start;
}

bool EighthGame::selectable(const uint8_t* b, int unit) const {
  if (get_bit(b, layout_.selected, unit) || wounds(b, unit) <= 0) return false;
  return cast_option(b, unit, false, nullptr);
}

bool EighthGame::any_denier(const Header& h, const uint8_t* b, std::vector<int32_t>* out) const {
  // rules.deniers (8E-5.1): PSYKERs within range with denies left, if a deny can succeed.
  if (h.caster < 0 || !deniable(h.total)) return false;
  bool any = false;
  for (int d : sc_.units[static_cast<std::size_t>(h.caster)].deny_candidates) {
    if (wounds(b, d) > 0 && b[layout_.deny_left + static_cast<std::size_t>(d)] > 0) {
      if (!out) return true;
      any = true;
      out->push_back(deny_ + d);
    }
  }
  return any;
}

// ------------------------------------------------------------------ chance tables

const CapTable& EighthGame::rolloff_table(int power, int caster, int target) const {
  const int a = sc_.units[static_cast<std::size_t>(caster)].leadership;
  const int b = sc_.units[static_cast<std::size_t>(target)].leadership;
  return rolloff_[static_cast<std::size_t>(power)][static_cast<std::size_t>(a * kLd + b)];
}

const std::vector<Outcome>& EighthGame::attack_table(int power, int target, int remaining) const {
  std::lock_guard<std::mutex> lock(attack_mutex_);
  auto key = std::make_tuple(power, target, remaining);
  auto it = attack_cache_.find(key);
  if (it != attack_cache_.end()) return it->second;
  const PowerData& pw = sc_.powers[static_cast<std::size_t>(power)];
  Attack at;
  std::string why;
  make_attack(pw.hits, pw.damage, pw.unsaved_num[static_cast<std::size_t>(target)],
              pw.unsaved_den[static_cast<std::size_t>(target)], &at, &why);  // checked when made
  std::vector<Outcome> out;
  attack_outcomes(at, remaining, sc_.units[static_cast<std::size_t>(target)].per_model, &out);
  return attack_cache_.emplace(key, std::move(out)).first->second;
}

void EighthGame::outcomes_of(const Header& h, const uint8_t* b, std::vector<Outcome>* out) const {
  switch (h.stage) {
    case kTest: {  // 8E-4.1
      const auto& t = test_outcomes();
      out->insert(out->end(), t.begin(), t.end());
      return;
    }
    case kPerils:  // 8E-6.1
      perils_.outcomes(wounds(b, h.caster), out);
      return;
    case kBlast:  // 8E-6.2
      blast_.outcomes(wounds(b, lowest_bit(b, layout_.blast, sc_.n_units)), out);
      return;
    case kDenyRoll: {  // 8E-5.2
      const auto& t = deny_outcomes(h.total);
      out->insert(out->end(), t.begin(), t.end());
      return;
    }
    case kEffect:
      break;
    default:
      return;
  }
  // 8E-7: rules.effect_distribution.
  const PowerData& pw = sc_.powers[static_cast<std::size_t>(h.power)];
  const int left = wounds(b, h.target);
  const std::size_t p = static_cast<std::size_t>(h.power);
  if (pw.kind == kMortalEffect) {
    const bool boosted = pw.boosted_at > 0 && h.total >= pw.boosted_at;
    (boosted ? boosted_[p] : mortal_[p]).outcomes(left, out);
  } else if (pw.kind == kRolloffEffect) {
    rolloff_table(h.power, h.caster, h.target).outcomes(left, out);
  } else if (pw.kind == kAttackEffect) {
    const auto& t = attack_table(h.power, h.target, left);
    out->insert(out->end(), t.begin(), t.end());
  } else {
    out->push_back({0, 1.0});
  }
}

bool EighthGame::single_outcome(const Header& h, const uint8_t* b, int* outcome) const {
  const CapTable* table = nullptr;
  int left = 0;
  if (h.stage == kPerils) {
    table = &perils_;
    left = wounds(b, h.caster);
  } else if (h.stage == kBlast) {
    table = &blast_;
    left = wounds(b, lowest_bit(b, layout_.blast, sc_.n_units));
  } else if (h.stage == kEffect) {
    const PowerData& pw = sc_.powers[static_cast<std::size_t>(h.power)];
    const std::size_t p = static_cast<std::size_t>(h.power);
    left = wounds(b, h.target);
    if (pw.kind == kMortalEffect) {
      table = pw.boosted_at > 0 && h.total >= pw.boosted_at ? &boosted_[p] : &mortal_[p];
    } else if (pw.kind == kRolloffEffect) {
      table = &rolloff_table(h.power, h.caster, h.target);
    } else if (pw.kind == kAttackEffect) {
      const auto& t = attack_table(h.power, h.target, left);
      if (t.size() != 1) return false;
      *outcome = t[0].action;
      return true;
    } else {
      *outcome = 0;
      return true;
    }
  } else if (h.stage == kDenyRoll) {
    const auto& t = deny_outcomes(h.total);
    if (t.size() != 1) return false;
    *outcome = t[0].action;
    return true;
  } else {
    return false;  // a test has 11 outcomes
  }
  if (table->count(left) != 1) return false;
  *outcome = table->first(left);
  return true;
}

// ------------------------------------------------------------------ registration

std::unique_ptr<Game> make_eighth(const ScenarioData& data) {
  return std::make_unique<EighthGame>(read_scenario(data));
}

namespace {
const GameRegistrar kRegistrar("8th", &make_eighth);
}  // namespace

}  // namespace eighth
}  // namespace psygym
