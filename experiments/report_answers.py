"""The "Answers" section of the comparison report: a player's questions, in plain words.

Per edition: which agent is best and whether that is beyond noise, how good the reference rule
of thumb is in the real game and in one phase (and why the two differ), and the exact tables
the edition's agents declare with their ``answer_tables`` tool (dice to commit, when to deny),
each titled with the situation it assumes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psygym_experiments.common import edition_tool

TABLE_TOOL = "answer_tables"
"""The ``Bots.tools`` entry that gives an edition's exact answer tables."""


def compute_tables(edition: str, size: str) -> list[dict[str, Any]]:
    """The edition's answer tables (``[]`` when its agents declare none).

    Args:
        edition: edition id.
        size: ``quick``, ``full`` or ``sheet`` (the tool's table sizes).
    """
    tool = edition_tool(edition, TABLE_TOOL)
    return [] if tool is None else list(tool(size))


def editions_with_tables(editions: Sequence[str]) -> list[str]:
    """The editions among ``editions`` whose agents declare answer tables."""
    out = []
    for eid in editions:
        try:
            if edition_tool(eid, TABLE_TOOL) is not None:
                out.append(eid)
        except ImportError:
            continue
    return out


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> list[str]:
    """A Markdown table; the first ``left`` columns are left-aligned, the others right."""
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(":---" if k < left else "---:" for k in range(len(header))) + "|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def _names(row: dict[str, Any]) -> str:
    return " = ".join(f"`{n}`" for n in row["labels"])


def best_answer(res: Any, doc: dict[str, Any]) -> str:
    """Which agent is best on one scenario, by how much, and whether that is beyond noise.

    Ranked by exact values when every agent has one (then there is no noise); otherwise the
    sampled gap between the top two comes with its paired 95% interval, and where that interval
    covers 0 no best agent is named.
    """
    from psygym_experiments.harness.standings import entry_seats, gap, seat_map

    rows = [r for r in doc["rows"] if r["rank"] is not None]
    where = f"{res.edition} {res.scenario}"
    if not rows:
        return f"{where}: no agents scored on both seats."
    top = rows[0]
    if len(rows) == 1:
        return f"{where}: only {_names(top)} played (identically)."
    nxt = rows[1]
    exact = all(r["exact"] is not None for r in rows)
    if exact:
        d = top["exact"] - nxt["exact"]
        if abs(d) < 1e-9:
            return (f"{where}: no difference: {_names(top)} and {_names(nxt)} have the same "
                    f"exact score ({top['exact']:+.3f}).")  # fmt: skip
        return (
            f"{where}: {_names(top)} is best with an exact {top['exact']:+.3f} per game against "
            f"the field, {d:.3f} ahead of {_names(nxt)} ({nxt['exact']:+.3f}); exact values, so "
            f"no sampling noise."
        )
    ev = res.evaluation
    index = {label: i for i, label in enumerate(ev.agents)}
    g, h = gap(ev, index[top["label"]], index[nxt["label"]], seat_map(ev, entry_seats(res)))
    if not abs(g) > h:
        return (
            f"{where}: no measurable difference at the top: {_names(top)} "
            f"({top['mean']:+.2f} ± {top['ci95']:.2f}) and {_names(nxt)} "
            f"({nxt['mean']:+.2f} ± {nxt['ci95']:.2f}) differ by {g:+.2f} ± {h:.2f} per game, "
            f"an interval that covers 0."
        )
    return (
        f"{where}: {_names(top)} is best with {top['mean']:+.2f} ± {top['ci95']:.2f} per game "
        f"against the field, {g:.2f} ± {h:.2f} ahead of {_names(nxt)} (paired 95% interval, "
        f"beyond noise)."
    )


def _reference_line(res: Any, doc: dict[str, Any], ref: str) -> tuple[str, bool]:
    """How ``ref`` does on one scenario, and whether the optimal agent was in that field.

    Its rank and its shortfall from the optimum are those of the Headline
    (:func:`~psygym_experiments.harness.standings.rank_words`,
    :func:`~psygym_experiments.harness.standings.optimum_shortfall`).
    """
    from psygym_experiments.harness.standings import optimum_shortfall, rank_words

    rows = [r for r in doc["rows"] if r["rank"] is not None]
    where = f"{res.edition} {res.scenario}"
    pos = next((k for k, r in enumerate(rows) if ref in r["labels"]), None)
    if pos is None:
        return f"{where}: `{ref}` is not in the field.", False
    r = rows[pos]
    has_opt = any(x["kind"] == "optimal" for x in rows)
    text = f"{where}: {rank_words(r['rank'], rows)} ({r['mean']:+.2f} ± {r['ci95']:.2f} per game"
    text += f", exact {r['exact']:+.3f})" if r["exact"] is not None else ")"
    if pos == 0:
        text += ", at the top of the table"
    else:
        best = rows[0]
        if best["exact"] is not None and r["exact"] is not None:
            text += f", {best['exact'] - r['exact']:.3f} behind {_names(best)} (exact)"
        else:
            text += f", behind {_names(best)} ({best['mean']:+.2f} ± {best['ci95']:.2f})"
    gv = doc.get("game_value")
    pair = {(p["agent0"], p["agent1"]): p for p in doc["pairs"]}
    found = None if gv is None else optimum_shortfall(doc["pairs"], gv, ref, code=True)
    if found is not None:
        short, share = found
        vs = pair[(ref, "optimal")]["exact_score"]
        text += (f"; as seat 0 against optimal play it scores {vs:+.3f}, "
                 f"{short:.3f} short of the optimum {gv:+.3f}{share}")  # fmt: skip
    elif gv is None:
        text += "; the game is too large to solve, so there is no optimum to measure it against"
    return text + ".", has_opt


def reference_answer(pairs: Sequence[tuple[Any, dict[str, Any]]], ref: str) -> list[str]:
    """How good ``ref`` is in each scenario of an edition, and one sentence on why they differ."""
    lines, with_opt = [], []
    for res, doc in pairs:
        text, has_opt = _reference_line(res, doc, ref)
        lines.append(text)
        with_opt.append(has_opt)
    if len(pairs) > 1 and any(with_opt) and not all(with_opt):
        lines.append(
            "Why the two differ: where the game is too large to solve, the field holds only "
            "rules of thumb, so 'best' means best among equally blunt rules; in one Psychic "
            "phase the exact optimum is in the field, and it uses exactly what the rule "
            "ignores (the dice left, the enemy's deny dice, what each power is worth)."
        )
    elif len(pairs) > 1:
        lines.append(
            "Why they differ: the scenarios differ in length and in what the dice left over "
            "are worth afterwards, so the same fixed rule fits one better than the other."
        )
    return lines


def table_md(table: dict[str, Any]) -> list[str]:
    """One answer table in Markdown, with its question, answer and assumed situation."""
    lines = [
        f"#### {table['title']}",
        "",
        f"**{table['question']}** {table['answer']}",
        "",
        f"*Assumes:* {table['assumes']} {table['note']}",
        "",
    ]
    lines += md_table(table["header"], table["rows"], left=1)
    return lines + [""]


def answers_md(
    results: Sequence[Any],
    docs: Sequence[dict[str, Any]],
    tables: dict[str, list[dict[str, Any]]],
    reference: str,
) -> list[str]:
    """The report's "Answers" section: one subsection per compared edition."""
    from psygym_experiments.harness.standings import search_match_sentence

    lines = ["## Answers", ""]
    editions = list(dict.fromkeys(r.edition for r in results))
    for eid in editions:
        mine = [(r, d) for r, d in zip(results, docs) if r.edition == eid]
        lines += [f"### {eid} edition", ""]
        lines += ["**Which agent is best?**", ""]
        lines += [f"- {best_answer(r, d)}" for r, d in mine]
        lines += [f"- {search_match_sentence(f'{r.edition} {r.scenario}', d['search_match'])}"
                  for r, d in mine if d.get("search_match")]  # fmt: skip
        lines += [""]
        if any(reference in a["label"] for _, d in mine for a in d["agents"]):
            lines += [f"**Is `{reference}` good?**", ""]
            lines += [f"- {t}" for t in reference_answer(mine, reference)]
            lines += [""]
        edition_tables = tables.get(eid)
        if edition_tables:
            for t in edition_tables:
                lines += table_md(t)
        elif edition_tables is None:
            lines += ["No exact dice or deny tables: this edition's agents declare none.", ""]
        else:
            lines += ["No exact tables: computing them failed (see the notes).", ""]
    return lines


__all__ = [
    "TABLE_TOOL", "answers_md", "best_answer", "compute_tables", "editions_with_tables",
    "md_table", "reference_answer", "table_md",
]  # fmt: skip
