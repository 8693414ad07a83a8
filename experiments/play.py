"""``psygym play`` (a game against the AI in the terminal) and ``psygym replay`` (check a log).

``play`` shows the state as the human's side may see it, the legal actions numbered with their
odds (from public information only), every roll with its chance and what it caused, and the AI's
decisions. Each of the human's menus is headed "decision N": N counts both players' decisions
from 1 (chance rolls excluded), as ``psygym advise --from-log LOG --at N`` takes it. ``--hint``
adds the ``search`` agent's value of every option (exact within the cast or turn in progress,
the board beyond it valued by a learned value; estimates of the information-set search where
hands are secret). The default AI is ``search`` too where the players see the whole board. Each
game is written to ``<runs-dir>/games/<timestamp>.jsonl``
(format in :mod:`psygym_experiments.play_session`); a kill (SIGTERM) or a closed terminal (SIGHUP)
ends the game as Ctrl-C does, so its log still gets its end line. A model trained for one seat
plays only that seat (:mod:`.harness.seats`). ``--scenario random:SEED`` plays a random
battle: the army list the edition's generator draws for that seed (:mod:`psygym.generator`),
logged under that name so ``replay`` makes the same one again. ``replay`` applies a log's
actions and chance outcomes through the rules, without random numbers, and fails with the line
number when the log does not match them.
"""

from __future__ import annotations

import importlib.util
import secrets
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from psygym_experiments.common import console, edition_option, err_console, user_errors
from psygym_experiments.harness.best_heuristic import (
    BEST_HEURISTIC,
    also_known,
    with_best_heuristic,
)
from psygym_experiments.harness.lifecycle import hangup_interrupts
from psygym_experiments.harness.runs import command_text
from psygym_experiments.harness.seats import check_plays, seat_spec
from psygym_experiments.play_advice import HINT_BUDGET, Advisor
from psygym_experiments.play_replay import replay_log
from psygym_experiments.play_session import (
    GameLog,
    PlaySession,
    scenario_info,
)
from rich.markup import escape

from psygym.editions import edition_id, load
from psygym.policies import resolve_policy

AUTO = "auto"
"""The default opponent: ``search``, else a shipped model or a heuristic."""

SEARCH = "search"
"""The strongest agent of every duel, which plays and advises (see ``docs/strength.md``)."""


def _loads(spec: str, rules: Any) -> bool:
    """Whether an agent spec loads for these rules (an out-of-date model does not)."""
    try:
        resolve_policy(spec, rules)
    except Exception:  # noqa: BLE001 - any failure to load means: use the heuristic instead
        return False
    return True


def default_opponent(rules: Any, seat: int = 1) -> str:
    """The ``auto`` opponent of an edition and scenario, playing ``seat``.

    ``search`` where it loads: exact within each cast or turn with a learned board value beyond
    where the players see the whole board, an information-set search (with the board value at
    the end of each phase where one is shipped) where hands are secret. Otherwise the pretrained
    model shipped for the scenario and that seat (``psygym_agents.sb3.pretrained_path``) if there
    is one and it loads for these rules, else the edition's reference heuristic
    (``BOTS.reference``), else ``random``.
    """
    if _loads(SEARCH, rules):
        return SEARCH
    name = getattr(rules.scenario, "name", "")
    if importlib.util.find_spec("psygym_agents.sb3") is not None:
        try:
            from psygym_agents.sb3 import pretrained_path

            path = pretrained_path(rules.edition, name, seat=seat)
        except (ImportError, AttributeError, ValueError):
            path = None
        if path is not None and Path(path).is_file():
            # A safe model (.safetensors) is named through the sb3 agent; a bare .zip resolves.
            spec = str(path) if Path(path).suffix == ".zip" else f"sb3:{path}"
            if _loads(spec, rules):
                return spec
    from psygym.policies import bots_for

    bots = bots_for(rules.edition)
    return bots.reference if bots is not None else "random"


def _other_seat_hint(rules: Any, seat: int) -> str:
    """What to do when the ``--opponent`` model was trained for the human's ``seat``."""
    ai = 1 - seat
    hint = f"play --seat {ai} against it, or give a model trained for seat {ai}"
    try:
        from psygym_agents.sb3 import pretrained_path

        shipped = pretrained_path(rules.edition, getattr(rules.scenario, "name", ""), seat=ai)
    except (ImportError, ValueError):
        shipped = None
    return hint + (f" (such as sb3:{shipped})" if shipped is not None else "")


def play(
    edition: str = edition_option(),
    scenario: str = typer.Option(
        "default",
        help="Shipped scenario name, TOML path, or random:SEED for a random battle (a generated "
        "army list; random:SEED,psykers=K,mastery=LO-HI,rounds=R fixes its sizes).",
    ),
    opponent: str = typer.Option(
        AUTO,
        help="The AI: an agent (search, optimal, random...), a .safetensors/.zip model or tuned "
        ".json; 'auto' picks search (else the shipped trained model or a heuristic); "
        "'best-heuristic' the heuristic that does best on this list. A model trained for one "
        "seat plays only that seat ('{seat}' in a path becomes the AI's seat).",
    ),
    seat: int = typer.Option(0, min=0, max=1, help="Your player: 0 (first side) or 1."),
    seed: int | None = typer.Option(
        None, min=0, help="Seed of the dice and the AI (random if unset)."
    ),
    hint: bool = typer.Option(
        False,
        "--hint",
        help="Show the value of each option (the search agent's: exact within the cast or "
        "turn, estimated beyond it and where hands are secret).",
    ),
    hint_seconds: float = typer.Option(
        HINT_BUDGET, min=0.1, help="Time a fallback solver may take per hint (h searches further)."
    ),
    runs_dir: str = typer.Option("runs", help="Games are logged to <runs-dir>/games/."),
) -> None:
    """Play a game against the AI in the terminal (type a number, ? to list, h hint, q quit)."""
    with user_errors(), also_known(AUTO, BEST_HEURISTIC):
        eid = edition_id(edition)
        rules = load(eid, scenario)
        spec = default_opponent(rules, seat=1 - seat) if opponent == AUTO else opponent
        [spec] = with_best_heuristic(rules, [seat_spec(spec, 1 - seat)])
        policy = resolve_policy(spec, rules)
        check_plays(policy, 1 - seat, f"--opponent {spec}", _other_seat_hint(rules, seat))
        info = scenario_info(rules, eid, scenario)
    if seed is None:
        seed = secrets.randbelow(2**31)
    header = {
        "edition": rules.edition,
        **info,
        "seed": seed,
        "seat": seat,
        "opponent": spec,
        "opponent_name": getattr(policy, "name", spec),
        "command": command_text(),
        "started": datetime.now().isoformat(timespec="seconds"),
    }
    log = GameLog.create(runs_dir, header)
    sides = rules.scenario.sides
    ai = escape(str(getattr(policy, "name", spec)))
    console.print(
        f"[bold]psygym play[/bold]: {rules.edition} edition, scenario "
        f"{escape(str(info['scenario']))}. You are {escape(sides[seat].name)} (player {seat}); "
        f"the AI ({ai}) plays {escape(sides[1 - seat].name)}. Seed {seed}.",
        highlight=False,
        soft_wrap=True,
        markup=True,
    )
    description = getattr(rules.scenario, "description", "")
    if description:
        console.print(
            " ".join(str(description).split()), markup=False, highlight=False, soft_wrap=True
        )
    session = PlaySession(
        rules,
        policy,
        seat=seat,
        seed=seed,
        console=console,
        hint=hint,
        log=log,
        opponent_name=f"AI: {getattr(policy, 'name', spec)}",
        advisor=Advisor(rules, budget=hint_seconds),
    )
    with hangup_interrupts():  # kill or a closed terminal ends the game as Ctrl-C: logged
        session.run()


def replay(
    file: Annotated[Path, typer.Argument(help="A game log written by psygym play (.jsonl).")],
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the result."),
    as_player: int | None = typer.Option(
        None,
        "--as-player",
        min=0,
        max=1,
        help="Show the game as this player (0 or 1) was shown it: the other hand's cards and "
        "secret bids hidden, as in play and serve (default: everything the log holds).",
    ),
) -> None:
    """Replay a game log through the rules (no dice rolled) and check its final state and score."""
    with user_errors():
        result = replay_log(
            file,
            console,
            quiet=quiet,
            as_player=as_player,
            on_warning=lambda w: err_console.print(
                f"[yellow]warning:[/yellow] {w}", highlight=False, soft_wrap=True
            ),
        )
    if quiet:
        status = "finished" if result.finished else "not finished"
        console.print(
            f"{file}: {result.steps} steps replayed ({status}), score "
            f"{result.score[0] + 0.0:+.2f} for player 0: matches the log.",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def register(app: typer.Typer) -> None:
    """Add the ``play`` and ``replay`` commands."""
    app.command("play")(play)
    app.command("replay")(replay)
