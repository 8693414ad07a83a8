#include "episode.h"

#include <algorithm>
#include <cstring>

namespace psygym {
namespace {

// PsychicPhaseEnv._MAX_RESETS: games in which the learner never decides are skipped at reset.
constexpr int kMaxResets = 1000;

void check_seat(int seat) {
  if (seat != 0 && seat != 1)
    throw EngineError(ErrorCode::kValue, "seat must be 0 or 1, not " + std::to_string(seat));
}

}  // namespace

Episode::Episode(const Game& game, int num_actions, int seat, Pcg64 rng)
    : game_(&game), num_actions_(num_actions), seat_(seat), rng_(rng),
      state_(game.state_size()) {
  check_seat(seat);
  if (num_actions < 1) throw EngineError(ErrorCode::kValue, "a game needs at least one action");
}

void Episode::set_seat(int seat) {
  check_seat(seat);
  seat_ = seat;
}

bool Episode::is_legal(int64_t action) const {
  return std::binary_search(legal_.begin(), legal_.end(), action);
}

double Episode::score() const {
  double scores[2];
  game_->returns(state_.data(), scores);
  return scores[seat_];
}

void Episode::apply(int32_t action) {
  if (recording_) path_.push_back(action);
  game_->apply(state_.data(), action, state_.data());
}

int Episode::advance() {
  // PsychicPhaseEnv._advance: chance as the env samples it, the random opponent's decision by
  // psygym.core.sample_action (kernel.uniform_choice over rules.legal_actions).
  while (true) {
    const int player = game_->current_player(state_.data());
    if (player == kTerminal || player == seat_) return player;
    int32_t action;
    if (player == kChance) {
      action = game_->sample_chance(state_.data(), rng_, outcomes_);
    } else {
      game_->legal_actions(state_.data(), &scratch_);
      if (scratch_.empty()) throw EngineError(ErrorCode::kValue, "a decision without actions");
      action = scratch_[uniform_index(scratch_.size(), rng_)];
    }
    apply(action);
  }
}

void Episode::settle(int player) {
  player_ = player;
  legal_.clear();
  if (player != seat_) return;
  game_->legal_actions(state_.data(), &legal_);
  for (int32_t a : legal_)
    if (a < 0 || a >= num_actions_)
      throw EngineError(ErrorCode::kValue, "a legal action past the action space");
}

void Episode::reset() {
  for (int tries = 0; tries < kMaxResets; ++tries) {
    game_->initial_state(state_.data());
    if (recording_) {
      path_start_ = state_;
      path_.clear();
    }
    const int player = advance();
    if (player == seat_) {
      settle(player);
      paid_ = 0.0;
      return;
    }
  }
  throw EngineError(ErrorCode::kValue, "the agent in seat " + std::to_string(seat_) +
                                           " never gets a decision in this scenario");
}

double Episode::step(int64_t action) {
  if (player_ != seat_ || !is_legal(action)) {
    std::string list;
    for (int32_t a : legal_) list += (list.empty() ? "" : ", ") + std::to_string(a);
    throw EngineError(ErrorCode::kValue, "action " + std::to_string(action) +
                                             " is not legal (legal: " + list + ")");
  }
  return step_legal(static_cast<int32_t>(action));
}

double Episode::step_legal(int32_t action) {
  if (recording_) {
    path_start_ = state_;
    path_.clear();
  }
  apply(action);
  settle(advance());
  // PsychicPhaseEnv.step: the learner's score change since the rewards paid so far.
  const double now = score();
  const double reward = now - paid_;
  paid_ = now;
  return reward;
}

void Episode::set_state(const uint8_t* s) {
  std::memcpy(state_.data(), s, state_.size());
  const int player = game_->current_player(state_.data());
  settle(player);
  if (recording_) {
    path_start_ = state_;
    path_.clear();
  }
}

}  // namespace psygym
