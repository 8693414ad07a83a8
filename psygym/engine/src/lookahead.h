// What the search agent's lookahead adds to the exact solver (agents/solvers/search.py): the
// bound of a search (the unit of lookahead named by Game::horizon, and how many units) and the
// board value its leaves are worth, an MLP over the game's observation (agents/value/model.py).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace psygym {

// The bound of a horizon-limited search, as Solver(within=, steps=) in
// agents/solvers/expectiminimax.py: with steps == 1 the search stays among the states whose
// horizon is `within`; with steps > 1 it spans the unit it starts in and the next steps - 1,
// each key carrying the units left. The first state beyond is a leaf.
// With `phases` the units are Psychic phases (Game::phase_horizon), else Game::horizon's.
struct Horizon {
  int32_t within[2] = {0, 0};
  int32_t steps = 1;
  bool phases = false;
};

// One layer of a ValueNet: out = in @ w + b, w row-major with `inputs` rows of `outputs`.
struct DenseLayer {
  int inputs = 0;
  int outputs = 0;
  std::vector<double> w;
  std::vector<double> b;
};

// BoardValue.predict of agents/value/model.py for one observation: h = (obs - mean) / scale,
// then h = h @ W + b per layer with tanh on every layer but the last, whose one output is the
// value. Double arithmetic, arranged for speed rather than numpy's exact steps: the first
// layer starts from its sums over an all-zero observation and adds the change of each entry
// that is not zero (most are), the input is multiplied by 1 / scale, sums are grouped in
// vector lanes (numpy's BLAS groups them its own way too), and tanh is computed from exp
// (lookahead.cc). The value agrees with numpy's to about 1e-15, not to the bit. Immutable
// once made, so solvers on several threads may share one.
class ValueNet {
 public:
  // EngineError(kValue), in one line, unless the sizes chain (mean and scale as long as the
  // first layer's inputs, each layer's inputs the previous one's outputs, one output at the
  // end) and every number is finite, with no zero in `scale`.
  ValueNet(std::vector<double> mean, std::vector<double> scale, std::vector<DenseLayer> layers);

  std::size_t input_size() const { return mean_.size(); }
  // The value of one observation of input_size() entries.
  double operator()(const float* obs) const;

 private:
  std::vector<double> mean_, scale_;
  std::vector<DenseLayer> layers_;
  std::size_t widest_ = 0;         // the most entries any layer reads or writes
  std::vector<double> inverse_scale_;  // 1 / scale: a product where numpy divides
  std::vector<double> zero_input_;  // the first layer's input where the observation is 0
  std::vector<double> zero_sums_;   // zero_input_ @ the first layer's weights
  std::vector<int> all_rows_;       // 0, 1, ..., widest_ - 1: every row of a dense layer
  std::vector<double> zeros_;       // widest_ zeros: a dense layer's sums start from them
};

}  // namespace psygym
