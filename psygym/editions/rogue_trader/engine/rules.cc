#include "rules.h"

#include <algorithm>
#include <cstring>

namespace psygym {
namespace rogue_trader {
namespace {

constexpr int kAuras = 5;  // aura levels 0 .. 4 (RT-4.3)
// Transitions one apply may run: far past any game (turns x units x abilities), so a loop that
// never settles is an error, not a hang.
constexpr long kMaxSteps = 1L << 24;

}  // namespace

RogueTraderGame::RogueTraderGame(ScenarioSpec spec)
    : sc_(std::move(spec)), layout_(sc_.n_units, sc_.n_abilities) {
  const int n = sc_.n_units, a = sc_.n_abilities;
  // views.RTViews: 16 + A values per unit after a head of 10 + A + 2 N + 2.
  unit_size_ = 16 + static_cast<std::size_t>(a);
  units_offset_ = 10 + static_cast<std::size_t>(a) + 2 * static_cast<std::size_t>(n) + 2;
  obs_size_ = units_offset_ + static_cast<std::size_t>(n) * unit_size_;
  for (int k = 0; k <= 36; ++k) over36_.push_back(exact_ratio(static_cast<Wide>(k), 36));
  one_over_.push_back(0.0);
  for (int m = 1; m <= a; ++m) one_over_.push_back(exact_ratio(1, static_cast<Wide>(m)));
  level_outcomes_.resize(static_cast<std::size_t>(n));
  count_outcomes_.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const UnitData& u = unit_data(i);
    if (u.random_level) table_outcomes(u.level_table, &level_outcomes_[static_cast<std::size_t>(i)]);
    if (u.random_abilities && sc_.random_count)
      table_outcomes(u.count_table, &count_outcomes_[static_cast<std::size_t>(i)]);
  }
  // effects.resolve_distribution: the chance that an attack's hit wounds unsaved, in 36ths,
  // by target and aura (RT-4.2; telekinesis missiles also face armour and aura, RT-4.3, RT-4.4).
  wound36_.resize(static_cast<std::size_t>(a));
  for (int k = 0; k < a; ++k) {
    const AbilityData& ab = ability_data(k);
    if (ab.effect != kMental && ab.effect != kMissile) continue;
    std::vector<int>& p = wound36_[static_cast<std::size_t>(k)];
    for (int t = 0; t < n; ++t) {
      const UnitData& u = unit_data(t);
      const int wounds = roll_sixths(to_wound_rt(ab.strength, u.toughness));
      for (int aura = 0; aura < kAuras; ++aura) {
        const int saved = roll_sixths(armour_needed(u.save, aura));
        p.push_back(ab.effect == kMissile ? wounds * (6 - saved) : 6 * wounds);
      }
    }
  }
  build_moves();
  // The scenario's numbers may still make a first state the twin refuses: say so here.
  std::vector<uint8_t> first(layout_.size);
  build_initial(first.data());
  const std::string problem = check_state(first.data());
  if (!problem.empty())
    throw EngineError(ErrorCode::kScenario, "rt scenario data: its first state is refused: " +
                                                problem);
}

// ------------------------------------------------------------------ game API

void RogueTraderGame::initial_state(uint8_t* out) const { build_initial(out); }

void RogueTraderGame::build_initial(uint8_t* out) const {
  // generation._build_initial_state: units as the scenario gives them, then set-up (RT-1).
  std::memset(out, 0, layout_.size);
  Work w{Header{}, out};
  w.h.phase = kChoose;
  w.h.actor = w.h.ability = w.h.target = -1;
  w.h.n_units = static_cast<uint8_t>(sc_.n_units);
  w.h.n_abilities = static_cast<uint8_t>(sc_.n_abilities);
  for (int i = 0; i < sc_.n_units; ++i) {
    const UnitData& d = unit_data(i);
    Unit u{};
    u.hp = static_cast<uint16_t>(d.max_hp);
    if (d.psyker) {
      const int level = d.psi_level >= 0 ? d.psi_level : d.random_level ? 0 : d.typical_level;
      u.level = static_cast<uint16_t>(level);
      u.points = static_cast<uint16_t>(d.psi_points < 0 ? level : std::min(d.psi_points, level));
      for (int a : d.held) give(out, layout_, i, a);
    }
    put(w, i, u);
  }
  setup_from(w, 0, false);
  settle(w);
  store_header(w.h, out);
}

void RogueTraderGame::horizon(const uint8_t* s, int32_t out[2]) const {
  const Header h = load_header(s);
  out[0] = h.turn / 2 + 1;
  out[1] = h.turn % 2;
}

int RogueTraderGame::current_player(const uint8_t* s) const {
  // facts.current_player: the target bids its augmented save (RT-3.3).
  const Header h = load_header(s);
  if (h.phase == kOver) return kTerminal;
  if (h.phase == kSaveBid) return unit_data(h.target).owner;
  if (is_decision(h.phase)) return h.active;
  return kChance;
}

void RogueTraderGame::legal_actions(const uint8_t* s, std::vector<int32_t>* out) const {
  out->clear();
  const Header h = load_header(s);
  Sink sink;
  sink.out = out;
  legal(h, s, sink);
}

void RogueTraderGame::chance_outcomes(const uint8_t* s, std::vector<Outcome>* out) const {
  out->clear();
  const Header h = load_header(s);
  if (h.phase == kOver || is_decision(h.phase)) return;
  thread_local Table t;  // no allocation per chance node
  chance_table(h, s, &t);
  const std::vector<Outcome>& o = t.outcomes();
  out->insert(out->end(), o.begin(), o.end());
}

void RogueTraderGame::returns(const uint8_t* s, double out[2]) const {  // turns.returns, RT-6.2
  const Header h = load_header(s);
  out[0] = h.score;
  out[1] = -h.score;
}

void RogueTraderGame::apply(const uint8_t* s, int32_t action, uint8_t* out) const {
  // rules._transition: one step, then the nodes with a single choice.
  if (out != s) std::memcpy(out, s, layout_.size);
  Work w{load_header(out), out};
  step(w, action);
  settle(w);
  store_header(w.h, out);
}

// ------------------------------------------------------------------ chance tables

void RogueTraderGame::binary(int s36, std::vector<Outcome>* out) const {
  // chances.binary over p = s36 / 36: 0 fails (1 - p), 1 succeeds (p), impossible ones left out.
  if (s36 < 36) out->push_back({0, over36_[static_cast<std::size_t>(36 - s36)]});
  if (s36 > 0) out->push_back({1, over36_[static_cast<std::size_t>(s36)]});
}

void RogueTraderGame::chance_table(const Header& h, const uint8_t* b, Table* out) const {
  // rules.chance_table: one table per node, whatever asks (outcomes, sampling, solving).
  out->cached = nullptr;
  out->own.clear();
  switch (h.phase) {
    case kTest: {  // RT-2.3: no test from no_test_at points, else 2D6 <= points
      const int points = unit(b, h.actor).points;
      binary(points >= sc_.no_test_at ? 36 : two_d6_at_most(points), &out->own);
      return;
    }
    case kResolve:
      resolve_table(h, b, out);
      return;
    case kRecover:  // Cause Confusion: a psychic save, 2D6 <= WP
      binary(two_d6_at_most(will_power(b, h.actor)), &out->own);
      return;
    case kSetupLevel:  // RT-1.1
      out->cached = &level_outcomes_[static_cast<std::size_t>(h.actor)];
      return;
    case kSetupCount:  // RT-1.1
      out->cached = &count_outcomes_[static_cast<std::size_t>(h.actor)];
      return;
    case kSetupDraw:  // RT-1.3
      draw_pool(b, h.actor, &out->own);
      return;
    default:
      return;
  }
}

void RogueTraderGame::resolve_table(const Header& h, const uint8_t* b, Table* out) const {
  // effects.resolve_distribution: the psychic save 2D6 <= WP - k + j (RT-3.1 .. RT-3.3), then
  // the effect. Tables are kept by what they depend on (rules.chance_table's key).
  const AbilityData& ab = ability_data(h.ability);
  const int t = h.target;
  int save36 = 0;
  if (ab.psychic_save) save36 = two_d6_at_most(will_power(b, t) - h.attack_bid + h.save_bid);
  const bool attack = ab.effect == kMental || ab.effect == kMissile;
  if (!attack && ab.effect != kStealMind) {
    binary(36 - save36, &out->own);  // 0 saved, 1 takes hold
    return;
  }
  const Unit ts = unit(b, t);
  const int per_model = unit_data(t).per_model;
  // Wounds do not spill over: the current model's (Python's modulo, as the reference).
  const int cap = ts.hp == 0 ? per_model : (ts.hp - 1) % per_model + 1;
  const int aura = ab.effect == kMissile ? ts.aura : 0;
  uint64_t key = static_cast<uint64_t>(h.ability) | static_cast<uint64_t>(save36) << 7;
  if (attack)
    key |= static_cast<uint64_t>(t) << 13 | static_cast<uint64_t>(aura) << 20 |
           static_cast<uint64_t>(cap) << 23;
  std::lock_guard<std::mutex> lock(resolve_mutex_);
  auto it = resolve_cache_.find(key);
  if (it == resolve_cache_.end()) {
    std::vector<Outcome> table;
    if (attack) {
      const int p36 =
          wound36_[static_cast<std::size_t>(h.ability)][static_cast<std::size_t>(t * kAuras + aura)];
      attack_outcomes(save36, p36, ab.damage_table, cap, &table);
    } else {
      steal_mind_outcomes(save36, ab.duration_table, &table);
    }
    it = resolve_cache_.emplace(key, std::move(table)).first;
  }
  out->cached = &it->second;
}

// ------------------------------------------------------------------ the transition loop

void RogueTraderGame::step(Work& w, int a) const {
  // rules._step: one transition, dispatched on the phase.
  switch (w.h.phase) {
    case kChoose:
      choose(w, a);
      return;
    case kTarget:  // rules._on_target (RT-2.2)
      after_target(w, w.h.ability, a - sc_.target_base, w.h.amount);
      return;
    case kAmount:  // rules._on_amount (RT-4.6)
      attempt(w, w.h.ability, w.h.target, a - sc_.number_base);
      return;
    case kAttackBid:  // bids._on_attack_bid: kept pending until the target has bid (RT-3.4)
      w.h.attack_bid = static_cast<uint16_t>(a - sc_.number_base);
      w.h.phase = kSaveBid;
      return;
    case kSaveBid:  // bids._on_save_bid (RT-3.3)
      bids_in(w, a - sc_.number_base);
      return;
    case kTest:  // rules._on_test (RT-2.3)
      tested(w, a == 1);
      return;
    case kResolve:
      resolve(w, a);
      return;
    case kRecover:  // rules._on_recover
      recovered(w, a == 1);
      return;
    case kSetupLevel:
      set_level(w, a);
      return;
    case kSetupCount:
      set_count(w, a);
      return;
    case kSetupDraw:
      draw(w, a);
      return;
    default:
      return;
  }
}

void RogueTraderGame::settle(Work& w) const {
  // rules._settle: advance through nodes that offer a single action or outcome.
  thread_local Table table;
  for (long steps = 0; steps < kMaxSteps; ++steps) {
    if (w.h.phase == kOver) return;
    if (is_decision(w.h.phase)) {
      Sink sink;
      sink.limit = 2;
      legal(w.h, w.b, sink);
      if (sink.count != 1) return;
      step(w, sink.first);
    } else {
      chance_table(w.h, w.b, &table);
      const std::vector<Outcome>& outcomes = table.outcomes();
      if (outcomes.size() != 1) return;
      step(w, outcomes[0].action);
    }
  }
  throw EngineError(ErrorCode::kValue, "the rt rules did not settle (a loop in the scenario?)");
}

// ------------------------------------------------------------------ registration

std::unique_ptr<Game> make_rogue_trader(const ScenarioData& data) {
  return std::make_unique<RogueTraderGame>(read_scenario(data));
}

namespace {
const GameRegistrar kRegistrar("rt", &make_rogue_trader);
}  // namespace

}  // namespace rogue_trader
}  // namespace psygym
