// A batch of N games of one compiled game, stepped in one call: the core of the batched env
// (psygym/engine/vector.py). Each game is an Episode (episode.h): a learner in its seat against
// the uniformly random opponent, played exactly as psygym.envs.psychic.PsychicPhaseEnv with
// opponent="random" plays it.
//
// Autoreset is Gymnasium's same-step mode: a game that ends in a step is reset in that step,
// its generator running on; the step returns the ended game's reward and termination, the new
// game's first observation and mask, and the ended game's last observation apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "episode.h"
#include "game.h"
#include "random.h"

namespace psygym {

// Outputs of a step, rows of the caller's arrays: obs [N, obs], rewards [N], terminated [N],
// truncated [N], masks [N, actions], final_obs [N, obs] (only the rows of ended games are
// written: the others keep what they held).
struct BatchOutput {
  float* obs = nullptr;
  double* rewards = nullptr;
  bool* terminated = nullptr;
  bool* truncated = nullptr;
  bool* masks = nullptr;
  float* final_obs = nullptr;
};

class BatchEnv {
 public:
  // `game` must outlive the batch and have a compiled observation; `num_actions` is the rules'
  // action space (every legal action below it); seats[i] is game i's learner (0 or 1).
  BatchEnv(const Game& game, int num_actions, std::vector<int> seats, std::vector<Pcg64> rngs);

  std::size_t size() const { return games_.size(); }
  std::size_t observation_size() const { return obs_size_; }
  int num_actions() const { return num_actions_; }
  int seat(std::size_t i) const { return games_[i].seat(); }
  const Pcg64& rng(std::size_t i) const { return games_[i].rng(); }
  void set_rng(std::size_t i, const Pcg64& rng) { games_[i].rng() = rng; }
  bool started() const { return started_; }

  // Empty if actions[i] is a legal action of game i for every i, else one line naming the
  // first game whose action is not (the bindings check this before step).
  std::string check_actions(const int64_t* actions) const;
  // Every game from its initial state to its learner's first decision (obs and masks only).
  void reset(const BatchOutput& out);
  // Every game's action (checked), then chance and the opponent to the learner's next
  // decision; ended games are reset in the same step.
  void step(const int64_t* actions, const BatchOutput& out);
  // A uniformly random legal action of every game, in game order: psygym.kernel.uniform_choice
  // over its legal actions, drawn from the batch's own sampler (random.h), not the games'.
  void sample_legal(int64_t* out);
  void set_sampler(const Pcg64& rng) { sampler_ = rng; }
  const Pcg64& sampler() const { return sampler_; }

 private:
  void write(const Episode& game, std::size_t i, const BatchOutput& out) const;

  const Game& game_;
  int num_actions_;
  std::size_t obs_size_;
  std::vector<Episode> games_;
  Pcg64 sampler_{0, 1};  // set_sampler seeds it
  bool started_ = false;
};

}  // namespace psygym
