// One game of the env: a learner in its seat against an opponent that plays uniformly at random,
// stepped exactly as psygym.envs.psychic.PsychicPhaseEnv with opponent="random" steps it: the
// same draws from the same generator state (STYLE.md section 7.5), so an episode whose Pcg64
// starts at an env's np_random state reaches the same states, rewards and masks. The single
// env (psygym/engine/episode.py) runs one; the batched env (batch.h) runs N.
//
// An episode can record its path: the state a step started from and every action applied in
// it (the learner's, the opponent's, each chance outcome), so the reference can replay the
// step for its events and texts without the hot path building any.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "game.h"
#include "random.h"

namespace psygym {

class Episode {
 public:
  // `game` must outlive the episode; `num_actions` is the rules' action space (every legal
  // action below it); `seat` is the learner's player (0 or 1).
  Episode(const Game& game, int num_actions, int seat, Pcg64 rng);

  int seat() const { return seat_; }
  void set_seat(int seat);  // takes effect at the next advance, as the env's seat setter does
  Pcg64& rng() { return rng_; }
  const Pcg64& rng() const { return rng_; }
  const std::vector<uint8_t>& state() const { return state_; }
  // The player to move at state(): the learner, or kTerminal.
  int player() const { return player_; }
  // The learner's legal actions at state(), sorted (empty once the game is over).
  const std::vector<int32_t>& legal() const { return legal_; }
  bool is_legal(int64_t action) const;
  // The learner's score at state().
  double score() const;
  // What the rewards paid so far add up to.
  double paid() const { return paid_; }

  int num_actions() const { return num_actions_; }
  bool recording() const { return recording_; }
  void set_recording(bool on) { recording_ = on; }
  // The state the last reset or step started from, and every action applied since.
  const std::vector<uint8_t>& path_start() const { return path_start_; }
  const std::vector<int32_t>& path() const { return path_; }

  // PsychicPhaseEnv.reset: from the initial state to the learner's first decision (at most
  // 1,000 games in which it gets none, then EngineError(kValue)).
  void reset();
  // PsychicPhaseEnv.step: the learner's legal action (EngineError(kValue) otherwise), then
  // chance and the opponent to its next decision or the end; returns the reward.
  double step(int64_t action);
  // step() of an action the caller has checked with is_legal (the batch checks every game's
  // action before it steps any).
  double step_legal(int32_t action);
  // Continue from `s` (a checked state of the game), as setting the env's state does: chance
  // and the opponent are not advanced; the learner's legal actions are those of `s`.
  void set_state(const uint8_t* s);

 private:
  void apply(int32_t action);
  int advance();  // chance and the opponent until the learner decides or the end
  void settle(int player);  // player_ and legal_ at the state reached

  const Game* game_;
  int num_actions_;
  int seat_;
  Pcg64 rng_;
  int player_ = kTerminal;
  double paid_ = 0.0;
  bool recording_ = false;
  std::vector<uint8_t> state_;
  std::vector<int32_t> legal_;
  std::vector<int32_t> scratch_;  // the opponent's legal actions
  std::vector<Outcome> outcomes_;  // a chance node's outcomes
  std::vector<uint8_t> path_start_;
  std::vector<int32_t> path_;
};

}  // namespace psygym
