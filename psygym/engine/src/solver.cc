#include "solver.h"

#include <cstring>

namespace psygym {

Solver::Solver(const Game& game, int64_t max_states)
    : game_(game), max_states_(max_states), memo_(game.state_size()) {}

double Solver::value(const uint8_t* s) {
  if (game_.current_player(s) == kTerminal) {
    double r[2];
    game_.returns(s, r);
    return r[0];
  }
  if (const double* hit = memo_.find(s)) return *hit;
  solve(s);
  return *memo_.find(s);
}

double Solver::child_value(const uint8_t* s, int32_t action) {
  std::vector<uint8_t> child(game_.state_size());
  game_.apply(s, action, child.data());
  return value(child.data());
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
  for (int32_t a : *actions) values->push_back(child_value(s, a));
}

void Solver::expand(const uint8_t* s, Frame* f) {
  f->actions.clear();
  f->weights.clear();
  f->next = 0;
  f->has_acc = false;
  f->acc = 0.0;
  const int player = game_.current_player(s);
  if (player == kChance) {
    f->kind = 0;
    std::vector<Outcome>& outcomes = outcomes_;
    outcomes.clear();
    game_.chance_outcomes(s, &outcomes);
    for (const Outcome& o : outcomes) {
      f->actions.push_back(o.action);
      f->weights.push_back(o.probability);
    }
  } else {
    f->kind = player == 0 ? 1 : 2;
    game_.legal_actions(s, &f->actions);
  }
}

void Solver::solve(const uint8_t* root) {
  const std::size_t size = game_.state_size();
  std::size_t depth = 0;
  auto grow = [&](std::size_t d) {
    if (frames_.size() <= d) frames_.resize(d + 1);
    if (states_.size() < (d + 2) * size) states_.resize((d + 2) * size);
  };
  grow(0);
  std::memcpy(&states_[0], root, size);
  expand(&states_[0], &frames_[0]);
  frames_[0].hash = memo_.hash(root);
  while (true) {
    Frame* f = &frames_[depth];
    double v = 0.0;
    if (f->next < f->actions.size()) {
      const std::size_t i = f->next;
      if (f->kind == 0 && f->weights[i] <= 0.0) {
        ++f->next;
        continue;
      }
      grow(depth + 1);
      f = &frames_[depth];  // frames_ may have moved
      uint8_t* child = &states_[(depth + 1) * size];
      game_.apply(&states_[depth * size], f->actions[i], child);
      const int player = game_.current_player(child);
      if (player == kTerminal) {
        double r[2];
        game_.returns(child, r);
        v = r[0];
      } else {
        const uint64_t hash = memo_.hash(child);
        if (const double* hit = memo_.find(child, hash)) {
          v = *hit;
        } else {
          ++depth;
          expand(child, &frames_[depth]);
          frames_[depth].hash = hash;
          continue;
        }
      }
    } else {
      v = f->has_acc ? f->acc : 0.0;
      memo_.insert(&states_[depth * size], v, f->hash);
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
    if (f->kind == 0) {
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
