"""``psygym advise``: every legal choice of one decision with its value, in player terms.

The board comes from one of:

- a scenario and the edition's situation options (``BOTS.tools["situation"]``): 7th
  ``--dice 7 --enemy-dice 4 --cast "Smite,Psychic Maelstrom"`` (which power first and with how
  many dice), ``--power Smite --successes 2`` (the deny); 8th ``--caster Farseer --power Smite
  --test 8 --still Doom`` (deny now or keep it), ``--still Doom`` (which psyker next); Rogue
  Trader ``--turn 3 --points Librarian:7`` (which ability, or rest); or ``--situation
  "key=value,..."`` with the same keys;
- ``--from-log runs/games/X.jsonl --at N``: the state before the N-th decision of a played game
  (chance rolls are not decisions); the output says which decision it was, what was played, and
  what the deciding player was shown since its previous decision (as ``psygym play`` shows it:
  never the other hand's cards nor a pending secret bid);
- ``--state FILE``: JSON with a list of actions replayed from the start, or a situation;
- nothing: the scenario's first decision (chance resolved by its most likely outcome).

Values come from the ``search`` agent (:mod:`psygym_experiments.harness.advice`): the expected
final score of the side to decide, exact within this cast (7th, 8th) or turn (Rogue Trader) and
with the scenario's learned board value beyond it, or exact for the whole game on a scenario
solved whole; one line (the agent's note) says which, with the value's error estimate. Each
choice also shows the same player's best follow-up in the same cast (after "which power", the
number of dice). For each named heuristic the command shows its choice and what it gives up.

``--generation`` (an edition whose agents declare ``generation_state``: 7th) values the choices
of power generation for ``--psyker``'s ``--pick``-th power: each discipline, and for each power
it may roll, keeping it or taking the Primaris power.

``--table`` (an edition whose agents declare a ``dice_table`` tool) prints the optimal number of
dice to commit to one power for every pool size (1-12), warp charge (1-3) and enemy deny dice
(0-6), beside what ``double-wc`` commits, and saves it as a PNG heatmap, CSV and JSON under
``--runs-dir/advise-table-<time>/``.

Situations, questions and tables come from the edition agents' ``BOTS.tools``, so this command
names no edition.
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
from psygym_experiments.harness.output import atomic_write, csv_rows, json_text, write_json
from psygym_experiments.harness.runs import run_folder, write_command

from psygym.editions import edition_id, load
from psygym.policies import bots_for

STATE_FILE_HELP = (
    'JSON state file: {"edition": ID, "scenario": "single-phase", "actions": [...]} '
    "replays those actions (decisions and chance outcomes) from the initial state (any edition); "
    'or {"situation": {...}} with the keys of the edition\'s situation options, or the same as '
    "text. edition and scenario are optional."
)
SITUATION_HELP = (
    "The situation as comma-separated key=value pairs (lists inside a value separated by ';'). "
    "Keys per edition: 7th dice, enemy_dice, powers, power, wc, caster, target, successes, "
    "cast_dice, wounds, side, round, phase, decision; 8th side, round, wounds, denies, still, "
    "caster, power, target, test; rt turn, points, wounds, psyker. Example: "
    '"dice=7,enemy_dice=4,powers=Smite;Psychic Maelstrom".'
)
_OPTION_NAMES = {
    "dice": "--dice", "enemy_dice": "--enemy-dice", "powers": "--cast", "power": "--power",
    "wounds": "--wounds", "successes": "--successes", "round": "--round", "caster": "--caster",
    "target": "--target", "test": "--test", "still": "--still", "denies": "--denies",
    "side": "--side", "turn": "--turn", "points": "--points", "psyker": "--psyker",
}  # fmt: skip
"""Situation key -> the command's option for it (for error lines)."""


def _tool(edition: str, name: str) -> Any:
    """The edition's tool ``name``, or a ``ValueError`` naming the editions that have one."""
    tool = edition_tool(edition, name)
    if tool is not None:
        return tool
    which = ", ".join(editions_with_tool(name)) or "no installed"
    if name in ("dice_table", "plot_dice_table"):
        raise ValueError(f"--table is for {which} edition")
    if name == "generation_state":
        raise ValueError(f"--generation is for {which} edition (power generation before the game)")
    raise ValueError(
        f"situation options are for {which} edition; for {edition} use --state FILE with a list "
        "of actions or --from-log"
    )


def _situation_options(
    edition: str, situation: str | None, extra: dict[str, Any]
) -> dict[str, Any]:
    given = {k: v for k, v in extra.items() if v is not None}
    if not situation and not given:
        return {}
    normalize = _tool(edition, "normalize_situation")
    opts = _tool(edition, "parse_situation")(situation) if situation else {}
    try:
        opts.update(normalize(given))
    except ValueError:
        bad = [k for k in given if _rejects(normalize, k)]
        if not bad:
            raise
        key = bad[0]
        others = [e for e in editions_with_tool("normalize_situation") if e != edition]
        users = [e for e in others if not _rejects(_tool(e, "normalize_situation"), key)]
        name = _OPTION_NAMES.get(key, key)
        where = f"; {name} is for {', '.join(users)} edition" if users else ""
        raise ValueError(f"{name} is not a situation option of {edition} edition{where}") from None
    return opts


def _rejects(normalize: Any, key: str) -> bool:
    """Whether an edition's ``normalize_situation`` refuses ``key`` itself (not its value)."""
    try:
        normalize({key: None})
    except ValueError:
        return True
    return False


def _conflict(option: str, given: str, source: str, recorded: str) -> ValueError:
    """The one line refusing an option that says otherwise than the file it goes with."""
    return ValueError(
        f"{option} {given} does not match {source}, which is for {recorded}; give the same "
        f"or leave {option} out"
    )


def _check_agrees(source: str, edition: str | None, scenario: str | None, rules: Any) -> None:
    """Refuse ``--edition``/``--scenario`` given with a file (``source``) whose ``rules`` differ.

    A scenario named otherwise (a path to the same TOML, ``default``) agrees if it loads the
    same scenario.

    Raises:
        ValueError: one line naming the option's value and the file's.
    """
    if edition and edition_id(edition) != rules.edition:
        raise _conflict("--edition", edition, source, f"edition {rules.edition}")
    if scenario and scenario != rules.scenario.name:
        if load(rules.edition, scenario).scenario != rules.scenario:
            raise _conflict("--scenario", scenario, source, f"scenario {rules.scenario.name}")


def build_state(rules: Any, *, file_doc: dict[str, Any] | None, options: dict[str, Any]) -> Any:
    """The decision state to advise on (see the module docstring).

    Raises:
        ValueError: situation options for an edition without them, or a bad description.
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
        state = _tool(rules.edition, "situation")(rules, **options)
        return first_decision(rules, state)
    return first_decision(rules)


def heuristic_names(rules: Any) -> list[str]:
    """Names of the edition's heuristics (its ``BOTS`` manifest)."""
    bots = bots_for(rules.edition)
    return list(bots.heuristics) if bots is not None else []


def seen_lines(rules: Any, player: int, steps: Any) -> list[str]:
    """The steps a player was shown (``Shown``, from the log) as ``psygym play`` prints them."""
    import io

    from psygym_experiments.play_session import Narrator
    from rich.console import Console

    out = Console(file=io.StringIO(), width=200, highlight=False, soft_wrap=True, no_color=True)
    narrator = Narrator(rules, out, player, "the other player")
    for step in steps:
        narrator.show(step)
    return out.file.getvalue().splitlines()  # type: ignore[attr-defined]


def _print_advice(rules: Any, state: Any, result: dict[str, Any], origin: str | None) -> None:
    from rich.markup import escape
    from rich.table import Table as RichTable

    player = result["player"]
    side = result["side"]
    console.print(rules.render(state, player), highlight=False)
    console.print()
    if origin:
        console.print(escape(origin), highlight=False)
    seen = result.get("from_log", {}).get("seen")
    if seen:
        console.print(f"What {escape(side)} was shown since its previous decision:")
        for line in seen:
            console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
    console.print(f"[bold]{escape(result['question'])}[/bold]", highlight=False)
    chosen_by: dict[str, list[str]] = {}
    for h in result["heuristics"]:
        chosen_by.setdefault(h["label"], []).append(h["name"])
    mixed = any("probability" in row for row in result["actions"])
    table = RichTable(title=f"expected final score of {side}, best first")
    columns = [("#", "right"), ("choice", "left"), ("value", "right"), ("vs best", "right")]
    if mixed:
        columns.append(("play with", "right"))
    follows = any(row.get("then") for row in result["actions"])
    if follows:
        columns.append(("then", "left"))
    columns.append(("chosen by", "left"))
    for col, justify in columns:
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for i, row in enumerate(result["actions"], 1):
        then = "; ".join(f["best"] for f in row.get("then", []))
        cells = [
            str(i),
            escape(row["label"]),
            f"{row['value']:+.3f}",
            "best" if row["loss"] <= 1e-9 else f"-{row['loss']:.3f}",
        ]
        if mixed:
            cells.append(f"{row.get('probability', 0.0):.0%}")
        if follows:
            cells.append(escape(then))
        cells.append(", ".join(chosen_by.get(row["label"], [])))
        table.add_row(*cells)
    console.print(table)
    best = result["actions"][0]
    for step in best.get("then", [])[:1]:
        sub = RichTable(title=f'after "{escape(best["label"])}": {escape(step["question"])}')
        sub.add_column("choice")
        sub.add_column("value", justify="right")
        for c in step["choices"]:
            sub.add_row(escape(c["label"]), f"{c['value']:+.3f}")
        console.print(sub)
    for h in result["heuristics"]:
        gap = "best" if h["loss"] <= 1e-9 else f"gives up {h['loss']:.3f}"
        tag = " (mixed; expected loss)" if h["mixed"] else ""
        console.print(f"  {h['name']:<18} {h['label']:<44} {gap}{tag}", highlight=False)
    console.print(f"  {escape(result['note'])}", highlight=False)


def _print_generation(rules: Any, state: Any, result: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table as RichTable

    console.print(rules.render(state, rules.current_player(state)), highlight=False)
    console.print()
    console.print(f"[bold]{escape(result['question'])}[/bold]", highlight=False)
    table = RichTable(title=f"expected final score of {result['side']}, best first")
    for col in ("choice", "value", "roll", "chance", "keep or swap (value)"):
        table.add_column(col)
    for choice in result["choices"]:
        first = True
        for roll in choice["rolls"] or [{"label": "", "probability": None}]:
            options = ", ".join(f"{c['label']} {c['value']:+.3f}" for c in roll.get("choices", []))
            table.add_row(
                escape(choice["label"]) if first else "",
                f"{choice['value']:+.3f}" if first else "",
                escape(roll["label"]),
                "" if roll["probability"] is None else f"{roll['probability']:.0%}",
                escape(options or "(no choice)"),
            )
            first = False
    console.print(table)
    console.print(f"  {escape(result['note'])}", highlight=False)


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
    atomic_write(
        run / "dice_table.csv",
        csv_rows(DICE_TABLE_COLUMNS, [[r[c] for c in DICE_TABLE_COLUMNS] for r in rows],
                 lineterminator="\r\n"),  # the csv module's default, as the file always had
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
    scenario: str = typer.Option(
        None,
        help="Shipped scenario name, random:N (the army list psygym scenario random --seed N "
        "writes) or TOML path.",
    ),
    state_file: str = typer.Option(None, "--state", help=STATE_FILE_HELP),
    situation: str = typer.Option(None, help=SITUATION_HELP),
    from_log: str = typer.Option(
        None, "--from-log", help="A game log (runs/games/X.jsonl) to take the board from."
    ),
    at: int = typer.Option(
        None, min=1, help="--from-log: the decision to advise on, from 1 (chance rolls excluded)."
    ),
    dice: int = typer.Option(None, min=0, help="7th: dice left to the casting player."),
    enemy_dice: int = typer.Option(None, min=0, help="7th: dice left to the denying player."),
    cast: str = typer.Option(
        None,
        "--cast",
        "--powers",
        help='7th: powers still to cast this phase, e.g. "Smite,Psychic Maelstrom:2" '
        "(Name[:WC][@Caster]).",
    ),
    power: str = typer.Option(
        None,
        help="7th: the one power to advise on (its dice, or its deny with --successes); "
        "8th: the power --caster attempts (with --test).",
    ),
    wounds: str = typer.Option(None, help='Wounds left, e.g. "Librarian:1,Chosen:3".'),
    successes: int = typer.Option(
        None, min=0, help="7th: advise the deny against --power cast with this many successes."
    ),
    round_: int = typer.Option(None, "--round", min=1, help="7th, 8th: the battle round."),
    caster: str = typer.Option(None, help="7th, 8th: the psyker casting --power."),
    target: str = typer.Option(None, help="7th, 8th: the target of --power."),
    test: int = typer.Option(
        None, help="8th: --power's psychic test total (2-12): advise the deny."
    ),
    still: str = typer.Option(
        None, help='8th: powers the casting side may still attempt this phase, e.g. "Doom".'
    ),
    denies: str = typer.Option(None, help='8th: deny attempts left, e.g. "Librarian:0".'),
    side: str = typer.Option(None, help="8th: the casting side (name, 0 or 1)."),
    turn: int = typer.Option(None, min=1, help="Rogue Trader: the player turn, from 1."),
    points: str = typer.Option(None, help='Rogue Trader: psi-points left, e.g. "Librarian:7".'),
    psyker: str = typer.Option(
        None, help="Rogue Trader: the psyker choosing; --generation: the psyker generating."
    ),
    generation: bool = typer.Option(
        False, "--generation", help="7th: the value of each power-generation choice of --psyker."
    ),
    pick: int = typer.Option(1, min=1, help="--generation: which of its powers (1 = the first)."),
    heuristics: str = typer.Option(
        "all", help="Heuristics to compare (comma-separated), 'all' or 'none'."
    ),
    iterations: int = typer.Option(
        2000,
        min=1,
        help="Secret hands: iterations of the information-set search (used where the "
        "value asks for no deals, or a deal's phase does not fit).",
    ),
    seed: int = typer.Option(0, min=0, help="2nd: seed of the search."),
    table: bool = typer.Option(False, "--table", help="7th: the optimal-dice table and heatmap."),
    max_pool: int = typer.Option(12, min=1, max=12, help="--table: largest pool."),
    max_enemy_dice: int = typer.Option(6, min=0, max=12, help="--table: largest deny pool."),
    runs_dir: str = typer.Option("runs", help="Folder for --table outputs."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Every legal choice of one decision with its expected final score, best first."""
    from psygym_agents.solvers.situations import load_state_file
    from psygym_experiments.harness.advice import (
        advise_state,
        decision_from_log,
        generation_advice,
        search_agent,
    )

    situation_given = {
        "dice": dice, "enemy_dice": enemy_dice, "powers": cast, "power": power,
        "wounds": wounds, "successes": successes, "round": round_, "caster": caster,
        "target": target, "test": test, "still": still, "denies": denies, "side": side,
        "turn": turn, "points": points,
    }  # fmt: skip
    with user_errors():
        if table:
            with_table = editions_with_tool("dice_table")
            target_ed = edition_id(edition) if edition is not None else next(iter(with_table), "")
            _tool(target_ed or default_edition(), "dice_table")
            _dice_table(target_ed, max_pool, max_enemy_dice, runs_dir, as_json)
            return
        origin = None
        info: dict[str, Any] = {}
        if from_log is not None or at is not None:
            if from_log is None or at is None:
                raise ValueError("--from-log FILE and --at N go together")
            given = [k for k, v in situation_given.items() if v is not None]
            if given or situation or state_file or generation or psyker:
                raise ValueError(
                    "--from-log takes the board from the game; give no situation, --state or "
                    "--generation with it"
                )
            rules, state, info = decision_from_log(from_log, at)
            _check_agrees(f"the game log {from_log}", edition, scenario, rules)
            info["seen"] = seen_lines(rules, rules.current_player(state), info["seen"])
            origin = (
                f"Decision {info['decision']} of {info['decisions']} in {from_log} (line "
                f"{info['line']}): {info['side']} to decide; the game played "
                f'"{info["played"]}".'
            )
        else:
            doc = load_state_file(state_file) if state_file is not None else None
            written = (doc or {}).get("edition"), (doc or {}).get("scenario")
            if edition and written[0] and edition_id(edition) != edition_id(written[0]):
                raise _conflict(
                    "--edition", edition, f"the state file {state_file}", f"edition {written[0]}"
                )
            edition = edition or written[0] or default_edition()
            rules = load(edition, scenario or written[1] or "default")
            if scenario and written[1] and scenario != written[1]:
                # Another name for the same scenario (a path to its TOML) agrees.
                if load(edition, written[1]).scenario != rules.scenario:
                    raise _conflict("--scenario", scenario, f"the state file {state_file}",
                                    f"scenario {written[1]}")  # fmt: skip
            if generation:
                given = [k for k, v in situation_given.items() if v is not None]
                if given or situation or state_file:
                    raise ValueError(
                        "--generation asks about power generation before the game; give no "
                        "situation or --state with it"
                    )
                make = _tool(rules.edition, "generation_state")
                agent = search_agent(rules)

                def best(s: Any) -> int:
                    values = agent.action_values(rules, s)
                    return max(values, key=lambda a: (values[a], -a))

                state = make(rules, psyker, pick, best)
                result = generation_advice(rules, state, agent=agent)
                if as_json:
                    body = {"edition": rules.edition, "scenario": rules.scenario.name, **result}
                    typer.echo(json_text(body, strict=False))
                else:
                    _print_generation(rules, state, result)
                return
            extra = {**situation_given, "psyker": psyker}
            options = _situation_options(edition_id(edition), situation, extra)
            state = build_state(rules, file_doc=doc, options=options)
        if heuristics.strip().lower() == "all":
            names = heuristic_names(rules)
        elif heuristics.strip().lower() == "none":
            names = []
        else:
            names = split_names(heuristics)
        agent = search_agent(rules, iterations=iterations, seed=seed)
        result = advise_state(rules, state, agent=agent, heuristics=names)
        if info:
            result["from_log"] = info
    if as_json:
        typer.echo(
            json_text({"edition": rules.edition, "scenario": rules.scenario.name, **result},
                      strict=False)
        )  # fmt: skip
        return
    _print_advice(rules, state, result, origin)


def register(app: typer.Typer) -> None:
    """Add the ``advise`` command."""
    app.command("advise")(advise)


__all__ = ["advise", "build_state", "heuristic_names", "register", "seen_lines"]
