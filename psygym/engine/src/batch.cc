#include "batch.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace psygym {
namespace {

// PsychicPhaseEnv._MAX_RESETS: games in which the learner never decides are skipped at reset.
constexpr int kMaxResets = 1000;

}  // namespace

BatchEnv::BatchEnv(const Game& game, int num_actions, std::vector<int> seats,
                   std::vector<Pcg64> rngs)
    : game_(game), num_actions_(num_actions), obs_size_(game.observation_size()) {
  if (obs_size_ == 0)
    throw EngineError(ErrorCode::kValue, "this game has no compiled observation");
  if (num_actions < 1) throw EngineError(ErrorCode::kValue, "a batch needs at least one action");
  if (seats.empty() || seats.size() != rngs.size())
    throw EngineError(ErrorCode::kValue, "a batch needs one seat and one generator per game");
  slots_.reserve(seats.size());
  for (std::size_t i = 0; i < seats.size(); ++i) {
    if (seats[i] != 0 && seats[i] != 1)
      throw EngineError(ErrorCode::kValue, "game " + std::to_string(i) + ": seat must be 0 or 1");
    slots_.push_back(Slot{std::vector<uint8_t>(game.state_size()),
                          std::vector<uint8_t>(game.state_size()), {}, rngs[i], seats[i]});
  }
}

std::string BatchEnv::check_actions(const int64_t* actions) const {
  if (!started_) return "call reset() before step()";
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const std::vector<int32_t>& legal = slots_[i].legal;
    if (!std::binary_search(legal.begin(), legal.end(), actions[i])) {
      std::string list;
      for (int32_t a : legal) list += (list.empty() ? "" : ", ") + std::to_string(a);
      return "game " + std::to_string(i) + ": action " + std::to_string(actions[i]) +
             " is not legal (legal: " + list + ")";
    }
  }
  return "";
}

void BatchEnv::apply(Slot& slot, int32_t action) {
  game_.apply(slot.state.data(), action, slot.next.data());
  slot.state.swap(slot.next);
}

int BatchEnv::advance(Slot& slot) {
  // PsychicPhaseEnv._advance: chance as the env samples it, the random opponent's decision by
  // psygym.core.sample_action (kernel.uniform_choice over rules.legal_actions).
  while (true) {
    const int player = game_.current_player(slot.state.data());
    if (player == kTerminal || player == slot.seat) return player;
    int32_t action;
    if (player == kChance) {
      action = game_.sample_chance(slot.state.data(), slot.rng);
    } else {
      game_.legal_actions(slot.state.data(), &scratch_);
      if (scratch_.empty()) throw EngineError(ErrorCode::kValue, "a decision without actions");
      action = scratch_[uniform_index(scratch_.size(), slot.rng)];
    }
    apply(slot, action);
  }
}

void BatchEnv::learner_legal(Slot& slot) const {
  game_.legal_actions(slot.state.data(), &slot.legal);
  for (int32_t a : slot.legal)
    if (a < 0 || a >= num_actions_)
      throw EngineError(ErrorCode::kValue, "a legal action past the action space");
}

void BatchEnv::reset_slot(Slot& slot) {
  // PsychicPhaseEnv.reset: until the learner gets a decision, at most kMaxResets games.
  for (int tries = 0; tries < kMaxResets; ++tries) {
    game_.initial_state(slot.state.data());
    if (advance(slot) == slot.seat) {
      learner_legal(slot);
      slot.paid = 0.0;
      return;
    }
  }
  throw EngineError(ErrorCode::kValue, "the agent in seat " + std::to_string(slot.seat) +
                                           " never gets a decision in this scenario");
}

void BatchEnv::write(Slot& slot, std::size_t i, const BatchOutput& out) const {
  game_.observe(slot.state.data(), slot.seat, out.obs + i * obs_size_);
  bool* mask = out.masks + i * static_cast<std::size_t>(num_actions_);
  std::fill(mask, mask + num_actions_, false);
  for (int32_t a : slot.legal) mask[a] = true;
}

void BatchEnv::reset(const BatchOutput& out) {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    reset_slot(slots_[i]);
    write(slots_[i], i, out);
  }
  started_ = true;
}

void BatchEnv::step(const int64_t* actions, const BatchOutput& out) {
  const std::string problem = check_actions(actions);
  if (!problem.empty()) throw EngineError(ErrorCode::kValue, problem);
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    apply(slot, static_cast<int32_t>(actions[i]));
    const int player = advance(slot);
    // PsychicPhaseEnv.step: the learner's score change since the rewards paid so far.
    double scores[2];
    game_.returns(slot.state.data(), scores);
    const double score = scores[slot.seat];
    out.rewards[i] = score - slot.paid;
    slot.paid = score;
    out.truncated[i] = false;
    float* final_obs = out.final_obs + i * obs_size_;
    if (player == kTerminal) {
      out.terminated[i] = true;
      game_.observe(slot.state.data(), slot.seat, final_obs);
      reset_slot(slot);
    } else {
      out.terminated[i] = false;
      std::fill(final_obs, final_obs + obs_size_, 0.0f);
      learner_legal(slot);
    }
    write(slot, i, out);
  }
}

}  // namespace psygym
