"""``psygym tune``: Optuna searches over parametric policies or MaskablePPO hyperparameters.

Targets, storage and outputs are described in :mod:`psygym_experiments.harness.tuning`, which
does the work; this module is the command.
"""

from __future__ import annotations

import typer
from psygym_experiments.common import (
    check_workers_option,
    console,
    edition_option,
    err_console,
    n_envs_option,
    user_errors,
)
from psygym_experiments.harness.runs import command_text, invoked_as_cli
from psygym_experiments.harness.tuning import TARGETS, TuneInterrupted, run_target


def tune(
    edition: str = edition_option(),
    scenario: str = typer.Option("default", help="Shipped scenario name or TOML path."),
    target: str = typer.Option(
        "parametric",
        help="parametric (the edition's policy family) or maskable-ppo (RL hyperparameters).",
    ),
    trials: int = typer.Option(20, min=1, help="Trials this worker runs (added to the study)."),
    storage: str = typer.Option(
        "",
        help="Optuna storage: a URL (sqlite:///..., postgresql://user:pw@host/db) or "
        "journal:PATH; default sqlite:///<runs-dir>/optuna.db.",
    ),
    study: str = typer.Option("", help="Study name (default <edition>-<scenario>-<target>)."),
    jobs: int = typer.Option(
        1,
        min=1,
        callback=check_workers_option,
        help="Parallel trials in this process (at most 4 per CPU core, as --workers).",
    ),
    seed: int = typer.Option(
        0, min=0, help="Sampler seed (give each distributed worker its own) and simulation seed."
    ),
    runs_dir: str = typer.Option("runs", help="Folder for outputs and the default storage."),
    opponent: str = typer.Option(
        "", help="Fixed opponent (default: the edition's first heuristic)."
    ),
    episodes: int = typer.Option(
        400, min=1, help="parametric: games per seat per trial when simulated."
    ),
    scoring: str = typer.Option("auto", help="parametric: auto, exact or simulation."),
    trial_steps: int = typer.Option(50_000, min=1, help="maskable-ppo: training steps per trial."),
    eval_every: int = typer.Option(
        0,
        min=0,
        help="maskable-ppo: steps between evaluations (reported "
        "to the pruner; default trial-steps/5).",
    ),
    eval_episodes: int = typer.Option(200, min=1, help="maskable-ppo: games per evaluation."),
    n_envs: int = n_envs_option("maskable-ppo"),
    exact_eval: bool = typer.Option(
        False, "--exact-eval", help="maskable-ppo: score trials exactly with the solver."
    ),
    timeout: float = typer.Option(
        0.0, min=0.0, help="Stop starting new trials after this many seconds."
    ),
    show_progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar."),
) -> None:
    """Optuna search over a parametric policy family or MaskablePPO hyperparameters.

    Re-running with the same storage and study adds trials to the same study; several workers
    (machines sharing a PostgreSQL URL or a journal: file) can run the same command at once.
    The best parameters go to runs/<edition>/<scenario>/tune_<study>/best.json, loadable as
    the agent tuned:<path>. maskable-ppo trials save stable-baselines3 models (pickles): load
    models only from trusted sources.
    """
    with user_errors():
        if target not in TARGETS:
            raise ValueError(f"--target {target!r} is not one of: {', '.join(TARGETS)}")
        common = dict(storage=storage or None, study=study or None, opponent=opponent or None,
                      jobs=jobs, timeout=timeout or None, show_progress=show_progress,
                      command=command_text() if invoked_as_cli() else "")  # fmt: skip
        try:
            path = run_target(target, edition, scenario, trials, seed, runs_dir, episodes,
                              scoring, trial_steps, eval_every, eval_episodes, n_envs,
                               exact_eval, common)  # fmt: skip
        except TuneInterrupted as exc:
            err_console.print(f"[yellow]{exc}[/yellow]", highlight=False)
            raise typer.Exit(130) from None
    import json

    doc = json.loads(path.read_text())
    failed = f" ({doc['failed']} failed, not counted)" if doc.get("failed") else ""
    console.print(f"study {doc['study']}: {doc['trials']} finished trials{failed}; best value "
                  f"{doc['value']:+.4f} (trial {doc['trial']})", highlight=False)  # fmt: skip
    console.print(f"best parameters: {json.dumps(doc['params'])}", highlight=False)
    console.print(f"saved: {path}  (use as agent: tuned:{path})", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``tune`` command."""
    app.command("tune", epilog="Model files are stable-baselines3 archives (pickles): load only "
                "models from trusted sources.")(tune)  # fmt: skip


__all__ = ["register", "tune"]
