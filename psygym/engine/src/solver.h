// Exact expectiminimax over a compiled game: the twin of the unlimited search of
// agents/solvers/expectiminimax.py (Solver._solve_sequential). The same depth-first order, the
// same sums in the same order and the same memo, so the same values to the last bit and the
// same count of states: player 0 maximises its final score, player 1 minimises it, chance is
// summed with the exact probabilities of chance_outcomes().
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "game.h"
#include "state_table.h"

namespace psygym {

class Solver {
 public:
  // max_states < 0: no limit; else EngineError(kStateLimit) once more states are memoised.
  Solver(const Game& game, int64_t max_states);

  // Expected final score of player 0 from `s` with both players optimal.
  double value(const uint8_t* s);
  // Each legal action of the player to move at `s` with the value (for player 0) of its
  // child; EngineError(kValue) at a chance or terminal node.
  void child_values(const uint8_t* s, std::vector<int32_t>* actions, std::vector<double>* values);
  // States memoised (decision and chance nodes, not terminals).
  std::size_t states() const { return memo_.size(); }
  std::size_t memory_bytes() const { return memo_.bytes(); }
  // Called with the number of states every 10,000 new states (may throw to stop the search).
  void set_progress(std::function<void(std::size_t)> progress) { progress_ = std::move(progress); }

 private:
  struct Frame {
    int kind;  // 0 chance (a weighted sum), 1 player 0 (max), 2 player 1 (min)
    std::vector<int32_t> actions;
    std::vector<double> weights;  // chance only
    std::size_t next = 0;
    bool has_acc = false;
    double acc = 0.0;
    uint64_t hash = 0;  // of the frame's state, for the memo
  };

  double child_value(const uint8_t* s, int32_t action);
  void solve(const uint8_t* root);
  void expand(const uint8_t* s, Frame* f);

  const Game& game_;
  int64_t max_states_;
  StateTable memo_;
  std::function<void(std::size_t)> progress_;
  std::vector<Frame> frames_;      // reused across searches
  std::vector<uint8_t> states_;    // the state of frame k at [k * size, (k + 1) * size)
  std::vector<Outcome> outcomes_;  // a chance node's outcomes while it is expanded
};

}  // namespace psygym
