// Expectiminimax over a compiled game: the twin of the sequential search of
// agents/solvers/expectiminimax.py (Solver._solve_sequential), exact or bounded by the horizon
// of the search agent's lookahead (Solver(within=, steps=), Solver._step_limited). The same
// depth-first order, the same sums in the same order and the same memo keys, so the same
// values and the same count of states: player 0 maximises its final score, player 1 minimises
// it, chance is summed with the exact probabilities of chance_outcomes(). Exact values agree to
// the last bit; a leaf's board value to about 1e-15 (ValueNet).
//
// A secret pair of decisions (Game::simultaneous, Rogue Trader's bids) is one node, as in the
// Python general search (agents/solvers/simultaneous.py): its children are the states after
// each row action and then each column action, the state between the two halves is neither
// memoised nor a leaf, and its value is the matrix game's (matrix_game.h): the linear
// program's optimum, which agrees with the reference's to its solver's tolerance.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "game.h"
#include "lookahead.h"
#include "state_table.h"

namespace psygym {

class Solver {
 public:
  // The exact solver. max_states < 0: no limit; else EngineError(kStateLimit) once more
  // states are memoised.
  Solver(const Game& game, int64_t max_states);
  // The search agent's lookahead: the search stays within `horizon`; a state beyond is a leaf
  // worth the score so far plus `value` of the game's observation of player 0 (no value: the
  // score so far). EngineError(kValue) for steps < 1, or a value whose input is not the game's
  // observation.
  Solver(const Game& game, int64_t max_states, Horizon horizon,
         std::shared_ptr<const ValueNet> value);

  // Expected final score of player 0 from `s` with both players optimal.
  double value(const uint8_t* s);
  // Each legal action of the player to move at `s` with the value (for player 0) of its
  // child; EngineError(kValue) at a chance or terminal node.
  void child_values(const uint8_t* s, std::vector<int32_t>* actions, std::vector<double>* values);
  // At a secret pair `s`: the row and column actions and the value of each pair's child,
  // row-major (what the Python solver builds its matrix game and strategies from);
  // EngineError(kValue) elsewhere, or where a row action is not followed by the column
  // player's decision with the announced actions or the end of the game.
  void matrix_values(const uint8_t* s, std::vector<int32_t>* rows, std::vector<int32_t>* cols,
                     std::vector<double>* values);
  // States memoised (decision and chance nodes, not terminals; a bounded search memoises a
  // state once per count of units left, as the Python search's keys).
  std::size_t states() const { return memo_.size(); }
  std::size_t memory_bytes() const { return memo_.bytes() + leaves_.bytes(); }
  // Whether any value rests on a leaf of the horizon (the Python solver's Cache.cut).
  bool cut() const { return cut_; }
  // Whether secret pairs of decisions are matrix games (the default), or two decisions in a
  // row as in a search whose rules announce none (the reference's simultaneous_info removed).
  void set_pairs(bool on) { pairs_ = on; }
  // Called with the number of states every 10,000 new states (may throw to stop the search).
  void set_progress(std::function<void(std::size_t)> progress) { progress_ = std::move(progress); }

 private:
  struct Frame {
    // 0 chance (a weighted sum), 1 player 0 (max), 2 player 1 (min), 3 a secret pair (its
    // children the pairs of actions, row-major)
    int kind;
    std::vector<int32_t> actions;  // a pair: the row actions
    std::vector<double> weights;   // chance only
    std::vector<int32_t> cols;     // a pair: the column actions
    std::vector<double> values;    // a pair: the children's values so far
    std::vector<uint8_t> mid;      // a pair: the key after the current row action
    int32_t mid_horizon[2] = {0, 0};
    int row_player = 0;
    std::size_t children() const {
      return kind == 3 ? actions.size() * cols.size() : actions.size();
    }
    std::size_t next = 0;
    bool has_acc = false;
    double acc = 0.0;
    uint64_t hash = 0;            // of the frame's key, for the memo
    int32_t horizon[2] = {0, 0};  // of the frame's state (a search of several units only)
  };

  // A key is the state's bytes, then (bounded search) the units left as an int32: -1 with
  // steps == 1, as the Python key's phases.
  int32_t units_left(const uint8_t* key) const;
  void set_units_left(uint8_t* key, int32_t left) const;
  void root_key(const uint8_t* s, uint8_t* key) const;
  // The child of `key` after `action`, written as a key at `child`: true (and `*player` its
  // player to move) if it is a node to search, false with `*v` its value if it is terminal or
  // a leaf (Python's _step_limited).
  bool step(const uint8_t* key, const int32_t* horizon, int32_t action, uint8_t* child,
            int* player, double* v);
  // The row half of a secret pair: the state after the row action, never a leaf (the column
  // half is the step that may leave the horizon); false with `*v` if the game ended.
  bool step_row(const uint8_t* key, int32_t action, uint8_t* mid, int* player, double* v);
  // After row action `action` of a pair whose row player is `row_player`: EngineError(kValue)
  // unless the column player decides next with the announced `cols`.
  void check_pair(const uint8_t* mid, int player, int row_player, int32_t action,
                  const std::vector<int32_t>& cols);
  static double pair_value(const Frame& f);  // the matrix game's value for player 0
  double leaf(const uint8_t* s);
  // The unit of lookahead `s` is in: Game::phase_horizon with horizon_.phases, else horizon.
  void unit_of(const uint8_t* s, int32_t out[2]) const {
    if (horizon_.phases)
      game_.phase_horizon(s, out);
    else
      game_.horizon(s, out);
  }
  double key_value(const uint8_t* key);
  void solve(const uint8_t* root);
  void expand(const uint8_t* key, int player, Frame* f);

  const Game& game_;
  int64_t max_states_;
  bool bounded_ = false;
  Horizon horizon_;
  std::shared_ptr<const ValueNet> value_;
  std::size_t state_size_;
  std::size_t key_size_;
  bool cut_ = false;
  bool pairs_ = true;
  StateTable memo_;
  StateTable leaves_;               // board values by state (pure: clearing loses nothing)
  std::vector<float> observation_;  // a leaf's observation while it is valued
  std::function<void(std::size_t)> progress_;
  std::vector<Frame> frames_;       // reused across searches
  std::vector<uint8_t> keys_;       // the key of frame k at [k * key size, (k + 1) * key size)
  std::vector<Outcome> outcomes_;   // a chance node's outcomes while it is expanded
  std::vector<int32_t> legal_;      // the column player's actions while a pair is checked
};

}  // namespace psygym
