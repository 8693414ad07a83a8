#include "batch.h"

#include <algorithm>
#include <utility>

namespace psygym {

BatchEnv::BatchEnv(const Game& game, int num_actions, std::vector<int> seats,
                   std::vector<Pcg64> rngs)
    : game_(game), num_actions_(num_actions), obs_size_(game.observation_size()) {
  if (obs_size_ == 0)
    throw EngineError(ErrorCode::kValue, "this game has no compiled observation");
  if (num_actions < 1) throw EngineError(ErrorCode::kValue, "a batch needs at least one action");
  if (seats.empty() || seats.size() != rngs.size())
    throw EngineError(ErrorCode::kValue, "a batch needs one seat and one generator per game");
  games_.reserve(seats.size());
  for (std::size_t i = 0; i < seats.size(); ++i) {
    if (seats[i] != 0 && seats[i] != 1)
      throw EngineError(ErrorCode::kValue, "game " + std::to_string(i) + ": seat must be 0 or 1");
    games_.emplace_back(game, num_actions, seats[i], rngs[i]);
  }
}

std::string BatchEnv::check_actions(const int64_t* actions) const {
  if (!started_) return "call reset() before step()";
  for (std::size_t i = 0; i < games_.size(); ++i) {
    if (games_[i].is_legal(actions[i])) continue;
    std::string list;
    for (int32_t a : games_[i].legal()) list += (list.empty() ? "" : ", ") + std::to_string(a);
    return "game " + std::to_string(i) + ": action " + std::to_string(actions[i]) +
           " is not legal (legal: " + list + ")";
  }
  return "";
}

void BatchEnv::write(const Episode& game, std::size_t i, const BatchOutput& out) const {
  game_.observe(game.state().data(), game.seat(), out.obs + i * obs_size_);
  bool* mask = out.masks + i * static_cast<std::size_t>(num_actions_);
  std::fill(mask, mask + num_actions_, false);
  for (int32_t a : game.legal()) mask[a] = true;
}

void BatchEnv::reset(const BatchOutput& out) {
  for (std::size_t i = 0; i < games_.size(); ++i) {
    games_[i].reset();
    write(games_[i], i, out);
  }
  started_ = true;
}

void BatchEnv::step(const int64_t* actions, const BatchOutput& out) {
  const std::string problem = check_actions(actions);
  if (!problem.empty()) throw EngineError(ErrorCode::kValue, problem);
  for (std::size_t i = 0; i < games_.size(); ++i) {
    Episode& game = games_[i];
    out.rewards[i] = game.step_legal(static_cast<int32_t>(actions[i]));  // checked above
    out.truncated[i] = false;
    out.terminated[i] = game.player() == kTerminal;
    if (out.terminated[i]) {
      game_.observe(game.state().data(), game.seat(), out.final_obs + i * obs_size_);
      game.reset();
    }
    write(game, i, out);
  }
}

void BatchEnv::sample_legal(int64_t* out) {
  for (std::size_t i = 0; i < games_.size(); ++i) {
    const std::vector<int32_t>& legal = games_[i].legal();
    out[i] = legal[uniform_index(legal.size(), sampler_)];
  }
}

}  // namespace psygym
