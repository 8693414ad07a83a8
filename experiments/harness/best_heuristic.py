"""The best heuristic of a list: the edition's heuristics in a round robin, the first by mean.

The protocol of the held-out tables (docs/strength.md, "Held-out lists"): every heuristic of
the edition plays every other over both seats, ``episodes`` games a pairing and seat with
common random numbers from ``seed``, and the one with the highest mean score over all its games
(:func:`.standings.leaderboard`) is the list's opponent. The same as ``psygym evaluate
--agents H1,...,Hn --episodes 40 --seed 10000 --no-exact`` and its leaderboard's first row.
Where several share that row (they played the same games the same way, or scored the same),
the edition's reference heuristic if it is among them, else the first in the edition's order.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

ROUND_ROBIN_EPISODES = 40
"""Games per pairing and seat of the round robin (that of the held-out tables)."""
ROUND_ROBIN_SEED = 10_000
"""Seed of the round robin's first game (that of the held-out tables)."""


def best_heuristic(rules: Any, *, episodes: int = ROUND_ROBIN_EPISODES,
                   seed: int = ROUND_ROBIN_SEED, pool: Any = None) -> str:  # fmt: skip
    """The name of the heuristic of ``rules``' edition that does best on its list.

    Raises:
        ValueError: the edition has no heuristics.
    """
    from psygym_experiments.harness.standings import leaderboard
    from psygym_experiments.harness.tournament import EvalSettings, evaluate

    from psygym.policies import bots_for

    bots = bots_for(rules.edition)
    names = list(bots.heuristics) if bots is not None else []
    if not names:
        raise ValueError(f"edition {rules.edition!r} has no heuristics to choose the best from")
    if len(names) == 1:
        return names[0]
    settings = EvalSettings(episodes, seed, exact=False, exploit=False, solve=False,
                            show_progress=False)  # fmt: skip
    board = leaderboard(evaluate(rules, names, settings, pool=pool))
    top = [s.label for s in board if s.rank == board[0].rank and s.mean == board[0].mean]
    return bots.reference if bots.reference in top else min(top, key=names.index)


BEST_HEURISTIC = "best-heuristic"
"""An agent name: the list's best heuristic (:func:`best_heuristic`), chosen first."""


def with_best_heuristic(rules: Any, names: list[str]) -> list[str]:
    """``names`` with :data:`BEST_HEURISTIC` replaced by the heuristic it is on ``rules``' list.

    Says on stderr which it is (the round robin takes one to five seconds on a generated list).
    """
    if BEST_HEURISTIC not in names:
        return names
    from psygym_experiments.common import err_console

    best = best_heuristic(rules)
    err_console.print(f"{BEST_HEURISTIC}: {best} (first of a round robin of the edition's "
                      f"heuristics, {ROUND_ROBIN_EPISODES} games a pairing and seat)",
                      highlight=False, soft_wrap=True)  # fmt: skip
    return [best if n == BEST_HEURISTIC else n for n in names]


@contextmanager
def also_known(*names: str) -> Iterator[None]:
    """An unknown agent in the block: the error's list of known agents also holds ``names``.

    ``psygym.policies`` lists the agents it resolves itself; a command that takes more names
    (:data:`BEST_HEURISTIC`, which it replaces before resolving, or ``play``'s ``auto``) adds
    them here, so the list shows every name that command accepts.
    """
    from psygym.policies import UnknownAgentError

    try:
        yield
    except UnknownAgentError as exc:
        every = sorted({*exc.known, *names})
        raise UnknownAgentError(exc.spec, exc.edition, every) from exc
