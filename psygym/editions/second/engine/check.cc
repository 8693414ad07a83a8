// check_state: which bytes are a state of this scenario.
//
// Every index, count, enum and flag is range-checked against the scenario, the cards are
// conserved (deck + discard + hands + paid is the scenario's deck, kind by kind), and each
// stage's preconditions hold (a power being cast to answer, a roll to make, cards to deal, a
// card to draw, an effect that rolls dice first), so every method is memory-safe on an accepted
// state, every decision has a legal action and every chance node an outcome. The accepted set
// is closed under apply: every state reached from an accepted one is accepted too.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>

#include "rules.h"

namespace psygym {
namespace second {
namespace {

bool all_zero(const uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (p[i]) return false;
  return true;
}

}  // namespace

std::string SecondGame::check_state(const uint8_t* s) const {
  const Header h = load_header(s);
  const int U = sc_.n_units, P = sc_.n_psykers, M = sc_.n_slots, N = sc_.n_powers;
  const Settings& st = sc_.settings;
  if (h.n_units != U || h.n_psykers != P || h.n_slots != M)
    return "the sizes are another scenario's";
  if (!all_zero(h.pad, sizeof h.pad)) return "padding is not zero";
  if (!std::isfinite(h.score)) return "the score is not a finite number";
  if (h.score == 0.0 && std::signbit(h.score)) return "the score is -0.0 (states hold 0.0)";
  if (h.stage > kOver) return "stage " + std::to_string(h.stage) + " is not a stage (0 to 6)";
  const int phases = 2 * sc_.battle_rounds;
  if (h.phase > phases || (h.stage != kOver && h.phase == phases))
    return "phase " + std::to_string(h.phase) + " is past the game's phases";
  if (h.to_move > 1 || h.deal_to > 1) return "a player is not 0 or 1";
  if (h.passes > 1) return "passes in a row is not 0 or 1";
  if (h.to_deal > 6 * st.warp_flux_dice) return "more cards to deal than a warp flux deals";
  if (h.n_effects > U) return "more effects than the state holds";
  // Cards (2E-2): conserved kind by kind; face-down discards are part of the discard pile.
  for (int k = 0; k < kCards; ++k) {
    int total = 0;
    for (int pile_index = kDeck; pile_index <= kPaid; ++pile_index)
      total += pile(s, pile_index)[k];
    if (total != sc_.deck[k]) return "the cards are not the scenario's deck";
    const int down = pile(s, kDown0)[k] + pile(s, kDown0 + 1)[k];
    if (down > pile(s, kDiscard)[k]) return "more face-down discards than discards";
    if (st.public_discards && down) return "face-down discards with public_discards";
    if (!h.has_pending && pile(s, kPaid)[k]) return "cards paid with no power being cast";
  }
  for (int u = 0; u < U; ++u)
    if (wounds(s, u) > unit(u).max_wounds) return "wounds out of range";
  // Power cards (2E-1.1): a psyker holds its fixed cards (or lost them to Destroy Power), or up
  // to ML distinct cards of its draw pool.
  for (int i = 0; i < P; ++i) {
    const PsykerData& ps = psyker(i);
    int held = 0;
    for (int j = 0; j < M; ++j) {
      const int k = power_in(s, i, j);
      if (k == -1) continue;
      ++held;
      if (!ps.draws) {
        if (k != ps.initial[static_cast<std::size_t>(j)]) return "a power card not the psyker's";
        continue;
      }
      if (std::find(ps.pool.begin(), ps.pool.end(), k) == ps.pool.end())
        return "a power card not of the psyker's disciplines";
      for (int jj = 0; jj < j; ++jj)
        if (power_in(s, i, jj) == k) return "a power card held twice";
    }
    if (ps.draws && held > ps.ml) return "more power cards than the psyker's mastery level";
  }
  for (int i = P; i < static_cast<int>(8 * layout_.used_bytes); ++i)
    if (get_bit(s, layout_.used, i)) return "used bits past the last psyker";
  // Whether (psyker i, power k, Force f, target t) is a cast the scenario allows (2E-5.1).
  auto castable = [&](int i, int k, int f, int t) {
    const std::vector<int>& targets = psyker(i).targets[static_cast<std::size_t>(k)];
    return f >= power(k).lo && f <= power(k).hi &&
           std::find(targets.begin(), targets.end(), t) != targets.end();
  };
  for (int i = 0; i < P; ++i)
    for (int j = 0; j < M; ++j) {
      const InPlayRec ip = load_in_play(s, layout_, i, j);
      if (ip.power == -1) {
        if (ip.target || ip.force || ip.ultimate) return "an empty in-play record is not zero";
        continue;
      }
      if (ip.power != power_in(s, i, j) || !power(ip.power).remain_in_play)
        return "a power in play is not one that remains in play in its slot";
      if (!castable(i, ip.power, ip.force, ip.target) || ip.ultimate > 1)
        return "a power in play has a Force or target it cannot have";
    }
  // The power being cast (2E-5) and the pending roll.
  if (h.has_pending > 1 || h.has_roll > 1) return "has_pending or has_roll is not 0 or 1";
  if (!h.has_pending) {
    if (!all_zero(s + offsetof(Header, pending_psyker), 7))
      return "pending fields are set with no power being cast";
  } else {
    if (h.pending_psyker >= P || h.pending_slot >= M || h.pending_power >= N)
      return "the power being cast is out of range";
    if (power_in(s, h.pending_psyker, h.pending_slot) != h.pending_power)
      return "the power being cast is not the card in its slot";
    if (!castable(h.pending_psyker, h.pending_power, h.pending_force, h.pending_target) ||
        h.pending_ultimate > 1 || h.pending_responses > st.responses_per_power)
      return "the power being cast has a Force, target or response count it cannot have";
  }
  if (!h.has_roll) {
    if (h.roll_kind || h.roll_a || h.roll_b || h.roll_need || h.roll_reroll || h.roll_player)
      return "roll fields are set with no roll";
  } else {
    if (h.roll_kind > kRollDuel || h.roll_player > 1 || h.roll_reroll > 1)
      return "the roll is out of range";
    const bool nullify = h.roll_kind == kRollNullify || h.roll_kind == kRollNullifyInPlay;
    if (nullify ? h.roll_need < st.nullify_best || h.roll_need > st.nullify_worst
                : h.roll_need || h.roll_reroll)
      return "the roll's score is out of range";
    if (h.roll_a < 0 || h.roll_a >= P) return "the roll's psyker is out of range";
    if (h.roll_kind == kRollNullifyInPlay) {
      if (h.roll_b < 0 || h.roll_b >= M || load_in_play(s, layout_, h.roll_a, h.roll_b).power < 0)
        return "Nullify rolls against no power in play";
    } else if (h.roll_kind == kRollDuel) {
      if (h.roll_b < 0 || h.roll_b >= P || !alive_psyker(s, h.roll_a) ||
          !alive_psyker(s, h.roll_b))
        return "a Psychic Duel without two living psykers";
    } else if (h.roll_b != -1) {
      return "the roll's second field is not -1";
    }
    if (h.roll_kind == kRollNullify && (!h.has_pending || h.roll_a != h.pending_psyker))
      return "Nullify rolls against no power being cast";
  }
  // Effects (2E-6): in range, a duel's two units psykers.
  for (int e = 0; e < U; ++e) {
    EffectRec r;
    std::memcpy(&r, s + layout_.effects + sizeof r * static_cast<std::size_t>(e), sizeof r);
    if (e >= h.n_effects) {
      if (r.power || r.force || r.psyker || r.target || r.reflected)
        return "effect records past the effects are not zero";
      continue;
    }
    if (r.power >= N || r.psyker >= P || r.target >= U || r.reflected > 1 ||
        r.force < power(r.power).lo || r.force > power(r.power).hi)
      return "an effect is out of range";
    if (effect_spec(r.power, r.force).kind == kDuel) {
      const std::pair<int, int> units = effect_units(r);
      if (unit(units.first).psyker < 0 || unit(units.second).psyker < 0)
        return "a duel effect between units that are not psykers";
    }
  }
  // What each stage waits for.
  const bool rolled = h.stage == kRoll;
  if (rolled != static_cast<bool>(h.has_roll)) return "a roll without the roll stage, or back";
  if (static_cast<bool>(h.has_pending) !=
      (h.stage == kResponse || (rolled && h.roll_kind == kRollNullify)))
    return "a power being cast outside the response step or its Nullify";
  if (h.n_effects) {
    if (h.stage != kTurn && h.stage != kOver) return "effects wait outside a turn";
    EffectRec first;
    std::memcpy(&first, s + layout_.effects, sizeof first);
    if (h.stage != kOver && !rolls_dice(s, first)) return "the first effect rolls no dice";
    return "";
  }
  int in_deck = 0;
  for (int k = 0; k < kCards; ++k) in_deck += pile(s, kDeck)[k];
  if (h.stage == kSetup && next_draw(s) < 0) return "set-up with no power card to draw";
  if (h.stage == kFlux && usable_psykers(s) == 0) return "a warp flux with no psyker to use it";
  if (h.stage == kDeal && (h.to_deal == 0 || in_deck == 0)) return "a deal with no card to deal";
  return "";
}

}  // namespace second
}  // namespace psygym
