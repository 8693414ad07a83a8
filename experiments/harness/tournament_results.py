"""The results of a round robin (:mod:`.tournament`): per pairing and seat, and as a whole.

:class:`PairResult` summarises one pairing's games in one seat order (mean score with its 95%
interval, wins/draws/losses, Perils, dice and deny rates, exact score); :class:`Evaluation` is
everything one tournament produced (``results.json``), and :func:`csv_text` writes the pairings
as ``results.csv`` (:data:`CSV_COLUMNS`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from psygym_experiments.harness.games import DRAW_TOL, GameStats, mean_ci
from psygym_experiments.harness.output import strict_json

CSV_COLUMNS = (
    "agent0", "agent1", "episodes", "mean_score", "ci95", "wins", "draws", "losses",
    "perils_rate0", "perils_rate1", "dice_per_manifest0", "dice_per_manifest1",
    "deny_rate0", "deny_rate1", "exact_score",
)  # fmt: skip
"""Columns of ``results.csv``: one row per pairing and seat (agent0 sits in seat 0)."""


# ----------------------------------------------------------------------------- results
@dataclass
class PairResult:
    """The outcome of one pairing in one seat order: ``agent0`` in seat 0, ``agent1`` in seat 1.

    Scores are from seat 0's point of view (the game is zero-sum). Rates ending in ``0`` and ``1``
    belong to the agent in that seat; a rate with nothing to count (no power attempted, no deny)
    is ``nan``.

    Attributes:
        agent0: label of the agent in seat 0.
        agent1: label of the agent in seat 1.
        episodes: games played.
        mean_score: mean final score of seat 0 per game.
        ci95: half-width of the 95% confidence interval of ``mean_score``.
        wins: games seat 0 won (score > 0).
        draws: games with score 0.
        losses: games seat 0 lost.
        perils_rate0: Perils of the Warp per power attempted by seat 0.
        perils_rate1: the same for seat 1.
        dice_per_manifest0: dice seat 0 spent casting per power it manifested.
        dice_per_manifest1: the same for seat 1.
        deny_rate0: share of seat 0's deny attempts that succeeded.
        deny_rate1: the same for seat 1.
        exact_score: exact expected score of seat 0 (``None`` when the solver cannot compute it).
        index0: position of ``agent0`` in the agent list.
        index1: position of ``agent1`` in the agent list.
        scores: every game's score (seat 0's view), in game order.
        stats: the event counts behind the rates.
    """

    agent0: str
    agent1: str
    episodes: int
    mean_score: float
    ci95: float
    wins: int
    draws: int
    losses: int
    perils_rate0: float
    perils_rate1: float
    dice_per_manifest0: float
    dice_per_manifest1: float
    deny_rate0: float
    deny_rate1: float
    exact_score: float | None = None
    index0: int = 0
    index1: int = 0
    scores: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    stats: GameStats = field(default_factory=GameStats, repr=False)

    def row(self) -> dict[str, Any]:
        """The ``results.csv`` / ``results.json`` fields of this pairing."""
        return {c: getattr(self, c) for c in CSV_COLUMNS}

    @classmethod
    def from_games(
        cls,
        agent0: str,
        agent1: str,
        scores: np.ndarray,
        stats: GameStats,
        index0: int = 0,
        index1: int = 1,
        exact: float | None = None,
    ) -> PairResult:
        """Summarise the games of one pairing."""
        s0, s1 = stats.summary(0), stats.summary(1)
        for p, sp in ((0, s0), (1, s1)):
            if stats.dice[p] == 0:  # the edition commits no dice (8th: a 2D6 test): no rate
                sp["dice_per_manifest"] = float("nan")
        m, half = mean_ci(scores)
        return cls(
            agent0=agent0,
            agent1=agent1,
            episodes=len(scores),
            mean_score=m,
            ci95=half,
            wins=int(np.sum(scores > DRAW_TOL)),
            draws=int(np.sum(np.abs(scores) <= DRAW_TOL)),
            losses=int(np.sum(scores < -DRAW_TOL)),
            perils_rate0=s0["perils_rate"],
            perils_rate1=s1["perils_rate"],
            dice_per_manifest0=s0["dice_per_manifest"],
            dice_per_manifest1=s1["dice_per_manifest"],
            deny_rate0=s0["deny_rate"],
            deny_rate1=s1["deny_rate"],
            exact_score=exact,
            index0=index0,
            index1=index1,
            scores=scores,
            stats=stats,
        )


@dataclass
class Evaluation:
    """Everything one tournament produced (what ``results.json`` holds).

    Attributes:
        edition: edition id.
        scenario: scenario name.
        agents: agent labels in list order.
        specs: the agent specs the labels stand for (names or paths).
        episodes: games per pairing and seat.
        seed: the base seed (game ``i`` uses ``seed + i``).
        pairs: one result per pairing and seat.
        game_value: exact value of the game for seat 0 with both players optimal, if solvable.
        value_note: why there is no exact value, if there is none.
        exploitability: agent label -> exploitability (``None``: not computable).
        best_response: agent label -> [seat-0 score of a best response to the agent in seat 0,
            the same with the agent in seat 1] (``None`` where not computable).
        notes: plain sentences about what could not be computed and why.
        stochastic: labels of the agents that chose at random in the games.
    """

    edition: str
    scenario: str
    agents: list[str]
    specs: list[str]
    episodes: int
    seed: int
    pairs: list[PairResult]
    game_value: float | None = None
    value_note: str = ""
    exploitability: dict[str, float | None] = field(default_factory=dict)
    best_response: dict[str, list[float | None]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stochastic: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dictionary (``NaN`` becomes ``null``)."""
        return {
            "edition": self.edition,
            "scenario": self.scenario,
            "agents": self.agents,
            "specs": self.specs,
            "episodes": self.episodes,
            "seed": self.seed,
            "pairs": [strict_json(p.row()) for p in self.pairs],
            "game_value": strict_json(self.game_value),
            "value_note": self.value_note,
            "exploitability": strict_json(self.exploitability),
            "best_response": strict_json(self.best_response),
            "notes": self.notes,
        }


def csv_text(pairs: Sequence[PairResult], prefix: dict[str, str] | None = None) -> str:
    """``results.csv`` content; ``prefix`` adds leading constant columns (edition, scenario)."""
    from psygym_experiments.harness.output import csv_rows

    extra = dict(prefix or {})
    rows = [[*extra.values(), *(p.row()[c] for c in CSV_COLUMNS)] for p in pairs]
    return csv_rows([*extra, *CSV_COLUMNS], rows)
