"""When to deny in 8th edition, by psychic test total, solved exactly.

The situation is the shipped ``single-phase`` scenario (one Psychic phase: the Librarian and the
Primaris Psyker cast, the Warlock has one deny, 8E-5.1). Every state of that game where the
Warlock may deny is enumerated, and the exact solver says whether denying is worth more than
keeping the deny (8E-5.2: the deny succeeds on a 2D6 roll strictly above the test total). The
table groups those states by the power being cast, the test total and whether another power
may still be attempted after this one.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

SCENARIO = "single-phase"
"""The scenario the table is solved in."""


def deny_by_total() -> list[dict[str, Any]]:
    """Every deny decision of the scenario, grouped by (power, test total, more to come).

    Returns:
        One dict per group: ``power``, ``total``, ``more`` (another power may follow this
        phase), ``states`` (how many decision states), ``deny`` (in how many of them denying is
        optimal, ties included: a deny costs nothing but the attempt) and ``gain`` (mean
        value of denying over keeping the deny, for the denier).
    """
    from psygym_agents.solvers.expectiminimax import Solver

    from psygym.editions import load
    from psygym.editions.eighth.state import Stage

    rules = load("8th", SCENARIO)
    solver = Solver(rules)
    solver.value()
    groups: dict[tuple[str, int, bool], list[float]] = defaultdict(list)
    seen, stack = set(), [rules.initial_state()]
    while stack:
        s = stack.pop()
        if s in seen or rules.current_player(s) < -1:
            continue
        seen.add(s)
        if s.stage == Stage.DENY:
            values = solver.action_values(s)
            keep = values[rules.actions.NO_DENY]
            best = max(v for a, v in values.items() if a != rules.actions.NO_DENY)
            more = s.manifests_left > 0 or any(  # decremented when the power was chosen
                not (s.selected >> u) & 1 and s.wounds[u] > 0 for u in rules.side_psykers[s.active]
            )
            groups[(rules.powers[s.power].name, s.total, more)].append(best - keep)
        if rules.current_player(s) == -1:
            kids = [a for a, p in rules.chance_outcomes(s) if p > 0]
        else:
            kids = rules.legal_actions(s)
        stack += [rules.apply(s, a, check=False) for a in kids]
    return [
        {"power": k[0], "total": k[1], "more": k[2], "states": len(v),
         "deny": sum(g > -1e-12 for g in v), "gain": sum(v) / len(v)}
        for k, v in sorted(groups.items())
    ]  # fmt: skip


def answer_tables(size: str = "full") -> list[dict[str, Any]]:
    """The deny table for reports and the cheat sheet (``size`` is accepted for uniformity).

    Returns:
        One table in the format of the 7th edition's ``answer_tables``.
    """
    if size not in ("quick", "full", "sheet"):
        raise KeyError(size)
    rows = deny_by_total()
    cols = sorted({(r["power"], r["more"]) for r in rows})
    totals = sorted({r["total"] for r in rows})
    cell = {(r["power"], r["more"], r["total"]): r for r in rows}

    def text(r: dict[str, Any] | None) -> str:
        if r is None:
            return ""
        if r["deny"] == r["states"]:
            return "deny"
        if r["deny"] == 0:
            return "keep"
        return f"deny {r['deny']}/{r['states']}"

    body = [[str(t), *(text(cell.get((p, m, t))) for p, m in cols)] for t in totals]
    header = ["test total", *(f"{p}{' (more to come)' if m else ' (last)'}" for p, m in cols)]
    always = all(r["deny"] == r["states"] for r in rows)
    answer = (
        "Deny every power you can: with one deny and these powers, keeping it never pays."
        if always
        else "Deny low test totals; keep the deny against a high total when a more valuable "
        "power may still come (the table gives each case)."
    )
    return [{
        "kind": "deny",
        "title": "When to deny (8th edition), by test total",
        "assumes": "The shipped single-phase scenario: the Librarian (Might of Heroes) and the "
        "Primaris Psyker (Psychic Scourge) cast, the Warlock has one deny (2D6 must beat the "
        "test total, 8E-5.2); both sides optimal; every reachable situation, grouped by the "
        "power, the test total and whether another power may follow.",
        "question": "When should I deny, by the caster's test total?",
        "answer": answer,
        "header": header,
        "note": "deny: denying is optimal (or no worse) in every such situation; keep: in none; "
        "deny k/n: in k of n situations (they differ in wounds left); blank: no such "
        "situation (the test failed).",
        "rows": body,
        "data": rows,
    }]  # fmt: skip


__all__ = ["SCENARIO", "answer_tables", "deny_by_total"]
