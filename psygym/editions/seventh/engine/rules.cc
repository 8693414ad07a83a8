#include "rules.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "exact.h"
#include "random.h"

namespace psygym {
namespace seventh {
namespace {

// Chance-table cache keys: the node kind in the top bits, then what its table depends on
// (rules._chance_key).
enum KeyKind : uint64_t { kCastKey = 1, kHitsKey = 2, kDenyKey = 3, kEffectKey = 4 };

uint64_t key(KeyKind kind, uint64_t fields) { return (static_cast<uint64_t>(kind) << 56) | fields; }

Table fixed_die(int sides) {
  Table t;
  for (int v = 1; v <= sides; ++v) t.outcomes.push_back(Outcome{v, exact_ratio(1, sides)});
  return t;
}

}  // namespace

SeventhGame::SeventhGame(ScenarioNumbers numbers)
    : n_(std::move(numbers)), layout_(n_) {
  dice_base_ = kCast + n_.units * n_.powers * n_.units;
  deny_base_ = dice_base_ + n_.max_dice;
  disc_base_ = deny_base_ + n_.max_dice + 1;
  swap_base_ = disc_base_ + n_.disciplines;
  last_round_ = n_.rounds - 1;
  for (int p = 0; p < n_.powers; ++p)
    if (layout_.rank[static_cast<std::size_t>(p)] >= 0) value_powers_.push_back(p);
  side_units_.resize(2);
  side_psykers_.resize(2);
  for (int u = 0; u < n_.units; ++u) {
    side_units_[n_.unit[u].owner].push_back(u);
    if (n_.unit[u].psyker) side_psykers_[n_.unit[u].owner].push_back(u);
  }

  // rules._candidates and the nova reach of rules._cast_plan, per battle round.
  const std::size_t cells = static_cast<std::size_t>(n_.rounds) * n_.units * n_.powers;
  candidates_.resize(cells);
  reach_.resize(cells);
  for (int r = 0; r < n_.rounds; ++r)
    for (int c = 0; c < n_.units; ++c)
      for (int p = 0; p < n_.powers; ++p) {
        const PowerData& power = n_.power[p];
        const std::size_t at = (static_cast<std::size_t>(r) * n_.units + c) * n_.powers + p;
        const int side = n_.unit[c].owner;
        if (power.target == kSelf || power.target == kNoTarget || power.target == kEnemies) {
          candidates_[at].push_back(c);
        } else {
          const int wanted = power.target == kFriendly ? side : 1 - side;
          for (int t = 0; t < n_.units; ++t)
            if (n_.unit[t].owner == wanted && (t == c || in_range(c, t, power.range, r)))
              candidates_[at].push_back(t);
        }
        if (power.target == kEnemies)
          for (int t = 0; t < n_.units; ++t)
            if (n_.unit[t].owner != side && in_range(c, t, power.range, r)) reach_[at].push_back(t);
      }
  deny_needs_.resize(static_cast<std::size_t>(n_.units) * n_.units);
  for (int c = 0; c < n_.units; ++c)
    for (int t = 0; t < n_.units; ++t)
      deny_needs_[static_cast<std::size_t>(c) * n_.units + t] =
          6 - 1 - (n_.unit[t].mastery > n_.unit[c].mastery ? 1 : 0) -
          (n_.unit[t].psyker && n_.unit[t].adamantium_will ? 1 : 0);
  d6_ = fixed_die(6);
  d3_ = fixed_die(3);
  for (const UnitData& u : n_.unit) ld_tables_.push_back(Table{leadership_outcomes(u.leadership)});
  uniform_.push_back(0.0);
  for (int k = 1; k <= std::max(n_.powers, 1); ++k) uniform_.push_back(exact_ratio(1, k));
  build_views();

  // rules._build_initial_state: units with their fixed powers, then generation or a phase.
  initial_.assign(state_size(), 0);
  Draft d(initial_.data(), layout_);
  for (int u = 0; u < n_.units; ++u) {
    d.set_wounds(u, n_.unit[u].max_wounds);
    d.set_psyker(u, n_.unit[u].psyker);
    for (int p : n_.unit[u].initial_powers) d.set_known(u, p, true);
  }
  d.set_stage(kPhaseRoll);
  d.set_gen_unit(-1);
  d.set_gen_disc(-1);
  d.set_gen_power(-1);
  if (n_.generate_powers) {
    next_generation(d, -1);
  } else {
    start_phase(d, 0);
  }
}

void SeventhGame::initial_state(uint8_t* out) const {
  std::memcpy(out, initial_.data(), initial_.size());
}

// ----------------------------------------------------------------------------- facts
int SeventhGame::living_ml(const ConstState& s, int side) const {
  int total = 0;
  for (int i : side_psykers_[side])
    if (s.psyker(i) && s.wounds(i) > 0) total += n_.unit[i].mastery;
  return total;
}

bool SeventhGame::can_cast(const ConstState& s, int side) const {
  for (int i : side_psykers_[side])
    if (s.psyker(i) && s.wounds(i) > 0 && s.known_count(i) > 0) return true;
  return false;
}

bool SeventhGame::both_sides_alive(const ConstState& s) const {
  for (const auto& side : side_units_) {
    bool alive = false;
    for (int i : side)
      if (s.wounds(i) > 0) {
        alive = true;
        break;
      }
    if (!alive) return false;
  }
  return true;
}

// rules._compute_legal_casts. Casters, powers and targets are walked in ascending order, so
// the actions come out sorted, as the reference sorts them.
bool SeventhGame::legal_casts(const ConstState& s, std::vector<int32_t>* out) const {
  const int rnd = round_of(s.phase());
  bool found = false;
  for (int c : side_psykers_[s.active()]) {
    if (!s.psyker(c) || s.wounds(c) <= 0) continue;
    const bool stop = s.each_known(c, [&](int p) {
      if (s.attempted(c, p)) return false;
      const std::size_t at = (static_cast<std::size_t>(rnd) * n_.units + c) * n_.powers + p;
      const PowerData& power = n_.power[static_cast<std::size_t>(p)];
      if (power.target == kEnemies) {  // a nova needs a living enemy in range (7E-7.1)
        bool any = false;
        for (int t : reach_[at]) any = any || s.wounds(t) > 0;
        if (!any) return false;
      }
      const bool blessing = power.effect == kValue;
      for (int t : candidates_[at]) {
        if (s.wounds(t) <= 0) continue;
        if (blessing && (s.effect(p, t, 0) || s.effect(p, t, 1))) continue;  // 7E-7.2
        if (out == nullptr) return true;
        out->push_back(cast_action(c, p, t));
        found = true;
      }
      return false;
    });
    if (stop) return true;
  }
  return found;
}

// rules._find_open_disciplines: a discipline with a numbered power the psyker does not know.
bool SeventhGame::discipline_open(const ConstState& s, int unit, int discipline) const {
  for (int p : n_.numbered[static_cast<std::size_t>(discipline)])
    if (!s.knows(unit, p)) return true;
  return false;
}

int SeventhGame::open_disciplines(const ConstState& s, int unit, int* first) const {
  int n = 0;
  for (int d : n_.unit[unit].disciplines) {
    if (!discipline_open(s, unit, d)) continue;
    if (n == 0 && first != nullptr) *first = d;
    ++n;
  }
  return n;
}

// rules.deny_unit_and_threshold: the roll the denier needs (7E-5.2).
int SeventhGame::deny_threshold(const ConstState& s) const {
  const PowerData& power = n_.power[s.power()];
  const int c = s.caster();
  if (power.target == kEnemy) {
    const int t = s.target();
    if (s.psyker(t) && s.wounds(t) > 0)
      return deny_needs_[static_cast<std::size_t>(c) * n_.units + t];
    return 6;
  }
  if (power.target != kEnemies) return 6;
  int best = 6;
  for (int t : reach(s, c, s.power())) {  // the nova's targets: the best modifiers deny
    if (s.wounds(t) <= 0) continue;
    int mods = 0;
    if (s.psyker(t)) {
      mods += 1;
      if (n_.unit[t].mastery > n_.unit[c].mastery) mods += 1;
      if (n_.unit[t].psyker && n_.unit[t].adamantium_will) mods += 1;
    }
    best = std::min(best, 6 - mods);
  }
  return best;
}

bool SeventhGame::doubles_peril(int caster, int power) const {
  const int flag = n_.power[power].doubles_perils_unless;
  if (flag == kNever) return false;
  const UnitData& u = n_.unit[caster];
  return !(u.psyker && (flag == kGreyKnight ? u.grey_knight : u.daemon));
}

// ----------------------------------------------------------------------------- API
int SeventhGame::current_player(const uint8_t* bytes) const {
  ConstState s(bytes, layout_);
  switch (s.stage()) {
    case kDiscipline:
    case kSwap:
      return n_.unit[s.gen_unit()].owner;
    case kSelect:
    case kDice:
      return s.active();
    case kDeny:
      return 1 - s.active();
    case kOver:
      return kTerminal;
    default:
      return kChance;
  }
}

void SeventhGame::legal_actions(const uint8_t* bytes, std::vector<int32_t>* out) const {
  ConstState s(bytes, layout_);
  out->clear();
  switch (s.stage()) {
    case kSelect:
      out->push_back(0);
      legal_casts(s, out);
      return;
    case kDice:
      for (int n = 0; n < s.pool(s.active()); ++n) out->push_back(dice_base_ + n);
      return;
    case kDeny:
      for (int m = 0; m <= s.pool(1 - s.active()); ++m) out->push_back(deny_base_ + m);
      return;
    case kDiscipline: {
      const int unit = s.gen_unit();
      for (int d : n_.unit[unit].disciplines)
        if (discipline_open(s, unit, d)) out->push_back(disc_base_ + d);
      std::sort(out->begin(), out->end());
      return;
    }
    case kSwap:
      out->push_back(swap_base_);
      out->push_back(swap_base_ + 1);
      return;
    default:
      return;
  }
}

void SeventhGame::chance_outcomes(const uint8_t* bytes, std::vector<Outcome>* out) const {
  ConstState s(bytes, layout_);
  out->clear();
  switch (s.stage()) {
    case kGenRoll: {  // uniform over the numbered powers not yet known (7E-2.1)
      const std::vector<int>& numbered = n_.numbered[s.gen_disc()];
      int left = 0;
      for (int p : numbered) left += s.knows(s.gen_unit(), p) ? 0 : 1;
      for (int p : numbered)
        if (!s.knows(s.gen_unit(), p)) out->push_back(Outcome{p, uniform_[left]});
      return;
    }
    case kPurge: {  // uniform over the powers known (7E-6.2)
      const double each = uniform_[static_cast<std::size_t>(s.known_count(s.caster()))];
      s.each_known(s.caster(), [&](int p) { return out->push_back(Outcome{p, each}), false; });
      return;
    }
    case kPhaseRoll:
    case kCastRoll:
    case kPerils:
    case kLdTest:
    case kPerilsHits:
    case kDrain:
    case kDenyRoll:
    case kEffect:
      *out = table(s).outcomes;
      return;
    default:
      return;
  }
}

void SeventhGame::returns(const uint8_t* bytes, double out[2]) const {
  const double score = get_score(bytes);
  out[0] = score;
  out[1] = -score;
}

int32_t SeventhGame::sample_chance(const uint8_t* s, Pcg64& rng,
                                  std::vector<Outcome>& outcomes) const {
  chance_outcomes(s, &outcomes);
  if (outcomes.empty()) throw EngineError(ErrorCode::kValue, "not a chance node");
  return outcomes[table_index(outcomes, rng)].action;
}

// ----------------------------------------------------------------------------- tables
const Table& SeventhGame::table(const ConstState& s) const {
  switch (s.stage()) {
    case kPhaseRoll:
    case kPerils:
      return d6_;
    case kDrain:
      return d3_;
    case kLdTest:
      return ld_tables_[static_cast<std::size_t>(s.caster())];
    case kCastRoll: {
      const int dice = s.dice();
      const bool doubles = doubles_peril(s.caster(), s.power());
      return tables_.get(key(kCastKey, static_cast<uint64_t>(dice) * 2 + (doubles ? 1 : 0)),
                         [&] { return Table{cast_outcomes(dice, doubles)}; });
    }
    case kPerilsHits: {
      const int unit = s.caster(), wounds = s.wounds(unit);
      const uint64_t fields = (static_cast<uint64_t>(unit) << 16) | static_cast<uint64_t>(wounds);
      return tables_.get(key(kHitsKey, fields), [&] { return build_removed_hits(unit, wounds); });
    }
    case kDenyRoll: {
      const int dice = s.deny_dice(), threshold = deny_threshold(s), successes = s.successes();
      const uint64_t fields = (static_cast<uint64_t>(dice) << 16) |
                              (static_cast<uint64_t>(threshold) << 8) |
                              static_cast<uint64_t>(successes);
      return tables_.get(key(kDenyKey, fields),
                         [&] { return Table{deny_outcomes(dice, threshold, successes)}; });
    }
    default:  // kEffect
      return effect_table(s, s.first_target());
  }
}

// rules.effect_distribution's key: power, caster, target, its wounds and Warp Surge.
const Table& SeventhGame::effect_table(const ConstState& s, int target) const {
  const int power = s.power(), caster = s.caster(), wounds = s.wounds(target);
  const bool surge = s.surge(target);
  const uint64_t fields = (static_cast<uint64_t>(power) << 40) |
                          (static_cast<uint64_t>(caster) << 32) |
                          (static_cast<uint64_t>(target) << 24) |
                          (static_cast<uint64_t>(wounds) << 1) | (surge ? 1 : 0);
  return tables_.get(key(kEffectKey, fields),
                     [&] { return build_effect(power, caster, target, wounds, surge); });
}

// rules._effect_distribution (7E-7.1).
Table SeventhGame::build_effect(int power, int caster, int target, int wounds, bool surge) const {
  const PowerData& pw = n_.power[power];
  const UnitData& spec = n_.unit[target];
  if (pw.effect == kMortal) {
    WeightedDist d = dice_distribution(pw.dice);
    if (pw.minus_target_ld) {
      WeightedDist shifted;
      shifted.total = d.total;
      for (const auto& [v, w] : d.weights) shifted.weights[v - spec.leadership] += w;
      d = shifted;
    }
    return Table{outcomes_of(capped(d, wounds))};
  }
  if (pw.effect == kRolloff) {
    const int win = rolloff_wins(n_.unit[caster].leadership, spec.leadership);
    const WeightedDist cap = capped(dice_distribution(pw.dice), wounds);
    WeightedDist out;
    out.total = cap.total * BigUInt(36);
    for (const auto& [k, w] : cap.weights)
      out.weights[k] += w * BigUInt(static_cast<uint64_t>(win));
    out.weights[0] += cap.total * BigUInt(static_cast<uint64_t>(36 - win));
    return Table{outcomes_of(out)};
  }
  if (pw.effect != kAttack) return Table{{Outcome{0, 1.0}}};  // never asked (check_state)
  WeightedDist hits;
  if (pw.area != 0) {
    const int models = (wounds + spec.wounds - 1) / spec.wounds;
    hits.weights[std::min(models, pw.area)] = BigUInt(1);
  } else {
    hits = dice_distribution(pw.dice);
  }
  const int p_hit =
      pw.to_hit_bs ? roll_sixths(std::max(2, 7 - n_.unit[caster].ballistic_skill)) : 6;
  int invulnerable = spec.invulnerable;
  if (surge) invulnerable = invulnerable == 0 ? 3 : std::min(invulnerable, 3);  // 7E-6.6: 3++
  WeightedDist ap;
  if (pw.ap_none) {
    ap.weights[0] = BigUInt(1);
  } else {
    ap = dice_distribution(pw.ap);
  }
  const WeightedDist damage = dice_distribution(pw.damage);
  const WeightedDist strength = dice_distribution(pw.strength);
  // Strengths and APs with the same chance per hit (and Instant Death) share one allocation.
  std::map<std::pair<int, bool>, BigUInt> groups;
  for (const auto& [st, ws] : strength.weights) {
    const int wound_on = pw.always_wounds_on != 0 ? pw.always_wounds_on
                                                  : to_wound_7th(st, spec.toughness);
    const bool instant = n_.instant_death && spec.wounds > 1 && st >= 2 * spec.toughness;
    for (const auto& [a, wa] : ap.weights) {
      const int p = p_hit * roll_sixths(wound_on) *
                    unsaved_sixths(spec.save, invulnerable, pw.ap_none, a);
      groups[{p, instant}] += ws * wa;
    }
  }
  // Every group's wounds over one total: an Instant Death group lists no damage rolls.
  int most = 0;
  for (const auto& [h, w] : hits.weights) most = std::max(most, h);
  BigUInt damage_most(1);
  for (int k = 0; k < most; ++k) damage_most = damage_most * damage.total;
  WeightedDist out;
  out.total = strength.total * ap.total * hits.total * BigUInt::power(216, most) * damage_most;
  for (const auto& [group, weight] : groups) {
    const WeightedDist lost = attack_wounds(hits, static_cast<uint64_t>(group.first), 216, damage,
                                            wounds, spec.wounds, group.second);
    const BigUInt scale = group.second ? weight * damage_most : weight;
    for (const auto& [w, pw2] : lost.weights) out.weights[w] += pw2 * scale;
  }
  return Table{outcomes_of(out)};
}

// rules._removed_hits_dist: D6 S6 AP1 hits on a unit whose psyker was Dragged into the Warp.
Table SeventhGame::build_removed_hits(int unit, int wounds) const {
  const UnitData& spec = n_.unit[unit];
  const int p = roll_sixths(to_wound_7th(n_.removed_strength, spec.toughness)) *
                unsaved_sixths(spec.save, spec.invulnerable, false, n_.removed_ap);
  const bool instant =
      n_.instant_death && spec.wounds > 1 && n_.removed_strength >= 2 * spec.toughness;
  WeightedDist one;
  one.weights[1] = BigUInt(1);
  return Table{outcomes_of(attack_wounds(dice_distribution(n_.removed_hits),
                                         static_cast<uint64_t>(p), 36, one, wounds, spec.wounds,
                                         instant))};
}

}  // namespace seventh
}  // namespace psygym
