// The 8th-edition psychic phase as a compiled game: the twin of
// psygym/editions/eighth/rules.py and the modules it mixes in (8E-1 .. 8E-8), node for node.
// The action layout is actions.py's (select [0, N), end the phase N, cast N + 1 + p N + t,
// stop N + 1 + P N, deny with d N + 2 + P N + d, do not deny 2 N + 2 + P N), the chance
// outcomes and their order are chances.py's, and every default rules.py's docstring lists is
// kept.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "effects.h"
#include "game.h"
#include "scenario.h"
#include "state.h"

namespace psygym {
namespace eighth {

// Test totals that can only be a double 1 or a double 6: Perils (effects.is_perils, 8E-4.3).
inline bool is_perils_total(int total) { return total == 2 || total == 12; }

class EighthGame : public Game {
 public:
  explicit EighthGame(ScenarioSpec spec);

  std::size_t state_size() const override { return layout_.size; }
  std::string check_state(const uint8_t* s) const override;
  void initial_state(uint8_t* out) const override;
  int current_player(const uint8_t* s) const override;
  void legal_actions(const uint8_t* s, std::vector<int32_t>* out) const override;
  void chance_outcomes(const uint8_t* s, std::vector<Outcome>* out) const override;
  void apply(const uint8_t* s, int32_t action, uint8_t* out) const override;
  void returns(const uint8_t* s, double out[2]) const override;
  void horizon(const uint8_t* s, int32_t out[2]) const override;        // horizon.cc
  void phase_horizon(const uint8_t* s, int32_t out[2]) const override;  // horizon.cc
  bool has_horizon() const override { return true; }
  std::size_t observation_size() const override;
  void observe(const uint8_t* s, int player, float* out) const override;
  int32_t sample_chance(const uint8_t* s, Pcg64& rng,
                        std::vector<Outcome>& scratch) const override;

 private:
  // A state being built in place: its header, and its bytes for the arrays.
  struct Work {
    Header h;
    uint8_t* b;
  };

  int wounds(const uint8_t* b, int unit) const {
    return get_u16(b, layout_.wounds + 2 * static_cast<std::size_t>(unit));
  }
  bool passed(const Header& h) const { return h.total >= h.warp_charge && h.warp_charge > 0; }

  // Legality (rules._find_legal, _cast_options, _selectable, deniers).
  bool cast_option(const uint8_t* b, int c, bool own, std::vector<int32_t>* out) const;
  bool selectable(const uint8_t* b, int unit) const;
  bool any_denier(const Header& h, const uint8_t* b, std::vector<int32_t>* out) const;

  // Chance tables (rules._chance, _exact_chance).
  void outcomes_of(const Header& h, const uint8_t* b, std::vector<Outcome>* out) const;
  bool single_outcome(const Header& h, const uint8_t* b, int* outcome) const;
  const std::vector<Outcome>& attack_table(int power, int target, int remaining) const;
  const CapTable& rolloff_table(int power, int caster, int target) const;

  // Transitions (rules._select .. _next_phase); a `bool` result is true where the reference
  // then calls _enter_chance (always in tail position, so enter_chance runs it as a loop).
  void select(Work& w, int a) const;
  void power(Work& w, int a) const;
  void deny(Work& w, int a) const;
  bool chance_step(Work& w, int a) const;
  void enter_chance(Work& w, bool enter) const;
  bool to_deny(Work& w) const;
  bool to_effect(Work& w) const;
  void hurt(Work& w, int unit, int amount) const;
  void after_attempt(Work& w) const;
  void advance(Work& w) const;
  void next_phase(Work& w) const;
  void reset_unit(Work& w) const;

  ScenarioSpec sc_;
  Layout layout_;
  int end_phase_, cast_, stop_, deny_, no_deny_;
  CapTable perils_, blast_;
  std::vector<CapTable> mortal_, boosted_;
  std::vector<std::vector<CapTable>> rolloff_;  // [power][caster Ld * 31 + target Ld]
  mutable std::mutex attack_mutex_;
  mutable std::map<std::tuple<int, int, int>, std::vector<Outcome>> attack_cache_;
};

std::unique_ptr<Game> make_eighth(const ScenarioData& data);

}  // namespace eighth
}  // namespace psygym
