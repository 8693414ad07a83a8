"""Exact solvers: expectiminimax, best responses, policy evaluation, matrix games, search.

Toy games with hand-computed values; the real editions are in ``test_solvers_on_editions.py``.
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import psygym_agents.solvers as solvers_package
import pytest
from helpers import TINY_SEVENTH, rules_from
from psygym_agents.base import DeterministicPolicy, RandomPolicy
from psygym_agents.solvers import NotSolvable
from psygym_agents.solvers.evaluate import best_response_value, exploitability, policy_value
from psygym_agents.solvers.expectiminimax import Solver
from psygym_agents.solvers.matrix import solve_matrix_game
from psygym_agents.solvers.policy import OptimalPolicy, make_optimal, parse_options

from psygym.core import CHANCE, TERMINAL, ActionView, RulesBase
from psygym.edition import ids


# ----------------------------------------------------------------------------- toy games
@dataclass(frozen=True, slots=True)
class Toy:
    """State of the toy games: a node name and the score so far."""

    node: str
    score: float = 0.0
    total: int = 0
    rolls: int = 0


class CoinGame(RulesBase):
    """Player 0: SAFE (+0.4, end) or GAMBLE. GAMBLE flips a fair coin.

    Heads: player 1 CONCEDEs (+1 to player 0) or FIGHTs (a 60% chance of +3, else -1).
    Tails: 0. Hand value: FIGHT is worth 0.6*3 - 0.4 = 1.4, so player 1 concedes (1);
    GAMBLE = 0.5*1 + 0.5*0 = 0.5 > SAFE 0.4. Game value 0.5, best action GAMBLE.
    Against a player 1 that always FIGHTs: GAMBLE = 0.5*1.4 = 0.7.
    """

    edition = "toy"
    num_actions = 2
    observation_size = 1

    def initial_state(self) -> Toy:
        return Toy("p0")

    def current_player(self, s: Toy) -> int:
        return {"p0": 0, "coin": CHANCE, "p1": 1, "fight": CHANCE}.get(s.node, TERMINAL)

    def legal_actions(self, s: Toy) -> list[int]:
        return [0, 1] if s.node in ("p0", "p1") else []

    def chance_outcomes(self, s: Toy) -> list[tuple[int, float]]:
        return [(0, 0.5), (1, 0.5)] if s.node == "coin" else [(0, 0.4), (1, 0.6)]

    def _apply(self, s: Toy, a: int):
        if s.node == "p0":
            return (Toy("end", 0.4) if a == 0 else Toy("coin")), ()
        if s.node == "coin":
            return (Toy("p1") if a == 1 else Toy("end", 0.0)), ()
        if s.node == "p1":
            return (Toy("end", 1.0) if a == 0 else Toy("fight")), ()
        return Toy("end", 3.0 if a == 1 else -1.0), ()

    def returns(self, s: Toy) -> tuple[float, float]:
        return (s.score, -s.score)

    def observe(self, s: Toy, player: int) -> np.ndarray:
        return np.zeros(1, dtype=np.float32)

    def describe(self, s: Toy, a: int) -> ActionView:
        return ActionView(label=f"{s.node}:{a}")


BUST = -10


class DiceGame(RulesBase):
    """Roll a D6 up to three times, adding the faces, or stop; a 1 busts (score -10).

    Player 0 decides; player 1 never moves (the score is zero-sum all the same).
    """

    edition = "toy"
    num_actions = 2
    observation_size = 1

    def initial_state(self) -> Toy:
        return Toy("decide")

    def current_player(self, s: Toy) -> int:
        return {"decide": 0, "roll": CHANCE}.get(s.node, TERMINAL)

    def legal_actions(self, s: Toy) -> list[int]:
        return [0, 1] if s.node == "decide" else []

    def chance_outcomes(self, s: Toy) -> list[tuple[int, float]]:
        return [(f, 1 / 6) for f in range(1, 7)]

    def _apply(self, s: Toy, a: int):
        if s.node == "decide":
            if a == 0:
                return Toy("end", float(s.total), s.total, s.rolls), ()
            return Toy("roll", 0.0, s.total, s.rolls), ()
        if a == 1:
            return Toy("end", float(BUST), 0, s.rolls + 1), ()
        total, rolls = s.total + a, s.rolls + 1
        node = "decide" if rolls < 3 else "end"
        return Toy(node, float(total) if node == "end" else 0.0, total, rolls), ()

    def returns(self, s: Toy) -> tuple[float, float]:
        return (s.score, -s.score)

    def observe(self, s: Toy, player: int) -> np.ndarray:
        return np.zeros(1, dtype=np.float32)

    def describe(self, s: Toy, a: int) -> ActionView:
        return ActionView(label=f"{s.node}:{a}")


def dice_game_value(total: int = 0, rolls: int = 0) -> Fraction:
    """The dice game's value by hand (exact fractions, written independently of the solver)."""
    if rolls == 3:
        return Fraction(total)
    roll = Fraction(BUST, 6) + sum(
        (dice_game_value(total + f, rolls + 1) / 6 for f in range(2, 7)), Fraction(0)
    )
    return max(Fraction(total), roll)


class Always(DeterministicPolicy):
    """Always the given action."""

    def __init__(self, action: int):
        self.name = f"always-{action}"
        self.action = action

    def choose(self, rules, state, player) -> int:
        return self.action


def test_coin_game_value_and_best_action():
    rules = CoinGame()
    solver = Solver(rules)
    assert solver.value() == pytest.approx(0.5)
    assert solver.best_action(rules.initial_state()) == (1, pytest.approx(0.5))
    assert solver.action_values(rules.initial_state()) == {
        0: pytest.approx(0.4),
        1: pytest.approx(0.5),
    }
    # Player 1's view at its node: conceding costs it 1, fighting 1.4.
    assert solver.action_values(Toy("p1")) == {0: pytest.approx(-1.0), 1: pytest.approx(-1.4)}
    assert solver.best_action(Toy("p1"))[0] == 0
    assert solver.exact and solver.states == 4  # p0, coin, p1, fight


def test_coin_game_best_response_and_policy_value():
    rules = CoinGame()
    fighter = Always(1)
    # Against a player 1 that always fights, gambling is worth 0.5*1.4 = 0.7.
    assert best_response_value(rules, fighter, 1) == pytest.approx(0.7)
    # Player 0 fixed to SAFE: 0.4 whatever player 1 does.
    assert best_response_value(rules, Always(0), 0) == pytest.approx(0.4)
    assert policy_value(rules, [Always(1), fighter]) == pytest.approx(0.7)
    assert policy_value(rules, [Always(1), Always(0)]) == pytest.approx(0.5)
    # Uniform random for both: 0.5*0.4 + 0.5*(0.5*(0.5*1 + 0.5*1.4)) = 0.5.
    assert policy_value(rules, [RandomPolicy(), RandomPolicy()]) == pytest.approx(0.5)
    # Exploitability of the optimal policy is 0; of always-SAFE/CONCEDE: seat 0 gives up
    # 0.5 - 0.4, seat 1 loses nothing (conceding is optimal) -> 0.05.
    assert exploitability(rules, OptimalPolicy(rules)) == pytest.approx(0.0, abs=1e-12)
    assert exploitability(rules, Always(0)) == pytest.approx(0.05)


def test_dice_game_value_matches_hand_calculation():
    rules = DiceGame()
    solver = Solver(rules)
    expected = dice_game_value()
    assert solver.value() == pytest.approx(float(expected), abs=1e-12)
    # With 10 or more after two rolls, stop (rolling is worth (5t + 10)/6 < t).
    assert solver.best_action(Toy("decide", 0.0, 10, 2))[0] == 0
    assert solver.best_action(Toy("decide", 0.0, 9, 2))[0] == 1
    assert solver.best_action(rules.initial_state()) == (1, pytest.approx(float(expected)))


def test_depth_limits_cut_and_say_so():
    rules = DiceGame()
    solver = Solver(rules, max_plies=2)  # decide -> roll -> leaf valued at the score so far
    # Rolling once and stopping there: (BUST + 0*5)/6 with a score of 0 until the end.
    assert solver.value() == pytest.approx(max(0.0, BUST / 6))
    assert not solver.exact
    assert Solver(rules).exact


def test_max_states_raises_not_solvable():
    with pytest.raises(NotSolvable, match="more than 3 states"):
        Solver(DiceGame(), max_states=3).value()


def test_deep_game_does_not_hit_the_recursion_limit():
    class Chain(DiceGame):
        """A 3000-ply chain of coin flips: the explicit stack must cope."""

        def initial_state(self) -> Toy:
            return Toy("flip", 0.0, 0, 0)

        def current_player(self, s: Toy) -> int:
            return CHANCE if s.rolls < 3000 else TERMINAL

        def chance_outcomes(self, s: Toy) -> list[tuple[int, float]]:
            return [(0, 0.5), (1, 0.5)]

        def _apply(self, s: Toy, a: int):
            return Toy("flip", float(min(s.total + a, 1)), min(s.total + a, 1), s.rolls + 1), ()

    solver = Solver(Chain())
    assert solver.value() == pytest.approx(1.0 - 0.5**3000)


# ----------------------------------------------------------------------------- the lean search
class CountingDice(DiceGame):
    """DiceGame with an ``apply`` of its own that records every transition the solver makes.

    ``apply_with_events`` is counted separately: the exact search must not need events.
    """

    def __init__(self):
        self.applied: list[tuple[Toy, int]] = []
        self.with_events = 0

    def apply(self, state, action, *, check=True):
        self.applied.append((state, action))
        return self._apply(state, int(action))[0]

    def apply_with_events(self, state, action, *, check=True):
        self.with_events += 1
        return super().apply_with_events(state, action, check=check)


def dice_game_edges(rules: DiceGame) -> set[tuple[Toy, int]]:
    """Every (state, action) transition below the initial state, by plain enumeration."""
    edges, seen, todo = set(), set(), [rules.initial_state()]
    while todo:
        s = todo.pop()
        player = rules.current_player(s)
        if player == TERMINAL or s in seen:
            continue
        seen.add(s)
        moves = (
            [o for o, _ in rules.chance_outcomes(s)] if player == CHANCE else rules.legal_actions(s)
        )
        for a in moves:
            edges.add((s, a))
            todo.append(rules._apply(s, a)[0])
    return edges


def test_exact_search_applies_each_transition_once_without_events():
    rules = CountingDice()
    assert Solver(rules).value() == pytest.approx(float(dice_game_value()))
    assert rules.with_events == 0  # rules.apply only: no events built in the exact search
    assert len(rules.applied) == len(set(rules.applied))  # no transition made twice
    assert set(rules.applied) == dice_game_edges(rules)
    # A depth-limited search needs the events (where a new Psychic phase starts).
    Solver(rules, max_depth=1).value()
    assert rules.with_events > 0


def general_memo(rules, **kwargs) -> tuple[float, list, bool]:
    """Value, memo (in order) and exactness from the general loop (the matrix-game one)."""
    solver = Solver(rules, **kwargs)
    root = solver._root_key(rules.initial_state())
    solver._solve_general(root)
    return solver.cache.values[root], list(solver.cache.values.items()), solver.exact


def lean_memo(rules, **kwargs) -> tuple[float, list, bool]:
    # The Python search's own loop (the compiled solver keeps its memo to itself; its values
    # and state counts are held equal to these by tests/test_engine_core.py).
    solver = Solver(rules, engine="python", **kwargs)
    return solver.value(), list(solver.cache.values.items()), solver.exact


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"max_plies": 4}, {"max_depth": 1, "max_plies": 7}, {"fixed": {1: RandomPolicy()}}],
    ids=["exact", "plies", "depth+plies", "fixed"],
)
def test_lean_search_equals_the_general_loop_to_the_last_bit(kwargs):
    rules = rules_from(tomllib.loads(TINY_SEVENTH))
    lean, general = lean_memo(rules, **kwargs), general_memo(rules, **kwargs)
    # The same values (==, not approx), the same states memoised in the same order.
    assert lean == general
    assert len(lean[1]) > 20


def test_simultaneous_info_is_asked_only_where_the_rules_define_it():
    rules = DiceGame()
    assert Solver(rules)._sim_info is None  # RulesBase's default: never a simultaneous move
    calls = []
    rules.simultaneous_info = lambda s: calls.append(s)  # defined (answers None: no such move)
    assert Solver(rules).value() == pytest.approx(float(dice_game_value()))
    assert Toy("decide") in calls


def test_solvers_are_edition_blind():
    """No edition id in any string of agents/solvers/, no private method of a rules object."""
    word = re.compile(r"\b(" + "|".join(re.escape(i) for i in ids()) + r")\b", re.IGNORECASE)
    files = sorted(Path(solvers_package.__file__).parent.glob("*.py"))
    assert len(files) >= 6
    found = []
    for f in files:
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if word.search(node.value):
                    found.append(f"{f.name}:{node.lineno}: {word.search(node.value)[0]!r}")
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and (
                    (isinstance(node.value, ast.Name) and node.value.id == "rules")
                    or (isinstance(node.value, ast.Attribute) and node.value.attr == "rules")
                )
            ):
                found.append(f"{f.name}:{node.lineno}: rules.{node.attr}")
    assert found == []


# ----------------------------------------------------------------------------- matrix games
def test_matching_pennies_lp():
    value, row, col = solve_matrix_game([[1, -1], [-1, 1]])
    assert value == pytest.approx(0.0, abs=1e-9)
    assert row == pytest.approx([0.5, 0.5])
    assert col == pytest.approx([0.5, 0.5])


def test_mixed_two_by_two_lp():
    # [[3, -1], [-2, 1]]: value (3*1 - (-1)(-2)) / (3 + 1 + 2 + 1) = 1/7, row (3/7, 4/7),
    # column (2/7, 5/7).
    value, row, col = solve_matrix_game([[3, -1], [-2, 1]])
    assert value == pytest.approx(1 / 7)
    assert row == pytest.approx([3 / 7, 4 / 7])
    assert col == pytest.approx([2 / 7, 5 / 7])


def test_saddle_point_and_bad_matrix():
    value, row, col = solve_matrix_game([[2, 3], [1, 0]])
    assert value == 2 and list(row) == [1, 0] and list(col) == [1, 0]
    with pytest.raises(ValueError, match="2-D"):
        solve_matrix_game([])


@dataclass(frozen=True)
class Bid:
    """Row and column moves of the simultaneous toy game."""

    row_player: int
    row_actions: list[int]
    col_player: int
    col_actions: list[int]


class PenniesGame(CoinGame):
    """Player 0 picks a penny face, then player 1 picks without seeing it.

    simultaneous_info says so; the payoff is [[3, -1], [-2, 1]] (value 1/7).
    """

    PAY = {(0, 0): 3.0, (0, 1): -1.0, (1, 0): -2.0, (1, 1): 1.0}

    def initial_state(self) -> Toy:
        return Toy("row")

    def current_player(self, s: Toy) -> int:
        if s.node == "row":
            return 0
        return 1 if s.node.startswith("col") else TERMINAL

    def legal_actions(self, s: Toy) -> list[int]:
        return [0, 1] if s.node == "row" or s.node.startswith("col") else []

    def _apply(self, s: Toy, a: int):
        if s.node == "row":
            return Toy(f"col{a}"), ()
        return Toy("end", self.PAY[(int(s.node[3]), a)]), ()

    def simultaneous_info(self, s: Toy) -> Bid | None:
        return Bid(0, [0, 1], 1, [0, 1]) if s.node == "row" else None


def test_simultaneous_node_is_a_matrix_game():
    rules = PenniesGame()
    solver = Solver(rules)
    assert solver.value() == pytest.approx(1 / 7)
    assert solver.strategy(rules.initial_state()) == {
        0: pytest.approx(3 / 7),
        1: pytest.approx(4 / 7),
    }
    # The column player's strategy does not depend on the row the state secretly holds.
    for node in ("col0", "col1"):
        assert solver.strategy(Toy(node)) == {0: pytest.approx(2 / 7), 1: pytest.approx(5 / 7)}
    policy = OptimalPolicy(rules)
    assert policy.action_probabilities(rules, Toy("col1"), 1)[1] == pytest.approx(5 / 7)
    # Pure rows: row 0 guarantees -1, row 1 guarantees -2.
    assert solver.action_values(rules.initial_state()) == {
        0: pytest.approx(-1.0),
        1: pytest.approx(-2.0),
    }


class Mixed:
    """A fixed mixed policy over actions 0 and 1."""

    name = "mixed"

    def __init__(self, p0: float):
        self.p0 = p0

    def action_probabilities(self, rules, state, player):
        return {0: self.p0, 1: 1 - self.p0}


def test_best_responses_at_a_simultaneous_node_do_not_see_the_secret():
    rules = PenniesGame()
    # Row fixed at (0.9, 0.1): the column player cannot see the draw, so it picks one column:
    # column 0 gives 0.9*3 - 0.1*2 = 2.5, column 1 gives -0.9 + 0.1 = -0.8 -> -0.8.
    assert best_response_value(rules, Mixed(0.9), 0) == pytest.approx(-0.8)
    # Column fixed at (0.5, 0.5): row 0 gives 1, row 1 gives -0.5 -> 1.
    assert best_response_value(rules, Mixed(0.5), 1) == pytest.approx(1.0)
    assert policy_value(rules, [Mixed(0.9), Mixed(0.5)]) == pytest.approx(0.9 * 1 + 0.1 * -0.5)
    # The equilibrium mixes are unexploitable: both best responses give the value 1/7.
    assert best_response_value(rules, Mixed(3 / 7), 0) == pytest.approx(1 / 7)
    assert best_response_value(rules, Mixed(2 / 7), 1) == pytest.approx(1 / 7)


# ----------------------------------------------------------------------------- policy / options
def test_parse_options():
    assert parse_options(None) == {}
    assert parse_options("2") == {"depth": 2}
    assert parse_options("depth=1, states=500") == {"depth": 1, "states": 500}
    with pytest.raises(ValueError, match="unknown option"):
        parse_options("speed=3")
    with pytest.raises(ValueError, match="whole number"):
        parse_options("depth=x")


def test_optimal_policy_shares_its_cache_per_rules():
    rules = DiceGame()
    a, b = OptimalPolicy(rules), OptimalPolicy(rules)
    assert a.solver is b.solver
    assert a.action_probabilities(rules, rules.initial_state(), 0) == {1: 1.0}
    states = a.solver.states
    b.action_probabilities(rules, rules.initial_state(), 0)
    assert b.solver.states == states  # nothing solved twice
    assert OptimalPolicy(DiceGame()).solver is not a.solver


def test_optimal_policy_falls_back_to_search_when_too_large(capsys):
    import warnings

    from psygym_agents.solvers.policy import _ANNOUNCED

    rules = DiceGame()
    assert make_optimal(rules).auto and make_optimal(rules).exact
    _ANNOUNCED.discard((rules.edition, ""))
    policy = OptimalPolicy(rules, auto=True, max_states=2)  # as if the game were too large
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one plain line, no Python warning
        probs = policy.action_probabilities(rules, rules.initial_state(), 0)
        policy.action_probabilities(rules, rules.initial_state(), 0)
    assert set(probs) <= {0, 1} and not policy.exact
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "playing search" in err and "states" in err
    assert "/" not in err and ".py" not in err  # no file path
