"""The comparison report: leaderboards, head-to-head tables, exact values, plots and report.md.

The definitions the report uses are in :data:`DEFINITIONS` (printed in every report).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from psygym_experiments.common import edition_tool
from psygym_experiments.harness.output import strict_json, write_json
from psygym_experiments.harness.standings import (
    REFERENCE,
    Standing,
    board_of,
    entry_seats,
    head_to_head,
    search_match_sentence,
    seat_baseline,
    statement,
)
from psygym_experiments.harness.tournament_results import CSV_COLUMNS, csv_text

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
    "DEFINITIONS", "dice_rows", "dice_summary", "h2h_matrix", "leaderboard_table",
    "plot_dice", "plot_dice_noted", "plot_head_to_head", "plot_leaderboard", "scenario_doc",
    "write_report",
]  # fmt: skip
