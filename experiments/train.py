"""``psygym train``: train an RL agent (stable-baselines3) on any edition, resumable.

The run folder, resuming, self-play and illegal-action handling are described in
:mod:`psygym_experiments.harness.training`, which does the work; this module is the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from psygym_experiments.common import console, edition_option, err_console, user_errors
from psygym_experiments.harness.runs import command_text, invoked_as_cli, write_command
from psygym_experiments.harness.training import (
    TRUSTED_NOTE,
    TrainConfig,
    TrainingInterrupted,
    command_line,
    export_model,
    make_config,
    read_metrics,
    resume_run,
    run_training,
    start_run,
)


def train(
    edition: str = edition_option(),
    scenario: str = typer.Option("default", help="Shipped scenario name or TOML path."),
    algo: str = typer.Option(
        "maskable-ppo",
        help="maskable-ppo (action masks), ppo or dqn (illegal actions are "
        "replaced by a legal one, with the config's illegal_penalty).",
    ),
    steps: int | None = typer.Option(
        None,
        min=1,
        help="Total environment steps of the run (default 100000; with --resume: keep the "
        "run's target unless given).",
    ),
    seed: int = typer.Option(0, min=0, help="Random seed (model, envs, evaluation dice)."),
    opponent: str = typer.Option(
        "random",
        help="Opponent during training: an agent name, a model .zip (trusted files "
        "only), tuned:best.json, or 'self' (frozen copies of the learner).",
    ),
    eval_opponent: str = typer.Option(
        "",
        help="Opponent of the periodic evaluations (default: --opponent; with 'self', the "
        "edition's first heuristic).",
    ),
    seat: str = typer.Option(
        "",
        help="Learner's seat: 0, 1 or both (alternating per episode; default 0, or both "
        "with --opponent self).",
    ),
    config: str = typer.Option(
        "", help="YAML hyperparameters merged over experiments/configs/<algo>.yml."
    ),
    runs_dir: str = typer.Option("runs", help="Folder for run outputs."),
    resume: str = typer.Option(
        "",
        help="Continue the run in this folder from its last checkpoint (--steps may raise "
        "its target).",
    ),
    eval_every: int = typer.Option(
        0, min=0, help="Steps between evaluations + checkpoints (default: steps/10, at most 10000)."
    ),
    eval_episodes: int = typer.Option(
        200, min=1, help="Games per evaluation (fixed dice each time)."
    ),
    n_envs: int = typer.Option(0, min=0, help="Vectorised envs (default: from the config)."),
    subproc: bool = typer.Option(False, "--subproc", help="SubprocVecEnv instead of DummyVecEnv."),
    exact_eval: bool = typer.Option(
        False, "--exact-eval", help="Also evaluate exactly with the solver (small scenarios)."
    ),
    show_progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar."),
    export: str = typer.Option(
        "",
        help="Also write the final model (safe format) to this stem: <stem>.safetensors + "
        "<stem>.json, e.g. agents/pretrained/7th-duel-seat0.",
    ),
) -> None:
    """Train an RL agent (MaskablePPO by default) with periodic evaluation and checkpoints.

    Writes runs/<edition>/<scenario>/<algo>_<n>/: config.yml, command.txt, metrics.csv,
    learning_curve.png, tb/ (TensorBoard), checkpoints/, model.safetensors + model.json. Ctrl-C or
    SIGTERM saves a checkpoint and exits (status 130/143); --resume RUN_DIR continues it.
    PPO and DQN have no action masks: an illegal action is replaced by the lowest (PPO) or a
    random (DQN) legal action and a small penalty (illegal_penalty in the config) is subtracted.
    --opponent self: the opponent is a frozen copy of the learner (sampling its policy),
    refreshed every self_play_refresh steps (config); the learner alternates seats.
    Models and checkpoints are written in the safe format (safetensors + JSON, no pickles).
    """
    with user_errors():
        try:
            if resume:
                run_dir = Path(resume)
                cmd = command_text() if invoked_as_cli() else None
                resume_run(run_dir, steps, show_progress=show_progress, command=cmd)
            else:
                run_dir = _start(_config(locals()), runs_dir, show_progress)
        except TrainingInterrupted as exc:
            err_console.print(f"[yellow]{exc}[/yellow]", highlight=False)
            raise typer.Exit(128 + exc.signum) from None
        exported = export_model(run_dir, export) if export else None
    _print_summary(run_dir, exported)


def _config(o: dict[str, Any]) -> TrainConfig:
    """The configuration of a new run from the command's options (empty means default)."""
    return make_config(
        o["edition"], o["scenario"], o["algo"],
        100_000 if o["steps"] is None else o["steps"], o["seed"], o["opponent"],
        eval_opponent=o["eval_opponent"] or None, seat=o["seat"] or None,
        eval_every=o["eval_every"] or None, eval_episodes=o["eval_episodes"],
        exact_eval=o["exact_eval"], n_envs=o["n_envs"] or None, subproc=o["subproc"],
        config=o["config"] or None,
    )  # fmt: skip


def _start(cfg: TrainConfig, runs_dir: str, show_progress: bool) -> Path:
    """Create the run folder, record the command and train; returns the run folder."""
    run_dir = start_run(cfg, runs_dir)
    if invoked_as_cli():
        write_command(run_dir)
    else:  # called in-process (tests, notebooks): record the equivalent command
        write_command(run_dir, command_line(cfg, runs_dir))
    console.print(f"run folder: {run_dir}", highlight=False)
    run_training(cfg, run_dir, show_progress=show_progress)
    return run_dir


def _print_summary(run_dir: Path, exported: Path | None) -> None:
    """The last evaluation of a run, and the exported model if any."""
    rows = read_metrics(run_dir)
    last = rows[-1] if rows else {}
    console.print(
        f"done: {last.get('step', '?')} steps, mean eval score {last.get('mean_score', '?')} "
        f"(± {last.get('ci95', '?')}); model: {run_dir / 'model.safetensors'}",
        highlight=False,
    )
    if exported is not None:
        console.print(f"exported: {exported} ({exported.stat().st_size} bytes)", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``train`` command."""
    app.command("train", epilog=TRUSTED_NOTE)(train)


__all__ = ["register", "train"]
