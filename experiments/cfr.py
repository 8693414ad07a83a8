"""``psygym cfr``: OpenSpiel's CFR / CFR+ and exact NashConv on a small scenario.

The game goes through :mod:`psygym.interop.openspiel`; CFR needs the whole tree in memory, so
use it on scenarios of at most a few hundred thousand histories. Before building anything the
command counts the game's tree (:func:`psygym.interop.openspiel.count_histories`, a Python loop
that Ctrl-C stops, with progress on stderr) and refuses, in one line, a tree of more than
``--max-states`` histories (:data:`DEFAULT_MAX_STATES`, about :data:`BYTES_PER_HISTORY` bytes
each). The CFR iterations and NashConv measurements show a progress bar; OpenSpiel's building
of CFR's tables (its ``get_all_states`` walk) is one call and shows none. Writes ``cfr.csv``
(iterations vs NashConv), ``agents.csv`` (each agent's NashConv), ``cfr-convergence.png`` and
``report.md`` under the run folder (``--out``, the same folder again on every run: it must hold
no symbolic link, :func:`.harness.runs.check_run_folder`, and every file goes through the safe
writers).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer
from psygym_experiments.harness.output import atomic_write, save_figure
from psygym_experiments.harness.progress import ProgressBar
from psygym_experiments.harness.runs import check_run_folder
from psygym_experiments.harness.solving import memory_text

DEFAULT_MAX_STATES = 2_000_000
"""Default ``--max-states``: the most histories of a game tree CFR is run on (about 2 GB)."""
BYTES_PER_HISTORY = 1_000
"""Memory one history of the tree takes while CFR and NashConv run, about: 820 bytes measured
on the 2nd edition's smite-skirmish (OpenSpiel's tabular policy, CFR's information-state
nodes and the best responses of NashConv)."""
SMALLER_SCENARIO = "random:SEED,psykers=1,rounds=1,mastery=1-1"
"""The generated scenarios a refusal tries (their trees depend on the seed and the edition)."""
SMALLER_SEEDS = range(6)
"""The seeds of :data:`SMALLER_SCENARIO` a refusal counts, after the shipped scenarios."""
FIRST_LIMIT = 1_000
"""The first count limit of :func:`smaller_scenario`: each round counts every candidate to a
limit eight times the last, so the smallest trees are found first and large ones cost little."""
LEAST_SEARCH = 100_000
"""The fewest positions :func:`smaller_scenario` may count in all (a fraction of a second), so
a refused count that stopped early still gets each candidate counted."""


def budget_line(max_states: int) -> str:
    """The budget line printed before the tree is counted."""
    return (
        f"budget: {max_states:,} histories, about {memory_text(max_states * BYTES_PER_HISTORY)}"
        " (--max-states)"
    )


def check_tree(game: Any, max_states: int, *, show_progress: bool = False) -> int:
    """Count ``game``'s tree (progress on stderr) and refuse it if over ``max_states`` histories.

    Returns:
        The number of histories of the tree.

    Raises:
        ValueError: the tree has more than ``max_states`` histories (one line: how many at
            least, the budget, and what to do).
    """
    from psygym.interop.openspiel import count_histories

    with ProgressBar("counting the game tree", max_states, enabled=show_progress) as bar:

        def shown(positions: int, largest: int) -> None:
            bar.update(completed=largest, note=f"{positions:,} positions")

        size = count_histories(game, max_states, on_progress=shown)
        bar.update(completed=min(size.histories, max_states))
    if size.complete:
        return size.histories
    scenario = getattr(game.rules.scenario, "name", "?")
    found = smaller_scenario(game.rules, max_states, size.positions, show_progress=show_progress)
    if found is not None:
        smaller = f"give a smaller scenario, e.g. --scenario {found[0]} ({found[1]:,} histories)"
    else:
        smaller = (
            "give a smaller scenario (fewer psykers, powers or battle rounds; generated ones such "
            f"as --scenario {SMALLER_SCENARIO} vary with the seed, and no shipped or generated "
            "scenario counted within the budget fits)"
        )
    raise ValueError(
        f"the game tree of {game.rules.edition} {scenario} has at least {size.histories:,} "
        f"histories, more than --max-states {max_states:,} (CFR would need about "
        f"{memory_text(size.histories * BYTES_PER_HISTORY)} or more): {smaller} or a "
        "larger --max-states"
    )


def smaller_scenario(
    rules: Any, max_states: int, positions: int, *, show_progress: bool = False
) -> tuple[str, int] | None:
    """A scenario of ``rules``' edition whose tree was counted and fits ``max_states``, or None.

    The candidates are the edition's shipped scenarios (but ``rules``' own) and
    :data:`SMALLER_SCENARIO` with each of :data:`SMALLER_SEEDS`. They are counted in rounds,
    each to a higher limit (:data:`FIRST_LIMIT`, then eight times more, up to ``max_states``),
    and the first whose whole tree is counted is returned with its histories: so the smallest
    trees come first. All the counts together visit at most ``positions`` positions (those the
    refused count visited; at least :data:`LEAST_SEARCH`), so a refusal costs about twice its
    count at most.
    """
    from psygym.edition import get
    from psygym.editions import load
    from psygym.interop.openspiel import count_histories, game_from_rules

    own = getattr(rules.scenario, "name", None)
    names = [n for n in get(rules.edition).scenario_names() if n != own]
    names += [SMALLER_SCENARIO.replace("SEED", str(seed)) for seed in SMALLER_SEEDS]
    games: dict[str, Any] = {}
    budget = max(positions, LEAST_SEARCH)
    left, limit = budget, min(FIRST_LIMIT, max_states)
    with ProgressBar("looking for a smaller scenario", budget, enabled=show_progress) as bar:
        while names and left > 0:
            for name in list(names):
                if name not in games:
                    try:
                        games[name] = game_from_rules(load(rules.edition, name))
                    except ValueError:  # a generator that takes other options: not a candidate
                        names.remove(name)
                        continue
                size = count_histories(games[name], min(limit, left))
                left -= size.positions
                bar.update(completed=budget - max(left, 0), note=name)
                if size.complete:  # the whole tree, within a limit of at most max_states
                    return name, size.histories
                if size.histories > max_states or limit == max_states:
                    names.remove(name)  # more than max_states histories: it cannot fit
                if left <= 0:
                    break
            limit = min(8 * limit, max_states)
    return None


def nash_conv_curve(
    game: Any, iterations: int, *, plus: bool = False, every: int = 10,
    show_progress: bool = False,
) -> tuple[list[tuple[int, float]], Any]:  # fmt: skip
    """Run CFR (or CFR+) and measure the average policy's NashConv every ``every`` iterations.

    With ``show_progress`` a progress bar on stderr counts the iterations (the building of the
    solver's tables before them is one OpenSpiel call, shown only by its description).

    Returns:
        ``([(iteration, nash_conv), ...], solver)``.
    """
    from open_spiel.python.algorithms import cfr, exploitability

    label = "CFR+" if plus else "CFR"
    with ProgressBar(label, iterations, enabled=show_progress) as bar:
        bar.update(note="building the tables (one OpenSpiel call)")
        solver = cfr.CFRPlusSolver(game) if plus else cfr.CFRSolver(game)
        bar.update(note="")
        curve = []
        for i in range(1, iterations + 1):
            solver.evaluate_and_update_policy()
            if i % every == 0 or i == iterations or i == 1:
                bar.update(completed=i, note="measuring NashConv")
                curve.append((i, float(exploitability.nash_conv(game, solver.average_policy()))))
                bar.update(note=f"NashConv {curve[-1][1]:.4g}")
            bar.update(completed=i)
    return curve, solver


def agent_nash_conv(
    game: Any, agents: Sequence[str], *, show_progress: bool = False
) -> dict[str, float]:
    """NashConv of each psygym agent (both seats played by it) on ``game``."""
    from open_spiel.python.algorithms import exploitability

    from psygym.interop.openspiel import OpenSpielPolicy
    from psygym.policies import resolve_policy

    out = {}
    shown = show_progress and bool(agents)
    with ProgressBar("agents' NashConv", len(agents), enabled=shown) as bar:
        for name in agents:
            bar.update(note=name)
            pol = OpenSpielPolicy(game, resolve_policy(name, game.rules))
            out[name] = float(exploitability.nash_conv(game, pol))
            bar.advance()
    return out


def plot_curve(curves: dict[str, list[tuple[int, float]]], path: Path, title: str) -> Path:
    """Write a log-log PNG of NashConv against CFR iterations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for label, curve in curves.items():
        ax.loglog([i for i, _ in curve], [max(v, 1e-12) for _, v in curve], label=label)
    ax.set_xlabel("iterations")
    ax.set_ylabel("NashConv of the average policy")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    return path


def run(
    rules: Any,
    out: Path,
    *,
    iterations: int = 200,
    every: int = 10,
    agents: Sequence[str] = (),
    max_states: int = DEFAULT_MAX_STATES,
    show_progress: bool = False,
) -> dict[str, Any]:
    """CFR and CFR+ curves, the agents' NashConv, CSVs, the PNG and a report under ``out``.

    The agents are resolved first (an unknown name is refused before anything else), then the
    game's tree is counted and refused over ``max_states`` histories (:func:`check_tree`),
    before OpenSpiel builds anything.

    Raises:
        UnsafeOutputError: ``out`` holds a symbolic link (refused before any solving).
        ValueError: an unknown agent, or the tree has more than ``max_states`` histories.
    """
    from psygym.interop.openspiel import game_from_rules
    from psygym.policies import resolve_policy

    for name in agents:  # a bad name fails here, in one line, before any counting or CFR
        resolve_policy(name, rules)
    out.mkdir(parents=True, exist_ok=True)
    check_run_folder(out)  # the folder is written again on every run: no link may lead out
    game = game_from_rules(rules)
    check_tree(game, max_states, show_progress=show_progress)
    curves = {
        "CFR": nash_conv_curve(game, iterations, every=every, show_progress=show_progress)[0],
        "CFR+": nash_conv_curve(
            game, iterations, plus=True, every=every, show_progress=show_progress
        )[0],
    }
    atomic_write(out / "cfr.csv", _csv(["solver", "iterations", "nash_conv"],
                                       [(k, i, v) for k, c in curves.items() for i, v in c]))
    scores = agent_nash_conv(game, agents, show_progress=show_progress)
    atomic_write(out / "agents.csv", _csv(["agent", "nash_conv"], list(scores.items())))
    scenario = getattr(rules.scenario, "name", "?")
    png = plot_curve(curves, out / "cfr-convergence.png", f"OpenSpiel CFR on {scenario}")
    lines = [f"# CFR on {scenario}", "", "| solver | iterations | NashConv |", "|---|---|---|"]
    lines += [f"| {k} | {c[-1][0]} | {c[-1][1]:.6g} |" for k, c in curves.items()]
    lines += ["", "| agent | NashConv |", "|---|---|"]
    lines += [f"| {k} | {v:.6g} |" for k, v in scores.items()]
    atomic_write(out / "report.md", "\n".join(lines) + "\n")
    result = {"curves": curves, "agents": scores, "png": str(png)}
    atomic_write(out / "metrics.json", json.dumps(result, indent=2))
    return result


def _csv(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """CSV text (the csv module's own line ends, as the files always had)."""
    text = io.StringIO()
    w = csv.writer(text)
    w.writerow(header)
    w.writerows(rows)
    return text.getvalue()


_AGENT_OPTION = typer.Option(None, help="agents whose NashConv to report (repeatable)")


def cfr_command(
    edition: str = typer.Option(..., help="edition id or alias"),
    scenario: str = typer.Option("default", help="a shipped scenario name or a TOML path"),
    iterations: int = typer.Option(200, min=1, help="CFR iterations"),
    every: int = typer.Option(10, min=1, help="measure NashConv every this many iterations"),
    agent: list[str] | None = _AGENT_OPTION,
    out: str = typer.Option("runs/cfr", help="run folder"),
    max_states: int = typer.Option(
        DEFAULT_MAX_STATES,
        min=1,
        help="Refuse a game whose tree has more histories than this (decisions, chance nodes "
        f"and ends; CFR holds them all, about {BYTES_PER_HISTORY:,} bytes each); counted "
        "before anything is built.",
    ),
) -> None:
    """Solve a small scenario with OpenSpiel's CFR and CFR+ and report NashConv."""
    from psygym_experiments.common import console, user_errors

    from psygym.editions import load

    agent, out = agent or [], Path(out)

    with user_errors():
        rules = load(edition, scenario)
        console.print(budget_line(max_states), highlight=False, soft_wrap=True)  # as solve does
        result = run(rules, out, iterations=iterations, every=every, agents=agent,
                     max_states=max_states, show_progress=True)  # fmt: skip
    for label, curve in result["curves"].items():
        typer.echo(f"{label}: NashConv {curve[-1][1]:.6g} after {curve[-1][0]} iterations")
    for name, value in result["agents"].items():
        typer.echo(f"{name}: NashConv {value:.6g}")
    typer.echo(f"wrote {out}")


def register(app: typer.Typer) -> None:
    """Add the ``cfr`` command."""
    app.command("cfr")(cfr_command)
