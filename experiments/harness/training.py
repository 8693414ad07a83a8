"""Training runs: an RL agent (stable-baselines3) on any edition, resumable (``psygym train``).

A run lives in ``<runs-dir>/<edition>/<scenario>/<algo>_<n>/``:

- ``config.yml``: the resolved configuration (edition, scenario, algo, steps, seed, opponent,
  seat, evaluation settings and every hyperparameter); ``command.txt``: the exact command(s);
- ``metrics.csv``: one row per evaluation (step, mean eval score, its 95% half-width, episodes,
  exact score when asked, best score so far, wall time, and the gain since the first evaluation
  with its paired 95% half-width: every evaluation plays the same games, common random numbers);
  ``first_eval.json``: the first evaluation's score in each game; ``learning_curve.png``;
- ``tb/``: TensorBoard logs (``tensorboard --logdir runs``);
- ``checkpoints/step_<n>/`` (policy ``model.safetensors`` + ``model.json``, optimizer state
  ``optimizer.safetensors``, DQN replay buffer ``replay_buffer.npz``: no pickles) named by
  ``checkpoints/last.json`` (their SHA-256, step count and bookkeeping, no RNG state), rewritten
  at every evaluation and when the run is interrupted (Ctrl-C or SIGTERM: the signal sets a
  flag that the training callback checks; the run then saves a checkpoint and exits with status
  128 + signal number);
- ``model.safetensors`` + ``model.json`` (safe format; edition, scenario, algo, seat, steps,
  opponent, mean eval score) at the end, and ``best_model.safetensors`` + ``best_model.json``.

``--resume RUN_DIR`` reloads ``config.yml`` and the last checkpoint and continues from its step
count (the step counter, learning-rate schedule and TensorBoard curve continue; the env RNG is
re-seeded; the hashes in ``last.json`` are checked first). A run killed before its first
checkpoint starts again from step 0; ``metrics.csv`` rows after the checkpoint are dropped, so
the metrics stay continuous. An older run's ``last.zip`` (pickles) resumes only with trust.

Illegal actions: MaskablePPO samples only legal actions (``env.action_masks()``). Plain PPO and
DQN have no masks: ``LegalActionWrapper`` replaces an illegal action by the lowest legal one
(``illegal_fallback: lowest``) or a uniformly random legal one (``random``) and subtracts
``illegal_penalty`` from that step's reward. As agents, all models play legal actions only.

Envs (``vec_env`` in ``config.yml``, ``--vec-env``): ``batched`` trains on
:class:`psygym_agents.sb3_batched.BatchedVecEnv`, the ``n_envs`` games stepped in one call into
the compiled core; ``gym`` on one psygym Gymnasium env per game (``DummyVecEnv``, or
``SubprocVecEnv`` with ``--subproc``, Ray actors with ``--ray``). Both play the same games
(``tests/test_engine_vector.py``); ``auto`` (the default) resolves to ``batched`` wherever it
plays the run (:func:`batched_refusal`: MaskablePPO against ``random`` in seat 0 or 1, neither
``--subproc`` nor ``--ray``, and a compiled twin with an observation here), and the resolved
value is what ``config.yml`` records.

Self-play (``--opponent self``): the opponent is a frozen copy of the learner (an
:class:`psygym_agents.sb3.SB3Policy` sampling from the copy's action probabilities), refreshed every
``self_play_refresh`` steps (config); the learner alternates seats at every episode unless
``--seat`` is given, and is evaluated against ``--eval-opponent`` (default: the edition's first
heuristic).
"""

from __future__ import annotations

import copy
import json
import math
import os
import shlex
import shutil
import signal
import time
from pathlib import Path
from typing import Any

from psygym_experiments.common import console, err_console
from psygym_experiments.harness.lifecycle import check_n_envs, max_envs
from psygym_experiments.harness.model_files import (
    BUFFER_ARRAYS,
    CHECKPOINT_FORMAT,
    checkpoint_record,
    load_checkpoint,
    load_init,
    save_buffer,
    save_model,
    save_optimizer,
    sha256_of,
)
from psygym_experiments.harness.output import output_folder
from psygym_experiments.harness.progress import ProgressBar
from psygym_experiments.harness.runs import (
    append_command,
    append_metrics,
    atomic_write,
    check_run_folder,
    write_command,
)
from psygym_experiments.harness.train_config import (
    TrainConfig,
    algo_kwargs,
    config_from_file,
    load_rules,
    make_config,
    rollout_note,
)
from psygym_experiments.harness.training_files import (
    FIRST_EVAL_FILE,
    METRIC_FIELDS,
    command_line,
    first_evaluation,
    plot_learning_curve,
    start_run,
    trim_metrics,
    write_config,
    write_json,
)

TRUSTED_NOTE = (
    "Models and checkpoints are written in psygym's safe format (safetensors + JSON, no "
    "pickles); an SB3 .zip loads only with --trust-pickle."
)
SAFE_NOTE = "psygym safe model (safetensors + JSON): loads without unpickling anything"


class TrainingInterrupted(RuntimeError):
    """Training stopped on a signal after saving a checkpoint (``run_dir``, ``steps``)."""

    def __init__(self, run_dir: Path, steps: int, signum: int):
        self.run_dir, self.steps, self.signum = run_dir, steps, signum
        super().__init__(
            f"interrupted at step {steps}; checkpoint saved. Resume with: "
            f"psygym train --resume {run_dir}"
        )


# --------------------------------------------------------------------------------- envs
def _env_factory(cfg: TrainConfig, index: int, in_subprocess: bool) -> Any:
    def make() -> Any:
        import gymnasium as gym
        from stable_baselines3.common.monitor import Monitor

        import psygym  # noqa: F401 - registers the env ids
        from psygym.envs.wrappers import AlternateSeats, LegalActionWrapper, OpponentControl

        if in_subprocess:
            from psygym_experiments.harness.lifecycle import die_with_parent

            # SubprocVecEnv starts workers from a forkserver, which exits with this process:
            # the worker dies with its direct parent.
            die_with_parent()
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
        opponent = "random" if cfg.opponent == "self" else cfg.opponent
        seat = index % 2 if cfg.seat == "both" else int(cfg.seat)
        env = gym.make(cfg.env_id, scenario=cfg.scenario, opponent=opponent, seat=seat)
        env = OpponentControl(env)
        if cfg.seat == "both":
            env = AlternateSeats(env, first=seat)
        if cfg.algo != "maskable-ppo":
            hp = cfg.hyperparams
            env = LegalActionWrapper(
                env, fallback=str(hp.get("illegal_fallback", "lowest")),
                penalty=float(hp.get("illegal_penalty", 0.0)),
            )  # fmt: skip
        return Monitor(env)

    return make


def make_vec_env(cfg: TrainConfig, ray: str = "") -> Any:
    """The vectorised training envs: batched, DummyVecEnv, or SubprocVecEnv with ``subproc``.

    ``vec_env: batched`` (see the module): one :class:`psygym_agents.sb3_batched.BatchedVecEnv`.

    ``ray``: a Ray cluster's address (``--ray``): each env in an actor there instead
    (:class:`.ray_vec_env.RayVecEnv`; the same envs, so a seed trains the same model).

    Raises:
        ValueError: a ``batched`` run with ``ray``, where the batched env cannot run (a
            resumed run where the core is not built or ``PSYGYM_ENGINE=python``), or more envs
            than :func:`check_n_envs` allows: one line.
    """
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    n = check_n_envs(int(cfg.hyperparams.get("n_envs", 1)), cfg.subproc and not ray, "n_envs")
    if cfg.vec_env == "batched":
        return _batched_vec_env(cfg, n, ray)
    if ray:
        from psygym_experiments.harness.ray_vec_env import RayVecEnv

        return RayVecEnv([_env_factory(cfg, i, False) for i in range(n)], ray)
    if cfg.subproc and n > 1:
        return SubprocVecEnv([_env_factory(cfg, i, True) for i in range(n)])
    return DummyVecEnv([_env_factory(cfg, i, False) for i in range(n)])


def _batched_vec_env(cfg: TrainConfig, n: int, ray: str) -> Any:
    """The run's ``n`` games in one :class:`psygym_agents.sb3_batched.BatchedVecEnv`."""
    from psygym_agents.sb3_batched import BatchedVecEnv, batched_refusal

    where = "this run trains on the batched env (vec_env: batched in its config.yml)"
    if ray:
        raise ValueError(f"--ray: {where}, which steps every game in this process; leave out "
                         "--ray")  # fmt: skip
    rules = load_rules(cfg.edition, cfg.scenario)
    why = batched_refusal(rules)
    if why is not None:
        raise ValueError(f"{where}, which cannot run here: {why}; resume it where the core "
                         "runs it (the checkpoint is kept)")  # fmt: skip
    return BatchedVecEnv.build(n, rules, int(cfg.seat))


# --------------------------------------------------------------------------------- evaluation
def exact_score(rules: Any, policy: Any, opponent: Any, seats: tuple[int, ...]) -> float:
    """Exact expected score of ``policy`` against ``opponent``, averaged over ``seats``.

    Raises:
        ImportError: the solvers are not installed.
        psygym_agents.solvers.NotSolvable: the game is too large or has hidden information.
    """
    from psygym_experiments.harness.solving import seat_averaged_value

    return seat_averaged_value(rules, policy, opponent, seats)


# --------------------------------------------------------------------------------- run folder
def _append_metrics(run_dir: Path, row: dict[str, Any]) -> None:
    append_metrics(run_dir / "metrics.csv", row, METRIC_FIELDS)


def _model_meta(
    cfg: TrainConfig, steps: int, evals: tuple[float | None, float | None], **extra: Any
) -> dict[str, Any]:
    """JSON metadata of a saved model; ``evals`` = (simulated mean, exact score or None)."""
    from psygym import __version__

    rules_meta = {
        "edition": cfg.edition, "scenario": cfg.scenario, "algo": cfg.algo,
        "seat": cfg.seat if cfg.seat == "both" else int(cfg.seat), "steps": steps,
        "opponent": cfg.opponent, "eval_opponent": cfg.eval_opponent, "seed": cfg.seed,
        "env_id": cfg.env_id, "mean_eval_score": evals[0], "eval_episodes": cfg.eval_episodes,
        "exact_eval_score": evals[1],
        "policy_kwargs": cfg.hyperparams.get("policy_kwargs", {}),
        "psygym_version": __version__,
        "note": SAFE_NOTE,
    }  # fmt: skip
    rules_meta.update(extra)
    return rules_meta


# --------------------------------------------------------------------------------- training
class _Stop:
    """A flag set by SIGINT/SIGTERM and checked by the training callback."""

    def __init__(self) -> None:
        self.signum = 0
        self._old: dict[int, Any] = {}

    def handler(self, signum: int, _frame: Any) -> None:
        """Remember the signal; training stops at its next step."""
        self.signum = signum

    def install(self) -> None:
        """Install the handlers (main thread only; elsewhere nothing is installed)."""
        import threading

        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._old[sig] = signal.signal(sig, self.handler)

    def restore(self) -> None:
        """Put back the previous handlers."""
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old.clear()


def _callback_class() -> Any:
    from stable_baselines3.common.callbacks import BaseCallback

    class TrainCallback(BaseCallback):
        """Progress bar, signal stop, periodic evaluation + checkpoint, self-play refresh."""

        def __init__(self, trainer: _Trainer):
            super().__init__()
            self.t = trainer

        def _on_training_start(self) -> None:
            self.t.on_start(self.model)

        def _on_step(self) -> bool:
            return self.t.on_step(self.model)

        def _on_training_end(self) -> None:
            self.t.on_end()

    return TrainCallback


class _Trainer:
    """State of one training session (fresh or resumed) over a run folder."""

    def __init__(
        self, cfg: TrainConfig, run_dir: Path, *, show_progress: bool, trial: Any, stop: _Stop,
        quiet: bool,
    ):  # fmt: skip
        from psygym.policies import resolve_policy

        self.cfg, self.run_dir, self.trial, self.stop = cfg, run_dir, trial, stop
        self.quiet = quiet
        self.rules = load_rules(cfg.edition, cfg.scenario)
        self.eval_opponent = resolve_policy(cfg.eval_opponent, self.rules)
        self.ckpt_dir = output_folder(run_dir / "checkpoints", run_dir)
        state = self.read_checkpoint_meta()
        self.wall_before = float(state.get("wall_time", 0.0))
        self.best = float(state.get("best_score", -math.inf))
        self.last_score: float | None = state.get("last_score")
        self.last_evals: tuple[float | None, float | None] = (
            state.get("mean_eval_score"), state.get("exact_eval_score"))  # fmt: skip
        self.last_eval_step = int(state.get("last_eval_step", -1))
        self.start_time = time.monotonic()
        self.show_progress = show_progress
        self.progress: ProgressBar | None = None
        self.next_eval = 0
        self.next_refresh = 0
        self.pruned = False
        self.exact_ok = cfg.exact_eval
        self.vec_env: Any = None

    def wall(self) -> float:
        """Seconds of training so far, over every session of the run."""
        return self.wall_before + time.monotonic() - self.start_time

    def read_checkpoint_meta(self) -> dict[str, Any]:
        """``checkpoints/last.json`` or ``{}``."""
        path = self.ckpt_dir / "last.json"
        return json.loads(path.read_text()) if path.is_file() else {}

    # -- callback hooks
    def on_start(self, model: Any) -> None:
        """Set up the progress bar, first evaluation and self-play opponent."""
        steps = model.num_timesteps
        if self.cfg.opponent == "self":
            self.refresh_opponent(model)
        if self.last_eval_step < 0:
            self.evaluate(model)
        self.next_eval = (steps // self.cfg.eval_every + 1) * self.cfg.eval_every
        if self.show_progress:
            self.progress = ProgressBar("training", self.cfg.steps, transient=False).__enter__()
            self.progress.update(completed=steps, note=self._score_text())

    def _score_text(self) -> str:
        return "" if self.last_score is None else f"eval {self.last_score:+.3f}"

    def on_step(self, model: Any) -> bool:
        """Evaluate/checkpoint when due; stop on a signal or a pruned trial."""
        steps = model.num_timesteps
        if self.progress is not None and steps % 256 < model.n_envs:
            self.progress.update(completed=steps, note=self._score_text())
        if self.stop.signum:
            return False
        if self.cfg.opponent == "self" and steps >= self.next_refresh:
            self.refresh_opponent(model)
        # The last evaluation waits for the end of training: during the last rollout the
        # policy has not had its last update yet, and the saved model is the updated one.
        if steps >= self.next_eval and steps < self.cfg.steps:
            self.evaluate(model)
            if steps > 0:
                self.checkpoint(model)
            self.next_eval = (steps // self.cfg.eval_every + 1) * self.cfg.eval_every
            if self.pruned:
                return False
        return True

    def on_end(self) -> None:
        """Close the progress bar."""
        if self.progress is not None:
            self.progress.update(completed=min(self.cfg.steps, self.task_steps()))
            self.progress.__exit__(None, None, None)
            self.progress = None

    def task_steps(self) -> int:
        """Steps shown by the progress bar."""
        return int(self.progress.completed) if self.progress is not None else 0

    # -- actions
    def refresh_opponent(self, model: Any) -> None:
        """Freeze a copy of the learner and make it every env's opponent."""
        from psygym_agents.sb3 import SB3Policy

        optimizer, model.policy.optimizer = model.policy.optimizer, None
        try:  # copy the network without the optimizer's state
            frozen = copy.deepcopy(model.policy).to("cpu")
        finally:
            model.policy.optimizer = optimizer
        frozen.set_training_mode(False)
        opponent = SB3Policy(frozen, self.rules, deterministic=False, name="self")
        self.vec_env.env_method("set_opponent", opponent)
        every = int(self.cfg.hyperparams.get("self_play_refresh", 10_000))
        self.next_refresh = model.num_timesteps + max(1, every)

    def evaluate(self, model: Any) -> float:
        """Evaluate the current policy, log it, report it to the Optuna trial."""
        from psygym_agents.sb3 import SB3Policy
        from psygym_experiments.harness.games import mean_ci, seat_split_scores

        steps = model.num_timesteps
        policy = SB3Policy(model, self.rules, deterministic=True)
        cfg = self.cfg
        scores = seat_split_scores(self.rules, policy, self.eval_opponent, cfg.seats(),
                                   cfg.eval_episodes, cfg.seed + 1_000_003)  # fmt: skip
        mean, half = mean_ci(scores)
        gain, gain_half = self.gain_since_first(steps, scores)
        exact: float | None = None
        if self.exact_ok:
            try:
                exact = exact_score(self.rules, policy, self.eval_opponent, cfg.seats())
            except (ImportError, ValueError) as exc:  # NotSolvable is a ValueError
                self.exact_ok = False
                if not self.quiet:
                    err_console.print(f"[yellow]no exact evaluation:[/yellow] {exc}")
        score = exact if exact is not None else mean
        self.best = max(self.best, score)
        self.last_score, self.last_eval_step = score, steps
        self.last_evals = (mean, exact)
        _append_metrics(self.run_dir, {
            "step": steps, "mean_score": f"{mean:.6f}", "ci95": f"{half:.6f}",
            "episodes": cfg.eval_episodes, "exact_score": "" if exact is None else f"{exact:.6f}",
            "best_score": f"{self.best:.6f}", "wall_time": f"{self.wall():.1f}",
            "gain": f"{gain:.6f}", "gain_ci95": f"{gain_half:.6f}",
        })  # fmt: skip
        if self.best == score:
            save_model(model, self.run_dir / "best_model",
                       _model_meta(cfg, steps, self.last_evals))  # fmt: skip
        model.logger.record("eval/mean_score", mean)
        if exact is not None:
            model.logger.record("eval/exact_score", exact)
        if self.trial is not None and steps > 0:
            self.trial.report(score, steps)
            if self.trial.should_prune():
                self.pruned = True
        return score

    def gain_since_first(self, steps: int, scores: Any) -> tuple[float, float]:
        """The change of the mean score since the run's first evaluation, and its 95% half-width.

        Every evaluation plays the same games (:func:`~psygym_experiments.harness.games.
        seat_split_scores`), so the change is taken game by game: its interval is the paired
        one, narrower than that of two separate means as far as the two policies play alike
        (about half as wide for a fine-tuned policy against its start). The first evaluation's
        scores are kept in :data:`FIRST_EVAL_FILE`; a run that starts again from an earlier
        step (no checkpoint) writes them again.
        """
        import numpy as np
        from psygym_experiments.harness.games import mean_ci

        first = first_evaluation(self.run_dir)
        base = None if first is None else np.asarray(first["scores"], dtype=float)
        if base is None or steps <= first["step"] or base.shape != scores.shape:
            record = json.dumps({"step": steps, "scores": scores.tolist()})
            atomic_write(self.run_dir / FIRST_EVAL_FILE, record + "\n")
            return 0.0, 0.0
        return mean_ci(scores - base)

    def checkpoint(self, model: Any) -> None:
        """Save a safe-format checkpoint: ``checkpoints/step_<n>/`` then ``last.json`` naming it.

        ``step_<n>/`` holds the policy (``model.safetensors`` + ``model.json``), the optimizer
        state (``optimizer.safetensors``) and DQN's replay buffer if small (``replay_buffer.npz``);
        ``last.json`` (written last, atomically) records their SHA-256 and the run's
        bookkeeping, so a kill at any moment leaves the previous checkpoint intact.
        """
        steps = model.num_timesteps
        folder = output_folder(self.ckpt_dir / f"step_{steps}", self.run_dir)
        meta = _model_meta(self.cfg, steps, self.last_evals)
        weights = save_model(model, folder / "model", meta)
        record: dict[str, Any] = {
            "format": CHECKPOINT_FORMAT, "dir": folder.name, "steps": steps,
            "weights_sha256": sha256_of(weights),
            "optimizer_sha256": save_optimizer(model.policy.optimizer,
                                               folder / "optimizer.safetensors"),
            "n_updates": int(getattr(model, "_n_updates", 0)),
            "n_calls": int(getattr(model, "_n_calls", 0)),
            "wall_time": self.wall(), "best_score": self.best, "last_score": self.last_score,
            "last_eval_step": self.last_eval_step, "mean_eval_score": self.last_evals[0],
            "exact_eval_score": self.last_evals[1],
        }  # fmt: skip
        buffer = getattr(model, "replay_buffer", None)
        if buffer is not None:
            limit = float(self.cfg.hyperparams.get("checkpoint_buffer_mb", 100)) * 2**20
            size = sum(getattr(buffer, k).nbytes for k in BUFFER_ARRAYS
                       if getattr(buffer, k, None) is not None)  # fmt: skip
            if size <= limit:
                record["buffer_sha256"] = save_buffer(buffer, folder / "replay_buffer.npz")
        write_json(self.ckpt_dir / "last.json", record)
        for old in self.ckpt_dir.glob("step_*"):  # earlier checkpoints are no longer named
            if old.is_dir() and old.name != folder.name:
                shutil.rmtree(old, ignore_errors=True)


def run_training(
    cfg: TrainConfig,
    run_dir: Path,
    *,
    resume: bool = False,
    show_progress: bool = True,
    trial: Any = None,
    handle_signals: bool = True,
    quiet: bool = False,
    ray: str = "",
) -> dict[str, Any]:
    """Train (or continue training) the run in ``run_dir``; return a summary.

    The summary has ``steps``, ``final_score`` (the last evaluation), ``best_score`` and
    ``pruned`` (an Optuna trial asked to stop). ``ray``: run the envs on that Ray cluster
    (:func:`make_vec_env`).

    Raises:
        TrainingInterrupted: SIGINT/SIGTERM arrived; a checkpoint was saved first.
        psygym_experiments.harness.ray_vec_env.EnvWorkerLost: ``ray`` lost an env's node.
    """
    import torch
    from psygym_agents.sb3 import algo_class

    stop = _Stop()
    if handle_signals:
        stop.install()
    # Small MLPs: one intra-op thread is several times faster than two contending ones.
    torch.set_num_threads(int(os.environ.get("PSYGYM_TORCH_THREADS", "1")))
    cls = algo_class(cfg.algo)
    trainer = _Trainer(cfg, run_dir, show_progress=show_progress, trial=trial, stop=stop,
                       quiet=quiet)  # fmt: skip
    vec_env = make_vec_env(cfg, ray)
    trainer.vec_env = vec_env
    try:
        kw = algo_kwargs(cfg.hyperparams)
        policy = kw.pop("policy", cfg.hyperparams.get("policy", "MlpPolicy"))
        kw.setdefault("device", "cpu")
        tb = output_folder(run_dir / "tb", run_dir)  # SB3 writes there through TensorBoard
        model = cls(policy, vec_env, seed=cfg.seed, tensorboard_log=str(tb), verbose=0,
                    **kw)  # fmt: skip
        record = checkpoint_record(run_dir) if resume else None
        if record is not None:
            load_checkpoint(model, run_dir, record)
        elif resume and (run_dir / "checkpoints" / "last.zip").is_file():
            model = _load_legacy_checkpoint(cls, run_dir, vec_env, kw["device"])
        elif cfg.init:
            load_init(model, cfg.init)
        resume = resume and int(model.num_timesteps) > 0
        done = int(model.num_timesteps)
        remaining = cfg.steps - done
        if remaining > 0 and not stop.signum:
            note = None if quiet else rollout_note(model, done, cfg.steps)
            if note:  # beside the run folder's line: what the run does, not a warning
                console.print(note, highlight=False, markup=False, soft_wrap=True)
            model.learn(
                total_timesteps=remaining, callback=_callback_class()(trainer),
                reset_num_timesteps=not resume, tb_log_name=cfg.algo,
                progress_bar=False,
            )  # fmt: skip
        steps = int(model.num_timesteps)
        if stop.signum:
            trainer.checkpoint(model)
            plot_learning_curve(run_dir, _title(cfg))
            raise TrainingInterrupted(run_dir, steps, stop.signum)
        if not trainer.pruned and trainer.last_eval_step != steps:
            trainer.evaluate(model)
        trainer.checkpoint(model)
        if not trainer.pruned:
            save_model(model, run_dir / "model",
                       _model_meta(cfg, steps, trainer.last_evals))  # fmt: skip
        plot_learning_curve(run_dir, _title(cfg))
        return {"steps": steps, "final_score": trainer.last_score, "best_score": trainer.best,
                "pruned": trainer.pruned, "wall_time": trainer.wall()}  # fmt: skip
    finally:
        trainer.on_end()
        stop.restore()
        try:
            vec_env.close()
        except (EOFError, BrokenPipeError, ConnectionResetError):  # pragma: no cover
            pass


def _load_legacy_checkpoint(cls: Any, run_dir: Path, vec_env: Any, device: str) -> Any:
    """An older run's ``checkpoints/last.zip`` (an SB3 archive: pickles), only when trusted.

    Raises:
        psygym_agents.sb3.UntrustedModelError: pickles are not trusted (``--trust-pickle``).
    """
    from psygym_agents.sb3 import refuse_zip, trust_pickle_from_env

    ckpt = run_dir / "checkpoints" / "last.zip"
    if not trust_pickle_from_env():
        raise refuse_zip(ckpt)
    return cls.load(ckpt, env=vec_env, device=device, tensorboard_log=str(run_dir / "tb"))


def _title(cfg: TrainConfig) -> str:
    return f"{cfg.algo} on {cfg.edition} {cfg.scenario} vs {cfg.eval_opponent} (seed {cfg.seed})"


def train_agent(
    edition: str,
    scenario: str,
    algo: str = "maskable-ppo",
    steps: int = 100_000,
    seed: int = 0,
    opponent: str = "random",
    runs_dir: str | Path = "runs",
    config: str | Path | None = None,
    *,
    show_progress: bool = False,
    **options: Any,
) -> Path:
    """Train an agent and return its run folder (the model is ``<run>/model.safetensors``).

    ``options`` are the other :func:`make_config` keywords (``eval_every``, ``eval_episodes``,
    ``seat``, ``eval_opponent``, ``n_envs``, ``subproc``, ``exact_eval``, ``overrides``,
    ``vec_env``).

    Raises:
        ValueError: a bad setting (see :func:`make_config`).
        TrainingInterrupted: a signal stopped the run (a checkpoint was saved).
    """
    cfg = make_config(edition, scenario, algo, steps, seed, opponent, config=config, **options)
    run_dir = start_run(cfg, runs_dir)
    write_command(run_dir, command_line(cfg, runs_dir))
    run_training(cfg, run_dir, show_progress=show_progress)
    return run_dir


def resume_run(run_dir: str | Path, steps: int | None = None, *, show_progress: bool = False,
               command: str | None = None, ray: str = "") -> Path:  # fmt: skip
    """Continue an interrupted (or extend a finished) run from its last checkpoint.

    ``ray``: run the envs on that Ray cluster (:func:`make_vec_env`).

    Raises:
        FileNotFoundError: not a run folder, or no checkpoint.
        UnsafeOutputError: the folder holds a symbolic link (:func:`.runs.check_run_folder`).
    """
    run = Path(run_dir)
    cfg = config_from_file(run)
    check_run_folder(run)
    record = checkpoint_record(run)
    if record is None and not (run / "checkpoints" / "last.zip").is_file():
        err_console.print(
            f"[yellow]{run} has no checkpoint yet (killed before the first one): training "
            "starts again from step 0[/yellow]", highlight=False,
        )  # fmt: skip
    trim_metrics(run, record)
    if steps is not None:
        cfg.steps = steps
        write_config(run, cfg)
    append_command(run, command or f"psygym train --resume {shlex.quote(str(run))}")
    run_training(cfg, run, resume=True, show_progress=show_progress, ray=ray)
    return run


__all__ = [
    "TrainingInterrupted", "check_n_envs", "exact_score", "make_vec_env", "max_envs",
    "resume_run", "run_training", "train_agent",
]  # fmt: skip
