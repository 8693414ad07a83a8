#include "matrix_game.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

#include "game.h"

namespace psygym {
namespace {

constexpr double kSaddle = 1e-12;  // matrix.py: np.isclose(lower, upper, atol=1e-12)
constexpr double kCost = 1e-12;    // reduced costs above -kCost do not improve
constexpr double kPivot = 1e-9;    // entries at most this do not pivot (the tableau is O(1))
constexpr double kTie = 1e-9;      // ratios this close tie in the ratio test

// max sum(y) s.t. B y <= 1, y >= 0 for B = payoff + shift > 0: the game's value is
// 1 / sum(y) - shift. The tableau holds B, the slacks and the right-hand side; its last row the
// objective's reduced costs.
//
// The column of the most negative reduced cost enters (Dantzig), and of the rows whose ratio ties
// the least, the one with the largest pivot leaves (Harris), which keeps the tableau accurate.
// Bland's rule alone (first column, least basis index) took many degenerate steps on the near-
// equal lines of secret bids; its rounding errors grew until no row could pivot. Dantzig's rule
// can cycle on degenerate steps (rows of payoffs equal but for rounding do), so after
// `patience` of them Bland's rule, which cannot, takes over to the end.
double simplex_value(const std::vector<double>& payoff, int rows, int cols) {
  const double low = *std::min_element(payoff.begin(), payoff.end());
  const double shift = 1.0 - low;
  const int width = cols + rows + 1;
  std::vector<double> t(static_cast<std::size_t>((rows + 1) * width), 0.0);
  auto at = [&](int i, int j) -> double& { return t[static_cast<std::size_t>(i * width + j)]; };
  std::vector<int> basis(static_cast<std::size_t>(rows));
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j)
      at(i, j) = payoff[static_cast<std::size_t>(i * cols + j)] + shift;
    at(i, cols + i) = 1.0;
    at(i, width - 1) = 1.0;
    basis[static_cast<std::size_t>(i)] = cols + i;
  }
  for (int j = 0; j < cols; ++j) at(rows, j) = -1.0;
  auto can_pivot = [&](int j) {
    for (int i = 0; i < rows; ++i)
      if (at(i, j) > kPivot) return true;
    return false;
  };
  const int patience = 4 * (rows + cols);
  int degenerate = 0;  // steps that did not raise the objective
  for (int iteration = 0; iteration < 100000; ++iteration) {
    const bool bland = degenerate > patience;
    int enter = -1;
    for (int j = 0; j < width - 1; ++j) {
      if (at(rows, j) >= -kCost || !can_pivot(j)) continue;
      if (enter < 0 || (!bland && at(rows, j) < at(rows, enter))) enter = j;
      if (bland) break;
    }
    if (enter < 0) return 1.0 / at(rows, width - 1) - shift;
    double best = INFINITY;
    for (int i = 0; i < rows; ++i)
      if (at(i, enter) > kPivot) best = std::min(best, at(i, width - 1) / at(i, enter));
    int leave = -1;
    for (int i = 0; i < rows; ++i) {
      if (at(i, enter) <= kPivot || at(i, width - 1) / at(i, enter) > best + kTie) continue;
      const auto b = static_cast<std::size_t>(i);
      if (leave < 0 ||
          (bland ? basis[b] < basis[static_cast<std::size_t>(leave)]
                 : at(i, enter) > at(leave, enter)))
        leave = i;
    }
    if (best <= kTie) ++degenerate;
    const double pivot = at(leave, enter);
    for (int j = 0; j < width; ++j) at(leave, j) /= pivot;
    for (int i = 0; i <= rows; ++i) {
      if (i == leave) continue;
      const double factor = at(i, enter);
      if (factor == 0.0) continue;
      for (int j = 0; j < width; ++j) at(i, j) -= factor * at(leave, j);
    }
    basis[static_cast<std::size_t>(leave)] = enter;
  }
  throw EngineError(ErrorCode::kValue, "the matrix game's linear program did not converge");
}

// Whether line `a` of the game is weakly dominated by line `b` for its player: for rows (the
// maximiser) b's payoffs are all at least a's, for columns (the minimiser) all at most; equal
// lines count as dominated by the earlier one, so exactly one of them stays.
bool dominated(const std::vector<double>& payoff, int cols, bool row, int a, int b,
               const std::vector<int>& others) {
  bool strictly = false;
  for (int o : others) {
    const double pa = row ? payoff[static_cast<std::size_t>(a * cols + o)]
                          : -payoff[static_cast<std::size_t>(o * cols + a)];
    const double pb = row ? payoff[static_cast<std::size_t>(b * cols + o)]
                          : -payoff[static_cast<std::size_t>(o * cols + b)];
    if (pb < pa) return false;
    strictly = strictly || pb > pa;
  }
  return strictly || b < a;
}

// Drops the weakly dominated lines of one player once each (`keep` of them stay); true if any.
bool drop_dominated(const std::vector<double>& payoff, int cols, bool row, std::vector<int>* keep,
                    const std::vector<int>& others) {
  std::vector<int> left;
  for (int a : *keep) {
    bool out = false;
    for (int b : *keep)
      if (b != a && dominated(payoff, cols, row, a, b, others)) {
        out = true;
        break;
      }
    if (!out) left.push_back(a);
  }
  // Lines that dominate only each other (equal ones) cannot all go: `b < a` keeps the first.
  const bool changed = left.size() < keep->size();
  *keep = std::move(left);
  return changed;
}

}  // namespace

double matrix_game_value(const std::vector<double>& payoff, int rows, int cols) {
  if (rows < 1 || cols < 1 || payoff.size() != static_cast<std::size_t>(rows) * cols)
    throw EngineError(ErrorCode::kValue, "a matrix game needs a non-empty rows x cols payoff");
  // Removing weakly dominated rows and columns, again until none is left, keeps the game's
  // value. Secret bids give many near-equal lines (a larger bid past what matters changes
  // nothing), on which the tableau below cycled or lost accuracy; their dominated lines go first.
  std::vector<int> keep_rows, keep_cols;
  for (int i = 0; i < rows; ++i) keep_rows.push_back(i);
  for (int j = 0; j < cols; ++j) keep_cols.push_back(j);
  bool changed = true;
  while (changed) {
    changed = drop_dominated(payoff, cols, true, &keep_rows, keep_cols);
    changed = drop_dominated(payoff, cols, false, &keep_cols, keep_rows) || changed;
  }
  if (keep_rows.size() < static_cast<std::size_t>(rows) ||
      keep_cols.size() < static_cast<std::size_t>(cols)) {
    std::vector<double> reduced;
    reduced.reserve(keep_rows.size() * keep_cols.size());
    for (int i : keep_rows)
      for (int j : keep_cols) reduced.push_back(payoff[static_cast<std::size_t>(i * cols + j)]);
    return matrix_game_value(reduced, static_cast<int>(keep_rows.size()),
                             static_cast<int>(keep_cols.size()));
  }
  double lower = -INFINITY, upper = INFINITY;
  for (int i = 0; i < rows; ++i) {
    double row_min = INFINITY;
    for (int j = 0; j < cols; ++j)
      row_min = std::min(row_min, payoff[static_cast<std::size_t>(i * cols + j)]);
    lower = std::max(lower, row_min);
  }
  for (int j = 0; j < cols; ++j) {
    double col_max = -INFINITY;
    for (int i = 0; i < rows; ++i)
      col_max = std::max(col_max, payoff[static_cast<std::size_t>(i * cols + j)]);
    upper = std::min(upper, col_max);
  }
  if (std::fabs(lower - upper) <= kSaddle) return lower;
  return simplex_value(payoff, rows, cols);
}

}  // namespace psygym
