// The public API, the chance tables and the transition loop of rules.py (SecondRules): who moves,
// the legal actions, the chance outcomes in the reference's order, apply (_apply, _dispatch,
// _apply_chance, _settle), the returns (2E-8) and the draw of the env's fast walks (walks.py).
#include "rules.h"

#include <algorithm>
#include <cstring>

#include "random.h"

namespace psygym {
namespace second {
namespace {

// How many effects a power of psyker `ps` resolves at once at most (rules._effects): one a unit
// of its area for 'every enemy unit in range', else one.
int effects_of(const PsykerData& ps, int k, int units) {
  const std::vector<int>& targets = ps.targets[static_cast<std::size_t>(k)];
  const bool area = std::find(targets.begin(), targets.end(), units) != targets.end();
  return area ? static_cast<int>(ps.area[static_cast<std::size_t>(k)].size()) : 1;
}

}  // namespace

std::vector<int> SecondGame::holdable(int i) const {
  const PsykerData& ps = psyker(i);
  if (ps.draws) return ps.pool;
  std::vector<int> out;
  for (int k : ps.initial)
    if (k >= 0) out.push_back(k);
  return out;
}

SecondGame::SecondGame(ScenarioSpec spec)
    : sc_(std::move(spec)), layout_(sc_.n_units, sc_.n_psykers, sc_.n_slots) {
  const int u = sc_.n_units, p = sc_.n_psykers, m = sc_.n_slots;
  end_base_ = kDuelBase + p * p;
  nullify_base_ = end_base_ + p * m;
  cast_base_ = nullify_base_ + p * m;
  num_actions_ = cast_base_ + p * m * (u + 1) * kPayOptions;
  // Effects waiting at once: one cast's (an area power's units), or the upkeep of every power
  // in play (2E-3.4). Only effects that roll dice stay past _settle, so the upkeep counts at
  // a node only where a power that remains in play rolls dice. A psyker holds the powers of
  // its draw pool (ML of them at most) or its fixed cards (check_state holds states to that).
  int cast_bound = 1, upkeep = 0;
  bool upkeep_rolls = false;
  for (int i = 0; i < p; ++i) {
    const PsykerData& ps = psyker(i);
    int in_play = 0, most = 0, fixed_upkeep = 0;
    for (int k : holdable(i)) {
      const int count = effects_of(ps, k, u);
      // A duel effect (2E-6) pits two psykers' mastery levels: its victims must be psykers.
      bool duel = false;
      for (int f = power(k).lo; f <= power(k).hi; ++f)
        duel = duel || effect_spec(k, f).kind == kDuel;
      const std::size_t at = static_cast<std::size_t>(k);
      for (int t : ps.targets[at])
        for (int v : t < u ? std::vector<int>{t} : ps.area[at])
          if (duel && unit(v).psyker < 0)
            throw EngineError(ErrorCode::kScenario,
                              "2nd scenario data: a duel power may target a unit that is no "
                              "psyker");
      cast_bound = std::max(cast_bound, count);
      if (!power(k).remain_in_play) continue;
      ++in_play;
      most = std::max(most, count);
      fixed_upkeep += count;
      for (int f = power(k).lo; f <= power(k).hi; ++f)
        if (effect_spec(k, f).kind != kValue) upkeep_rolls = true;
    }
    upkeep += ps.draws ? std::min(in_play, ps.ml) * most : fixed_upkeep;
  }
  if (std::max(cast_bound, upkeep_rolls ? upkeep : 0) > u)
    throw EngineError(ErrorCode::kScenario,
                      "2nd scenario data: more effects can wait at once than the state holds "
                      "(one a unit)");
  work_effects_ = std::max(std::max(u, upkeep), cast_bound);
  build_tables();  // effects.cc
  build_deal_ratios();  // deck.cc
  build_views();  // observation.cc
}

// ------------------------------------------------------------------ work states

SecondGame::Work SecondGame::load_work(uint8_t* b, EffectRec* buffer) const {
  Work w{load_header(b), b, buffer, 0};
  w.n_fx = w.h.n_effects;
  std::memcpy(w.fx, b + layout_.effects, sizeof(EffectRec) * static_cast<std::size_t>(w.n_fx));
  return w;
}

void SecondGame::store_work(Work& w) const {
  if (w.n_fx > sc_.n_units)  // the constructor's bound makes this unreachable
    throw EngineError(ErrorCode::kValue, "more effects wait than the compiled state holds");
  w.h.n_effects = static_cast<uint8_t>(w.n_fx);
  uint8_t* fx = w.b + layout_.effects;
  std::memset(fx, 0, sizeof(EffectRec) * static_cast<std::size_t>(sc_.n_units));
  std::memcpy(fx, w.fx, sizeof(EffectRec) * static_cast<std::size_t>(w.n_fx));
  store_header(w.h, w.b);
}

// ------------------------------------------------------------------ game API

int SecondGame::player_of(const Header& h, int n_effects) const {  // facts.current_player
  if (h.stage == kOver) return kTerminal;
  if (n_effects) return kChance;
  if (h.stage == kTurn) return h.to_move;
  if (h.stage == kResponse) return 1 - psyker(h.pending_psyker).side;  // the responder (2E-5.2)
  return kChance;  // set-up, warp flux, dealing, a roll
}

int SecondGame::current_player(const uint8_t* s) const {
  const Header h = load_header(s);
  return player_of(h, h.n_effects);
}

void SecondGame::legal_actions(const uint8_t* s, std::vector<int32_t>* out) const {
  out->clear();
  const Header h = load_header(s);
  if (h.n_effects) return;  // a chance node
  if (h.stage == kTurn) {
    turn_actions(h, s, out);
  } else if (h.stage == kResponse) {
    response_actions(h, s, out);
  }
}

void SecondGame::chance_outcomes(const uint8_t* s, std::vector<Outcome>* out) const {
  out->clear();
  const Header h = load_header(s);
  if (player_of(h, h.n_effects) != kChance) return;
  EffectRec first{};
  if (h.n_effects) std::memcpy(&first, s + layout_.effects, sizeof first);
  outcomes_of(h, s, h.n_effects ? &first : nullptr, out);
}

void SecondGame::outcomes_of(const Header& h, const uint8_t* b, const EffectRec* first,
                             std::vector<Outcome>* out) const {
  // rules.chance_distribution, outcomes in ascending order with their exact probabilities.
  if (first) {
    effect_outcomes(b, *first, out);  // 2E-6
  } else if (h.stage == kDeal) {
    deal_outcomes(b, out);  // 2E-2
  } else if (h.stage == kFlux) {
    const std::vector<Outcome>& t = flux_[static_cast<std::size_t>(flux_dice(b))];  // 2E-3.1
    out->insert(out->end(), t.begin(), t.end());
  } else if (h.stage == kSetup) {
    setup_outcomes(b, out);  // 2E-1.1
  } else if (h.stage == kRoll) {
    roll_outcomes(h, b, out);  // 2E-5.2, 2E-7
  }
}

void SecondGame::returns(const uint8_t* s, double out[2]) const {  // 2E-8
  const Header h = load_header(s);
  out[0] = h.score;
  out[1] = -h.score;
}

// The reference env walks chance with walks.py's fast walk, which draws with ChanceTable.sample
// (deck._deal_run and psykers._setup_run inline the same draw): one number at every chance
// node, a single outcome included (RulesBase.sample_chance would draw none there).
int32_t SecondGame::sample_chance(const uint8_t* s, Pcg64& rng,
                                  std::vector<Outcome>& outcomes) const {
  const Header h = load_header(s);
  if (h.n_effects == 0 && h.stage == kDeal && !deal_ratio_.empty()) return sample_deal(s, rng);
  if (h.n_effects == 0 && h.stage == kSetup) return sample_setup(s, rng);
  chance_outcomes(s, &outcomes);
  if (outcomes.empty()) throw EngineError(ErrorCode::kValue, "not a chance node");
  return outcomes[table_index(outcomes, rng)].action;
}

// ------------------------------------------------------------------ transitions

void SecondGame::apply(const uint8_t* s, int32_t action, uint8_t* out) const {
  if (out != s) std::memcpy(out, s, layout_.size);
  EffectRec buffer[kMaxUnits];
  Work w = load_work(out, buffer);
  if (w.h.stage == kDeal && w.n_fx == 0) {
    deal(w, action);  // deck._apply_deal, then _settle
  } else {
    dispatch(w, action);
  }
  settle(w);
  store_work(w);
}

void SecondGame::dispatch(Work& w, int action) const {  // rules._dispatch
  if (player_of(w.h, w.n_fx) == kChance) {
    apply_chance(w, action);
  } else if (w.h.stage == kResponse) {
    apply_response(w, action);
  } else {
    apply_turn(w, action);
  }
}

void SecondGame::apply_chance(Work& w, int outcome) const {  // rules._apply_chance
  if (w.n_fx) {
    const int victim = effect_units(w.fx[0]).second;
    pop_effect(w);
    if (outcome != 0) wound(w, victim, outcome);  // 2E-6
    return;
  }
  if (w.h.stage == kFlux) {
    flux(w, outcome);  // 2E-3.1
  } else if (w.h.stage == kSetup) {
    draw_power(w, outcome);  // 2E-1.1
  } else {
    apply_roll(w, outcome);
  }
}

void SecondGame::settle(Work& w) const {
  // rules._settle: every step that needs no decision and no dice, up to the next node.
  Header& h = w.h;
  while (true) {
    if (h.stage == kOver) return;
    if (w.n_fx) {
      const EffectRec e = w.fx[0];
      if (rolls_dice(w.b, e)) return;
      const EffectSpec& spec = effect_spec(e.power, e.force);
      if (spec.kind == kValue) {  // 2E-6: a value effect scores for the caster's side
        int side = psyker(e.psyker).side;
        if (e.reflected) side = 1 - side;
        h.score = h.score + (side == 0 ? spec.value : -spec.value);
      }  // else an attack on a unit already slain: nothing happens
      pop_effect(w);
      continue;
    }
    switch (h.stage) {
      case kSetup:
        if (next_draw(w.b) >= 0) return;
        h.stage = kFlux;
        break;
      case kFlux:
        if (!usable_psykers(w.b)) h.stage = kOver;  // 2E-3.2: no psyker can use powers
        return;
      case kDeal: {
        if (h.to_deal > 0) {
          uint8_t* deck = pile(w.b, kDeck);
          uint8_t* discard = pile(w.b, kDiscard);
          int in_deck = 0, discarded = 0;
          for (int k = 0; k < kCards; ++k) {
            in_deck += deck[k];
            discarded += discard[k];
          }
          if (in_deck) return;
          if (discarded) {  // 2E-2: the discard pile is shuffled into a new deck
            std::memcpy(deck, discard, kCards);
            std::memset(discard, 0, kCards);
            std::memset(pile(w.b, kDown0), 0, 2 * kCards);
          } else {
            h.to_deal = 0;  // no warp cards are left to deal
          }
          break;
        }
        // 2E-3.4: powers that remain in play take effect again before any new power.
        for (int i = 0; i < sc_.n_psykers; ++i)
          for (int j = 0; j < sc_.n_slots; ++j) {
            const InPlayRec ip = load_in_play(w.b, layout_, i, j);
            if (ip.power >= 0) add_effects(w, i, ip.power, ip.force, ip.target, false);
          }
        h.stage = kTurn;
        h.to_move = static_cast<uint8_t>(active(h.phase));
        h.passes = 0;
        break;
      }
      case kTurn: {
        // Only a player with an empty hand passes by itself (hidden hands, rules._settle).
        const uint8_t* hand = pile(w.b, kHand0 + h.to_move);
        bool cards = false;
        for (int k = 0; k < kCards; ++k) cards = cards || hand[k];
        if (cards || turn_actions(h, w.b, nullptr)) return;
        pass(w);
        break;
      }
      case kResponse:
        // 2E-5.2: the response step follows every cast that may still be answered.
        if (h.has_pending && h.pending_responses < sc_.settings.responses_per_power) return;
        finish_pending(w, false, false);
        break;
      default:  // a roll
        return;
    }
  }
}

// ------------------------------------------------------------------ registration

std::unique_ptr<Game> make_second(const ScenarioData& data) {
  return std::make_unique<SecondGame>(read_scenario(data));
}

namespace {
const GameRegistrar kRegistrar("2nd", &make_second);
}  // namespace

}  // namespace second
}  // namespace psygym
