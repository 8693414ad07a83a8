"""The numbers of a comparison: leaderboards, head-to-head means, shortfalls, plain statements.

What :mod:`psygym_experiments.report` writes (tables, plots, ``report.md``) is computed here
from a round-robin's results (:mod:`.tournament`): each agent's :class:`Standing`, its rank,
who played identically, what a best response gains, how far the reference heuristic falls short
of the best agent and of the optimum, and the sentences that say so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from psygym_experiments.harness.games import mean_ci
from psygym_experiments.harness.tournament_results import PairResult

REFERENCE = "double-wc"
"""The rule of thumb whose distance to the best agent and to the optimum the report states."""


@dataclass
class Standing:
    """One agent's line of a leaderboard.

    Attributes:
        rank: the agent's row in the leaderboard table, 1 for the best (see :func:`leaderboard`);
            ``None``: not ranked (scored on some seats only).
        label: agent label.
        kind: heuristic, baseline, tuned, ppo or optimal.
        mean: mean score per game over all opponents and both seats.
        ci95: half-width of its 95% interval.
        exact: the exact value of the same average, when every pairing has one.
        exploitability: what a best response gains against it, when known.
        games: games the agent played.
    """

    rank: int | None
    label: str
    kind: str
    mean: float
    ci95: float
    exact: float | None
    exploitability: float | None
    games: int


# ----------------------------------------------------------------------------- numbers
def counted(p: PairResult, index: int, seats: dict[int, tuple[int, ...]] | None) -> bool:
    """Whether pairing ``p`` counts for agent ``index``'s leaderboard score.

    ``seats`` maps the agents scored only on some seats (a PPO model trained for seat 0) to
    those seats: such an agent counts only its games in those seats, and the other agents do
    not count their games against it (so every other score stays an average over both seats).
    """
    if index not in (p.index0, p.index1) or p.index0 == p.index1:
        return False
    if not seats:
        return True
    if index in seats:
        return (0 if p.index0 == index else 1) in seats[index]
    other = p.index1 if p.index0 == index else p.index0
    return other not in seats


def agent_games(
    pairs: Sequence[PairResult], index: int, seats: dict[int, tuple[int, ...]] | None = None
) -> np.ndarray:
    """Per game, the agent's score averaged over all its pairings (both seats, all opponents).

    ``seats``: see :func:`counted`.
    """
    rows = [p.scores if p.index0 == index else -p.scores for p in pairs if counted(p, index, seats)]
    if not rows:
        return np.zeros(0)
    return np.mean(np.vstack(rows), axis=0)


def agent_exact(
    pairs: Sequence[PairResult], index: int, seats: dict[int, tuple[int, ...]] | None = None
) -> float | None:
    """The exact counterpart of :func:`agent_games`' mean, if every pairing has its exact score."""
    vals = [
        p.exact_score if p.index0 == index else (None if p.exact_score is None else -p.exact_score)
        for p in pairs
        if counted(p, index, seats)
    ]
    if not vals or any(v is None for v in vals):
        return None
    return float(np.mean(vals))


def seat_map(ev: Any, seats: dict[str, tuple[int, ...]] | None) -> dict[int, tuple[int, ...]]:
    """Agent index -> seats, for the agents of ``ev`` scored only on some seats."""
    index = {label: i for i, label in enumerate(ev.agents)}
    return {index[k]: tuple(v) for k, v in (seats or {}).items() if k in index and
            tuple(v) != (0, 1)}  # fmt: skip


def leaderboard(
    ev: Any, kinds: dict[str, str] | None = None, seats: dict[str, tuple[int, ...]] | None = None
) -> list[Standing]:
    """Agents ranked by mean score per game over all opponents and both seats.

    The order follows the exact value of that average when every agent has one (no sampling
    noise), else the sampled mean. ``seats`` (label -> seats) restricts agents trained for one
    seat to that seat (see :func:`counted`); their exploitability is then that seat's.

    This is the one home of the rank every part of the report states (the table's ``#``, the
    Answers and the Headline): the rank is the agent's row in the leaderboard table, counting
    only the agents scored on both seats, and agents that played identically (:func:`twins`)
    share one row and so one rank; an agent scored on some seats only gets ``None`` (a seat's
    score includes that seat's advantage, so it cannot be ranked beside both-seat scores).
    Twins are listed together, at the place of the first of them.
    """
    kinds = kinds or {}
    smap = seat_map(ev, seats)
    rows = []
    for i, label in enumerate(ev.agents):
        x = agent_games(ev.pairs, i, smap)
        m, half = mean_ci(x)
        games = sum(p.episodes for p in ev.pairs if counted(p, i, smap))
        expl = ev.exploitability.get(label)
        if i in smap:
            expl = seat_exploitability(ev, label, smap[i])
        rows.append(
            Standing(
                None,
                label,
                kinds.get(label, ""),
                m,
                half,
                agent_exact(ev.pairs, i, smap),
                expl,
                games,
            )
        )
    by_exact = bool(rows) and all(r.exact is not None for r in rows)

    def key(r: Standing) -> tuple[float, str]:
        x = r.exact if by_exact else r.mean
        return (-(x if x is not None and math.isfinite(x) else -1e18), r.label)

    rows.sort(key=key)
    return _ranked(ev, rows, smap)


def _ranked(ev: Any, rows: list[Standing], smap: dict[int, tuple[int, ...]]) -> list[Standing]:
    """``rows`` (sorted) with their ranks set and twins moved next to the first of them."""
    index = {label: i for i, label in enumerate(ev.agents)}
    groups = twins(ev, [r.label for r in rows if index[r.label] not in smap])
    group_of = {label: g for g in groups for label in g}
    rank_of = {label: k for k, g in enumerate(groups, 1) for label in g}
    by_label = {r.label: r for r in rows}
    out: list[Standing] = []
    placed: set[str] = set()
    for r in rows:
        if r.label in placed:
            continue
        for label in group_of.get(r.label, [r.label]):
            by_label[label].rank = rank_of.get(label)
            out.append(by_label[label])
            placed.add(label)
    return out


def rank_words(rank: int | None, board: Sequence[Any]) -> str:
    """``rank 3 of 9``: ``rank`` among the ranked rows of ``board`` (Standings or doc rows).

    Both the Headline and the Answers say it with this, from :func:`leaderboard`'s ranks.
    """
    ranks = [r.rank if isinstance(r, Standing) else r.get("rank") for r in board]
    return f"rank {rank} of {max((x for x in ranks if x), default=0)}"


def seat_exploitability(ev: Any, label: str, seats: Sequence[int]) -> float | None:
    """What a best response gains against ``label`` over the game value, on ``seats`` only."""
    v, br = ev.game_value, (ev.best_response or {}).get(label)
    if v is None or not br:
        return None
    gains = []
    for seat in seats:
        b = br[seat] if seat < len(br) else None
        if b is None:
            return None
        gains.append(v - b if seat == 0 else b - v)
    return float(np.mean(gains))


def seat_baseline(
    ev: Any, seats: Sequence[int], leave_out: Sequence[str]
) -> dict[str, float | None] | None:
    """The field's average score on ``seats`` (for an agent scored only there), or ``None``.

    The mean over every pairing of the other agents (``leave_out`` excluded) of the score of the
    agent in those seats: sampled, and exact when every such pairing has its exact score. An
    agent that plays only seat 0 is to be read against this, not against 0.
    """
    if tuple(seats) == (0, 1):
        return None
    out = [p for p in ev.pairs if p.agent0 not in leave_out and p.agent1 not in leave_out
           and p.index0 != p.index1]  # fmt: skip
    if not out:
        return None
    sampled, exact = [], []
    for p in out:
        for seat in seats:
            sign = 1.0 if seat == 0 else -1.0
            sampled.append(sign * p.mean_score)
            exact.append(None if p.exact_score is None else sign * p.exact_score)
    return {
        "mean": float(np.mean(sampled)),
        "exact": None if any(x is None for x in exact) else float(np.mean(exact)),
    }


def twins(ev: Any, labels: Sequence[str]) -> list[list[str]]:
    """Groups of agents that played identically (merged into one row in the report).

    Identical means the same score in every game of every pairing with every other agent, in
    both seats, and the same exact scores. Returns the groups in ``labels`` order (single
    agents are groups of one).
    """
    index = {label: i for i, label in enumerate(ev.agents)}
    look = pair_lookup(ev.pairs)

    def same(a: int, b: int) -> bool:
        for c in range(len(ev.agents)):
            if c in (a, b):
                continue
            for x, y in (((a, c), (b, c)), ((c, a), (c, b))):
                p, q = look.get(x), look.get(y)
                if p is None and q is None:  # c plays one seat only: neither met it there
                    continue
                if p is None or q is None:
                    return False
                if p.exact_score != q.exact_score or not np.array_equal(p.scores, q.scores):
                    return False
        return len(ev.agents) > 2

    groups: list[list[str]] = []
    for label in labels:
        for g in groups:
            if same(index[g[0]], index[label]):
                g.append(label)
                break
        else:
            groups.append([label])
    return groups


def pair_lookup(pairs: Sequence[PairResult]) -> dict[tuple[int, int], PairResult]:
    """(seat-0 agent index, seat-1 agent index) -> result."""
    return {(p.index0, p.index1): p for p in pairs}


def head_to_head(ev: Any, a: int, b: int) -> tuple[float, float, float | None]:
    """A's mean score against B over both seats, its 95% half-width, and the exact value.

    Where one agent plays one seat only (``EvalSettings.seats``), only the seat order they
    played counts; where they never met, every value is ``nan`` (the exact one ``None``).
    """
    look = pair_lookup(ev.pairs)
    p, q = look.get((a, b)), look.get((b, a))
    if p is not None and q is not None:
        m, half = mean_ci((p.scores - q.scores) / 2)
        exact = None
        if p.exact_score is not None and q.exact_score is not None:
            exact = (p.exact_score - q.exact_score) / 2
        return m, half, exact
    if p is None and q is None:
        return float("nan"), float("nan"), None
    sign, one = (1.0, p) if p is not None else (-1.0, q)
    m, half = mean_ci(sign * one.scores)
    return m, half, None if one.exact_score is None else sign * one.exact_score


def gap(
    ev: Any, better: int, worse: int, seats: dict[int, tuple[int, ...]] | None = None
) -> tuple[float, float]:
    """Leaderboard score of ``better`` minus that of ``worse``, with a paired 95% half-width."""
    return mean_ci(agent_games(ev.pairs, better, seats) - agent_games(ev.pairs, worse, seats))


def entry_seats(res: Any) -> dict[str, tuple[int, ...]]:
    """Label -> seats each agent of a ``ScenarioResult`` is scored on."""
    return {e.label: tuple(getattr(e, "seats", (0, 1))) for e in res.entries}


def board_of(res: Any) -> list[Standing]:
    """The leaderboard of a ``ScenarioResult`` (kinds and trained seats from its entries)."""
    return leaderboard(res.evaluation, {e.label: e.kind for e in res.entries}, entry_seats(res))


SHARE_TOL = 1e-6
"""Below this worst shortfall every agent plays seat 0 as well as optimal play: no share."""


def optimum_shortfall(
    pairs: Sequence[Any], game_value: float, label: str, *, code: bool = False
) -> tuple[float, str] | None:
    """How far ``label`` falls short of the optimum in seat 0, and that as a share, in words.

    The shortfall is ``game_value`` minus the exact score of ``label`` in seat 0 against the
    ``optimal`` agent. Its share is taken of the worst agent's shortfall (the largest among the
    agents with an exact score there: a pairing with an agent that chooses at random may have
    none), not of the optimum: the optimum is a score, which may be near 0 or below it (a
    shortfall of 0.445 from an optimum of +0.107 read "414.1%"), while the worst shortfall is
    the field's own measure of how much seat 0 can lose against optimal play, so the share says
    where between optimal and the worst agent ``label`` plays. There is no share where every
    agent falls short by less than :data:`SHARE_TOL` (a share of nothing), and where ``label``
    is the worst the words say so instead.

    Args:
        pairs: the pairings (``PairResult`` or ``results.json`` rows: ``agent0``, ``agent1``,
            ``exact_score``).
        game_value: the optimum (value of the game for seat 0, both players optimal).
        label: the agent.
        code: quote agent names as Markdown code.

    Returns:
        ``(shortfall, words)``, ``words`` being e.g. `` (62% of the worst agent's shortfall:
        random, 0.720)`` or empty; ``None`` where ``label`` has no exact score against optimal.
    """
    shorts: dict[str, float] = {}
    for p in pairs:
        row = p if isinstance(p, dict) else p.row()
        if row["agent1"] == "optimal" and row["agent0"] != "optimal":
            if row["exact_score"] is not None:
                shorts[row["agent0"]] = game_value - row["exact_score"]
    if label not in shorts:
        return None
    short = shorts[label]
    worst = max(shorts, key=lambda k: (shorts[k], k))
    if shorts[worst] < SHARE_TOL:
        return short, ""
    if shorts[worst] - short < SHARE_TOL:
        return short, " (the largest shortfall in the field)"
    name = f"`{worst}`" if code else worst
    return short, (f" ({short / shorts[worst]:.0%} of the worst agent's shortfall: {name}, "
                   f"{shorts[worst]:.3f})")  # fmt: skip


def _reference_home() -> str:
    """The edition whose agents' reference heuristic is :data:`REFERENCE` (for the sentences)."""
    from psygym.edition import ids
    from psygym.policies import bots_for

    for eid in ids():
        bots = bots_for(eid)
        if bots is not None and bots.reference == REFERENCE:
            return eid
    return "another"


def statement(res: Any) -> list[str]:
    """Plain sentences: how far ``double-wc`` (or the best heuristic) is from the best and optimum.

    ``res`` is a ``psygym_experiments.harness.compare_field.ScenarioResult``.
    """
    ev = res.evaluation
    seats = entry_seats(res)
    board = [r for r in board_of(res) if r.rank is not None]
    if not board:
        return [f"{res.edition} {res.scenario}: no agents."]
    smap = seat_map(ev, seats)
    index = {label: i for i, label in enumerate(ev.agents)}
    where = f"{res.edition} {res.scenario}"
    if REFERENCE in index:
        ref, intro = REFERENCE, ""
    else:
        heur = [r for r in board if r.kind == "heuristic"]
        if not heur:
            return [
                f"{where}: {REFERENCE} is a {_reference_home()}-edition rule and this edition "
                f"has no heuristics to stand in for it; best agent: {board[0].label} "
                f"({board[0].mean:+.2f} ± {board[0].ci95:.2f} per game)."
            ]
        ref = heur[0].label
        intro = (
            f"({REFERENCE} is a {_reference_home()}-edition rule - there is no dice pool to "
            "commit here - "
            f"so its best heuristic, {ref}, stands in.) "
        )
    r = next(s for s in board if s.label == ref)
    lines = [
        _field_sentence(ev, board, index, where, ref, intro, smap),
        _optimum_sentence(res, index, where, ref, r),
    ]
    match = getattr(res, "search_match", None)
    if match:
        lines.append(search_match_sentence(where, match))
    return lines


def search_match_sentence(where: str, match: dict[str, Any]) -> str:
    """One plain sentence on ``search``'s head-to-head match against the round-robin's leader.

    ``match`` is a compare ``ScenarioResult.search_match``: the margin is ``search``'s mean score
    per game over both seats with its 95% interval; a clear verdict only when that interval
    excludes 0.
    """
    m, h, n = match["margin"], match["ci95"], match["games_per_seat"]
    opp = f"{match['opponent']} ({match.get('opponent_kind', '')}, the leader of the field)"
    figure = f"{m:+.2f} ± {h:.2f} per game over {n} games per seat, both seats"
    if not match.get("decided"):
        return (
            f"{where}: search against {opp}: {figure}; no clear difference at this budget "
            "(psygym evaluate --until-clear plays on until the interval excludes 0)."
        )
    verb = "beats" if m > 0 else "loses to"
    return f"{where}: search {verb} {opp}: {figure} (95% interval excludes 0)."


def _field_sentence(
    ev: Any, board: list[Standing], index: dict[str, int], where: str, ref: str, intro: str,
    smap: dict[int, tuple[int, ...]] | None = None,
) -> str:  # fmt: skip
    """How ``ref`` does against the field: the best agent, or how far from the best."""
    r = next(s for s in board if s.label == ref)
    mine = agent_games(ev.pairs, index[ref], smap)
    twins = [
        s.label for s in board
        if s.label != ref and np.array_equal(agent_games(ev.pairs, index[s.label], smap), mine)
        and s.exact == r.exact
    ]  # fmt: skip
    others = [s for s in board if s.label != ref and s.label not in twins]
    top = board[0].label == ref or board[0].label in twins
    text = (
        f"{where}: {intro}{ref} scores {r.mean:+.2f} ± {r.ci95:.2f} per game against the "
        f"field{_exact(r.exact)}, averaged over all opponents and both seats"
    )
    if twins:
        text += (f" (the same score in every game as {', '.join(twins)}: they play alike "
                 f"here)")  # fmt: skip
    if top and others:
        nxt = others[0]
        g, gh = gap(ev, index[ref], index[nxt.label], smap)
        text += (
            f"; it is the best agent{' (tied)' if twins else ''}, {g:.2f} ± {gh:.2f} per game "
            f"ahead of the next, {nxt.label} ({nxt.mean:+.2f} ± {nxt.ci95:.2f}"
            f"{_exact(nxt.exact)})."
        )
    elif not top:
        best = board[0]
        g, gh = gap(ev, index[best.label], index[ref], smap)
        h, hh, hx = head_to_head(ev, index[ref], index[best.label])
        if best.exact is not None and r.exact is not None:
            short = (f"{best.exact - r.exact:.3f} per game (exact; sampled {g:+.2f} ± "
                     f"{gh:.2f})")  # fmt: skip
        else:
            short = f"{g:.2f} ± {gh:.2f} per game"
        text += (
            f"; {rank_words(r.rank, board)}. The best agent, {best.label}, scores "
            f"{best.mean:+.2f} ± {best.ci95:.2f}{_exact(best.exact)}: {ref} falls short of it "
            f"by {short}. Head to head over both seats {ref} scores {h:+.2f} ± {hh:.2f} per "
            f"game against {best.label}{_exact(hx)}."
        )
    else:
        text += "."
    return text


def _optimum_sentence(res: Any, index: dict[str, int], where: str, ref: str, r: Standing) -> str:
    """How ``ref`` does against the exact optimum, or why there is none."""
    ev = res.evaluation
    if res.game_value is not None and "optimal" in index:
        v = res.game_value
        look = pair_lookup(ev.pairs)
        p0 = look[(index[ref], index["optimal"])]
        p1 = look[(index["optimal"], index[ref])]
        line = (
            f"{where}: as seat 0 against the optimal player, {ref} scores "
            f"{p0.mean_score:+.2f} ± {p0.ci95:.2f} per game{_exact(p0.exact_score)}; the exact "
            f"optimum (both players optimal) is {v:+.3f}"
        )
        found = optimum_shortfall(ev.pairs, v, ref)
        if found is not None:
            line += f"; {ref} falls short of the optimum by {found[0]:.3f}{found[1]}"
        if p1.exact_score is not None:
            line += (
                f". As seat 1 it concedes {p1.exact_score - v:.3f} per game more than optimal "
                f"play would"
            )
        if r.exploitability is not None:
            line += f". Its exploitability is {r.exploitability:.3f} per game"
        return line + "."
    elif res.game_value is not None:
        line = (f"{where}: the exact optimum (both players optimal) is {res.game_value:+.3f} per "
                f"game for seat 0 (the optimal agent is not in this field)")  # fmt: skip
        if r.exploitability is not None:
            line += f"; {ref}'s exploitability is {r.exploitability:.3f} per game"
        return line + "."
    else:
        why = res.value_note or "the solver is not available"
        return f"{where}: no exact optimum ({why})."


def _exact(x: float | None) -> str:
    return "" if x is None else f" (exact {x:+.3f})"


__all__ = [
    "REFERENCE", "SHARE_TOL", "Standing", "agent_exact", "agent_games", "board_of", "counted",
    "entry_seats", "gap", "head_to_head", "leaderboard", "optimum_shortfall", "pair_lookup",
    "rank_words", "search_match_sentence", "seat_baseline", "seat_exploitability", "seat_map",
    "statement", "twins",
]  # fmt: skip
