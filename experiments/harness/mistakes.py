"""Which of an agent's decisions cost it most against a fixed opponent, exactly.

``psygym mistakes`` answers it for a perfect-information game that fits a state budget. With
the opponent fixed, the best answer to it is an exact best response (a
:class:`~psygym_agents.solvers.expectiminimax.Solver` with the opponent's decisions as chance
nodes). The agent scores ``v`` against the opponent and the best answer ``b``, so its moves
cost ``b - v`` a game in that seat. That gap splits exactly over the agent's decisions: at each
state it decides, the chance that the pairing reaches it times what its choice gives up there,
``max_a Q(s, a) - sum_a pi(a | s) Q(s, a)``, with ``Q`` the best response's action values (the
agent playing best from the next state on). A decision's cost is that product; the costs sum
to ``b - v``, because each ``Q`` already assumes the best play the agent missed later.

The states of the second half of a secret simultaneous move (``rules.simultaneous_parent``: the
opponent's secret bid is hidden, RT-3.4) are one decision, as the agent sees it: its choices are
worth their mean over the secrets, and their costs add up. Against ``optimal`` on a game that
solves whole the best answer scores the game's value, so a decision's cost is what it loses
against the optimum.

Where the best answer's search is too large (it ranges over every choice of the agent's seat),
``after="agent"`` measures each decision with the agent's own play after it: its cost is then
what changing that decision alone would gain, and the costs no longer add up to a total.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from psygym_agents.solvers import NotSolvable, require_perfect_information
from psygym_agents.solvers.expectiminimax import Solver

from psygym.core import CHANCE, TERMINAL

TIE = 1e-12
"""A choice giving up no more than this is not a mistake (rounding of exact sums)."""
AFTER = ("best", "agent")
"""Who plays the agent's seat after a decision in the values it is measured by."""


@dataclass(frozen=True)
class Choice:
    """One action at a decision: its label, the agent's probability and its value ``Q``."""

    action: int
    label: str
    probability: float
    value: float


@dataclass
class Decision:
    """A decision of the agent that gives something up, with what it cost.

    Attributes:
        cost: points a game it costs the agent (reach times what it gives up).
        reach: chance that a game of the pairing reaches it.
        gives_up: points the agent's choice gives up there (the best value minus its own).
        board: the board as the agent sees it (``rules.render``).
        chosen: the agent's actions with their probabilities and values.
        best: the best action and its value.
        state: one state of the decision (the first reached).
    """

    cost: float
    reach: float
    gives_up: float
    board: str
    chosen: list[Choice]
    best: Choice
    state: Hashable


@dataclass
class SeatReview:
    """The agent in one seat against the fixed opponent, exact.

    Attributes:
        seat: the agent's player index.
        score: the agent's expected final score from its own side's view.
        best_response: what the best answer to the opponent scores in that seat (``None``
            when the decisions were measured with the agent's own play after them).
        cost: ``best_response - score``: points a game the agent's decisions cost it
            (``None`` likewise).
        decisions: every decision that gives something up, costliest first.
        states: states of the pairing's tree (decisions and chance, terminals included).
    """

    seat: int
    score: float
    best_response: float | None
    cost: float | None
    decisions: list[Decision] = field(default_factory=list)
    states: int = 0


def _children(rules: Any, state: Hashable, policies: list[Any]) -> list[tuple[Hashable, float]]:
    """The states after ``state`` with their probabilities under chance and the two policies."""
    player = rules.current_player(state)
    if player == TERMINAL:
        return []
    if player == CHANCE:
        pairs = rules.chance_outcomes(state)
    else:
        pairs = policies[player].action_probabilities(rules, state, player).items()
    return [(rules.apply(state, a, check=False), float(p)) for a, p in pairs if p > 0]


def pairing_tree(
    rules: Any, policies: list[Any], max_states: int, on_state: Callable[[], None] | None = None
) -> tuple[list[Hashable], dict[Hashable, list[tuple[Hashable, float]]]]:
    """Every state the pairing reaches, parents before children, and each one's children.

    Raises:
        NotSolvable: more than ``max_states`` states.
    """
    root = rules.initial_state()
    kids: dict[Hashable, list[tuple[Hashable, float]]] = {}
    post: list[Hashable] = []
    stack: list[tuple[Hashable, int]] = [(root, 0)]
    while stack:
        state, i = stack.pop()
        if i == 0:
            if state in kids:
                continue
            if len(kids) >= max_states:
                raise NotSolvable(
                    f"the pairing reaches more than {max_states:,} states (--max-states)"
                )
            kids[state] = _children(rules, state, policies)
            if on_state is not None:
                on_state()
        children = kids[state]
        if i < len(children):
            stack.append((state, i + 1))
            child = children[i][0]
            if child not in kids:
                stack.append((child, 0))
        else:
            post.append(state)
    post.reverse()
    return post, kids


class _Memo:
    """A policy whose distributions are asked once per state (the agent may search for each)."""

    def __init__(self, policy: Any):
        self.policy, self.name = policy, getattr(policy, "name", "agent")
        self._seen: dict[tuple[Hashable, int], dict[int, float]] = {}

    def action_probabilities(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """The wrapped policy's distribution, remembered."""
        key = (state, player)
        if key not in self._seen:
            self._seen[key] = dict(self.policy.action_probabilities(rules, state, player))
        return self._seen[key]


class _Group:
    """The states of one decision as the agent sees it, weighted by how often each is reached.

    Where the agent cannot tell states apart (a hidden secret bid), a choice is worth its
    values' mean over them, so what the decision gives up is measured on those means.
    """

    def __init__(self, state: Hashable, probs: dict[int, float]):
        self.state, self.probs = state, probs
        self.reach, self.own = 0.0, 0.0
        self.q: dict[int, float] = {}

    def add(self, reach: float, q: dict[int, float]) -> None:
        """One more state of the decision, reached with probability ``reach``."""
        self.reach += reach
        self.own += reach * sum(p * q[a] for a, p in self.probs.items())
        for a, v in q.items():
            self.q[a] = self.q.get(a, 0.0) + reach * v

    def decision(self, rules: Any, seat: int) -> Decision | None:
        """The decision and its cost, or ``None`` if the agent's choice gives nothing up."""
        top = max(self.q.values())
        cost = top - self.own
        if cost <= TIE * max(1.0, abs(top)):
            return None
        value = {a: v / self.reach for a, v in self.q.items()}
        label, s = rules.action_label, self.state
        best = min(a for a, v in self.q.items() if v >= top - TIE * max(1.0, abs(top)))
        chosen = [Choice(a, label(s, a), float(p), value[a])
                  for a, p in sorted(self.probs.items(), key=lambda t: -t[1]) if p > 0]  # fmt: skip
        return Decision(
            cost=cost, reach=self.reach, gives_up=cost / self.reach,
            board=rules.render(s, seat), chosen=chosen,
            best=Choice(best, label(s, best), float(self.probs.get(best, 0.0)), value[best]),
            state=s,
        )  # fmt: skip


def review_seat(
    rules: Any,
    agent: Any,
    opponent: Any,
    seat: int,
    *,
    max_states: int,
    after: str = "best",
    on_state: Callable[[], None] | None = None,
    on_solve: Callable[[int], None] | None = None,
) -> SeatReview:
    """What the agent's decisions in ``seat`` cost it against ``opponent``, decision by decision.

    ``after`` says who plays the agent's seat after each decision in the values ``Q`` a choice
    is measured by: ``"best"``, the best answer to the opponent (the costs then add up to
    :attr:`SeatReview.cost`), or ``"agent"``, the agent itself (a decision's cost is then what
    changing that decision alone would gain; far fewer states where the best answer does not
    fit). ``on_state`` is called for each state of the pairing's tree, ``on_solve`` with the
    states of the search for ``Q`` every 10,000.

    Raises:
        ValueError: ``after`` is neither.
        NotSolvable: hidden hands, or more than ``max_states`` states in the pairing's tree or
            the search for ``Q``.
    """
    if after not in AFTER:
        raise ValueError(f"after must be one of {', '.join(AFTER)}, not {after!r}")
    require_perfect_information(rules)
    memo = _Memo(agent)
    policies = [memo, opponent] if seat == 0 else [opponent, memo]
    order, kids = pairing_tree(rules, policies, max_states, on_state)
    sign = 1.0 if seat == 0 else -1.0
    value: dict[Hashable, float] = {}
    for state in reversed(order):
        children = kids[state]
        value[state] = (sum(p * value[c] for c, p in children) if children
                        else rules.returns(state)[0])  # fmt: skip
    reach: dict[Hashable, float] = dict.fromkeys(order, 0.0)
    reach[order[0]] = 1.0
    for state in order:
        for child, p in kids[state]:
            reach[child] += reach[state] * p
    response = None
    if after == "best":
        judge = Solver(rules, max_states=max_states, fixed={1 - seat: opponent},
                       on_progress=on_solve)  # fmt: skip
        try:
            response = sign * judge.value(order[0]) + 0.0  # + 0.0: no -0.0
        except NotSolvable:
            raise NotSolvable(
                f"the best answer to the opponent needs more than {max_states:,} states "
                "(--max-states); --after agent needs fewer"
            ) from None
    else:
        judge = Solver(rules, max_states=max_states, fixed={seat: memo, 1 - seat: opponent},
                       on_progress=on_solve)  # fmt: skip
    groups: dict[Hashable, _Group] = {}
    for state in order:
        if rules.current_player(state) != seat or reach[state] <= 0:
            continue
        try:
            q = judge.action_values(state)  # the agent's view
        except NotSolvable:
            raise NotSolvable(
                f"the values of the agent's choices need more than {max_states:,} states "
                "(--max-states)"
            ) from None
        # The second half of a secret simultaneous move: one decision whatever the secret.
        origin = rules.simultaneous_parent(state)
        key = state if origin is None else ("secret", origin)
        g = groups.setdefault(key, _Group(state, memo.action_probabilities(rules, state, seat)))
        g.add(reach[state], q)
    decisions = [d for g in groups.values() if (d := g.decision(rules, seat)) is not None]
    score = sign * value[order[0]] + 0.0
    decisions.sort(key=lambda d: -d.cost)
    cost = None if response is None else response - score
    return SeatReview(seat, score, response, cost, decisions, len(order))


__all__ = ["AFTER", "Choice", "Decision", "SeatReview", "TIE", "pairing_tree", "review_seat"]
