"""The one evaluation protocol: games played from common random numbers, and their statistics.

Game ``i`` of a tournament seeded ``seed`` uses the seed ``seed + i`` in every pairing, and its
randomness is split into independent streams so that the same dice come up wherever the games
allow it (common random numbers make differences between agents far less noisy):

- chance (dice, cards) is drawn from a generator seeded ``(seed + i, 0, k)`` in the ``k``-th
  Psychic phase of the game (a new stream at every :attr:`EventKind.PHASE` event, so every
  pairing sees the same warp-charge roll in phase ``k`` whatever was rolled before);
- the actions of a stochastic agent in seat ``p`` are drawn from a generator seeded
  ``(seed + i, 1 + p)``, so an agent's choices never shift the dice.

:func:`run_games` is the plain single-stream sampler behind ``psygym simulate`` (one generator
for everything, as ``psygym.core.play_game`` draws). :func:`seat_split_scores` is the evaluation
of training runs and tuning trials: common random numbers, game by game.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from psygym.core import CHANCE, TERMINAL, Event, EventKind, play_game, restart_policies
from psygym.kernel import uniform_choice, weighted_choice

DRAW_TOL = 1e-9
"""Scores within this of 0 count as a draw."""


@dataclass
class GameStats:
    """Counts of standard events over games (see :class:`psygym.core.EventKind`)."""

    games: int = 0
    scores: list[float] = field(default_factory=list)
    attempts: list[int] = field(default_factory=lambda: [0, 0])
    perils: list[int] = field(default_factory=lambda: [0, 0])
    manifests: list[int] = field(default_factory=lambda: [0, 0])
    dice: list[int] = field(default_factory=lambda: [0, 0])
    deny_attempts: list[int] = field(default_factory=lambda: [0, 0])
    denied: list[int] = field(default_factory=lambda: [0, 0])

    COUNTERS = ("attempts", "perils", "manifests", "dice", "deny_attempts", "denied")

    def add_event(self, e: Event) -> None:
        """Count one event."""
        if e.player is None:
            return
        p = e.player
        if e.kind == EventKind.ATTEMPT:
            self.attempts[p] += 1
            self.dice[p] += int(e.get("dice", 0) or 0)
        elif e.kind == EventKind.PERILS:
            self.perils[p] += 1
        elif e.kind == EventKind.MANIFEST:
            self.manifests[p] += 1
        elif e.kind == EventKind.DENY_ATTEMPT:
            self.deny_attempts[p] += 1
        elif e.kind == EventKind.DENIED:
            self.denied[p] += 1

    def add_events(self, _state: Any, _action: int, events: Sequence[Event]) -> None:
        """Count the events of one transition (an ``on_step`` callback)."""
        for e in events:
            self.add_event(e)

    def merge(self, other: GameStats) -> None:
        """Add another batch of games (scores are appended in order)."""
        self.games += other.games
        self.scores += other.scores
        for attr in self.COUNTERS:
            for p in (0, 1):
                getattr(self, attr)[p] += getattr(other, attr)[p]

    def summary(self, player: int = 0) -> dict[str, float]:
        """Mean score of ``player`` with a 95% interval, and its rates."""
        sign = 1 if player == 0 else -1
        x = np.array(self.scores) * sign
        m, half = mean_ci(x)

        def ratio(a: int, b: int) -> float:
            return a / b if b else float("nan")

        return {
            "games": self.games,
            "mean_score": m,
            "ci95": half,
            "perils_rate": ratio(self.perils[player], self.attempts[player]),
            "manifest_rate": ratio(self.manifests[player], self.attempts[player]),
            "dice_per_manifest": ratio(self.dice[player], self.manifests[player]),
            "deny_rate": ratio(self.denied[player], self.deny_attempts[player]),
            "attempts_per_game": ratio(self.attempts[player], self.games),
        }


def mean_ci(x: np.ndarray, z: float = 1.959964) -> tuple[float, float]:
    """Mean and half-width of its normal-approximation confidence interval (95% by default)."""
    if len(x) == 0:
        return float("nan"), float("nan")
    if len(x) == 1:
        return float(x[0]), float("inf")
    return float(x.mean()), float(z * x.std(ddof=1) / math.sqrt(len(x)))


def game_seed(seed: int, game: int) -> int:
    """Seed of game ``game`` of a tournament seeded ``seed`` (the same in every pairing)."""
    return seed + game


_STREAM_STATES: dict[tuple[int, ...], dict[str, Any]] = {}
"""Seed key -> the PCG64 state ``np.random.default_rng(key)`` starts from (a few thousand keys:
seeds times Psychic phases). Setting a kept state is ten times cheaper than seeding anew."""


def _stream(key: tuple[int, ...], rng: np.random.Generator | None = None) -> np.random.Generator:
    """A generator that draws what ``np.random.default_rng(key)`` draws (``rng`` reused if given).

    Raises:
        ValueError: ``rng`` is not driven by PCG64 (``default_rng``'s bit generator).
    """
    state = _STREAM_STATES.get(key)
    if state is None:
        if len(_STREAM_STATES) >= 100_000:
            _STREAM_STATES.clear()
        state = _STREAM_STATES[key] = np.random.default_rng(key).bit_generator.state
    if rng is None:
        rng = np.random.Generator(np.random.PCG64(0))
    rng.bit_generator.state = state  # copied in: the kept state is never changed
    return rng


def play_crn(
    rules: Any,
    policies: Sequence[Any],
    seed: int,
    *,
    on_step: Callable[[Any, int, tuple], None] | None = None,
    stochastic: list[bool] | None = None,
) -> Any:
    """Play one game from the common random numbers of ``seed``; returns the terminal state.

    See the module docstring for the streams. ``stochastic[p]`` is set when seat ``p``'s agent
    gave more than one action a probability. A seat's action stream is only made at its first
    random choice (a generator draws nothing until asked, so the draws are the same).
    """
    restart_policies(policies)  # as play_game: a game's moves follow from its own history
    phase = 0
    chance_rng = _stream((seed, 0, phase))
    action_rngs: list[np.random.Generator | None] = [None] * len(policies)
    uniform = [getattr(p, "uniform", False) for p in policies]
    phase_kind = EventKind.PHASE
    s = rules.initial_state()
    while True:
        player = rules.current_player(s)
        if player == TERMINAL:
            return s
        if player == CHANCE:
            a = rules.sample_chance(s, chance_rng)
        else:
            if uniform[player]:  # the random agent: the same draw without its dictionary
                choices: Sequence[int] = rules.legal_actions(s)
            else:
                probs = policies[player].action_probabilities(rules, s, player)
                choices = list(probs) if len(probs) > 1 else probs  # type: ignore[assignment]
            if len(choices) == 1:
                a = int(next(iter(choices)))
            else:
                if stochastic is not None:
                    stochastic[player] = True
                rng = action_rngs[player]
                if rng is None:
                    rng = action_rngs[player] = _stream((seed, 1 + player))
                if uniform[player]:
                    a = int(uniform_choice(choices, rng))
                else:
                    a = int(weighted_choice(choices, list(probs.values()), rng))
        s2, events = rules.apply_with_events(s, a, check=False)
        if on_step is not None:
            on_step(s, a, events)
        for e in events:
            if e.kind == phase_kind:
                phase += 1
                _stream((seed, 0, phase), chance_rng)
                break
        s = s2


def play_games(
    rules: Any, policies: Sequence[Any], seed: int, games: range
) -> tuple[GameStats, list[bool]]:
    """Play the games ``games`` of a tournament seeded ``seed`` (common random numbers).

    Returns the statistics and, per seat, whether its agent ever chose at random.
    """
    stats = GameStats()
    stochastic = [False, False]
    for g in games:
        end = play_crn(rules, policies, game_seed(seed, g), on_step=stats.add_events,
                       stochastic=stochastic)  # fmt: skip
        stats.scores.append(float(rules.returns(end)[0]))
        stats.games += 1
    return stats, stochastic


def run_games(
    rules: Any, policies: Sequence[Any], episodes: int, seed: int, *, show_progress: bool = True
) -> GameStats:
    """Play ``episodes`` games with one generator seeded by ``seed``; collect statistics."""
    from psygym_experiments.harness.progress import track

    stats = GameStats()
    rng = np.random.default_rng(seed)
    for _ in track(range(episodes), "playing", disable=not show_progress):
        end = play_game(rules, policies, rng, on_step=stats.add_events)
        stats.scores.append(rules.returns(end)[0])
        stats.games += 1
    return stats


def seat_split_scores(
    rules: Any, policy: Any, opponent: Any, seats: Sequence[int], episodes: int, seed: int
) -> np.ndarray:
    """Score of ``policy`` (its own view) in each of ``episodes`` games against ``opponent``.

    Games are split over ``seats`` (the first seats get one more when they do not divide
    evenly), in seat order. Seat ``p``'s games are games ``0, 1, ...`` of :func:`play_games`
    seeded ``seed + 7919 * p``: common random numbers. So game ``i`` gets the same warp-charge
    roll in every Psychic phase, and the same dice as far as the two games' play allows, in
    every call with the same ``seed``. Two evaluations of the same policy give the same scores,
    and two policies (or one policy before and after training) can be compared game by game.
    """
    scores: list[float] = []
    for i, seat in enumerate(seats):
        n = episodes // len(seats) + (1 if i < episodes % len(seats) else 0)
        if n == 0:
            continue
        players = [policy, opponent] if seat == 0 else [opponent, policy]
        stats, _ = play_games(rules, players, seed + 7919 * seat, range(n))
        sign = 1.0 if seat == 0 else -1.0
        scores += [sign * s for s in stats.scores]
    return np.asarray(scores, dtype=float)


def seat_split_score(
    rules: Any, policy: Any, opponent: Any, seats: Sequence[int], episodes: int, seed: int
) -> tuple[float, float]:
    """Mean and 95% half-width of :func:`seat_split_scores`."""
    return mean_ci(seat_split_scores(rules, policy, opponent, seats, episodes, seed))
