"""Optuna searches over parametric policies or MaskablePPO hyperparameters (``psygym tune``).

Targets:

- ``parametric``: the edition's parametric policy family (``psygym_agents.parametric.FAMILIES``),
  scored against a fixed opponent, averaged over both seats. Scoring is exact
  (``psygym_agents.solvers.evaluate.policy_value``) when the solver is installed and the scenario is
  small enough, otherwise a fixed-seed simulation: every trial plays the same dice (common random
  numbers), so differences between trials are differences between policies.
- ``maskable-ppo``: learning rate, n_steps, batch size, epochs, entropy coefficient, gamma and
  network size (``sample_maskable_ppo_params``). Each trial is a short ``psygym train`` run in
  ``trial_<n>/``; its periodic evaluations are reported to Optuna and a ``MedianPruner`` stops
  unpromising trials early.

Studies are stored in ``sqlite:///<runs-dir>/optuna.db`` by default; re-running the same
command adds trials to the same study (``load_if_exists``). ``--storage`` takes any Optuna
storage URL (``postgresql://user:pass@host/db`` lets workers on several machines share one
study; run the same command on each, with different ``--seed`` values) or ``journal:PATH`` (a
JournalStorage file on a shared file system). The best result is written to
``<runs-dir>/<edition>/<scenario>/tune_<study>/best.json`` (edition, scenario, family, params,
value), loadable as the agent ``tuned:<path>``.
"""

from __future__ import annotations

import csv
import io
import shlex
from pathlib import Path
from typing import Any

from psygym_experiments.harness.output import (
    atomic_write,
    check_output,
    output_folder,
    save_figure,
)
from psygym_experiments.harness.progress import ProgressBar
from psygym_experiments.harness.runs import (
    append_command,
    check_run_folder,
    inside,
    safe_component,
    write_command,
)
from psygym_experiments.harness.study_signals import StudyGuard
from psygym_experiments.harness.study_storage import open_storage
from psygym_experiments.harness.tuning_workers import (
    fail_orphaned_trials,
    locked_sqlite,
    register_tuner,
    worker_id,
)

TARGETS = ("parametric", "maskable-ppo")
NET_SIZES: dict[str, list[int]] = {"small": [64, 64], "medium": [128, 128], "large": [256, 256]}


def study_name(edition: str, scenario: str, target: str, name: str | None = None) -> str:
    """The study name: ``name`` or ``<edition>-<scenario>-<target>``."""
    return name or f"{edition}-{Path(scenario).stem}-{target}"


def _folder(name: str) -> str:
    return safe_component(name)


def _open_study(storage: Any, name: str, seed: int, pruner: Any = None) -> Any:
    import optuna

    # Quiet: an interrupted trial would otherwise print its traceback (the CLI says what
    # happened in one line).
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    import random
    import time

    from sqlalchemy.exc import OperationalError, SQLAlchemyError

    for attempt in range(8):
        try:
            study = optuna.create_study(
                study_name=name, storage=locked_sqlite(storage), direction="maximize",
                load_if_exists=True, sampler=optuna.samplers.TPESampler(seed=seed), pruner=pruner,
            )  # fmt: skip
            break
        except ImportError as exc:  # e.g. no PostgreSQL driver
            raise ValueError(f"cannot open storage: {exc} (pip install psycopg2-binary)") from None
        except (SQLAlchemyError, optuna.exceptions.DuplicatedStudyError) as exc:
            # Workers starting together on an empty database race to create Optuna's tables
            # and the study; the loser retries and then finds them.
            if attempt == 7:
                raise
            if isinstance(exc, OperationalError) and "unable to open" in str(exc):
                # not a race: SQLite cannot open the file (unwritable folder, ...)
                raise ValueError(f"--storage {storage}: cannot open the database: "
                                 f"{exc.orig}") from None  # fmt: skip
            time.sleep(0.2 + random.random() * (attempt + 1))
    fail_orphaned_trials(study)
    register_tuner(study)
    # A re-run continues the study with fresh samples: the sampler's seed also depends on how
    # many trials the study already has (workers started together still need distinct seeds).
    done = len(study.trials)
    if done:
        study.sampler = optuna.samplers.TPESampler(seed=seed + 1_000_003 * done)
    return study


# --------------------------------------------------------------------------------- scoring
class Scorer:
    """Scores a policy against a fixed opponent, averaged over both seats.

    ``method`` is ``"exact"`` (solver) or ``"simulation"`` (``episodes`` games per seat with
    the same ``seed`` every time: common random numbers). ``"auto"`` tries exact once and falls
    back to simulation if the solver is missing or the game cannot be solved exactly.
    """

    def __init__(self, rules: Any, opponent: Any, *, method: str = "auto", episodes: int = 400,
                 seed: int = 0):  # fmt: skip
        self.rules, self.opponent = rules, opponent
        self.method, self.episodes, self.seed = method, episodes, seed
        self.note = ""

    def _exact(self, policy: Any) -> float:
        from psygym_experiments.harness.solving import seat_averaged_value

        return seat_averaged_value(self.rules, policy, self.opponent, (0, 1))

    def _simulate(self, policy: Any) -> float:
        from psygym_experiments.harness.games import seat_split_score

        mean, _ = seat_split_score(self.rules, policy, self.opponent, (0, 1), 2 * self.episodes,
                                   self.seed)  # fmt: skip
        return mean

    def __call__(self, policy: Any) -> float:
        """The policy's score (its expected zero-sum score, seats averaged)."""
        if self.method == "auto":
            value = self.settle(policy)
            return self._simulate(policy) if value is None else value
        return self._exact(policy) if self.method == "exact" else self._simulate(policy)

    def settle(self, policy: Any) -> float | None:
        """Fix ``auto`` to ``exact`` or ``simulation`` before any trial; the exact value or None.

        Whether the solver can score the game is only known by trying (it gives up past its
        state limit), so ``auto`` and ``exact`` solve ``policy`` once; nothing is simulated
        here (``simulation`` settles nothing). ``auto`` falls back to ``simulation`` where the
        solver cannot (the note says why); ``exact`` then fails.

        Raises:
            ValueError: ``exact`` scoring, and the game cannot be solved (one line).
        """
        if self.method == "simulation":
            return None
        try:
            value = self._exact(policy)
        except (ImportError, ValueError) as exc:  # NotSolvable is a ValueError
            if self.method == "exact":
                raise ValueError(f"--scoring exact: {exc}") from None
            self.method = "simulation"
            self.note = f"exact scoring unavailable ({exc})"
            return None
        self.method = "exact"
        return value

    def describe(self) -> str:
        """How trials were scored, for best.json."""
        if self.method == "exact":
            return (
                "exact expected score (psygym_agents.solvers.evaluate.policy_value), seats averaged"
            )
        return (f"simulation: {self.episodes} games per seat, seed {self.seed} for every trial "
                "(common random numbers), seats averaged")  # fmt: skip


# --------------------------------------------------------------------------------- samplers
def sample_maskable_ppo_params(trial: Any) -> dict[str, Any]:
    """MaskablePPO search space (JSON-able values; see ``hyperparams_from_params``)."""
    return {
        "learning_rate": trial.suggest_float("learning_rate", 1e-4, 3e-3, log=True),
        "n_steps": trial.suggest_categorical("n_steps", [32, 64, 128, 256]),
        "batch_size": trial.suggest_categorical("batch_size", [64, 128, 256]),
        "n_epochs": trial.suggest_categorical("n_epochs", [5, 10]),
        "ent_coef": trial.suggest_float("ent_coef", 1e-4, 0.1, log=True),
        "gamma": trial.suggest_categorical("gamma", [0.95, 0.99, 0.995, 1.0]),
        "net": trial.suggest_categorical("net", list(NET_SIZES)),
    }


SAMPLERS = {"maskable-ppo": sample_maskable_ppo_params}
"""Target -> ``sample_<target>_params(trial) -> dict``."""


def hyperparams_from_params(params: dict[str, Any]) -> dict[str, Any]:
    """Config overrides for ``psygym train`` from sampled parameters (``net`` -> net_arch)."""
    hp = {k: v for k, v in params.items() if k != "net"}
    if "net" in params:
        hp["policy_kwargs"] = {"net_arch": NET_SIZES[str(params["net"])]}
    return hp


# --------------------------------------------------------------------------------- runs
def _tune_dir(runs_dir: str | Path, rules: Any, name: str) -> Path:
    """The study's folder, made, once it is shown to hold no link (a study goes on in it)."""
    out = output_folder(inside(runs_dir, rules.edition, rules.scenario.name, f"tune_{name}"),
                        runs_dir)  # fmt: skip
    return check_run_folder(out)


def _record(out: Path, settings: dict[str, Any], command: str | None) -> None:
    import yaml

    atomic_write(out / "config.yml", yaml.safe_dump(settings, sort_keys=False))
    if command is None:
        write_command(out)
    else:
        append_command(out, command)


def _write_trials(out: Path, study: Any) -> None:
    params = sorted({k for t in study.trials for k in t.params})
    text = io.StringIO()
    w = csv.writer(text)
    w.writerow(["number", "state", "value", "worker", *params])
    for t in study.trials:
        value = "" if t.value is None else t.value
        w.writerow([t.number, t.state.name, value, t.user_attrs.get("worker", ""),
                    *[t.params.get(k, "") for k in params]])  # fmt: skip
    atomic_write(out / "trials.csv", text.getvalue())
    _plot_history(out, study)


def _plot_history(out: Path, study: Any) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [(t.number, t.value) for t in study.trials if t.value is not None]
    if not done:
        return
    xs, ys = zip(*done)
    best, running = [], float("-inf")
    for y in ys:
        running = max(running, y)
        best.append(running)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.scatter(xs, ys, s=12, label="trial")
    ax.step(xs, best, where="post", color="C1", label="best so far")
    ax.set_xlabel("trial")
    ax.set_ylabel("score")
    ax.set_title(study.study_name)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    save_figure(fig, out / "history.png", dpi=100)
    plt.close(fig)


def _progress_callback(total: int, show: bool) -> tuple[ProgressBar | None, Any]:
    if not show:
        return None, None
    bar = ProgressBar("tuning", total, transient=False)

    def callback(study: Any, trial: Any) -> None:
        try:
            best = f"best {study.best_value:+.4f}"
        except ValueError:
            best = ""
        bar.advance()
        bar.update(note=best)

    return bar, callback


class TuneInterrupted(RuntimeError):
    """Ctrl-C or SIGTERM stopped a study; finished trials are stored, best.json is up to date."""

    def __init__(self, study: str, done: int, best: Path | None):
        self.best = best
        saved = f"; best so far: {best}" if best else ""
        super().__init__(
            f"interrupted: study {study!r} keeps its {done} finished trials (a trial cut short "
            f"is marked failed){saved}. Re-run the same command to continue."
        )


def _optimize(study: Any, objective: Any, trials: int, jobs: int, show: bool,
              timeout: float | None) -> bool:  # fmt: skip
    """Run the trials; return True if Ctrl-C or SIGTERM stopped them (:mod:`.study_signals`)."""
    progress, callback = _progress_callback(trials, show)
    if progress is not None:
        progress.__enter__()
    guard = StudyGuard(study, jobs)
    try:
        with guard.installed():
            study.optimize(guard.wrap(objective), n_trials=trials, n_jobs=jobs, timeout=timeout,
                           callbacks=[callback] if callback else None, catch=())  # fmt: skip
        return guard.stopped
    except KeyboardInterrupt:
        return True
    finally:
        if progress is not None:
            progress.__exit__(None, None, None)


def _finish(study: Any, out: Path, interrupted: bool, save: Any) -> Path:
    """Write trials.csv/history.png and best.json; raise TuneInterrupted if stopped early."""
    check_output(out / "best.json")  # written by psygym_agents.parametric.save_best
    _write_trials(out, study)
    complete = [t for t in study.trials if t.value is not None]
    path = save(_best_trial(study)) if complete else None
    if interrupted:
        raise TuneInterrupted(study.study_name, len(complete), path)
    if path is None:
        raise ValueError(f"study {study.study_name!r} has no completed trial yet")
    return path


def trial_counts(study: Any) -> dict[str, int]:
    """``{"trials": finished, "failed": failed}`` of a study.

    Finished trials are the complete and the pruned ones; a failed trial (an error, or a worker
    killed mid-trial: :func:`fail_orphaned_trials`) is not done, and neither is one still
    running or waiting, so none of these count toward ``trials`` (``best.json``, the summary).
    """
    import optuna

    states = [t.state for t in study.get_trials(deepcopy=False)]
    done = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
    return {
        "trials": sum(s in done for s in states),
        "failed": sum(s == optuna.trial.TrialState.FAIL for s in states),
    }


def _best_trial(study: Any) -> Any:
    try:
        return study.best_trial
    except ValueError:
        raise ValueError(f"study {study.study_name!r} has no completed trial yet") from None


def tune_parametric(
    edition: str,
    scenario: str,
    trials: int,
    seed: int,
    runs_dir: str | Path = "runs",
    storage: str | None = None,
    study: str | None = None,
    *,
    opponent: str | None = None,
    episodes: int = 400,
    method: str = "auto",
    jobs: int = 1,
    timeout: float | None = None,
    show_progress: bool = False,
    command: str | None = "",
) -> Path:
    """Search the edition's parametric family; return the path of the saved ``best.json``.

    Args:
        edition: edition id.
        scenario: scenario name or TOML path.
        trials: trials this call runs (added to the study's earlier ones).
        seed: seed of the TPE sampler (use a different one per worker) and of the simulation.
        runs_dir: where the study folder and the default SQLite storage go.
        storage: an Optuna storage URL or ``journal:PATH`` (default: SQLite in ``runs_dir``).
        study: study name (default ``<edition>-<scenario>-parametric``).
        opponent: the fixed opponent (default: the edition's first heuristic).
        episodes: simulated games per seat per trial (when not scored exactly).
        method: ``auto``, ``exact`` or ``simulation``.
        jobs: parallel trials in this process (threads).
        timeout: stop starting trials after this many seconds.
        show_progress: show a progress bar.
        command: the command line to record (``None``: this process's argv).

    Raises:
        ValueError: no family for the edition, a bad setting or storage.
    """
    from psygym_agents.parametric import family_for, save_best
    from psygym_experiments.harness.train_config import reference_opponent

    from psygym.editions import load
    from psygym.policies import resolve_policy

    rules = load(edition, scenario)
    fam = family_for(rules.edition)
    if method not in ("auto", "exact", "simulation"):
        raise ValueError(f"--scoring {method!r} is not one of: auto, exact, simulation")
    opp_name = opponent or reference_opponent(rules.edition)
    scorer = Scorer(rules, resolve_policy(opp_name, rules), method=method, episodes=episodes,
                    seed=seed)  # fmt: skip
    name = study_name(rules.edition, rules.scenario.name, "parametric", study)
    out = _tune_dir(runs_dir, rules, name)
    the_study = _open_study(open_storage(storage, runs_dir), name, seed)
    defaults = fam.defaults(rules)
    enqueue_defaults(the_study, defaults)
    worker = worker_id()
    known = _settle(scorer, fam.build(rules, defaults), the_study, show_progress)

    def objective(trial: Any) -> float:
        trial.set_user_attr("worker", worker)
        params = fam.sample(trial, rules)
        if known is not None and _same_params(params, defaults):
            return known  # the defaults' exact score, computed while settling
        return scorer(fam.build(rules, params))

    _record(out, {"edition": rules.edition, "scenario": rules.scenario.name,
                  "target": "parametric", "family": fam.name, "study": name,
                  "storage": storage or "sqlite (runs-dir/optuna.db)", "opponent": opp_name,
                  "scoring": scorer.describe(), "seed": seed, "trials": trials, "jobs": jobs},
            None if command is None else (command or _api_command(
                "parametric", rules, trials, seed, runs_dir, storage, name)))  # fmt: skip
    interrupted = _optimize(the_study, objective, trials, jobs, show_progress, timeout)
    return _finish(the_study, out, interrupted, lambda best: save_best(
        out / "best.json", edition=rules.edition, scenario=rules.scenario.name, family=fam.name,
        params=dict(best.params), value=float(best.value), opponent=opp_name,
        scored_by=scorer.describe(), study=name, trial=best.number,
        **trial_counts(the_study), note=scorer.note or None,
    ))  # fmt: skip


def enqueue_defaults(study: Any, defaults: dict[str, Any]) -> bool:
    """Queue a trial of ``defaults`` unless one is complete, waiting or running; True if queued.

    A defaults trial that failed (cut short by Ctrl-C, say) or was pruned is queued again, so
    every study scores the family's defaults once.
    """
    import optuna

    live = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.WAITING,
            optuna.trial.TrialState.RUNNING)  # fmt: skip
    for t in study.get_trials(deepcopy=False, states=live):
        if _same_params(t.system_attrs.get("fixed_params", t.params), defaults):
            return False
    study.enqueue_trial(defaults)
    return True


def _same_params(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two parameter sets are equal (floats within rounding, as Optuna compares them)."""
    import math

    if a.keys() != b.keys():
        return False
    return all(
        math.isclose(x, b[k], rel_tol=1e-9, abs_tol=0.0)
        if isinstance(x, float) and isinstance(b[k], int | float)
        else x == b[k]
        for k, x in a.items()
    )


def _settle(scorer: Scorer, policy: Any, study: Any, show: bool) -> float | None:
    """:meth:`Scorer.settle` with a progress line, and Ctrl-C or SIGTERM as between trials.

    Raises:
        TuneInterrupted: a signal stopped it (the study keeps its trials).
        ValueError: ``exact`` scoring of a game the solver cannot score.
    """
    from psygym_experiments.harness.lifecycle import sigterm_interrupts

    if scorer.method == "simulation":
        return None
    if show:
        from psygym_experiments.common import err_console

        err_console.print(
            "scoring: trying the exact solver on the default parameters "
            f"(--scoring {scorer.method}; Ctrl-C stops)...",
            highlight=False,
        )
    try:
        with sigterm_interrupts():
            return scorer.settle(policy)
    except KeyboardInterrupt:
        raise TuneInterrupted(study.study_name, trial_counts(study)["trials"], None) from None


def _rl_objective(
    rules: Any, scenario: str, out: Path, seed: int, opp_name: str, worker: str,
    trial_steps: int, every: int, eval_episodes: int, n_envs: int | None, exact_eval: bool,
) -> Any:  # fmt: skip
    """The Optuna objective of :func:`tune_rl`: one short training run per trial."""
    import optuna
    from psygym_experiments.harness.train_config import make_config
    from psygym_experiments.harness.training import run_training
    from psygym_experiments.harness.training_files import write_config

    def objective(trial: Any) -> float:
        trial.set_user_attr("worker", worker)
        params = sample_maskable_ppo_params(trial)
        cfg = make_config(
            rules.edition, scenario, "maskable-ppo", trial_steps, seed, opp_name,
            eval_every=every, eval_episodes=eval_episodes, n_envs=n_envs,
            exact_eval=exact_eval, overrides=hyperparams_from_params(params),
        )  # fmt: skip
        run_dir = output_folder(out / f"trial_{trial.number}", out)
        write_config(run_dir, cfg)
        trial.set_user_attr("run_dir", str(run_dir.resolve()))
        result = run_training(cfg, run_dir, trial=trial, show_progress=False,
                              handle_signals=False, quiet=True)  # fmt: skip
        if result["pruned"]:
            raise optuna.TrialPruned()
        return float(result["final_score"])

    return objective


def _save_rl_best(
    out: Path, rules: Any, best: Any, opp_name: str, name: str, counts: dict[str, int],
    trial_steps: int,
) -> Path:  # fmt: skip
    """Write ``best.json`` of a MaskablePPO study, naming the best trial's model.

    ``counts`` are the study's :func:`trial_counts` (finished and failed trials).
    """
    from psygym_agents.parametric import save_best

    model = Path(best.user_attrs.get("run_dir", "")) / "model.safetensors"
    try:
        model_ref = str(model.relative_to(out.resolve()))
    except ValueError:
        model_ref = str(model)
    return save_best(
        out / "best.json", edition=rules.edition, scenario=rules.scenario.name,
        family="maskable-ppo", params=dict(best.params), value=float(best.value),
        model=model_ref, opponent=opp_name, study=name, trial=best.number,
        **counts, trial_steps=trial_steps,
        note="the model is in psygym's safe format (safetensors + JSON, no pickles)",
    )  # fmt: skip


def tune_rl(
    edition: str,
    scenario: str,
    trials: int,
    seed: int,
    runs_dir: str | Path = "runs",
    storage: str | None = None,
    study: str | None = None,
    *,
    opponent: str | None = None,
    trial_steps: int = 50_000,
    eval_every: int | None = None,
    eval_episodes: int = 200,
    n_envs: int | None = None,
    exact_eval: bool = False,
    jobs: int = 1,
    timeout: float | None = None,
    show_progress: bool = False,
    command: str | None = "",
) -> Path:
    """Search MaskablePPO hyperparameters with pruning; return the path of ``best.json``.

    Each trial trains ``trial_steps`` steps against ``opponent`` (default: the edition's first
    heuristic) in ``trial_<n>/`` and reports every evaluation to Optuna (``MedianPruner``). The
    objective is the trial's last evaluation: its mean score over ``eval_episodes`` games with the
    same dice for every trial, or with ``exact_eval`` its exact expected score (solver; small
    scenarios). ``best.json`` names the best trial's model.

    Raises:
        ValueError: a bad setting or storage.
    """
    import optuna
    from psygym_experiments.harness.train_config import make_config, reference_opponent

    from psygym.editions import load

    rules = load(edition, scenario)
    opp_name = opponent or reference_opponent(rules.edition)
    every = eval_every or max(1, trial_steps // 5)
    name = study_name(rules.edition, rules.scenario.name, "maskable-ppo", study)
    out = _tune_dir(runs_dir, rules, name)
    pruner = optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=every)
    the_study = _open_study(open_storage(storage, runs_dir), name, seed, pruner)
    make_config(rules.edition, scenario, "maskable-ppo", trial_steps, seed, opp_name,
                eval_every=every, eval_episodes=eval_episodes, n_envs=n_envs)  # fmt: skip
    worker = worker_id()

    objective = _rl_objective(rules, scenario, out, seed, opp_name, worker, trial_steps, every,
                              eval_episodes, n_envs, exact_eval)  # fmt: skip

    _record(out, {"edition": rules.edition, "scenario": rules.scenario.name,
                  "target": "maskable-ppo", "study": name,
                  "storage": storage or "sqlite (runs-dir/optuna.db)", "opponent": opp_name,
                  "trial_steps": trial_steps, "eval_every": every, "eval_episodes": eval_episodes,
                  "exact_eval": exact_eval, "seed": seed, "trials": trials, "jobs": jobs},
            None if command is None else (command or _api_command(
                "maskable-ppo", rules, trials, seed, runs_dir, storage, name)))  # fmt: skip
    interrupted = _optimize(the_study, objective, trials, jobs, show_progress, timeout)

    def save(best: Any) -> Path:
        return _save_rl_best(out, rules, best, opp_name, name, trial_counts(the_study),
                             trial_steps)  # fmt: skip

    return _finish(the_study, out, interrupted, save)


def _api_command(target: str, rules: Any, trials: int, seed: int, runs_dir: Any,
                 storage: str | None, name: str) -> str:  # fmt: skip
    args = ["psygym", "tune", "--edition", rules.edition, "--scenario", rules.scenario.name,
            "--target", target, "--trials", str(trials), "--seed", str(seed), "--runs-dir",
            str(runs_dir), "--study", name]  # fmt: skip
    if storage:
        args += ["--storage", storage]
    return shlex.join(args)


def run_target(target: str, edition: str, scenario: str, trials: int, seed: int,
                runs_dir: str, episodes: int, scoring: str, trial_steps: int, eval_every: int,
                eval_episodes: int, n_envs: int, exact_eval: bool,
                common: dict[str, Any]) -> Path:  # fmt: skip
    """Run the study of ``target`` (``tune_parametric`` or ``tune_rl``); returns best.json."""
    if target == "parametric":
        return tune_parametric(edition, scenario, trials, seed, runs_dir, episodes=episodes,
                               method=scoring, **common)  # fmt: skip
    return tune_rl(edition, scenario, trials, seed, runs_dir, trial_steps=trial_steps,
                   eval_every=eval_every or None, eval_episodes=eval_episodes,
                   n_envs=n_envs or None, exact_eval=exact_eval, **common)  # fmt: skip


__all__ = [
    "SAMPLERS", "TARGETS", "Scorer", "TuneInterrupted", "enqueue_defaults",
    "hyperparams_from_params", "run_target", "sample_maskable_ppo_params",
    "study_name", "trial_counts", "tune_parametric", "tune_rl",
]  # fmt: skip
