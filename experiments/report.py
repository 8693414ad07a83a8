"""The comparison report: leaderboards, head-to-head tables, exact values, plots and report.md.

The definitions the report uses are in :data:`DEFINITIONS` (printed in every report).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from psygym_experiments.common import edition_tool
from psygym_experiments.harness.games import mean_ci
from psygym_experiments.harness.output import strict_json, write_json
from psygym_experiments.harness.tournament import CSV_COLUMNS, PairResult, csv_text

DEFINITIONS = """\
- **Score**: the game's zero-sum score (wounds and value inflicted minus suffered) per game, from
  the named agent's point of view.
- **Leaderboard score**: an agent's mean score per game over every opponent in the field and both
  seats. Game *i* of every pairing uses the same seed (common random numbers), so the 95%
  interval is taken over games, of each game's average across the agent's pairings (the games are
  independent, the pairings are not).
- **Rank / best agent**: by the exact leaderboard score when every pairing has an exact value,
  else by the sampled one. The rank is the agent's row in the leaderboard table: agents that
  played identically share a row, and a model scored on one seat only is not ranked.
  **Falls short by**: the difference of leaderboard scores, with a paired 95% interval (and the
  exact difference when known).
- **Head to head**: A's mean score against B, averaged over A in seat 0 and A in seat 1.
- **Optimum** (where the exact solver can solve the scenario): the value of the game for seat 0
  when both players play optimally. An agent's shortfall is the optimum minus its exact expected
  score as seat 0 against the optimal player; its share is of the worst agent's shortfall (the
  optimum itself may be near 0, so a share of it would mean nothing).
- **Exploitability**: what a best response gains against the agent over the game value, averaged
  over both seats (`psygym_agents.solvers.evaluate.exploitability`); 0 for optimal play."""
"""How the report's numbers are defined (Markdown)."""

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


# ----------------------------------------------------------------------------- plots
def plot_leaderboard(board: Sequence[Standing], path: Path, title: str) -> Path:
    """Horizontal bars of each agent's mean score with 95% intervals (and exact values)."""
    from psygym_experiments.report_plots import plot_leaderboard as draw

    return draw(board, path, title, REFERENCE)


def h2h_matrix(ev: Any, order: Sequence[str]) -> np.ndarray:
    """Row agent's score against column agent over both seats (exact where known)."""
    index = {label: i for i, label in enumerate(ev.agents)}
    n = len(order)
    m = np.zeros((n, n))
    for r, a in enumerate(order):
        for c, b in enumerate(order):
            if a != b:
                mean, _, exact = head_to_head(ev, index[a], index[b])
                m[r, c] = exact if exact is not None else mean
    return m


def plot_head_to_head(ev: Any, order: Sequence[str], path: Path, title: str) -> Path:
    """Heatmap of row agent's mean score against column agent over both seats."""
    from psygym_experiments.report_plots import plot_head_to_head as draw

    return draw(h2h_matrix(ev, order), order, path, title)


def _dice_tool(edition: str, name: str) -> Any:
    tool = edition_tool(edition, name)
    if tool is None:
        raise ImportError(f"edition {edition} declares no {name} tool")
    return tool


def dice_rows(edition: str, quick: bool = False) -> list[dict[str, Any]]:
    """The optimal-dice table of ``edition`` (its agents' ``dice_table`` tool).

    ``quick`` makes it smaller (6 dice, 2 enemy dice).

    Raises:
        ImportError: the dice-table module is not installed.
    """
    optimal_dice_table = _dice_tool(edition, "dice_table")
    return optimal_dice_table(6, 2) if quick else optimal_dice_table()


def dice_summary(rows: Sequence[dict[str, Any]]) -> str:
    """One sentence: how often ``double-wc`` commits the optimal dice and what it loses."""
    if not rows:
        return ""
    same = sum(r["double_wc_dice"] == r["best_dice"] for r in rows)
    losses = [r["loss"] for r in rows]
    worst = max(rows, key=lambda r: r["loss"])
    pools = max(r["pool"] for r in rows)
    enemies = max(r["enemy_dice"] for r in rows)
    return (
        f"Over {len(rows)} situations (warp charge 1-3, 1-{pools} dice, 0-{enemies} enemy deny "
        f"dice, one power worth 2 left to cast), double-wc commits the optimal number of dice in "
        f"{same} ({same / len(rows):.0%}); it loses {np.mean(losses):.3f} per cast on average "
        f"and at most {worst['loss']:.3f} (warp charge {worst['warp_charge']}, {worst['pool']} "
        f"dice, {worst['enemy_dice']} enemy dice: optimal {worst['best_dice']}, double-wc "
        f"{worst['double_wc_dice']})."
    )


def plot_dice(
    edition: str, path: Path, rows: Sequence[dict[str, Any]] | None, notes: list[str]
) -> Path | None:
    """The heatmap of optimal dice by pool size and warp charge, beside double-wc.

    ``rows`` come from :func:`dice_rows` (``None``: compute them here; empty: no plot, the
    caller has said why). When the edition's dice-table tools are missing or fail, a note says
    so and no plot is made.
    """
    if rows is not None and not rows:
        return None
    try:
        plot_dice_table = _dice_tool(edition, "plot_dice_table")
    except ImportError as exc:
        notes.append(f"No optimal-dice heatmap: the dice-table module is not installed ({exc}).")
        return None
    try:
        table = list(rows) if rows is not None else dice_rows(edition)
        plot_dice_table(table, path)
    except Exception as exc:  # noqa: BLE001 - a plot failure must not lose the report
        notes.append(f"No optimal-dice heatmap: {type(exc).__name__}: {exc}.")
        return None
    return path if path.is_file() else None


def plot_dice_noted(
    edition: str, path: Path, rows: Sequence[dict[str, Any]] | None
) -> tuple[Path | None, list[str]]:
    """:func:`plot_dice` with its notes returned (for a worker process): ``(png, notes)``."""
    notes: list[str] = []
    return plot_dice(edition, path, rows, notes), notes


# ----------------------------------------------------------------------------- documents
def scenario_doc(res: Any) -> dict[str, Any]:
    """The JSON record of one scenario's comparison."""
    ev = res.evaluation
    board = board_of(res)
    index = {label: i for i, label in enumerate(ev.agents)}
    text = {e.label: getattr(e, "description", "") or e.source for e in res.entries}
    seats = entry_seats(res)
    by_label = {r.label: r for r in board}
    rows = []
    ranked: dict[int, list[str]] = {}  # rank -> the agents of its row (twins share one)
    for r in board:
        if r.rank is not None:
            ranked.setdefault(r.rank, []).append(r.label)
    restricted = [r.label for r in board if r.rank is None]
    for group in [*ranked.values(), *([x] for x in restricted)]:
        r = by_label[group[0]]
        rows.append({
            **r.__dict__, "labels": group, "description": text.get(group[0], ""),
            "descriptions": {g: text.get(g, "") for g in group},
            "seats": list(seats.get(group[0], (0, 1))),
            "baseline": seat_baseline(ev, seats.get(group[0], (0, 1)), restricted),
        })  # fmt: skip
    h2h = (
        {
            a: {
                b: dict(zip(("mean", "ci95", "exact"), head_to_head(ev, index[a], index[b])))
                for b in ev.agents
                if b != a
            }
            for a in ev.agents
        }
        if len(ev.agents) > 1
        else {}
    )
    return strict_json(
        {
            "edition": res.edition,
            "scenario": res.scenario,
            "description": res.description,
            "episodes": ev.episodes,
            "seed": ev.seed,
            "seconds": round(res.seconds, 1),
            "timing": {k: round(v, 1) for k, v in getattr(res, "timing", {}).items()},
            "agents": [
                {
                    "label": e.label,
                    "spec": e.spec,
                    "kind": e.kind,
                    "source": e.source,
                    "description": text.get(e.label, ""),
                    "seats": list(seats[e.label]),
                }
                for e in res.entries
            ],  # fmt: skip
            "rows": rows,
            "best_response": ev.best_response,
            "game_value": res.game_value,
            "value_note": res.value_note,
            "leaderboard": [r.__dict__ for r in board],
            "head_to_head": h2h,
            "pairs": [p.row() for p in ev.pairs],
            "exploitability": ev.exploitability,
            "statement": statement(res),
            "search_match": getattr(res, "search_match", None),
            "notes": res.notes,
        }
    )


def leaderboard_table(doc: dict[str, Any], width: int = 80) -> list[Any]:
    """Rich tables of the leaderboards in a compare ``results.json`` document.

    Each fits ``width`` columns: agents that played identically share a row (names joined by
    ``=``, folded onto further lines rather than cut), the kind is a one-letter tag, and an
    agent scored on one seat only is marked with that seat.
    """
    from rich.table import Table

    tags = {"heuristic": "h", "baseline": "b", "tuned": "t", "ppo": "p", "optimal": "o"}
    tables = []
    for sc in doc["scenarios"]:
        t = Table(
            title=f"{sc['edition']} {sc['scenario']}: score per game vs all opponents, both "
            f"seats ({sc['episodes']} games per pairing and seat)",
            width=width,
            caption="kind: h heuristic, b baseline, t tuned, p PPO, o optimal; s0: plays and "
            "is scored on seat 0 only (not ranked); = played identically",
        )
        t.add_column("#", justify="right", no_wrap=True)
        t.add_column("agent", overflow="fold", ratio=1)
        t.add_column("kind", no_wrap=True)
        for c in ("score", "± 95%", "exact", "exploitability"):
            t.add_column(c, justify="right", no_wrap=True)
        for r in sc["rows"]:
            seat = "" if r["seats"] == [0, 1] else f" s{','.join(map(str, r['seats']))}"
            t.add_row(
                "-" if r["rank"] is None else str(r["rank"]),
                " = ".join(r["labels"]),
                tags.get(r["kind"], r["kind"][:1]) + seat,
                f"{r['mean']:+.3f}",
                "-" if r["ci95"] is None else f"{r['ci95']:.3f}",
                _num(r["exact"]),
                _num(r["exploitability"]),
            )
        tables.append(t)
    return tables


def _num(x: float | None, digits: int = 3) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:+.{digits}f}"


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> list[str]:
    """A Markdown table; the first ``left`` columns are left-aligned, the others right."""
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(":---" if k < left else "---:" for k in range(len(header))) + "|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def _slug(res: Any) -> str:
    return f"{res.edition}-{Path(res.scenario).stem}"


def _write_results_csv(path: Path, results: Sequence[Any]) -> None:
    """``results.csv``: every pairing and seat of every scenario."""
    parts = []
    for k, res in enumerate(results):
        text = csv_text(res.evaluation.pairs, {"edition": res.edition, "scenario": res.scenario})
        parts.append(text if k == 0 else text.split("\n", 1)[1])
    if not parts:
        parts = [",".join(("edition", "scenario", *CSV_COLUMNS)) + "\n"]
    path.write_text("".join(parts))


def write_report(
    run_dir: Path,
    results: Sequence[Any],
    settings: Any,
    *,
    notes: Sequence[str] = (),
    seconds: float = 0.0,
    tables: dict[str, list[dict[str, Any]]] | None = None,
    pool: Any = None,
) -> Path:
    """Write ``report.md``, ``report.html``, ``results.csv``, ``results.json`` and the plots.

    Args:
        run_dir: the compare run folder.
        results: one ``ScenarioResult`` per scenario.
        settings: the ``CompareSettings``.
        notes: sentences about editions left out.
        seconds: total wall time.
        tables: edition -> its exact answer tables
            (:func:`psygym_experiments.report_answers.compute_tables`; an edition missing
            here has none).
        pool: a process pool to draw the plots in while this process writes the rest
            (``None``: drawn here).

    Returns:
        The path of ``report.md``.
    """
    run_dir = Path(run_dir)
    all_notes = list(notes)
    tables = dict(tables or {})
    _write_results_csv(run_dir / "results.csv", results)
    dice, dice_edition = None, None
    for eid, ts in tables.items():
        commit = next((t for t in ts if t.get("kind") == "commit" and t.get("data")), None)
        if commit is not None and any(res.edition == eid for res in results):
            dice, dice_edition = commit["data"], eid
            break

    docs = [scenario_doc(res) for res in results]
    headline = [line for d in docs for line in d["statement"]]
    plots: dict[str, list[str]] = {}
    drawings = _drawings(results, run_dir, plots)
    dice_png, dice_text = None, ""
    dice_args = None
    if dice_edition is not None and any(res.edition == dice_edition for res in results):
        dice_args = (dice_edition, run_dir / f"dice-table-{dice_edition}.png", dice)
    # The heat map first: it is the slowest drawing, and the report waits for it.
    dice_job = None
    if pool is not None and dice_args is not None:
        dice_job = pool.submit(plot_dice_noted, *dice_args)
    jobs = [pool.submit(*d) for d in drawings] if pool is not None else []
    if dice_args is not None:
        dice_png, dice_notes = (dice_job.result() if dice_job is not None
                                else plot_dice_noted(*dice_args))  # fmt: skip
        all_notes += dice_notes
        if dice_png is not None:
            dice_text = dice_summary(dice)
            headline.append(f"{dice_edition} optimal dice: {dice_text}")

    doc = {
        "settings": strict_json(dict(settings.__dict__)),
        "seconds": round(seconds, 1),
        "definitions": DEFINITIONS,
        "headline": headline,
        "scenarios": docs,
        "notes": all_notes,
        "plots": {**plots, **({"dice_table": dice_png.name} if dice_png else {})},
        "dice_table": strict_json(list(dice)) if dice_png is not None and dice else None,
        "answer_tables": {
            eid: [{k: v for k, v in t.items() if k != "data"} for t in ts]
            for eid, ts in tables.items()
        },
    }
    write_json(run_dir / "results.json", doc, strict=False)

    md = _markdown(results, docs, settings, all_notes, plots, (dice_png, dice_text, dice_edition),
                   seconds, tables)  # fmt: skip
    path = run_dir / "report.md"
    path.write_text(md)
    for job in jobs:
        job.result()
    if pool is None:
        for fn, *args in drawings:
            fn(*args)
    from psygym_experiments.report_html import write_html

    write_html(run_dir / "report.html", md, run_dir)
    return path


def _drawings(results: Sequence[Any], run_dir: Path, plots: dict[str, list[str]]) -> list[tuple]:
    """The plots of every scenario, as ``(function, *arguments)``, the slowest first.

    Each is a call of :mod:`psygym_experiments.report_plots` on plain values (so that a worker
    process can draw it); ``plots`` gets each scenario's PNG names, in the report's order.
    """
    from psygym_experiments import report_plots

    heat, bars = [], []
    for res in results:
        board = board_of(res)
        name = f"leaderboard-{_slug(res)}.png"
        seats = entry_seats(res)
        shown = [
            r if seats.get(r.label, (0, 1)) == (0, 1) else Standing(**{
                **r.__dict__,
                "label": f"{r.label} (seat {', '.join(map(str, seats[r.label]))} only)"})
            for r in board
        ]  # fmt: skip
        bars.append((report_plots.plot_leaderboard, shown, run_dir / name,
                     f"{res.edition} {res.scenario}", REFERENCE))  # fmt: skip
        plots[_slug(res)] = [name]
        if len(board) > 1:
            name = f"head-to-head-{_slug(res)}.png"
            order = [r.label for r in board]
            title = f"{res.edition} {res.scenario}: head to head"
            heat.append((report_plots.plot_head_to_head, h2h_matrix(res.evaluation, order),
                         order, run_dir / name, title))  # fmt: skip
            plots[_slug(res)].append(name)
    return heat + bars


def _md_pairs(d: dict[str, Any]) -> list[str]:
    """The table of every pairing and seat of one scenario."""
    lines: list[str] = []
    lines += [
        "### Every pairing and seat",
        "",
        "Score of seat 0 (95% CI), exact expected score, wins/draws/losses of seat 0, "
        "Perils per power attempted, dice spent per manifested power and deny success "
        "for each seat.",
        "",
    ]
    rows = []
    for p in d["pairs"]:
        rows.append(
            [
                p["agent0"],
                p["agent1"],
                f"{p['mean_score']:+.3f} ± {p['ci95']:.3f}",
                _num(p["exact_score"]),
                f"{p['wins']}/{p['draws']}/{p['losses']}",
                _rate(p["perils_rate0"]),
                _rate(p["perils_rate1"]),
                _dec(p["dice_per_manifest0"]),
                _dec(p["dice_per_manifest1"]),
                _rate(p["deny_rate0"]),
                _rate(p["deny_rate1"]),
            ]
        )
    lines += _md_table(
        [
            "seat 0",
            "seat 1",
            "score",
            "exact",
            "W/D/L",
            "perils 0",
            "perils 1",
            "dice/manifest 0",
            "dice/manifest 1",
            "deny 0",
            "deny 1",
        ],
        rows,
        left=2,
    )
    lines += [""]
    return lines


def _md_scenario(res: Any, d: dict[str, Any], plots: dict[str, list[str]]) -> list[str]:
    """The Markdown section of one scenario."""
    lines: list[str] = []
    slug = _slug(res)
    lines += [f"## {res.edition} {res.scenario}", ""]
    if res.description:
        lines += [" ".join(res.description.split()), ""]
    gv = d["game_value"]
    if gv is not None:
        optimum = f"Exact optimum (value of the game for seat 0, both optimal): {gv:+.4f}."
    else:
        optimum = f"No exact optimum: {res.value_note}."
    t = d.get("timing") or {}
    detail = (
        f" (agents ready after {t['agents']:.0f} s, waited {t['solver_wait']:.0f} s "
        "for the "
        f"solver, games and exact values {t['games_and_exact']:.0f} s)"
        if {"agents", "solver_wait", "games_and_exact"} <= set(t)
        else ""
    )
    lines += [optimum, f"Time: {d['seconds']:.0f} s{detail}.", ""]
    lines += ["Agents:", ""]
    lines += [f"- `{a['label']}` ({a['kind']}, {a['source']}): {a['description']}"
              for a in d["agents"]]  # fmt: skip
    lines += ["", "### Leaderboard (mean score per game vs all opponents, both seats)", ""]
    lines += _md_table(
        ["#", "agent", "kind", "score", "± 95%", "exact", "exploitability", "how it plays"],
        [
            [
                str(r["rank"]),
                " = ".join(f"`{x}`" for x in r["labels"]),
                r["kind"] + ("" if r["seats"] == [0, 1] else
                             f" (seat {', '.join(map(str, r['seats']))} only)"),
                f"{r['mean']:+.3f}",
                "-" if r["ci95"] is None else f"{r['ci95']:.3f}",
                _num(r["exact"]),
                _num(r["exploitability"]),
                _row_text(r),
            ]
            for r in d["rows"]
            if r["rank"] is not None
        ],
        left=3,
    )  # fmt: skip
    lines += [""]
    merged = [r for r in d["rows"] if len(r["labels"]) > 1]
    if merged:
        lines += ["Agents joined by `=` played identically: the same score in every game "
                  "against every other agent, in both seats.", ""]  # fmt: skip
    lines += _ppo_lines(d)
    for name in plots.get(slug, []):
        lines += [f"![{name}]({name})", ""]
    order = [r["label"] for r in d["leaderboard"]]
    if len(order) > 1:
        lines += [
            "### Head to head (row's mean score against column, both seats)",
            "",
            "Exact values where the solver computed them, else sampled (in italics).",
            "",
        ]
        one_seat = [r for r in d["rows"] if r["seats"] != [0, 1]]
        if one_seat:
            lines += [
                "An agent marked with a seat plays that seat only, so its cells count only "
                "the games in which it sat there: "
                + ", ".join(f"`{r['labels'][0]}` seat {', '.join(map(str, r['seats']))}"
                            for r in one_seat)
                + "; `-`: the two never meet (both play the same seat only).",
                "",
            ]  # fmt: skip
        lines += _md_table(
            ["", *order],
            [[a, *(_h2h_cell(d["head_to_head"], a, b) for b in order)] for a in order],
        )
        lines += [""]
    match = d.get("search_match")
    if match:
        lines += [
            "### search against the leader (head to head, both seats)",
            "",
            "`search` is too slow for the round-robin (seconds a game), so it plays the field's "
            "leader over both seats with the round-robin's seeds (common random numbers): "
            "its mean score per game, with its 95% interval.",
            "",
        ]
        lines += _md_table(
            ["opponent", "games per seat", "margin", "± 95%", "search in seat 0", "in seat 1",
             "time"],
            [[f"`{match['opponent']}`", str(match["games_per_seat"]), f"{match['margin']:+.3f}",
              f"{match['ci95']:.3f}", f"{match['seat0_mean']:+.3f}",
              f"{match['seat1_mean']:+.3f}", f"{match['seconds']:.0f} s"]],
        )  # fmt: skip
        lines += ["", search_match_sentence(f"{res.edition} {res.scenario}", match), ""]
    lines += _md_pairs(d)
    if d["notes"]:
        lines += ["Notes:", ""] + [f"- {n}" for n in d["notes"]] + [""]
    return lines


def _md_dice(results: Sequence[Any], dice: tuple[Path | None, str, str | None]) -> list[str]:
    """The optimal-dice section (empty when no compared edition has a dice table)."""
    dice_png, dice_text, dice_edition = dice
    lines: list[str] = []
    if dice_edition is not None and any(res.edition == dice_edition for res in results):
        lines += [f"## {dice_edition} edition: optimal dice by pool size and warp charge", ""]
        if dice_png is not None:
            lines += [
                "The exact optimal number of dice to commit, by dice left in the pool, warp "
                "charge and enemy deny dice, beside `double-wc`'s rule (twice the warp charge; "
                "in brackets where it differs). " + dice_text,
                "",
                f"![{dice_png.name}]({dice_png.name})",
                "",
            ]
        else:
            lines += ["Not drawn (see the notes).", ""]
    return lines


def _markdown(
    results: Sequence[Any],
    docs: Sequence[dict[str, Any]],
    settings: Any,
    notes: Sequence[str],
    plots: dict[str, list[str]],
    dice: tuple[Path | None, str, str | None],
    seconds: float,
    tables: dict[str, list[dict[str, Any]]] | None = None,
) -> str:
    from psygym_experiments.report_answers import answers_md

    _, dice_text, dice_edition = dice
    s = settings
    lines = [
        "# psygym comparison report",
        "",
        f"Editions: {', '.join(s.editions)}. Scenarios: "
        f"{', '.join(f'{e} {n}' for e, n in s.scenarios)}. {s.episodes} games per pairing and "
        f"seat, seed {s.seed} (game i of every pairing uses seed {s.seed} + i: common random "
        f"numbers), {s.workers} worker process(es){', --quick budget' if s.quick else ''}. "
        f"Wall time {seconds:.0f} s.",
        "",
        "Scenarios: each edition's default scenario, plus its `single-phase` scenario where one is "
        "shipped (one Psychic phase, meant to be small enough for the exact solver). The field: "
        "every heuristic of the edition and `random`, the Optuna-tuned parametric policy "
        "(`tuned`), a MaskablePPO agent (`ppo`) and the exact solver (`optimal`) where the game "
        f"is solved within {s.solve_seconds:.0f} s of CPU time and {s.max_states} states.",
        "",
    ]
    lines += answers_md(results, docs, tables or {}, REFERENCE)
    lines += ["## Headline", ""]
    lines += [f"- {h}" for h in (line for d in docs for line in d["statement"])]
    if dice_text:
        lines += [f"- {dice_edition} optimal dice: {dice_text}"]
    lines += ["", "## How to read the numbers", "", DEFINITIONS, ""]
    for res, d in zip(results, docs):
        lines += _md_scenario(res, d, plots)
    lines += _md_dice(results, dice)
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    lines += [
        "Files: `results.csv` (one row per scenario, pairing and seat), `results.json` "
        "(everything above), `config.json`, `command.txt`.",
        "",
    ]
    return "\n".join(lines)


def _row_text(row: dict[str, Any]) -> str:
    """The description column of a merged leaderboard row."""
    texts = row.get("descriptions") or {}
    if len(row["labels"]) == 1:
        return row["description"]
    return "; ".join(f"{n}: {texts.get(n, '')}" for n in row["labels"])


def _ppo_lines(d: dict[str, Any]) -> list[str]:
    """Honest RL scoring: each model's seats, value against optimal play and exploitability."""
    out = []
    gv = d.get("game_value")
    pairs = {(p["agent0"], p["agent1"]): p for p in d["pairs"]}
    for a in d["agents"]:
        if a["kind"] != "ppo":
            continue
        seats = a["seats"]
        text = (f"`{a['label']}` plays and is scored only on the seat(s) it was trained for: "
                f"{', '.join(map(str, seats))}")  # fmt: skip
        row = next((r for r in d["rows"] if a["label"] in r["labels"]), None)
        if seats != [0, 1]:
            text += (" (so it is not ranked: a seat's score includes that seat's advantage; it "
                     "never sits in the other seat)")  # fmt: skip
            if row is not None:
                text += f"; it scores {row['mean']:+.2f} ± {row['ci95']:.2f} per game there"
                if row["exact"] is not None:
                    text += f" (exact {row['exact']:+.3f})"
                base = row.get("baseline") or {}
                if base.get("mean") is not None:
                    b = base["exact"] if base.get("exact") is not None else base["mean"]
                    text += f", where the other agents average {b:+.3f} against the same field"
        vals = []
        for seat in seats:
            p = pairs.get((a["label"], "optimal") if seat == 0 else ("optimal", a["label"]))
            if p is not None and p["exact_score"] is not None:
                mine = p["exact_score"] if seat == 0 else -p["exact_score"]
                opt = gv if seat == 0 else -gv
                vals.append(f"as seat {seat} against the optimal player it scores exact "
                            f"{mine:+.3f} (optimal play: {opt:+.3f})")  # fmt: skip
        if vals:
            text += "; " + "; ".join(vals)
        if row is not None and row["exploitability"] is not None:
            text += f"; its exploitability on those seats is {row['exploitability']:.3f} per game"
        elif gv is None:
            text += "; the game is not solved, so no value against optimal play or exploitability"
        out.append(text + ".")
    return (out + [""]) if out else []


def _h2h_cell(h2h: dict[str, Any], a: str, b: str) -> str:
    if a == b:
        return "·"
    cell = h2h[a][b]
    if cell.get("exact") is not None:
        return f"{cell['exact']:+.3f}"
    if cell.get("mean") is None or not np.isfinite(cell["mean"]):
        return "-"
    return f"*{cell['mean']:+.2f}*"


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _dec(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


__all__ = [
    "Standing", "leaderboard", "head_to_head", "gap", "statement", "agent_games", "agent_exact",
    "plot_leaderboard", "plot_head_to_head", "plot_dice", "plot_dice_noted", "write_report",
    "leaderboard_table", "scenario_doc", "REFERENCE",
]  # fmt: skip
