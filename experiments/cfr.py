"""``psygym cfr``: OpenSpiel's CFR / CFR+ and exact NashConv on a small scenario.

The game goes through :mod:`psygym.interop.openspiel`; CFR needs the whole tree in memory, so
use it on scenarios of at most a few hundred thousand histories. Writes ``cfr.csv`` (iterations
vs NashConv), ``agents.csv`` (each agent's NashConv), ``cfr-convergence.png`` and ``report.md``
under the run folder (``--out``, the same folder again on every run: it must hold no symbolic
link, :func:`.harness.runs.check_run_folder`, and every file goes through the safe writers).
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
from psygym_experiments.harness.runs import check_run_folder


def nash_conv_curve(
    game: Any, iterations: int, *, plus: bool = False, every: int = 10
) -> tuple[list[tuple[int, float]], Any]:
    """Run CFR (or CFR+) and measure the average policy's NashConv every ``every`` iterations.

    Returns:
        ``([(iteration, nash_conv), ...], solver)``.
    """
    from open_spiel.python.algorithms import cfr, exploitability

    solver = cfr.CFRPlusSolver(game) if plus else cfr.CFRSolver(game)
    curve = []
    for i in range(1, iterations + 1):
        solver.evaluate_and_update_policy()
        if i % every == 0 or i == iterations or i == 1:
            curve.append((i, float(exploitability.nash_conv(game, solver.average_policy()))))
    return curve, solver


def agent_nash_conv(game: Any, agents: Sequence[str]) -> dict[str, float]:
    """NashConv of each psygym agent (both seats played by it) on ``game``."""
    from open_spiel.python.algorithms import exploitability

    from psygym.interop.openspiel import OpenSpielPolicy
    from psygym.policies import resolve_policy

    out = {}
    for name in agents:
        pol = OpenSpielPolicy(game, resolve_policy(name, game.rules))
        out[name] = float(exploitability.nash_conv(game, pol))
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
) -> dict[str, Any]:
    """CFR and CFR+ curves, the agents' NashConv, CSVs, the PNG and a report under ``out``.

    Raises:
        UnsafeOutputError: ``out`` holds a symbolic link (refused before any solving).
    """
    from psygym.interop.openspiel import game_from_rules

    out.mkdir(parents=True, exist_ok=True)
    check_run_folder(out)  # the folder is written again on every run: no link may lead out
    game = game_from_rules(rules)
    curves = {
        "CFR": nash_conv_curve(game, iterations, every=every)[0],
        "CFR+": nash_conv_curve(game, iterations, plus=True, every=every)[0],
    }
    atomic_write(out / "cfr.csv", _csv(["solver", "iterations", "nash_conv"],
                                       [(k, i, v) for k, c in curves.items() for i, v in c]))
    scores = agent_nash_conv(game, agents)
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
) -> None:
    """Solve a small scenario with OpenSpiel's CFR and CFR+ and report NashConv."""
    from psygym_experiments.common import user_errors

    from psygym.editions import load

    agent, out = agent or [], Path(out)

    with user_errors():
        result = run(load(edition, scenario), out, iterations=iterations, every=every,
                     agents=agent)  # fmt: skip
    for label, curve in result["curves"].items():
        typer.echo(f"{label}: NashConv {curve[-1][1]:.6g} after {curve[-1][0]} iterations")
    for name, value in result["agents"].items():
        typer.echo(f"{name}: NashConv {value:.6g}")
    typer.echo(f"wrote {out}")


def register(app: typer.Typer) -> None:
    """Add the ``cfr`` command."""
    app.command("cfr")(cfr_command)
