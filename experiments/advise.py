"""``psygym advise``: every legal action of one situation with its exact value, best first.

For 2nd edition (secret hands) the values are estimates of an information-set search, and the
output says they are not exact. The situation is given by ``--state FILE`` (JSON, any
edition), by a 7th-edition description (``--situation "dice=7,enemy_dice=4,power=Smite"``
and/or ``--dice``, ``--enemy-dice``, ``--powers``, ``--power``, ``--wounds``,
``--successes``...), or, with neither, it is the first decision of the scenario (chance
resolved by its most likely outcome). For each named heuristic
the command also shows its choice and how much it gives up against the best action.

``--table`` (for an edition whose agents declare a ``dice_table`` tool) prints the optimal
number of dice to commit to one power for every pool size (1-12), warp charge (1-3) and enemy
deny dice (0-6), beside what ``double-wc`` commits, and saves
it as a PNG heatmap, CSV and JSON under ``--runs-dir/advise-table-<time>/``.

Situation descriptions and the dice table come from the edition agents' ``BOTS.tools``
(``situation``, ``parse_situation``, ``normalize_situation``, ``dice_table``,
``plot_dice_table``), so this command names no edition.
"""

from __future__ import annotations

from typing import Any

import typer
from psygym_experiments.common import (
    console,
    default_edition,
    edition_help,
    edition_tool,
    editions_with_tool,
    err_console,
    split_names,
    user_errors,
)
from psygym_experiments.harness.output import csv_rows, json_text, write_json
from psygym_experiments.harness.runs import run_folder, write_command
from psygym_experiments.harness.solving import MAX_STATES

from psygym.editions import edition_id, load
from psygym.policies import bots_for

ADVISE_MAX_STATES = 10 * MAX_STATES
"""Default ``--max-states``: one position may search ten times the harness's budget."""

STATE_FILE_HELP = (
    'JSON state file: {"edition": ID, "scenario": "single-phase", "actions": [...]} '
    "replays those actions (decisions and chance outcomes) from the initial state (any edition); "
    'or (7th) {"situation": {"dice": 7, "enemy_dice": 4, "power": "Smite"}} or the '
    "same as text. edition and scenario are optional."
)
SITUATION_HELP = (
    "7th: comma-separated key=value pairs: dice, enemy_dice, powers (Name[:WC][@Caster] "
    "separated by ';'), power, wc, caster, target, successes (ask the deny decision), cast_dice, "
    "wounds (Unit:N separated by ';'), side, phase, decision (select|dice|deny). Example: "
    '"dice=7,enemy_dice=4,power=Smite,wc=1".'
)


def _tool(edition: str, name: str) -> Any:
    """The edition's tool ``name``, or a ``ValueError`` naming the editions that have one."""
    tool = edition_tool(edition, name)
    if tool is not None:
        return tool
    which = ", ".join(editions_with_tool(name)) or "no installed"
    if name in ("dice_table", "plot_dice_table"):
        raise ValueError(f"--table is for {which} edition")
    raise ValueError(
        f"situation descriptions (--situation, --dice, ...) are for {which} edition; for "
        f"{edition} use --state FILE with a list of actions"
    )


def _situation_options(
    edition: str, situation: str | None, extra: dict[str, Any]
) -> dict[str, Any]:
    given = {k: v for k, v in extra.items() if v is not None}
    if not situation and not given:
        return {}
    opts = _tool(edition, "parse_situation")(situation) if situation else {}
    opts.update(_tool(edition, "normalize_situation")(given))
    return opts


def build_state(rules: Any, *, file_doc: dict[str, Any] | None, options: dict[str, Any]) -> Any:
    """The decision state to advise on (see the module docstring).

    Raises:
        ValueError: a 7th-edition description for another edition, or a bad description.
    """
    from psygym_agents.solvers.situations import first_decision, replay

    if file_doc is not None and file_doc.get("actions") is not None:
        if options:
            raise ValueError("give either --state FILE with actions or a situation, not both")
        return first_decision(rules, replay(rules, file_doc["actions"]))
    if file_doc is not None and file_doc.get("situation") is not None:
        written = file_doc["situation"]
        options = {**_situation_options(rules.edition,
                                        written if isinstance(written, str) else None,
                                        written if isinstance(written, dict) else {}),
                   **options}  # fmt: skip
    if options:
        return _tool(rules.edition, "situation")(rules, **options)
    return first_decision(rules)


def heuristic_names(rules: Any) -> list[str]:
    """Names of the edition's heuristics (its ``BOTS`` manifest)."""
    bots = bots_for(rules.edition)
    return list(bots.heuristics) if bots is not None else []


def advice(
    rules: Any,
    state: Any,
    *,
    heuristics: list[str] | None = None,
    max_depth: int | None = None,
    max_states: int | None = None,
    iterations: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Values of every legal action at ``state`` and the heuristics' choices.

    For an edition with hidden information (2nd) the values are estimates of an
    information-set search from what the player to move may see (``method`` says so).

    Returns:
        ``{"player", "actions": [{"action", "label", "value", "loss"}...] best first,
        "heuristics": [{"name", "action", "label", "loss"}...], "states", "exact",
        "method"}``; values are the expected final score of the player to move.

    Raises:
        NotSolvable: too many states.
    """
    from psygym_agents.solvers import has_hidden_information
    from psygym_agents.solvers.expectiminimax import Solver

    from psygym.policies import resolve_policy

    if has_hidden_information(rules):
        from psygym_agents.solvers.ismcts import SearchPolicy

        from psygym.policies import reference_policy

        search = SearchPolicy(
            rules, iterations=iterations, seed=seed, rollout=reference_policy(rules)
        )
        _, values = search.search(rules, state, rules.current_player(state))
        for a in rules.legal_actions(state):
            values.setdefault(a, float("-inf"))
        states, exact = 0, False
        method = f"information-set search, {iterations} iterations (NOT exact: estimates)"
    else:
        solver = Solver(rules, max_depth=max_depth, max_states=max_states)
        values = solver.action_values(state)
        states, exact = solver.states, solver.exact
        method = "exact expectiminimax" if exact else "depth-limited expectiminimax (NOT exact)"
    best = max(values.values())
    order = sorted(values, key=lambda a: (-values[a], a))
    player = rules.current_player(state)
    actions = [
        {"action": a, "label": rules.action_label(state, a), "value": values[a],
         "loss": best - values[a]}
        for a in order
    ]  # fmt: skip
    picks = []
    for name in heuristics or []:
        policy = resolve_policy(name, rules)
        probs = policy.action_probabilities(rules, state, player)
        chosen = max(probs, key=lambda a: (probs[a], -a))
        expected = sum(p * values[a] for a, p in probs.items())
        picks.append(
            {
                "name": name,
                "action": chosen,
                "label": rules.action_label(state, chosen),
                "loss": best - expected,
                "mixed": len(probs) > 1,
            }
        )
    return {
        "player": player,
        "actions": actions,
        "heuristics": picks,
        "states": states,
        "exact": exact,
        "method": method,
    }


def _print_advice(rules: Any, state: Any, result: dict[str, Any]) -> None:
    from rich.table import Table as RichTable

    player = result["player"]
    side = rules.scenario.sides[player].name
    console.print(rules.render(state, player), highlight=False)
    console.print()
    chosen_by: dict[int, list[str]] = {}
    for h in result["heuristics"]:
        chosen_by.setdefault(h["action"], []).append(h["name"])
    table = RichTable(title=f"{side} (player {player}) to decide: expected final score of {side}")
    for col, justify in (
        ("#", "right"),
        ("action", "left"),
        ("value", "right"),
        ("vs best", "right"),
        ("chosen by", "left"),
    ):
        table.add_column(col, justify=justify)
    for i, row in enumerate(result["actions"], 1):
        table.add_row(
            str(i),
            row["label"],
            f"{row['value']:+.4f}",
            "best" if row["loss"] <= 1e-9 else f"-{row['loss']:.4f}",
            ", ".join(chosen_by.get(row["action"], [])),
        )
    console.print(table)
    for h in result["heuristics"]:
        best = "optimal" if result["exact"] else "best (estimate)"
        gap = best if h["loss"] <= 1e-9 else f"gives up {h['loss']:.4f}"
        mixed = " (mixed; expected loss)" if h["mixed"] else ""
        console.print(f"  {h['name']:<18} {h['label']:<44} {gap}{mixed}", highlight=False)
    if result["exact"]:
        console.print(f"  {result['states']:,} states solved, exact", highlight=False)
    else:
        console.print(f"  [yellow]warning:[/yellow] {result['method']}", highlight=False)


DICE_TABLE_COLUMNS = (
    "warp_charge", "pool", "enemy_dice", "best_dice", "best_value", "double_wc_dice",
    "double_wc_value", "loss",
)  # fmt: skip
"""Columns of ``dice_table.csv``."""


def _dice_table(
    edition: str, max_pool: int, max_enemy_dice: int, runs_dir: str, as_json: bool
) -> None:
    optimal_dice_table = _tool(edition, "dice_table")
    plot_dice_table = _tool(edition, "plot_dice_table")
    with err_console.status("solving the dice table exactly"):
        rows = optimal_dice_table(max_pool=max_pool, max_enemy_dice=max_enemy_dice)
    run = run_folder(runs_dir, "advise-table")
    write_command(run)
    config = {
        "max_pool": max_pool,
        "max_enemy_dice": max_enemy_dice,
        "deny_threshold": rows[0]["deny_threshold"],
        "power_value": 2.0,
        "caster": "mastery 1, 2 wounds, Ld 10, 1 point per wound",
        "target": "a squad without a psyker (deny on 6+)",
    }
    write_json(run / "config.json", config)
    write_json(run / "dice_table.json", rows, strict=False)
    (run / "dice_table.csv").write_text(
        csv_rows(DICE_TABLE_COLUMNS, [[r[c] for c in DICE_TABLE_COLUMNS] for r in rows],
                 lineterminator="\r\n"),  # the csv module's default, as the file always had
        newline="",
    )  # fmt: skip
    png = plot_dice_table(rows, run / "dice_table.png")
    if as_json:
        typer.echo(json_text({"run": str(run), "png": str(png), "rows": rows}, strict=False))
        return
    from rich.table import Table as RichTable

    enemies = sorted({r["enemy_dice"] for r in rows})
    for wc in (1, 2, 3):
        t = RichTable(
            title=f"WC {wc}: best dice (double-wc's), deny on {config['deny_threshold']}+"
        )
        t.add_column("pool", justify="right")
        for e in enemies:
            t.add_column(f"enemy {e}", justify="right")
        for pool in range(1, max_pool + 1):
            cells = []
            for e in enemies:
                r = next(
                    x
                    for x in rows
                    if x["warp_charge"] == wc and x["pool"] == pool and x["enemy_dice"] == e
                )
                cells.append(f"{r['best_dice']} ({r['double_wc_dice']})")
            t.add_row(str(pool), *cells)
        console.print(t)
    console.print(
        "0 = do not cast. One power worth 2 by a 2-wound psyker (1 point per wound); "
        "the target has no psyker, so the deny needs 6+ (7E-5.2).",
        highlight=False,
    )
    console.print(f"saved {png} and {run / 'dice_table.csv'}", highlight=False)


def advise(
    edition: str = typer.Option(
        None,
        help=edition_help(f" (hidden information: search estimates; default {default_edition()})"),
    ),
    scenario: str = typer.Option(None, help="Shipped scenario name or TOML path."),
    state_file: str = typer.Option(None, "--state", help=STATE_FILE_HELP),
    situation: str = typer.Option(None, help=SITUATION_HELP),
    dice: int = typer.Option(None, min=0, help="7th: dice left to the casting player."),
    enemy_dice: int = typer.Option(None, min=0, help="7th: dice left to the denying player."),
    powers: str = typer.Option(
        None, help='7th: powers still to cast, e.g. "Smite:1,Psychic Maelstrom:2".'
    ),
    power: str = typer.Option(None, help="7th: the one power to advise on (its dice)."),
    wounds: str = typer.Option(None, help='7th: wounds left, e.g. "Librarian:1,Chosen:3".'),
    successes: int = typer.Option(
        None, min=0, help="7th: advise the deny against --power cast with this many successes."
    ),
    heuristics: str = typer.Option(
        "all", help="Heuristics to compare (comma-separated), 'all' or 'none'."
    ),
    max_depth: int = typer.Option(
        None, min=1, help="Search only this many Psychic phases (not exact then)."
    ),
    max_states: int = typer.Option(
        ADVISE_MAX_STATES, min=1, help="Give up beyond this many states."
    ),
    iterations: int = typer.Option(
        2000, min=1, help="2nd (secret hands): search iterations for the estimates."
    ),
    seed: int = typer.Option(0, min=0, help="2nd: seed of the search."),
    table: bool = typer.Option(False, "--table", help="7th: the optimal-dice table and heatmap."),
    max_pool: int = typer.Option(12, min=1, max=12, help="--table: largest pool."),
    max_enemy_dice: int = typer.Option(6, min=0, max=12, help="--table: largest deny pool."),
    runs_dir: str = typer.Option("runs", help="Folder for --table outputs."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Every legal action of one situation with its exact value, and the heuristics' choices."""
    from psygym_agents.solvers.situations import load_state_file

    with user_errors():
        if table:
            with_table = editions_with_tool("dice_table")
            target = edition_id(edition) if edition is not None else next(iter(with_table), "")
            _tool(target or default_edition(), "dice_table")
            _dice_table(target, max_pool, max_enemy_dice, runs_dir, as_json)
            return
        doc = load_state_file(state_file) if state_file is not None else None
        edition = edition or (doc or {}).get("edition") or default_edition()
        scenario = scenario or (doc or {}).get("scenario") or "default"
        rules = load(edition, scenario)
        options = _situation_options(edition_id(edition), situation, {
            "dice": dice, "enemy_dice": enemy_dice, "powers": powers, "power": power,
            "wounds": wounds, "successes": successes,
        })  # fmt: skip
        state = build_state(rules, file_doc=doc, options=options)
        if heuristics.strip().lower() == "all":
            names = heuristic_names(rules)
        elif heuristics.strip().lower() == "none":
            names = []
        else:
            names = split_names(heuristics)
        result = advice(
            rules,
            state,
            heuristics=names,
            max_depth=max_depth,
            max_states=max_states,
            iterations=iterations,
            seed=seed,
        )
    if as_json:
        typer.echo(
            json_text({"edition": rules.edition, "scenario": rules.scenario.name, **result},
                      strict=False)
        )  # fmt: skip
        return
    _print_advice(rules, state, result)


def register(app: typer.Typer) -> None:
    """Add the ``advise`` command."""
    app.command("advise")(advise)


__all__ = ["advice", "advise", "build_state", "heuristic_names", "register"]
