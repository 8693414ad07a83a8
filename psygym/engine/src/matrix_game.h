// Zero-sum matrix games: the value of a secret pair of decisions (Rogue Trader's bids, say) for
// the solver, the twin of agents/solvers/matrix.py's solve_matrix_game. The row player picks a
// row and the column player a column without seeing it; the row player gets payoff[i][j].
#pragma once

#include <vector>

namespace psygym {

// The value of the game to the row player (who maximises). `payoff` is row-major, rows x cols,
// both at least 1. As the reference: a pure saddle point (the best row minimum within 1e-12 of
// the least column maximum) is the best row minimum; otherwise the linear program's optimum,
// here by the simplex method on the shifted game (every payoff at least 1).
// Weakly dominated rows and columns are removed first, which keeps the value.
double matrix_game_value(const std::vector<double>& payoff, int rows, int cols);

}  // namespace psygym
