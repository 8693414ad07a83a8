"""Head to head over both seats, with common random numbers and an adaptive game count.

Game ``i`` is played twice from the same seed (:func:`~.games.play_crn`): agent A in seat 0
against B, then B in seat 0 against A. A's margin of game ``i`` is the mean of its two scores, so
the luck of the dice cancels as far as the two games allow. Games are played in batches until
the 95% interval of the mean margin excludes 0 (or ``max_games`` pairs are played): the stopping
rule of "play until the difference is clear". Since the interval is looked at after every
batch, an adaptive match's interval is a repeated-confidence one (:func:`sequential_z`, a
Pocock boundary): the chance that it ever excludes a true margin of 0 is 5% over all the looks
together, not 5% at each (with the plain 95% interval at each of the 39 looks of a 400-game
match, an even match was called a win or a loss about 28% of the time). Batches run in worker
processes that die with their parent. A match resumes: the pairs of games already played
(``played``, from a record kept through ``on_pairs``) are taken in place of playing their
batches again, since every game is fixed by its seed.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np
from psygym_experiments.harness.games import game_seed, mean_ci, play_crn
from psygym_experiments.harness.seats import seat_spec

Z95 = 1.959964
"""Standard errors either side of a mean in its two-sided 95% normal interval."""


@dataclass
class HeadToHead:
    """The result of a match between two agents over both seats.

    Attributes:
        agent, opponent: the agents' specs.
        z: standard errors either side of the margin in its interval: :data:`Z95` for a match of
            a fixed length, :func:`sequential_z` of its looks for an adaptive one.
        margins: A's mean score of each seed's pair of games (seat 0 and seat 1).
        seat_scores: A's scores in seat 0 and in seat 1, per game.
    """

    agent: str
    opponent: str
    margins: list[float] = field(default_factory=list)
    seat_scores: tuple[list[float], list[float]] = field(default_factory=lambda: ([], []))
    z: float = Z95

    @property
    def games_per_seat(self) -> int:
        """Games played in each seat."""
        return len(self.margins)

    @property
    def margin(self) -> float:
        """A's mean score per game over both seats."""
        return mean_ci(np.asarray(self.margins))[0]

    @property
    def ci95(self) -> float:
        """Half-width of the 95% interval of :attr:`margin` (repeated-confidence if adaptive)."""
        return mean_ci(np.asarray(self.margins), self.z)[1]

    @property
    def decided(self) -> bool:
        """Whether the 95% interval excludes 0."""
        return self.games_per_seat > 1 and abs(self.margin) > self.ci95

    def verdict(self) -> str:
        """One line: who is ahead, by how much, over how many games."""
        if not self.decided:
            word = "no clear difference from"
        else:
            word = "beats" if self.margin > 0 else "loses to"
        return (
            f"{self.agent} {word} {self.opponent}: {self.margin:+.3f} ± {self.ci95:.3f} per game "
            f"(95%), {self.games_per_seat} games per seat"
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "agent": self.agent,
            "opponent": self.opponent,
            "games_per_seat": self.games_per_seat,
            "margin": self.margin,
            "ci95": self.ci95,
            "z": self.z,
            "decided": self.decided,
            "seat0_mean": float(np.mean(self.seat_scores[0])) if self.margins else math.nan,
            "seat1_mean": float(np.mean(self.seat_scores[1])) if self.margins else math.nan,
        }


SEQUENTIAL_PATHS = 200_000
"""Simulated matches behind :func:`sequential_z` (its 95% quantile to about +-0.01)."""


@functools.lru_cache(maxsize=64)
def sequential_z(looks: tuple[int, ...], alpha: float = 0.05) -> float:
    """Pocock boundary: the ``z`` whose intervals exclude a true mean at any look w.p. ``alpha``.

    ``looks``: the games per seat at each look, increasing. The boundary is the ``1 - alpha``
    quantile of the largest ``|mean| / (sd / sqrt(n))`` over the looks of a match of normal
    margins with mean 0, its spread estimated from the games as the interval does (so the
    boundary is Student's, not the normal one: at 20 games a seat that matters). It is found
    by simulating :data:`SEQUENTIAL_PATHS` matches from a fixed seed (the same answer every
    call), each look's batch drawn whole: its sum ``N(0, k)`` and the squares about its own
    mean ``chi2(k - 1)``, independent for normal margins. One look gives the normal quantile
    (:data:`Z95` for 5%).
    """
    if len(looks) < 2:
        return NormalDist().inv_cdf(1 - alpha / 2)
    n = np.asarray(looks, dtype=float)
    k = np.diff(n, prepend=0.0)
    rng = np.random.default_rng(20261205)
    peaks = []
    for _ in range(SEQUENTIAL_PATHS // 10_000):
        sums = rng.standard_normal((10_000, len(n))) * np.sqrt(k)
        within = rng.chisquare(np.maximum(k - 1, 1e-12), (10_000, len(n))) * (k > 1)
        total = np.cumsum(sums, axis=1)
        squares = np.cumsum(within + sums**2 / k, axis=1)
        sd = np.sqrt(np.maximum(squares - total**2 / n, 1e-300) / np.maximum(n - 1, 1))
        peaks.append(np.abs(total / n / (sd / np.sqrt(n))).max(axis=1))
    return float(np.quantile(np.concatenate(peaks), 1 - alpha))


def looks_of(max_games: int, min_games: int, batch: int) -> tuple[int, ...]:
    """Games per seat at each look of an adaptive match: every batch's end from ``min_games``."""
    ends = [min(i + batch, max_games) for i in range(0, max_games, batch)]
    return tuple(n for n in ends if n >= min_games) or (max_games,)


_WORKER: dict[str, Any] = {}

BATCH = 10
"""Games per seat of one batch (one worker task, one line of a resume record)."""


def _policies(
    rules: Any, specs: tuple[str, str], memos: Mapping[str, str] | None = None
) -> dict[tuple[int, int], Any]:
    """``{(agent index, seat): policy}``, built once per worker and match.

    ``memos``: spec -> a solver memo file of this game (:func:`.solving.adopt_memo`).
    """
    from psygym_experiments.harness.solving import adopt_memo

    from psygym.policies import resolve_policy

    key = (id(rules), specs)
    if _WORKER.get("key") != key:
        _WORKER["key"] = key
        memos = memos or {}
        _WORKER["policies"] = {
            (i, seat): adopt_memo(resolve_policy(seat_spec(spec, seat), rules), rules,
                                  memos.get(spec, ""))
            for i, spec in enumerate(specs)
            for seat in (0, 1)
        }  # fmt: skip
    return _WORKER["policies"]


def play_pairs(
    rules: Any, specs: tuple[str, str], seed: int, games: range,
    memos: Mapping[str, str] | None = None,
) -> list[tuple[float, float]]:  # fmt: skip
    """A's score in seat 0 and in seat 1 for each game of ``games`` (same dice in both)."""
    p = _policies(rules, specs, memos)
    out = []
    for g in games:
        s = game_seed(seed, g)
        first = rules.returns(play_crn(rules, [p[0, 0], p[1, 1]], s))[0]
        second = -rules.returns(play_crn(rules, [p[1, 0], p[0, 1]], s))[0]
        out.append((float(first), float(second)))
    return out


def head_to_head(
    rules: Any,
    agent: str,
    opponent: str,
    *,
    seed: int = 0,
    max_games: int = 1000,
    min_games: int = 20,
    batch: int = BATCH,
    adaptive: bool = True,
    workers: int = 1,
    on_batch: Callable[[HeadToHead], None] | None = None,
    pool: Any = None,
    played: list[tuple[float, float]] | None = None,
    on_pairs: Callable[[range, list[tuple[float, float]]], None] | None = None,
    memos: Mapping[str, str] | None = None,
) -> HeadToHead:
    """Play ``agent`` against ``opponent`` in both seats until the margin is clear.

    Args:
        rules: the game.
        agent: spec of the agent measured (a name or path, as ``psygym evaluate`` takes it).
        opponent: spec of its opponent.
        seed: game ``i`` uses seed ``seed + i`` in both seats.
        max_games: most games per seat.
        min_games: fewest games per seat before the stopping rule applies.
        batch: games per seat of one worker task.
        adaptive: stop once the 95% interval excludes 0, the interval being the
            repeated-confidence one of the match's looks (:func:`sequential_z`); otherwise play
            ``max_games`` and give the plain 95% interval.
        workers: processes to play in (the results do not depend on it).
        on_batch: called with the running result after every batch (progress).
        pool: a running worker pool to play in (``workers`` tasks at a time); ``None``: one is
            started for ``workers > 1`` and shut down at the end.
        played: A's scores ``(seat 0, seat 1)`` of games ``0, 1, ...`` played before (a resumed
            match, same settings); whole batches of them are used instead of playing again.
        on_pairs: called with each newly played batch's games and pairs, in game order (the
            resume record).
        memos: agent spec -> a solver memo file a solve of this game wrote
            (:func:`.solving.adopt_memo`): its ``optimal`` player starts from it.
    """
    z = sequential_z(looks_of(max_games, min_games, batch)) if adaptive else Z95
    result = HeadToHead(agent, opponent, z=z)
    specs = (agent, opponent)
    ranges = [range(i, min(i + batch, max_games)) for i in range(0, max_games, batch)]
    known = list(played or [])

    def add(pairs: list[tuple[float, float]]) -> bool:
        for first, second in pairs:
            result.seat_scores[0].append(first)
            result.seat_scores[1].append(second)
            result.margins.append((first + second) / 2)
        if on_batch is not None:
            on_batch(result)
        return adaptive and result.games_per_seat >= min_games and result.decided

    while ranges and ranges[0].stop <= len(known):
        r = ranges.pop(0)
        if add(known[r.start : r.stop]):
            return result

    def add_new(r: range, pairs: list[tuple[float, float]]) -> bool:
        if on_pairs is not None:
            on_pairs(r, pairs)
        return add(pairs)

    if pool is None and workers <= 1:
        for r in ranges:
            if add_new(r, play_pairs(rules, specs, seed, r, memos)):
                break
        return result
    if pool is not None:
        _play_in(pool, max(1, workers), rules, specs, seed, ranges, add_new, memos)
        return result
    from psygym_experiments.harness.lifecycle import kill_workers
    from psygym_experiments.harness.tournament import worker_pool

    with worker_pool(workers, len(ranges)) as own:
        if _play_in(own, workers, rules, specs, seed, ranges, add_new, memos):
            kill_workers(own)  # decided: the batches still running are not needed
    return result


def _play_in(
    pool: Any, workers: int, rules: Any, specs: tuple[str, str], seed: int,
    ranges: list[range], add: Callable[[range, list[tuple[float, float]]], bool],
    memos: Mapping[str, str] | None = None,
) -> bool:  # fmt: skip
    """Play ``ranges`` in ``pool``, ``workers`` batches at a time, until ``add`` says stop.

    Returns whether it stopped with batches still pending (cancelled; those running go on).
    """
    pending = [(r, pool.submit(play_pairs, rules, specs, seed, r, memos))
               for r in ranges[:workers]]  # fmt: skip
    nxt = workers
    while pending:
        r, job = pending.pop(0)  # in order, so the result does not depend on timing
        if add(r, job.result()):
            for _, f in pending:
                f.cancel()
            return bool(pending)
        if nxt < len(ranges):
            job = pool.submit(play_pairs, rules, specs, seed, ranges[nxt], memos)
            pending.append((ranges[nxt], job))
            nxt += 1
    return False


__all__ = [
    "BATCH", "Z95", "HeadToHead", "head_to_head", "looks_of", "play_pairs", "sequential_z",
]  # fmt: skip
