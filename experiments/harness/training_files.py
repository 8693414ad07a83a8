"""The files of a training run's folder: creating it, and its config, metrics and curve.

:func:`start_run` creates ``<runs-dir>/<edition>/<scenario>/<algo>_<n>/`` with ``config.yml``
(:func:`write_config`) and ``seed.txt``; :func:`command_line` is the ``psygym train`` command of
a configuration. ``metrics.csv`` (:data:`METRIC_FIELDS`, :func:`read_metrics`,
:func:`trim_metrics` after a kill), ``first_eval.json`` (:func:`first_evaluation`) and
``learning_curve.png`` (:func:`plot_learning_curve`) are the run's record of its evaluations.
The training itself is :mod:`.training`.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml
from psygym_experiments.harness.output import check_output, json_text, save_figure
from psygym_experiments.harness.runs import (
    append_metrics,
    atomic_write,
    inside,
    numbered_run_dir,
)
from psygym_experiments.harness.runs import read_metrics as _read_csv
from psygym_experiments.harness.train_config import TrainConfig, load_rules

METRIC_FIELDS = (
    "step", "mean_score", "ci95", "episodes", "exact_score", "best_score", "wall_time", "gain",
    "gain_ci95",
)  # fmt: skip
FIRST_EVAL_FILE = "first_eval.json"
"""Per-game scores of the run's first evaluation, against which each later one is paired."""


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as indented JSON, atomically."""
    atomic_write(path, json_text(data, strict=False) + "\n")


def read_metrics(run_dir: Path) -> list[dict[str, str]]:
    """Rows of a run's ``metrics.csv`` (empty if none)."""
    return _read_csv(Path(run_dir) / "metrics.csv")


def plot_learning_curve(run_dir: Path, title: str = "") -> Path | None:
    """Draw ``metrics.csv`` as ``learning_curve.png`` (mean eval score with its 95% band)."""
    rows = read_metrics(run_dir)
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [int(r["step"]) for r in rows]
    y = [float(r["mean_score"]) for r in rows]
    ci = [float(r["ci95"]) if r["ci95"] not in ("", "inf", "nan") else 0.0 for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(x, y, marker="o", label="mean eval score (simulated)")
    ax.fill_between(x, [a - b for a, b in zip(y, ci)], [a + b for a, b in zip(y, ci)],
                    alpha=0.2, label="95% interval")  # fmt: skip
    exact = [(int(r["step"]), float(r["exact_score"])) for r in rows if r.get("exact_score")]
    if exact:
        ax.plot(*zip(*exact), marker="s", label="exact expected score")
    ax.set_xlabel("training steps")
    ax.set_ylabel("score (zero-sum, learner's view)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    out = Path(run_dir) / "learning_curve.png"
    fig.tight_layout()
    save_figure(fig, out, dpi=100)
    plt.close(fig)
    return out


def first_evaluation(run_dir: Path) -> dict[str, Any] | None:
    """The run's :data:`FIRST_EVAL_FILE` (``step`` and per-game ``scores``), or ``None``.

    ``None`` also when the file is missing, torn or not of that shape.
    """
    try:
        doc = json.loads((Path(run_dir) / FIRST_EVAL_FILE).read_text())
        return {"step": int(doc["step"]), "scores": list(doc["scores"])}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def trim_metrics(run_dir: Path, record: dict[str, Any] | None) -> None:
    """Drop ``metrics.csv`` rows the checkpoint does not cover (a kill after the evaluation).

    After a resume the evaluations continue from the checkpoint's step, so the kept rows are
    those up to its ``last_eval_step`` (all rows go when there is no checkpoint): no step is
    repeated and wall time never runs backwards.
    """
    path = check_output(Path(run_dir) / "metrics.csv")
    rows = read_metrics(run_dir)
    if not rows:
        return
    last = -1 if record is None else int(record.get("last_eval_step", -1))
    wall = -1.0 if record is None else float(record.get("wall_time", 0.0))
    keep = [r for r in rows if int(r["step"]) <= last and float(r["wall_time"] or 0) <= wall + 0.5]
    if len(keep) == len(rows):
        return
    path.unlink()
    for row in keep:
        append_metrics(path, row, METRIC_FIELDS)


def write_config(run_dir: Path, cfg: TrainConfig) -> None:
    """Write the resolved configuration as ``config.yml``."""
    text = "# Resolved configuration of this run (psygym train). Resume: psygym train --resume\n"
    text += yaml.safe_dump(asdict(cfg), sort_keys=False)
    atomic_write(run_dir / "config.yml", text)


def command_line(cfg: TrainConfig, runs_dir: str | Path) -> str:
    """The ``psygym train`` command equivalent to a configuration (for API-started runs)."""
    args = [
        "psygym",
        "train",
        "--edition",
        cfg.edition,
        "--scenario",
        cfg.scenario,
        "--algo",
        cfg.algo,
        "--steps",
        str(cfg.steps),
        "--seed",
        str(cfg.seed),
        "--opponent",
        cfg.opponent,
        "--eval-opponent",
        cfg.eval_opponent,
        "--seat",
        cfg.seat,
        "--eval-every",
        str(cfg.eval_every),
        "--eval-episodes",
        str(cfg.eval_episodes),
        "--n-envs",
        str(cfg.hyperparams.get("n_envs", 1)),
        "--vec-env",
        cfg.vec_env,
        "--runs-dir",
        str(runs_dir),
    ]
    if cfg.exact_eval:
        args.append("--exact-eval")
    if cfg.subproc:
        args.append("--subproc")
    if cfg.init:
        args += ["--init", cfg.init]
    return shlex.join(args)


def start_run(cfg: TrainConfig, runs_dir: str | Path) -> Path:
    """Create the run folder ``<runs-dir>/<edition>/<scenario>/<algo>_<n>`` with its config."""
    rules = load_rules(cfg.edition, cfg.scenario)
    run_dir = numbered_run_dir(inside(runs_dir, cfg.edition, rules.scenario.name), cfg.algo)
    write_config(run_dir, cfg)
    atomic_write(run_dir / "seed.txt", f"{cfg.seed}\n")
    return run_dir


__all__ = [
    "FIRST_EVAL_FILE", "METRIC_FIELDS", "command_line", "first_evaluation", "plot_learning_curve",
    "read_metrics", "start_run", "trim_metrics", "write_config", "write_json",
]  # fmt: skip
