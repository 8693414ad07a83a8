"""Secret simultaneous moves in search: limits never split them and nobody sees the secret.

Toy games check the solver's handling of every shape a row action may lead to and its use of
the optional ``rules.simultaneous_parent`` hook; Rogue Trader's secret bids (RT-3.4) check the
``optimal`` agent: a depth- or ply-limited search, and a defender that never reads the
attacker's bid held in the state.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
from psygym_agents.solvers.expectiminimax import Solver
from psygym_agents.solvers.matrix import solve_matrix_game
from psygym_agents.solvers.policy import AUTO_PLIES, make_optimal
from psygym_experiments.cli import app
from typer.testing import CliRunner

from psygym.core import CHANCE, TERMINAL, ActionView, RulesBase, SimultaneousMove, play_game
from psygym.editions import load
from psygym.policies import reference_policy

PAY = {(0, 0): 3.0, (0, 1): -1.0, (1, 0): -2.0, (1, 1): 1.0}
"""Player 0's payoff (rows 0-1, columns 0-1): value 1/7, mixes ``ROW_MIX`` and ``COL_MIX``."""
ROW_MIX = {0: 3 / 7, 1: 4 / 7}
COL_MIX = {0: 2 / 7, 1: 5 / 7}


@dataclass(frozen=True)
class Node:
    """A state of :class:`SecretGame`: its kind, the row chosen so far, the score."""

    kind: str
    row: int = -1
    score: float = 0.0


class SecretGame(RulesBase):
    """``lead`` forced moves of player 0, then secret bids: rows 0-1 by player 0, columns by 1.

    Variants of the row player's third row (``third``): ``None`` (no third row), ``"end"``
    (the game ends at +0.5), ``"chance"`` (a coin comes between the halves: not a legal
    simultaneous move). With ``bonus`` a fair coin after the columns adds 1 or 0.
    """

    edition = "toy"
    num_actions = 3
    observation_size = 1

    def __init__(self, lead: int = 0, third: str | None = None, bonus: bool = False):
        self.lead, self.third, self.bonus = lead, third, bonus

    def initial_state(self) -> Node:
        return Node("lead", 0) if self.lead else Node("row")

    def current_player(self, s: Node) -> int:
        if s.kind in ("lead", "row"):
            return 0
        if s.kind == "col":
            return 1
        return CHANCE if s.kind in ("coin", "bonus") else TERMINAL

    def legal_actions(self, s: Node) -> list[int]:
        if s.kind == "lead":
            return [0]
        if s.kind == "row":
            return [0, 1, 2] if self.third else [0, 1]
        return [0, 1] if s.kind == "col" else []

    def chance_outcomes(self, s: Node) -> list[tuple[int, float]]:
        return [(0, 0.5), (1, 0.5)]

    def _apply(self, s: Node, a: int):
        if s.kind == "lead":
            return (Node("lead", s.row + 1) if s.row + 1 < self.lead else Node("row")), ()
        if s.kind == "row":
            if a == 2:
                return (Node("end", score=0.5) if self.third == "end" else Node("coin")), ()
            return Node("col", a), ()
        if s.kind == "col":
            pay = PAY[(s.row, a)]
            return (Node("bonus", score=pay) if self.bonus else Node("end", score=pay)), ()
        if s.kind == "coin":
            return Node("col", a), ()
        return Node("end", score=s.score + a), ()

    def returns(self, s: Node) -> tuple[float, float]:
        return (s.score, -s.score)

    def observe(self, s: Node, player: int) -> np.ndarray:
        return np.zeros(1, dtype=np.float32)

    def describe(self, s: Node, a: int) -> ActionView:
        return ActionView(label=f"{s.kind}:{a}")

    def is_response(self, s: Node) -> bool:
        return s.kind == "col"

    def simultaneous_info(self, s: Node) -> SimultaneousMove | None:
        if s.kind != "row":
            return None
        rows = self.legal_actions(s)
        return SimultaneousMove(0, rows, 1, [0, 1], lambda r, c: self.apply(self.apply(s, r), c))


class SecretGameWithParent(SecretGame):
    """:class:`SecretGame` whose rules name the node where a column decision's pair began."""

    def simultaneous_parent(self, s: Node) -> Node | None:
        return Node("row") if s.kind == "col" else None


def approx(mix: dict[int, float]) -> dict[int, object]:
    return {a: pytest.approx(p, abs=1e-9) for a, p in mix.items()}


# ----------------------------------------------------------------------------- toy games
def test_a_ply_limit_counts_the_two_halves_as_one_ply():
    # max_plies=1 used to cut after the row's half (a ValueError): now the pair is the ply.
    solver = Solver(SecretGame(), max_plies=1)
    assert solver.value() == pytest.approx(1 / 7)
    assert solver.exact  # the column's half ends the game: no leaf was cut
    # With a coin after the pair: one ply stops before the coin (score so far), two reach it.
    game = SecretGame(bonus=True)
    one = Solver(game, max_plies=1)
    assert one.value() == pytest.approx(1 / 7) and not one.exact
    two = Solver(game, max_plies=2)
    assert two.value() == pytest.approx(1 / 7 + 0.5) and two.exact
    assert Solver(game).value() == pytest.approx(1 / 7 + 0.5)


def test_a_row_action_that_ends_the_game_is_a_constant_row():
    game = SecretGame(third="end")
    matrix = [[3.0, -1.0], [-2.0, 1.0], [0.5, 0.5]]
    lp_value, _, _ = solve_matrix_game(matrix)
    for solver in (Solver(game), Solver(game, max_plies=1)):
        assert solver.value() == pytest.approx(lp_value)
        assert solver.value() == pytest.approx(0.5)  # the sure +0.5 beats every mix (1/7)
        assert solver.strategy(game.initial_state()) == approx({2: 1.0})


def test_a_chance_node_between_the_halves_breaks_the_contract():
    with pytest.raises(ValueError, match="neither the end of the game nor"):
        Solver(SecretGame(third="chance")).value()


@pytest.mark.parametrize("limits", [{}, {"max_plies": 2}, {"max_depth": 1}])
def test_the_second_mover_plays_the_matrix_mix_whatever_the_secret(limits):
    game = SecretGameWithParent(lead=4)  # plies=2 from the start never reaches the bids
    seen = []
    for row in (0, 1):
        solver = Solver(game, **limits)  # fresh: nothing learnt from the other secret
        state = Node("col", row)
        seen.append((solver.strategy(state), solver.action_values(state)))
        assert not solver.cache.root_solved  # the hook found the node: no whole-game solve
        assert solver.strategy(Node("row")) == approx(ROW_MIX)
    for strategy, values in seen:
        assert strategy == approx(COL_MIX)
        # Against the row mix (3/7, 4/7): column 0 scores 3*3/7 - 2*4/7 = 1/7 for player 0,
        # column 1 scores -3/7 + 4/7 = 1/7 (player 1's view: -1/7 each).
        assert values == approx({0: -1 / 7, 1: -1 / 7})


def test_without_the_hook_a_limited_search_warns_that_it_sees_the_secret():
    game = SecretGame(lead=4)
    picks = []
    for row in (0, 1):
        solver = Solver(game, max_plies=2)
        with pytest.warns(RuntimeWarning, match="simultaneous_parent"):
            picks.append(solver.strategy(Node("col", row)))
    # What the hook prevents: each reply is the best answer to the row it was shown.
    assert picks == [{1: 1.0}, {0: 1.0}]
    # The exact search finds the node from the initial state, hook or not.
    exact = Solver(game)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert exact.strategy(Node("col", 0)) == approx(COL_MIX)
    assert exact.cache.root_solved


def test_a_wrong_parent_from_the_hook_is_an_error():
    class NotTheNode(SecretGame):
        def simultaneous_parent(self, s: Node) -> Node | None:
            return Node("lead", 0) if s.kind == "col" else None

    with pytest.raises(ValueError, match="not a simultaneous move"):
        Solver(NotTheNode(lead=2)).strategy(Node("col", 0))

    class NoSuchChild(SecretGameWithParent):
        def legal_actions(self, s: Node) -> list[int]:
            return [0, 1] if s.kind == "col" else super().legal_actions(s)

    with pytest.raises(ValueError, match="none of whose row actions"):
        Solver(NoSuchChild()).strategy(Node("col", 7))


# ----------------------------------------------------------------------------- Rogue Trader
def rt_rules(scenario: str = "duel"):
    """Rogue Trader rules (they define ``simultaneous_parent``, RT-3.4)."""
    rules = load("rt", scenario)
    assert type(rules).simultaneous_parent is not RulesBase.simultaneous_parent
    return rules


def _secret_bid_node(rules, seed: int):
    """The first attacker's bid node from turn 4 on where both sides choose (a seeded walk).

    From turn 4 on, a 3-phase search from the initial state cannot reach it.
    """
    rng = np.random.default_rng(seed)
    s = rules.initial_state()
    while not (s.turn >= 3 and rules.simultaneous_info(s) is not None):
        assert not rules.is_terminal(s), "no secret bid from turn 4 on in this walk"
        if rules.current_player(s) == CHANCE:
            s = rules.apply(s, rules.sample_chance(s, rng))
        else:
            legal = rules.legal_actions(s)
            s = rules.apply(s, legal[int(rng.integers(len(legal)))])
    return s


@pytest.mark.parametrize(
    ("seed", "mixed"),
    [(3, False), (14, True)],  # turn 4: 8 bids x 5, a pure reply; 6 bids x 13, a mix of two
)
def test_rogue_trader_defender_bid_does_not_depend_on_the_hidden_bid(seed, mixed):
    """RT-3.4: the target's bid at ``optimal:depth=3`` is the same whatever the secret bid.

    Before the fix the depth-limited search valued the target's bid knowing the attacker's:
    three different pure replies at the first position, and a reply that sees the bid is
    always pure, never the mix of the second.
    """
    node = _secret_bid_node(rt_rules(), seed)
    info = rt_rules().simultaneous_info(node)
    answers = []
    for bid in info.row_actions:
        rules = rt_rules()  # a fresh solver for each hidden bid: nothing carried over
        policy = make_optimal(rules, "depth=3")
        mid = rules.apply(node, bid)
        assert mid.attack_bid == bid - rules.number_base  # the secret is in the state
        probs = policy.action_probabilities(rules, mid, info.col_player)
        assert sum(probs.values()) == pytest.approx(1.0)
        assert set(probs) <= set(info.col_actions)
        answers.append(probs)
    for probs in answers[1:]:
        assert probs == approx(answers[0])
    assert (len(answers[0]) > 1) == mixed


def test_rogue_trader_max_plies_5_solves_the_duel():
    solver = Solver(load("rt", "duel"), max_plies=5)
    assert math.isfinite(solver.value()) and not solver.exact
    result = CliRunner().invoke(
        app, ["solve", "--edition", "rt", "--scenario", "duel", "--max-plies", "5"]
    )
    assert result.exit_code == 0, result.output
    assert "exact NO" in result.output and "search 5 plies" in result.output


def _play_both_seats(rules, agent, games: int) -> list[float]:
    """Mean score of ``agent`` against the reference heuristic in seat 0 then seat 1."""
    reference = reference_policy(rules)
    means = []
    for seat in (0, 1):
        total = 0.0
        for i in range(games):
            policies = [agent, reference] if seat == 0 else [reference, agent]
            end = play_game(rules, policies, np.random.default_rng(i))
            assert rules.is_terminal(end)
            total += rules.returns(end)[seat]
        means.append(total / games)
    return means


def test_rogue_trader_psyker_vs_squad_200_games_a_seat_with_the_fallback_search():
    """The search plain ``optimal`` falls back to on this scenario plays every game a seat.

    It used to stop at the first secret bid its 6-ply horizon split.
    """
    rules = rt_rules("psyker-vs-squad")
    means = _play_both_seats(rules, make_optimal(rules, f"plies={AUTO_PLIES}"), 200)
    assert all(math.isfinite(m) for m in means)


@pytest.mark.slow
def test_rogue_trader_psyker_vs_squad_200_games_with_plain_optimal():
    """Plain ``optimal`` on the shipped rules: plays ``search`` (not solvable whole), 200 a seat."""
    rules = load("rt", "psyker-vs-squad")
    agent = make_optimal(rules)
    assert agent.name == "search"
    means = _play_both_seats(rules, agent, 200)
    # not the whole-game solver (late decisions whose rest of the game fits are solved whole)
    assert all(math.isfinite(m) for m in means) and not agent.always_exact
