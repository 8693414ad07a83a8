"""``psygym train``: train an RL agent (stable-baselines3) on any edition, resumable.

The run folder, resuming, self-play and illegal-action handling are described in
:mod:`psygym_experiments.harness.training`, which does the work; this module is the command.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer
from psygym_experiments.common import (
    console,
    edition_option,
    err_console,
    error_line,
    n_envs_option,
    printable,
    ray_option,
    user_errors,
)
from psygym_experiments.harness.general_value import command_line as general_command
from psygym_experiments.harness.general_value import (
    is_general_run,
    is_general_scenario,
    make_general_config,
    resume_general,
    run_general,
)
from psygym_experiments.harness.general_value import start_run as start_general_run
from psygym_experiments.harness.general_value import summary_lines as general_summary
from psygym_experiments.harness.model_files import (
    check_new_model,
    checkpoint_record,
    export_model,
)
from psygym_experiments.harness.pools import RAY_ENV, ray_pool
from psygym_experiments.harness.runs import command_text, invoked_as_cli, write_command
from psygym_experiments.harness.train_config import TrainConfig, make_config
from psygym_experiments.harness.training import (
    TRUSTED_NOTE,
    TrainingInterrupted,
    check_n_envs,
    resume_run,
    run_training,
)
from psygym_experiments.harness.training_files import (
    command_line,
    first_evaluation,
    read_metrics,
    start_run,
)
from psygym_experiments.harness.value_config import ALGO as VALUE_ALGO
from psygym_experiments.harness.value_config import (
    is_value_run,
    make_value_config,
    start_value_run,
    value_command_line,
)
from psygym_experiments.harness.value_training import (
    export_value,
    final_value,
    read_value_metrics,
    resume_value_run,
    run_value_training,
)
from rich.markup import escape

VALUE_GAMES = 2000
"""Default ``--steps`` (games of the Monte-Carlo stage) of ``--algo value``."""
GENERAL_GAMES = 20_000
"""Default ``--steps`` of a general value (``--scenario random``): heuristic games, a list each."""
_RL_ONLY = {
    "opponent": "random", "eval_opponent": "", "seat": "", "eval_every": 0,
    "eval_episodes": 200, "n_envs": 0, "subproc": False, "exact_eval": False, "init": "",
    "vec_env": "auto",
}  # fmt: skip
"""Options of the RL algorithms with their defaults (they do not apply to ``--algo value``)."""


def train(
    ctx: typer.Context,
    edition: str = edition_option(),
    scenario: str = typer.Option("default", help="Shipped scenario name or TOML path."),
    algo: str = typer.Option(
        "maskable-ppo",
        help="maskable-ppo (action masks), ppo or dqn (illegal actions are "
        "replaced by a legal one, with the config's illegal_penalty); or value: a board value "
        "for the search agent (--steps counts games, --config sets its budget).",
    ),
    steps: int | None = typer.Option(
        None,
        help="Total environment steps of the run (default 100000; with --resume: keep the "
        "run's target unless given). --algo value: games of its Monte-Carlo stage (default "
        f"{VALUE_GAMES}).",
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
    init: str = typer.Option(
        "",
        help="Start from this safe model's policy weights (.safetensors of the same algorithm "
        "and scenario, e.g. agents/pretrained/7th-duel-seat0.safetensors) instead of fresh "
        "ones: fine-tuning, or an exploiter that starts as a competent player.",
    ),
    resume: str = typer.Option(
        "",
        help="Continue the run in this folder from its last checkpoint (--steps may raise "
        "its target).",
    ),
    eval_every: int = typer.Option(
        0, min=0, help="Steps between evaluations + checkpoints (default: steps/10, at most 10000)."
    ),
    eval_episodes: int = typer.Option(
        200, min=1, help="Games per evaluation (the same games each time: common random numbers)."
    ),
    n_envs: int = n_envs_option(subproc=True),
    subproc: bool = typer.Option(False, "--subproc", help="SubprocVecEnv instead of DummyVecEnv."),
    vec_env: str = typer.Option(
        "auto",
        help="Training envs: batched (the --n-envs games stepped in one call into the compiled "
        "core), gym (one Gymnasium env per game: DummyVecEnv, --subproc, --ray) or auto "
        "(batched wherever it plays the run: maskable-ppo against random in seat 0 or 1). "
        "config.yml records the one used.",
    ),
    exact_eval: bool = typer.Option(
        False, "--exact-eval", help="Also evaluate exactly with the solver (small scenarios)."
    ),
    show_progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar."),
    export: str = typer.Option(
        "",
        help="Also write the final model (safe format) to this stem: <stem>.safetensors + "
        "<stem>.json, e.g. agents/pretrained/7th-duel-seat0 (new files only: checked before "
        "training starts).",
    ),
    ray: str = ray_option(),
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
    MaskablePPO against random trains on the batched env (the games stepped in one call into the
    compiled core) wherever the core has the scenario; config.yml's vec_env says which envs ran.
    --ray runs each training env in a Ray actor of one CPU on a cluster (the same model as
    locally); a node lost mid-run stops the run, and --resume continues it from its checkpoint.
    --algo value trains the search agent's board value instead (--steps: games of its
    Monte-Carlo stage; --config: a YAML of its settings; runs/<edition>/<scenario>/value_<n>/:
    data/, labels/, checkpoints/, fits.csv, learning_curve.png, metrics.csv + metrics.json,
    value.safetensors + value.json; see psygym_experiments.harness.value_training).
    """
    options = {k: v for k, v in locals().items() if k != "ctx"}
    with user_errors():
        if steps is not None and steps < 1:
            raise ValueError(f"--steps must be at least 1, not {steps}")
        stem = _export_stem(export) if export else None  # before any training time is spent
        value_run = algo == VALUE_ALGO or (bool(resume) and is_value_run(resume))
        if ray and subproc:
            raise ValueError(f"--subproc starts local processes; with --ray (or {RAY_ENV}) the "
                             "envs run on the cluster's CPUs: leave out one of them")  # fmt: skip
        lost = _lost_errors(ray, value_run)
        pool = run_dir = None
        try:
            if resume:
                run_dir = Path(resume)
                _check_resumed_options(ctx, run_dir, options, value_run)
                cmd = command_text() if invoked_as_cli() else None
                pool = ray_pool(ray)
                if value_run and is_general_run(run_dir):
                    resume_general(run_dir, steps, show_progress=show_progress, command=cmd,
                                   pool=pool)  # fmt: skip
                elif value_run:
                    resume_value_run(run_dir, steps, show_progress=show_progress, command=cmd,
                                     pool=pool)  # fmt: skip
                else:
                    resume_run(run_dir, steps, show_progress=show_progress, command=cmd,
                               ray=ray)  # fmt: skip
            elif value_run:
                pool = ray_pool(ray)
                run_dir = _start_value(options, pool)
            else:
                cfg = _config(options)
                check_n_envs(
                    int(cfg.hyperparams["n_envs"]),
                    cfg.subproc,
                    "--n-envs" if n_envs else "n_envs (of the config)",
                )  # before anything is built
                pool = ray_pool(ray)  # joined before the run folder is made: errors come first
                if pool is not None:
                    from psygym_experiments.harness.ray_vec_env import check_cluster_fits

                    check_cluster_fits(int(cfg.hyperparams.get("n_envs", 1)), pool)
                run_dir = _start(cfg, runs_dir)
                run_training(cfg, run_dir, show_progress=show_progress, ray=ray)
        except TrainingInterrupted as exc:
            err_console.print(f"[yellow]{exc}[/yellow]", highlight=False)
            raise typer.Exit(128 + exc.signum) from None
        except lost as exc:  # an env's node died: an episode cannot move to another node
            _print_stopped(exc, run_dir)
            raise typer.Exit(1) from None
        finally:
            if pool is not None:
                pool.shutdown(cancel_futures=True)
        exported = None
        if stem is not None:
            _check_export(stem)  # again: a file may have appeared there while the run trained
            exported = (export_value if value_run else export_model)(run_dir, stem)
    if value_run:
        _print_value_summary(run_dir, exported)
    else:
        _print_summary(run_dir, exported)


def _export_stem(export: str) -> Path:
    """The stem ``--export`` names, once its name and the files it would write are shown fine.

    Allowed: a stem (``agents/pretrained/x``) or it with ``.safetensors`` or ``.json``, in a
    folder that exists or can be made, where neither ``<stem>.safetensors`` nor
    ``<stem>.json`` exists yet (:func:`.harness.model_files.check_new_model`, as ``psygym
    export``). An SB3 ``.zip``, another case of the suffixes, or a folder is refused.

    Raises:
        ValueError: one line naming ``--export``, what is wrong and what is allowed.
    """
    given = Path(export)
    if export.endswith(("/", os.sep)) or given.is_dir():
        example = given / "model"
        raise ValueError(
            f"--export {export} is a folder; name the model's files in it (a stem), e.g. "
            f"--export {example} for {example}.safetensors + model.json"
        )
    stem = given.with_suffix("") if given.suffix in (".safetensors", ".json") else given
    suffix = stem.suffix.lower()
    if suffix in (".zip", ".safetensors", ".json"):
        if suffix == ".zip":
            why = "train writes psygym's safe format, not an SB3 .zip"
        elif stem != given:
            why = f"{given.name} has two model suffixes"
        else:
            why = f"psygym knows a model by {suffix} in lowercase, not {stem.suffix}"
        bare = stem.with_suffix("")
        raise ValueError(
            f"--export {export}: {why}; allowed: a stem, or it with .safetensors or .json "
            f"(lowercase), e.g. --export {bare} for {bare}.safetensors + {bare.name}.json"
        )
    _check_export(stem)
    return stem


def _check_export(stem: Path) -> None:
    """Refuse ``--export``'s files if they exist, are links, or cannot be made."""
    check_new_model(stem, "train --export", "name another --export")


RESUME_OPTIONS = ("steps", "show_progress", "export", "resume", "runs_dir", "ray")
"""Options that apply to a resumed run; every other setting is the run's own."""


def _check_resumed_options(
    ctx: typer.Context, run_dir: Path, options: dict[str, Any], value_run: bool
) -> None:  # fmt: skip
    """Refuse settings given with ``--resume`` that differ from the run's, naming them.

    A resumed run keeps the settings in its folder: a given setting equal to the run's is
    accepted, one with another value (or one that cannot be compared, ``--config``, and any
    setting of a board-value run) is refused in one line before anything is loaded.
    """
    from psygym_experiments.harness.runs import given_options
    from psygym_experiments.harness.train_config import config_from_file

    from psygym.edition import get

    named = sorted(given_options(ctx, [k for k in options if k not in RESUME_OPTIONS]))
    if not named:
        return
    saved = None if value_run else config_from_file(run_dir)
    differ = []
    for key in named:
        if saved is None or key == "config":
            differ.append(key)
            continue
        mine = options[key]
        if key == "edition":
            mine = get(mine).id
        theirs = saved.hyperparams.get("n_envs") if key == "n_envs" else getattr(saved, key)
        if key == "scenario" and mine == "default":
            mine = get(saved.edition).default_scenario
        if key == "vec_env" and mine == "auto":  # whatever fits: the run's own
            continue
        if str(mine) != str(theirs):
            differ.append(key)
    if differ:
        flags = ", ".join("--" + k.replace("_", "-") for k in differ)
        raise ValueError(f"{run_dir} holds a run with other settings ({flags}): --resume keeps "
                         "the run's own; leave them out (only --steps, --export and --progress "
                         "apply to a resumed run)")  # fmt: skip


def _start_value(o: dict[str, Any], pool: Any = None) -> Path:
    """Create a board-value run folder, record the command and train; returns the folder.

    ``pool``: a Ray pool (``--ray``) that plays the stages' games.
    """
    changed = [k for k, default in _RL_ONLY.items() if o[k] != default]
    if changed:
        names = ", ".join("--" + k.replace("_", "-") for k in changed)
        raise ValueError(f"{names}: not an option of --algo value (it plays its own games)")
    if is_general_scenario(o["scenario"]):
        return _start_general(o, pool)
    steps = VALUE_GAMES if o["steps"] is None else o["steps"]
    cfg = make_value_config(o["edition"], o["scenario"], steps, o["seed"],
                            config=o["config"] or None)  # fmt: skip
    run_dir = start_value_run(cfg, o["runs_dir"])
    if invoked_as_cli():
        write_command(run_dir)
    else:  # called in-process (tests, notebooks): record the equivalent command
        write_command(run_dir, value_command_line(cfg, o["runs_dir"], o["config"] or None))
    _say(f"run folder: {run_dir}")
    run_value_training(cfg, run_dir, show_progress=o["show_progress"], pool=pool)
    return run_dir


def _start_general(o: dict[str, Any], pool: Any = None) -> Path:
    """Create a general board-value run (``--scenario random``) and train; returns the folder."""
    overrides: dict[str, Any] = {}
    if o["config"]:
        from psygym_experiments.harness.train_config import read_yaml

        doc = read_yaml(o["config"])
        if not isinstance(doc, dict):
            raise ValueError(f"--config {o['config']}: expected a mapping of settings")
        overrides.update(doc)
    steps = GENERAL_GAMES if o["steps"] is None else o["steps"]
    cfg = make_general_config(o["edition"], o["scenario"], steps, o["seed"], overrides)
    run_dir = start_general_run(cfg, o["runs_dir"])
    write_command(run_dir, None if invoked_as_cli() else general_command(cfg, o["runs_dir"]))
    _say(f"run folder: {run_dir}")
    run_general(cfg, run_dir, show_progress=o["show_progress"], pool=pool)
    return run_dir


def _config(o: dict[str, Any]) -> TrainConfig:
    """The configuration of a new run from the command's options (empty means default)."""
    return make_config(
        o["edition"], o["scenario"], o["algo"],
        100_000 if o["steps"] is None else o["steps"], o["seed"], o["opponent"],
        eval_opponent=o["eval_opponent"] or None, seat=o["seat"] or None,
        eval_every=o["eval_every"] or None, eval_episodes=o["eval_episodes"],
        exact_eval=o["exact_eval"], n_envs=o["n_envs"] or None, subproc=o["subproc"],
        config=o["config"] or None, init=o["init"] or None, vec_env=o["vec_env"],
        ray=bool(o["ray"]),
    )  # fmt: skip


def _start(cfg: TrainConfig, runs_dir: str) -> Path:
    """Create the run folder and record the command; returns the run folder."""
    run_dir = start_run(cfg, runs_dir)
    if invoked_as_cli():
        write_command(run_dir)
    else:  # called in-process (tests, notebooks): record the equivalent command
        write_command(run_dir, command_line(cfg, runs_dir))
    _say(f"run folder: {run_dir}")
    return run_dir


def _lost_errors(ray: str, value_run: bool) -> tuple[type[BaseException], ...]:
    """The error of an env lost on the cluster, when the envs run there (else nothing to catch).

    Imported only then: the module loads stable-baselines3, which the command's start need not.
    """
    if not ray or value_run:
        return ()
    from psygym_experiments.harness.ray_vec_env import EnvWorkerLost

    return (EnvWorkerLost,)


def _print_stopped(exc: BaseException, run_dir: Path | None) -> None:
    """One line: the run stopped when an env was lost, and how ``--resume`` continues it."""
    record = checkpoint_record(run_dir) if run_dir is not None else None
    since = f"step {record['steps']}" if record else "none yet: step 0"
    err_console.print(
        f"[red]error:[/red] {escape(error_line(exc))}; the run stopped. Continue it from its last "
        f"checkpoint ({since}) with: psygym train --resume {escape(str(run_dir))}",
        highlight=False, soft_wrap=True,
    )  # fmt: skip


def _print_summary(run_dir: Path, exported: Path | None) -> None:
    """The last evaluation of a run, and the exported model if any."""
    rows = read_metrics(run_dir)
    last = rows[-1] if rows else {}
    _say(
        f"done: {last.get('step', '?')} steps, mean eval score {last.get('mean_score', '?')} "
        f"(± {last.get('ci95', '?')}); model: {run_dir / 'model.safetensors'}"
    )
    first = first_evaluation(run_dir)
    if len(rows) > 1 and last.get("gain") and first is not None:
        console.print(
            f"gain since step {first['step']}: {float(last['gain']):+.3f} "
            f"(± {float(last['gain_ci95']):.3f}, game by game over the same "
            f"{last.get('episodes', '?')} games)",
            highlight=False,
        )
    if exported is not None:
        _say(f"exported: {exported} ({exported.stat().st_size} bytes)")


def _print_value_summary(run_dir: Path, exported: Path | None) -> None:
    """The per-round errors of a finished value run, and the exported model if any."""
    if is_general_run(run_dir):
        for line in general_summary(run_dir):
            console.print(line, highlight=False)
        if exported:
            _say(f"exported: {exported}")
        return
    rows = [r for r in read_value_metrics(run_dir) if r.get("model") == "final"]
    for r in rows:
        mc, sd, bellman = (float(r[k] or "nan") for k in ("mc_rmse", "target_sd", "bellman_rmse"))
        console.print(
            f"round {r['round']}: {r['boards']} test boards, Monte-Carlo RMSE {mc:.3f} "
            f"(targets' sd {sd:.3f}), Bellman RMSE {bellman:.3f} on {r['bellman_boards']} boards",
            highlight=False,
        )
    _say(f"done: board value {final_value(run_dir)}")
    if exported is not None:
        _say(f"exported: {exported} ({exported.stat().st_size} bytes)")


def _say(text: str) -> None:
    """Print a line naming the user's files as it is: no markup read in a name like ``a[b]``."""
    console.print(
        text if text.isprintable() else printable(text),  # spaces kept, control codes escaped
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    """Add the ``train`` command."""
    app.command("train", epilog=TRUSTED_NOTE)(train)


__all__ = ["register", "train"]
