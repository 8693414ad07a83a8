#include "solver.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "matrix_game.h"

namespace psygym {
namespace {

// The Python BoardValue clears its memo past this many states; values are pure, so where
// the core clears its own changes nothing but memory.
constexpr std::size_t kLeafMemo = 500000;

}  // namespace

Solver::Solver(const Game& game, int64_t max_states)
    : game_(game),
      max_states_(max_states),
      state_size_(game.state_size()),
      key_size_(game.state_size()),
      memo_(key_size_),
      leaves_(state_size_) {}

Solver::Solver(const Game& game, int64_t max_states, Horizon horizon,
               std::shared_ptr<const ValueNet> value)
    : game_(game),
      max_states_(max_states),
      bounded_(true),
      horizon_(horizon),
      value_(std::move(value)),
      state_size_(game.state_size()),
      key_size_(game.state_size() + sizeof(int32_t)),
      memo_(key_size_),
      leaves_(state_size_) {
  if (horizon_.steps < 1)
    throw EngineError(ErrorCode::kValue, "steps must be at least 1 (units of lookahead), got " +
                                             std::to_string(horizon_.steps));
  if (value_) {
    if (game_.observation_size() == 0)
      throw EngineError(ErrorCode::kValue,
                        "a board value needs the game's observation, and this game has no "
                        "compiled observation");
    if (value_->input_size() != game_.observation_size())
      throw EngineError(ErrorCode::kValue,
                        "the board value reads " + std::to_string(value_->input_size()) +
                            " observation entries, the game has " +
                            std::to_string(game_.observation_size()));
    observation_.resize(game_.observation_size());
  }
}

int32_t Solver::units_left(const uint8_t* key) const {
  int32_t left;
  std::memcpy(&left, key + state_size_, sizeof left);
  return left;
}

void Solver::set_units_left(uint8_t* key, int32_t left) const {
  std::memcpy(key + state_size_, &left, sizeof left);
}

void Solver::root_key(const uint8_t* s, uint8_t* key) const {
  std::memcpy(key, s, state_size_);
  // Solver._root_key: the units left after the current one (-1: a search of one unit).
  if (bounded_) set_units_left(key, horizon_.steps > 1 ? horizon_.steps - 1 : -1);
}

double Solver::leaf(const uint8_t* s) {
  double r[2];
  game_.returns(s, r);
  if (!value_) return r[0];
  const uint64_t hash = leaves_.hash(s);
  if (const double* hit = leaves_.find(s, hash)) return r[0] + *hit;
  // BoardValue.__call__: the value clamped to what the rest of the game can still add (the
  // network is not run where the bounds leave one value).
  double bounds[2];
  game_.rest_bounds(s, bounds);
  double v = bounds[0];
  if (bounds[0] != bounds[1]) {
    game_.observe(s, 0, observation_.data());
    v = std::min(std::max((*value_)(observation_.data()), bounds[0]), bounds[1]);
  }
  if (leaves_.size() > kLeafMemo) leaves_.clear();
  leaves_.insert(s, v, hash);
  return r[0] + v;
}

bool Solver::step(const uint8_t* key, const int32_t* horizon, int32_t action, uint8_t* child,
                  int* player, double* v) {
  game_.apply(key, action, child);
  *player = game_.current_player(child);
  if (*player == kTerminal) {
    double r[2];
    game_.returns(child, r);
    *v = r[0];
    return false;
  }
  if (!bounded_) return true;
  int32_t h[2];
  unit_of(child, h);
  int32_t left = units_left(key);
  if (horizon_.steps == 1) {
    if (h[0] != horizon_.within[0] || h[1] != horizon_.within[1]) {
      cut_ = true;
      *v = leaf(child);
      return false;
    }
  } else if (h[0] != horizon[0] || h[1] != horizon[1]) {
    if (left == 0) {
      cut_ = true;
      *v = leaf(child);
      return false;
    }
    --left;
  }
  set_units_left(child, left);
  return true;
}

bool Solver::step_row(const uint8_t* key, int32_t action, uint8_t* mid, int* player,
                      double* v) {
  // SimultaneousSearch._step_row: no ply of its own and never a leaf of the horizon.
  game_.apply(key, action, mid);
  *player = game_.current_player(mid);
  if (*player == kTerminal) {
    double r[2];
    game_.returns(mid, r);
    *v = r[0];
    return false;
  }
  if (bounded_) set_units_left(mid, units_left(key));
  return true;
}

void Solver::check_pair(const uint8_t* mid, int player, int row_player, int32_t action,
                        const std::vector<int32_t>& cols) {
  // SimultaneousSearch._matrix_children's contract.
  if (player != 1 - row_player)
    throw EngineError(ErrorCode::kValue,
                      "simultaneous_info announced a simultaneous move, but the row action " +
                          std::to_string(action) +
                          " is followed by neither the end of the game nor the other player's "
                          "decision");
  game_.legal_actions(mid, &legal_);
  if (legal_ != cols)
    throw EngineError(ErrorCode::kValue, "the column player's legal actions after row action " +
                                             std::to_string(action) +
                                             " are not the announced ones");
}

double Solver::pair_value(const Frame& f) {
  // SimultaneousSearch._finish_matrix: the row player's payoff is player 0's score, or its
  // negative where player 1 bids first.
  const int rows = static_cast<int>(f.actions.size()), cols = static_cast<int>(f.cols.size());
  if (f.row_player == 0) return matrix_game_value(f.values, rows, cols);
  std::vector<double> payoff(f.values.size());
  for (std::size_t k = 0; k < payoff.size(); ++k) payoff[k] = -f.values[k];
  return -matrix_game_value(payoff, rows, cols);
}

void Solver::matrix_values(const uint8_t* s, std::vector<int32_t>* rows,
                           std::vector<int32_t>* cols, std::vector<double>* values) {
  const int player = game_.current_player(s);
  if (!pairs_ || player < 0 || !game_.simultaneous(s, rows, cols))
    throw EngineError(ErrorCode::kValue, "matrix values exist only at a simultaneous move");
  values->clear();
  std::vector<uint8_t> key(key_size_), mid(key_size_), child(key_size_);
  root_key(s, key.data());
  int32_t h[2] = {0, 0};
  for (int32_t a : *rows) {
    int next = 0;
    double v = 0.0;
    if (!step_row(key.data(), a, mid.data(), &next, &v)) {
      values->insert(values->end(), cols->size(), v);
      continue;
    }
    check_pair(mid.data(), next, player, a, *cols);
    if (bounded_ && horizon_.steps > 1) unit_of(mid.data(), h);
    for (int32_t b : *cols) {
      double w = 0.0;
      if (step(mid.data(), h, b, child.data(), &next, &w)) w = key_value(child.data());
      values->push_back(w);
    }
  }
}

double Solver::key_value(const uint8_t* key) {
  if (const double* hit = memo_.find(key)) return *hit;
  solve(key);
  return *memo_.find(key);
}

double Solver::value(const uint8_t* s) {
  if (game_.current_player(s) == kTerminal) {
    double r[2];
    game_.returns(s, r);
    return r[0];
  }
  std::vector<uint8_t> key(key_size_);
  root_key(s, key.data());
  return key_value(key.data());
}

void Solver::child_values(const uint8_t* s, std::vector<int32_t>* actions,
                          std::vector<double>* values) {
  if (game_.current_player(s) < 0)
    throw EngineError(ErrorCode::kValue,
                      "action values exist only at decision nodes, not at chance or terminal "
                      "states");
  actions->clear();
  values->clear();
  game_.legal_actions(s, actions);
  std::vector<uint8_t> key(key_size_), child(key_size_);
  root_key(s, key.data());
  int32_t h[2] = {0, 0};
  if (bounded_ && horizon_.steps > 1) unit_of(s, h);
  for (int32_t a : *actions) {
    double v = 0.0;
    int player = 0;
    if (step(key.data(), h, a, child.data(), &player, &v)) v = key_value(child.data());
    values->push_back(v);
  }
}

void Solver::expand(const uint8_t* key, int player, Frame* f) {
  f->actions.clear();
  f->weights.clear();
  f->next = 0;
  f->has_acc = false;
  f->acc = 0.0;
  if (bounded_ && horizon_.steps > 1) unit_of(key, f->horizon);
  if (pairs_ && player >= 0 && game_.has_simultaneous() &&
      game_.simultaneous(key, &f->actions, &f->cols)) {
    f->kind = 3;
    f->row_player = player;
    f->values.clear();
    f->mid.resize(key_size_);
  } else if (player == kChance) {
    f->kind = 0;
    std::vector<Outcome>& outcomes = outcomes_;
    outcomes.clear();
    game_.chance_outcomes(key, &outcomes);
    for (const Outcome& o : outcomes) {
      f->actions.push_back(o.action);
      f->weights.push_back(o.probability);
    }
  } else {
    f->kind = player == 0 ? 1 : 2;
    f->actions.clear();
    game_.legal_actions(key, &f->actions);
  }
}

void Solver::solve(const uint8_t* root) {
  const std::size_t size = key_size_;
  std::size_t depth = 0;
  auto grow = [&](std::size_t d) {
    if (frames_.size() <= d) frames_.resize(d + 1);
    if (keys_.size() < (d + 2) * size) keys_.resize((d + 2) * size);
  };
  grow(0);
  std::memcpy(&keys_[0], root, size);
  expand(&keys_[0], game_.current_player(root), &frames_[0]);
  frames_[0].hash = memo_.hash(root);
  while (true) {
    Frame* f = &frames_[depth];
    double v = 0.0;
    if (f->next < f->children()) {
      const std::size_t i = f->next;
      if (f->kind == 0 && f->weights[i] <= 0.0) {
        ++f->next;
        continue;
      }
      grow(depth + 1);
      f = &frames_[depth];  // frames_ may have moved
      uint8_t* child = &keys_[(depth + 1) * size];
      int player = 0;
      const uint8_t* from = &keys_[depth * size];
      const int32_t* horizon = f->horizon;
      int32_t action = f->kind == 3 ? 0 : f->actions[i];
      if (f->kind == 3) {  // the pair (row i / C, column i % C), through its row's state
        const std::size_t n = f->cols.size(), row = i / n;
        if (i % n == 0) {
          int next = 0;
          double ended = 0.0;
          if (!step_row(from, f->actions[row], f->mid.data(), &next, &ended)) {
            f->values.insert(f->values.end(), n, ended);  // every column: the game is over
            f->next += n;
            continue;
          }
          check_pair(f->mid.data(), next, f->row_player, f->actions[row], f->cols);
          if (bounded_ && horizon_.steps > 1) unit_of(f->mid.data(), f->mid_horizon);
        }
        from = f->mid.data();
        horizon = f->mid_horizon;
        action = f->cols[i % n];
      }
      if (step(from, horizon, action, child, &player, &v)) {
        const uint64_t hash = memo_.hash(child);
        if (const double* hit = memo_.find(child, hash)) {
          v = *hit;
        } else {
          ++depth;
          expand(child, player, &frames_[depth]);
          frames_[depth].hash = hash;
          continue;
        }
      }
    } else {
      v = f->kind == 3 ? pair_value(*f) : f->has_acc ? f->acc : 0.0;
      memo_.insert(&keys_[depth * size], v, f->hash);
      const std::size_t n = memo_.size();
      if (progress_ && n % 10000 == 0) progress_(n);
      if (max_states_ >= 0 && n > static_cast<std::size_t>(max_states_))
        throw EngineError(ErrorCode::kStateLimit, "state limit");
      if (depth == 0) return;
      --depth;
      f = &frames_[depth];
    }
    // Fold child f->next's value into its parent, as the Python search does.
    const std::size_t i = f->next;
    if (f->kind == 3) {
      f->values.push_back(v);
    } else if (f->kind == 0) {
      const double w = f->weights[i];
      f->acc = f->has_acc ? f->acc + v * w : v * w;
      f->has_acc = true;
    } else if (f->kind == 1) {
      if (!f->has_acc || v > f->acc) f->acc = v;
      f->has_acc = true;
    } else {
      if (!f->has_acc || v < f->acc) f->acc = v;
      f->has_acc = true;
    }
    ++f->next;
  }
}

}  // namespace psygym
