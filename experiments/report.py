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
  else by the sampled one. **Falls short by**: the difference of leaderboard scores, with a
  paired 95% interval (and the exact difference when known).
- **Head to head**: A's mean score against B, averaged over A in seat 0 and A in seat 1.
- **Optimum** (where the exact solver can solve the scenario): the value of the game for seat 0
  when both players play optimally. An agent's shortfall is the optimum minus its exact expected
  score as seat 0 against the optimal player.
- **Exploitability**: what a best response gains against the agent over the game value, averaged
  over both seats (`psygym_agents.solvers.evaluate.exploitability`); 0 for optimal play."""
"""How the report's numbers are defined (Markdown)."""

REFERENCE = "double-wc"
"""The rule of thumb whose distance to the best agent and to the optimum the report states."""


@dataclass
class Standing:
    """One agent's line of a leaderboard.

    Attributes:
        rank: 1 for the best.
        label: agent label.
        kind: heuristic, baseline, tuned, ppo or optimal.
        mean: mean score per game over all opponents and both seats.
        ci95: half-width of its 95% interval.
        exact: the exact value of the same average, when every pairing has one.
        exploitability: what a best response gains against it, when known.
        games: games the agent played.
    """

    rank: int
    label: str
    kind: str
    mean: float
    ci95: float
    exact: float | None
    exploitability: float | None
    games: int


# ----------------------------------------------------------------------------- numbers
def agent_games(pairs: Sequence[PairResult], index: int) -> np.ndarray:
    """Per game, the agent's score averaged over all its pairings (both seats, all opponents)."""
    rows = [
        p.scores if p.index0 == index else -p.scores
        for p in pairs
        if index in (p.index0, p.index1) and p.index0 != p.index1
    ]
    if not rows:
        return np.zeros(0)
    return np.mean(np.vstack(rows), axis=0)


def agent_exact(pairs: Sequence[PairResult], index: int) -> float | None:
    """The exact counterpart of :func:`agent_games`' mean, if every pairing has its exact score."""
    vals = [
        p.exact_score if p.index0 == index else (None if p.exact_score is None else -p.exact_score)
        for p in pairs
        if index in (p.index0, p.index1) and p.index0 != p.index1
    ]
    if not vals or any(v is None for v in vals):
        return None
    return float(np.mean(vals))


def leaderboard(ev: Any, kinds: dict[str, str] | None = None) -> list[Standing]:
    """Agents ranked by mean score per game over all opponents and both seats.

    The rank follows the exact value of that average when every agent has one (no sampling
    noise), else the sampled mean.
    """
    kinds = kinds or {}
    rows = []
    for i, label in enumerate(ev.agents):
        x = agent_games(ev.pairs, i)
        m, half = mean_ci(x)
        games = sum(p.episodes for p in ev.pairs if i in (p.index0, p.index1))
        rows.append(
            Standing(
                0,
                label,
                kinds.get(label, ""),
                m,
                half,
                agent_exact(ev.pairs, i),
                ev.exploitability.get(label),
                games,
            )
        )
    by_exact = bool(rows) and all(r.exact is not None for r in rows)

    def key(r: Standing) -> tuple[float, str]:
        x = r.exact if by_exact else r.mean
        return (-(x if x is not None and math.isfinite(x) else -1e18), r.label)

    rows.sort(key=key)
    for k, r in enumerate(rows, 1):
        r.rank = k
    return rows


def pair_lookup(pairs: Sequence[PairResult]) -> dict[tuple[int, int], PairResult]:
    """(seat-0 agent index, seat-1 agent index) -> result."""
    return {(p.index0, p.index1): p for p in pairs}


def head_to_head(ev: Any, a: int, b: int) -> tuple[float, float, float | None]:
    """A's mean score against B over both seats, its 95% half-width, and the exact value."""
    look = pair_lookup(ev.pairs)
    p, q = look[(a, b)], look[(b, a)]
    m, half = mean_ci((p.scores - q.scores) / 2)
    exact = None
    if p.exact_score is not None and q.exact_score is not None:
        exact = (p.exact_score - q.exact_score) / 2
    return m, half, exact


def gap(ev: Any, better: int, worse: int) -> tuple[float, float]:
    """Leaderboard score of ``better`` minus that of ``worse``, with a paired 95% half-width."""
    return mean_ci(agent_games(ev.pairs, better) - agent_games(ev.pairs, worse))


def _pct(part: float, whole: float) -> str:
    return f" ({part / abs(whole):.1%})" if abs(whole) > 1e-9 else ""


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

    ``res`` is an ``psygym_experiments.compare.ScenarioResult``.
    """
    ev = res.evaluation
    kinds = {e.label: e.kind for e in res.entries}
    board = leaderboard(ev, kinds)
    if not board:
        return [f"{res.edition} {res.scenario}: no agents."]
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
    return [
        _field_sentence(ev, board, index, where, ref, intro),
        _optimum_sentence(res, index, where, ref, r),
    ]


def _field_sentence(
    ev: Any, board: list[Standing], index: dict[str, int], where: str, ref: str, intro: str
) -> str:
    """How ``ref`` does against the field: the best agent, or how far from the best."""
    r = next(s for s in board if s.label == ref)
    mine = agent_games(ev.pairs, index[ref])
    twins = [
        s.label for s in board
        if s.label != ref and np.array_equal(agent_games(ev.pairs, index[s.label]), mine)
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
        g, gh = gap(ev, index[ref], index[nxt.label])
        text += (
            f"; it is the best agent{' (tied)' if twins else ''}, {g:.2f} ± {gh:.2f} per game "
            f"ahead of the next, {nxt.label} ({nxt.mean:+.2f} ± {nxt.ci95:.2f}"
            f"{_exact(nxt.exact)})."
        )
    elif not top:
        best = board[0]
        g, gh = gap(ev, index[best.label], index[ref])
        h, hh, hx = head_to_head(ev, index[ref], index[best.label])
        if best.exact is not None and r.exact is not None:
            short = (f"{best.exact - r.exact:.3f} per game (exact; sampled {g:+.2f} ± "
                     f"{gh:.2f})")  # fmt: skip
        else:
            short = f"{g:.2f} ± {gh:.2f} per game"
        text += (
            f"; rank {r.rank} of {len(board)}. The best agent, {best.label}, scores "
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
        if p0.exact_score is not None:
            short = v - p0.exact_score
            line += f"; {ref} falls short of the optimum by {short:.3f}{_pct(short, v)}"
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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(reversed(board))
    y = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(rows) + 1.6))
    colors = {"optimal": "#d62728", "ppo": "#9467bd", "tuned": "#2ca02c", "baseline": "#7f7f7f"}
    for k, r in enumerate(rows):
        c = colors.get(r.kind, "#ff7f0e" if r.label == REFERENCE else "#1f77b4")
        ci = r.ci95 if math.isfinite(r.ci95) else 0.0
        ax.barh(k, r.mean, color=c, alpha=0.75)
        ax.errorbar(r.mean, k, xerr=ci, color="black", capsize=3, lw=1)
        if r.exact is not None:
            ax.plot(
                r.exact,
                k,
                marker="x",
                color="black",
                ms=7,
                label="exact" if "exact" not in ax.get_legend_handles_labels()[1] else None,
            )
    ax.set_yticks(y, [r.label for r in rows])
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_xlabel("mean score per game vs all opponents, both seats (95% CI)")
    ax.set_title(title)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_head_to_head(ev: Any, order: Sequence[str], path: Path, title: str) -> Path:
    """Heatmap of row agent's mean score against column agent over both seats."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    index = {label: i for i, label in enumerate(ev.agents)}
    n = len(order)
    m = np.zeros((n, n))
    for r, a in enumerate(order):
        for c, b in enumerate(order):
            if a != b:
                mean, _, exact = head_to_head(ev, index[a], index[b])
                m[r, c] = exact if exact is not None else mean
    lim = max(1e-9, float(np.abs(m).max()))
    fig, ax = plt.subplots(figsize=(0.6 * n + 2.8, 0.5 * n + 2.2))
    im = ax.imshow(m, cmap="RdBu", vmin=-lim, vmax=lim)
    ax.set_xticks(range(n), order, rotation=60, ha="right")
    ax.set_yticks(range(n), order)
    for r in range(n):
        for c in range(n):
            if r != c:
                ax.text(c, r, f"{m[r, c]:+.1f}", ha="center", va="center", fontsize=7)
    fig.colorbar(im, ax=ax, label="row's score vs column, both seats (exact where known)")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


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


# ----------------------------------------------------------------------------- documents
def scenario_doc(res: Any) -> dict[str, Any]:
    """The JSON record of one scenario's comparison."""
    ev = res.evaluation
    kinds = {e.label: e.kind for e in res.entries}
    board = leaderboard(ev, kinds)
    index = {label: i for i, label in enumerate(ev.agents)}
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
                {"label": e.label, "spec": e.spec, "kind": e.kind, "source": e.source}
                for e in res.entries
            ],
            "game_value": res.game_value,
            "value_note": res.value_note,
            "leaderboard": [r.__dict__ for r in board],
            "head_to_head": h2h,
            "pairs": [p.row() for p in ev.pairs],
            "exploitability": ev.exploitability,
            "statement": statement(res),
            "notes": res.notes,
        }
    )


def leaderboard_table(doc: dict[str, Any]) -> list[Any]:
    """Rich tables of the leaderboards in a compare ``results.json`` document."""
    from rich.table import Table

    tables = []
    for sc in doc["scenarios"]:
        t = Table(
            title=f"{sc['edition']} {sc['scenario']}: mean score per game vs all "
            f"opponents, both seats ({sc['episodes']} games per pairing and seat)"
        )
        for c in ("#", "agent", "kind", "score", "± 95%", "exact", "exploitability"):
            t.add_column(c, justify="left" if c in ("agent", "kind") else "right")
        for r in sc["leaderboard"]:
            t.add_row(
                str(r["rank"]),
                r["label"],
                r["kind"],
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
    dice: Sequence[dict[str, Any]] | None = None,
    dice_edition: str | None = None,
) -> Path:
    """Write ``report.md``, ``results.csv``, ``results.json`` and the plots into ``run_dir``.

    Args:
        run_dir: the compare run folder.
        results: one ``ScenarioResult`` per scenario.
        settings: the ``CompareSettings``.
        notes: sentences about editions left out.
        seconds: total wall time.
        dice: the optimal-dice table (:func:`dice_rows`) of ``dice_edition``
            (``None``: computed here if needed).
        dice_edition: the compared edition whose agents have a dice-table tool (``None``:
            no dice table in the report).

    Returns:
        The path of ``report.md``.
    """
    run_dir = Path(run_dir)
    all_notes = list(notes)
    _write_results_csv(run_dir / "results.csv", results)

    docs = [scenario_doc(res) for res in results]
    headline = [line for d in docs for line in d["statement"]]
    plots: dict[str, list[str]] = {}
    for res in results:
        board = leaderboard(res.evaluation, {e.label: e.kind for e in res.entries})
        name = f"leaderboard-{_slug(res)}.png"
        plot_leaderboard(board, run_dir / name, f"{res.edition} {res.scenario}")
        plots[_slug(res)] = [name]
        if len(board) > 1:
            name = f"head-to-head-{_slug(res)}.png"
            plot_head_to_head(
                res.evaluation,
                [r.label for r in board],
                run_dir / name,
                f"{res.edition} {res.scenario}: head to head",
            )
            plots[_slug(res)].append(name)
    dice_png, dice_text = None, ""
    if dice_edition is not None and any(res.edition == dice_edition for res in results):
        dice_png = plot_dice(dice_edition, run_dir / f"dice-table-{dice_edition}.png", dice,
                             all_notes)  # fmt: skip
        if dice_png is not None:
            if dice is None:
                dice = dice_rows(dice_edition)
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
    }
    write_json(run_dir / "results.json", doc, strict=False)

    md = _markdown(results, docs, settings, all_notes, plots, (dice_png, dice_text, dice_edition),
                   seconds)  # fmt: skip
    path = run_dir / "report.md"
    path.write_text(md)
    return path


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
    lines += [f"- `{a['label']}` ({a['kind']}): {a['source']}" for a in d["agents"]]
    lines += ["", "### Leaderboard (mean score per game vs all opponents, both seats)", ""]
    lines += _md_table(
        ["#", "agent", "kind", "score", "± 95%", "exact", "exploitability"],
        [
            [
                str(r["rank"]),
                r["label"],
                r["kind"],
                f"{r['mean']:+.3f}",
                "-" if r["ci95"] is None else f"{r['ci95']:.3f}",
                _num(r["exact"]),
                _num(r["exploitability"]),
            ]
            for r in d["leaderboard"]
        ],
        left=3,
    )
    lines += [""]
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
        lines += _md_table(
            ["", *order],
            [[a, *(_h2h_cell(d["head_to_head"], a, b) for b in order)] for a in order],
        )
        lines += [""]
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
) -> str:
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
        "## Headline",
        "",
    ]
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


def _h2h_cell(h2h: dict[str, Any], a: str, b: str) -> str:
    if a == b:
        return "·"
    cell = h2h[a][b]
    if cell.get("exact") is not None:
        return f"{cell['exact']:+.3f}"
    return f"*{cell['mean']:+.2f}*"


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _dec(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


__all__ = [
    "Standing", "leaderboard", "head_to_head", "gap", "statement", "agent_games", "agent_exact",
    "plot_leaderboard", "plot_head_to_head", "plot_dice", "write_report", "leaderboard_table",
    "scenario_doc", "REFERENCE",
]  # fmt: skip
