"""Information-set Monte Carlo tree search for editions with hidden information. NOT exact.

Where hands are secret (``rules.information`` is ``Information.HIDDEN``), expectiminimax over the
true state would let a player see the other hand. :class:`SearchPolicy` instead searches over
*determinisations*: before every iteration it samples a full state consistent with what the
deciding player may know (its own hand and the public table; the other hand is drawn from the cards
it has not seen), then runs one UCT iteration in a tree whose nodes are information sets (the
mover's observation, from ``rules.observe``), with availability counts for actions legal in only
some determinisations (Cowling, Powley & Whitehouse 2012, "Information Set Monte Carlo Tree
Search").

Search horizon: an iteration stops at the start of the next Psychic phase (an ``EventKind.PHASE``
event) or the end of the game, valued by the score then plus, at a phase boundary, ``V(board)``:
the learned value of the board (:class:`psygym_agents.value.BoardValue`, by default the one
shipped for the scenario), the score player 0 can still expect from there. At that boundary no
hand is dealt yet, so the board holds nothing one player knows and the other does not beyond
the determinisation already drawn (the other player's face-down discards). Without a board
value the board after the phase is worth nothing beyond the score. Beyond the tree an
iteration plays uniformly random legal actions (or a given rollout policy).

How a determinisation is drawn: the edition's ``rules.sample_hidden(state, player, rng)`` if it has
one; otherwise, for states with ``hands`` and ``deck`` fields holding card counts, the other
player's hand is redrawn uniformly from the other hand plus the deck (the cards ``player`` has not
seen) and the rest goes back to the deck; otherwise the state is used as it is (nothing hidden).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import numpy as np

from psygym.core import CHANCE, TERMINAL, EventKind, Policy, restart_policies, sample_action
from psygym.kernel import evolve

SHIPPED = "shipped"
"""Default ``value`` of :class:`SearchPolicy`: the board value shipped for the scenario, if any."""


def _counts_draw(
    pool: tuple[int, ...], n: int, rng: np.random.Generator
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Draw ``n`` cards uniformly without replacement from a multiset of counts.

    Returns:
        ``(drawn, left)`` as count tuples.
    """
    cards = np.repeat(np.arange(len(pool)), pool)
    picked = rng.choice(len(cards), size=n, replace=False) if n else np.array([], dtype=int)
    drawn = np.bincount(cards[picked], minlength=len(pool)) if n else np.zeros(len(pool), int)
    left = np.asarray(pool) - drawn
    return tuple(int(x) for x in drawn), tuple(int(x) for x in left)


def determinize(rules: Any, state: Hashable, player: int, rng: np.random.Generator) -> Hashable:
    """A full state drawn from those ``player`` cannot tell apart from ``state``.

    Uses only what ``player`` may know: its own hand and the public table are kept; the other
    hand is resampled from the unseen cards. See the module docstring for the rules used.
    """
    hook = getattr(rules, "sample_hidden", None)
    if hook is not None:
        return hook(state, player, rng)
    hands = getattr(state, "hands", None)
    deck = getattr(state, "deck", None)
    if hands is None or deck is None or len(hands) != 2:
        return state
    other = 1 - player
    size = sum(hands[other])
    unseen = tuple(a + b for a, b in zip(deck, hands[other]))
    drawn, left = _counts_draw(unseen, size, rng)
    new_hands = list(hands)
    new_hands[other] = drawn
    return evolve(state, hands=tuple(new_hands), deck=left)


class SearchPolicy:
    """Information-set MCTS over determinised states. **Not exact**: its choices are estimates.

    The strongest practical search for editions with hidden information (secret hands).

    Args:
        rules: the rules to play.
        iterations: search iterations per decision.
        seed: seed of the generator each decision's search draws from, afresh from its start
            at every decision: a decision is then a function of the state and the seed alone,
            whatever games or decisions this object played before (``evaluate`` gives the
            same numbers whatever ``--workers`` or ``--resume``).
        exploration: UCB exploration constant (scaled by the spread of scores seen); 0.3 was
            the strongest of 0.1, 0.3 and 1.0 on the hidden-hand duel
            (``search.HIDDEN_EXPLORATION``; ``docs/strength.md``).
        horizon_phases: Psychic phases an iteration looks ahead, counting the current one.
        rollout: policy beyond the tree (default: uniformly random legal actions).
        value: the board value added to the score at the horizon (a callable
            ``value(rules, state)`` for player 0, such as a ``BoardValue``); :data:`SHIPPED`:
            the one shipped for the scenario if there is one; ``None``: none.

    Attributes:
        note: one plain sentence on what the values are (estimates, and of what).
    """

    name = "search"
    exact = False

    def __init__(
        self,
        rules: Any,
        *,
        iterations: int = 200,
        seed: int = 0,
        exploration: float = 0.3,
        horizon_phases: int = 1,
        rollout: Policy | None = None,
        value: Any = SHIPPED,
    ):
        if iterations < 1:
            raise ValueError(f"iterations must be at least 1, got {iterations}")
        self.rules = rules
        self.iterations = iterations
        self.exploration = exploration
        self.horizon_phases = max(1, horizon_phases)
        self.rollout = rollout
        self.seed = seed
        if isinstance(value, str) and value == SHIPPED:
            from psygym_agents.value import shipped_value

            value = shipped_value(rules) if getattr(rules, "scenario", None) else None
        self.value = value
        head = f"information-set search, {iterations} iterations (NOT exact: estimates from what "
        if value is None:
            self.note = head + "the player to move may see; the board after the phase counts "
            self.note += "only the score so far)"
        else:
            err = (getattr(value, "meta", None) or {}).get("mc_rmse")
            tail = f", its error on single games about {err:.1f} points" if err else ""
            self.note = head + "the player to move may see; the board after the phase is "
            self.note += f"estimated by a learned value{tail})"

    def restart(self) -> None:
        """A new game starts: restart the rollout policy, if it remembers a game.

        The search itself keeps nothing from one decision to the next (each draws from a
        generator seeded afresh with ``seed``), so no game depends on the games before it.
        """
        if self.rollout is not None:
            restart_policies([self.rollout])

    def action_probabilities(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """The action the search rates best, with probability 1."""
        legal = rules.legal_actions(state)
        if len(legal) == 1:
            return {legal[0]: 1.0}
        return {self.search(rules, state, player)[0]: 1.0}

    def search(self, rules: Any, state: Hashable, player: int) -> tuple[int, dict[int, float]]:
        """Run the search from ``state`` for ``player``.

        Returns:
            ``(best action, {action: mean score for player})`` at the root information set.
        """
        # Seeded afresh at every decision, not once per object: a stream carried over would
        # make a game's moves depend on the games (and decisions, as advise and hints ask
        # them) this object was asked before, whoever restarts it.
        rng = np.random.default_rng(self.seed)
        stats: dict[Hashable, dict[int, list[float]]] = {}
        lo, hi = math.inf, -math.inf
        root_key = (player, rules.observe(state, player).tobytes())
        for _ in range(self.iterations):
            s = determinize(rules, state, player, rng)
            path: list[tuple[dict[int, list[float]], int, int]] = []
            expanded = False
            phases = 0
            while True:
                mover = rules.current_player(s)
                if mover == TERMINAL:
                    break
                if mover == CHANCE:
                    a = rules.sample_chance(s, rng)
                elif expanded:
                    if self.rollout is not None:
                        a = sample_action(self.rollout, rules, s, mover, rng)
                    else:
                        legal = rules.legal_actions(s)
                        a = legal[int(rng.integers(len(legal)))]
                else:
                    key = (mover, rules.observe(s, mover).tobytes())
                    node = stats.setdefault(key, {})
                    legal = rules.legal_actions(s)
                    untried = [a for a in legal if a not in node]
                    for a in legal:
                        if a in node:
                            node[a][2] += 1
                    if untried:
                        a = untried[int(rng.integers(len(untried)))]
                        node[a] = [0.0, 0.0, 1.0]
                        expanded = True
                    else:
                        a = self._select(node, legal, hi - lo if hi > lo else 1.0)
                    path.append((node, a, mover))
                s, events = rules.apply_with_events(s, a, check=False)
                if any(e.kind == EventKind.PHASE for e in events):
                    phases += 1
                    if phases >= self.horizon_phases:
                        break
            value = rules.returns(s)[0]
            if self.value is not None and rules.current_player(s) != TERMINAL:
                value += self.value(rules, s)
            lo, hi = min(lo, value), max(hi, value)
            for node, a, mover in path:
                entry = node[a]
                entry[0] += 1
                entry[1] += value if mover == 0 else -value
        root = stats.get(root_key, {})
        legal = rules.legal_actions(state)
        means = {a: root[a][1] / root[a][0] for a in legal if a in root and root[a][0] > 0}
        if not means:
            return legal[0], {}
        best = max(means, key=lambda a: (root[a][0], means[a], -a))
        return best, means

    def _select(self, node: dict[int, list[float]], legal: list[int], spread: float) -> int:
        """UCB1 over the actions available here (availability counts, ISMCTS)."""
        c = self.exploration * spread
        best, best_score = legal[0], -math.inf
        for a in legal:
            visits, total, avail = node[a]
            if visits == 0:
                return a
            score = total / visits + c * math.sqrt(math.log(max(avail, 1.0)) / visits)
            if score > best_score:
                best, best_score = a, score
        return best

    def __repr__(self) -> str:
        return f"<policy {self.name} (information-set search, not exact)>"


__all__ = ["SHIPPED", "SearchPolicy", "determinize"]
