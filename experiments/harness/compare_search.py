"""The ``search`` agent in ``psygym compare``: whether it joins a field, and its match.

:func:`search_entry` puts ``search`` in a scenario's round-robin only where it is not simply the
exact solver (:func:`search_differs`) and the run can afford its seconds a game;
:func:`search_text` says how it plays there. Elsewhere :func:`search_match` plays it head to
head against the round-robin's leader, when the settings ask for that match
(:func:`match_wanted`). The comparison itself is :mod:`.compare_run`.
"""

from __future__ import annotations

import time
from typing import Any

from psygym_experiments.common import err_console
from psygym_experiments.harness.compare_field import SEARCH, CompareSettings, Entry
from psygym_experiments.harness.standings import leaderboard


def search_entry(rules: Any, settings: CompareSettings, notes: list[str]) -> Entry | None:
    """The ``search`` agent where the game cannot be solved whole (``None`` elsewhere).

    With ``--quick`` it is left out (a note says so): it spends up to a few seconds a game, far
    more than a quick run has. Where the scenario is solvable whole it is the exact solver,
    which the field has as ``optimal``.
    """
    try:
        if not search_differs(rules):
            return None
    except ImportError as exc:
        notes.append(f"search agent left out: it is not installed ({exc}).")
        return None
    if settings.quick:
        notes.append("search agent left out with --quick: it takes up to a few seconds a game; "
                     "compare --search has it.")  # fmt: skip
        return None
    if not settings.search and SEARCH not in (settings.agents or ()):
        match = (
            f"it plays the leader head to head instead ({settings.search_games} games per "
            "seat, below); "
            if settings.search_games and settings.agents is None
            else ""
        )
        notes.append("search agent left out of the round-robin: it takes seconds a game, which "
                     f"would make this comparison take hours; {match}compare --search puts it "
                     "in the round-robin, and psygym evaluate --until-clear plays a match until "
                     "its margin is clear.")  # fmt: skip
        return None
    return Entry(SEARCH, SEARCH, "search", "built in", search_text(rules))


def search_differs(rules: Any) -> bool:
    """Whether ``search`` is not simply the exact solver here (which the field has as optimal)."""
    from psygym_agents.solvers.search import solvable_whole

    return not solvable_whole(rules) or hidden(rules)


def search_text(rules: Any) -> str:
    """How the search agent plays here (one sentence, its own note where it has one)."""
    if hidden(rules):
        return ("an information-set search over the hands it cannot see, with the reference "
                "heuristic as its rollout (not exact)")  # fmt: skip
    from psygym.policies import resolve_policy

    note = getattr(resolve_policy(SEARCH, rules), "note", "")
    return f"searches every line of play within each cast or turn: {note}" if note else SEARCH


def hidden(rules: Any) -> bool:
    """Whether the players of ``rules`` do not see the whole state (no exact solving)."""
    try:
        from psygym_agents.solvers import has_hidden_information
    except ImportError:
        return False
    return bool(has_hidden_information(rules))


def search_match(
    rules: Any, entries: list[Entry], ev: Any, settings: CompareSettings, *, pool: Any = None,
    show_progress: bool = True, background: bool = False, memos: dict[str, str] | None = None,
) -> dict[str, Any] | None:  # fmt: skip
    """``search`` against the leader of the round-robin, head to head over both seats.

    Played where ``search`` would be in the field but is left out of the round-robin for its
    cost (a duel without ``--search``, not ``--quick``, every agent kept), with
    ``settings.search_games`` games per seat and the round-robin's seeds
    (:func:`psygym_experiments.harness.head_to_head.head_to_head`, no early stop). The leader is
    the best-ranked agent that plays both seats. Its games are split into one batch per worker,
    whatever else the workers do, so the numbers are those of a match played alone.

    ``background``: played in a thread beside other work (:func:`compare_scenario`), so instead
    of a progress bar (the display has one at a time) it prints a line when it starts and ends.
    ``memos``: spec -> the solver memo its ``optimal`` player starts from (see :class:`Prober`).

    Returns:
        The match's summary with the leader's ``kind`` and the match's ``seconds`` (wall time
        from its start to its end), or ``None`` where no match is played.
    """
    if (not match_wanted(settings) or any(e.kind == SEARCH for e in entries)
            or not search_differs(rules)):  # fmt: skip
        return None
    from psygym_experiments.harness.head_to_head import head_to_head
    from psygym_experiments.harness.progress import ProgressBar

    both = {e.label: e for e in entries if tuple(e.seats) == (0, 1)}
    board = leaderboard(ev, {e.label: e.kind for e in entries},
                        {e.label: tuple(e.seats) for e in entries})  # fmt: skip
    leader = next((both[r.label] for r in board if r.label in both), None)
    if leader is None:
        return None
    start = time.perf_counter()
    games = settings.search_games
    workers = settings.workers if pool is not None else 1
    name = getattr(rules.scenario, "name", "")
    what = f"{rules.edition} {name}: search vs {leader.label}"
    if show_progress and background:
        err_console.print(f"{what}: {games} games per seat, in the background",
                          highlight=False, soft_wrap=True)  # fmt: skip
    with ProgressBar(what, games, enabled=show_progress and not background) as bar:
        result = head_to_head(
            rules, SEARCH, leader.spec, seed=settings.seed, max_games=games, min_games=games,
            batch=max(1, -(-games // max(1, workers))), adaptive=False, workers=workers,
            pool=pool, memos=memos,
            on_batch=lambda r: bar.update(completed=r.games_per_seat,
                                          note=f"{r.margin:+.2f} ± {r.ci95:.2f}"),
        )  # fmt: skip
    out = result.as_dict()
    out["opponent"] = leader.label
    out["opponent_kind"] = leader.kind
    out["seconds"] = round(time.perf_counter() - start, 1)
    if show_progress and background:
        err_console.print(f"{what}: {result.margin:+.2f} ± {result.ci95:.2f} per game "
                          f"({out['seconds']:.0f} s)", highlight=False, soft_wrap=True)  # fmt: skip
    return out


def match_wanted(settings: CompareSettings) -> bool:
    """Whether the settings ask for ``search``'s match against each duel's leader."""
    return not (settings.quick or settings.search or settings.agents is not None
                or settings.search_games < 1)  # fmt: skip


__all__ = [
    "hidden", "match_wanted", "search_differs", "search_entry", "search_match", "search_text",
]  # fmt: skip
