"""Training a board value for the ``search`` agent (``psygym train --algo value``), resumable.

``V(board)`` is the score player 0 still gains from a board to the end of the game. A *board*
is where the ``search`` agent's exact lookahead ends: in a game played through, every
non-terminal state ``s2 = apply(s, a)`` whose ``rules.horizon(s2)`` differs from
``rules.horizon(s)``. For each board the data keep ``rules.observe(s2, 0)`` (the features), the
battle round ``rules.horizon(s2)[0]``, the score so far and a target.

Method: Monte-Carlo targets first, then fitted value iteration backward over rounds.

1. **Monte-Carlo stage.** ``steps`` games between the edition's heuristics (each seat draws one
   per game; with probability ``random_move`` a move is uniformly random, so boards cover bad
   play too). A board's target is the game's final score minus the score so far at the board.
   These games are cheap (milliseconds each) and give tens of thousands of boards of every
   round, so the first fit learns the shape of the board (what wounds, psykers and pools are
   worth) from plenty of data. Its weakness is noise (one game's luck per target) and bias (the
   value of heuristic play, not of good play).
2. **Phase-TD refits** (``phase_td`` of them, default none). A board in the middle of a Psychic
   phase is valued by how the rest of that phase can go, and that rests on the dice left in both
   pools and the powers still to cast, a point or two that the noise of a whole game's result
   (several points) hides from the Monte-Carlo fit. Each refit re-labels every board with what
   player 0 gained from it to the first board of the next Psychic phase of the same game (a
   transition with an ``EventKind.PHASE`` event starts one) plus ``V`` there; a board of the
   game's last phase keeps its Monte-Carlo target. Those labels carry only one phase's dice, so
   the fit can see what a die is worth; then the value is refitted on them (from the current
   weights). Measured on the 7th duel (``docs/strength.md``): the Monte-Carlo value gave a
   board with more deny dice left a slightly *higher* value for the caster, so ``search``
   denied a cheap first power with every die and let the next one through.
3. **Fitted value-iteration sweeps.** Each sweep first plays ``sweep_games`` more games in which
   a seat is ``search`` with the current value (probability ``search_share``) or a heuristic,
   so the data also hold the boards good play reaches. Then, round by round from the last one
   to the first, a sample of ``relabel`` distinct boards of that round is re-labelled with a
   one-step backup, ``LookaheadPolicy(rules, V).value_of(rules, b) - score(b)`` (the exact
   search of the board's step, every chance outcome weighted exactly, ``score + V`` at its
   edge), and the value is refitted (starting from the current weights). A board in the last
   step of the game backs up exactly (no edge is reached), and each earlier round is labelled
   with a value already refitted on the rounds after it, which is why the order is backward.
   The backups carry no dice noise and follow good play; the Monte-Carlo boards stay in the
   fit (with weight 1, a backup ``label_weight``), which keeps the net anchored on boards no
   backup has reached.

Hidden hands (``rules.information`` is ``Information.HIDDEN``): a backup or a Bellman check
solves the next step exactly over the true state, so it would see both hands. Such an edition
trains the Monte-Carlo stage only (``sweeps: 0``, ``eval_boards: 0``; any other setting is
refused in one line); its boards should be where nothing is hidden from either player (the
edition's ``horizon`` decides, such as 2nd edition's phase boundary before any card is dealt).
``agents`` chooses the agents of the games (default: every heuristic of the edition).

Self-play value iteration (search against search from the start) was not chosen: with a
useless first value its games are slow (a 7th-edition search game takes seconds where a
heuristic game takes milliseconds) and their boards all look alike; the Monte-Carlo start and
backups of sampled boards cost a fraction of that and cover good and bad play.

Fitting (:func:`psygym_agents.value.fit.fit_value`): a small tanh MLP (``hidden``, default
2x64), Adam, weighted MSE, early stopping on validation games, converted to a
:class:`~psygym_agents.value.BoardValue` (numpy weights, input mean and scale). Games, not
boards, are split into training, validation (early stopping) and test (metrics) sets, so no
game's boards are on both sides.

Metrics on the test boards, per battle round, written to ``metrics.csv`` and ``metrics.json``
and into the model's JSON: the RMSE against the Monte-Carlo targets (it includes the dice
noise of single games: compare it with the targets' standard deviation), and the **Bellman
error**, the RMSE of ``V(b)`` against one exact search of the board's next step with ``V`` at
its edge, on ``eval_boards`` distinct test boards per round. The overall Bellman RMSE is the
model's ``rmse`` (the ``search`` agent quotes it in its note). With ``eval_initial`` the
Monte-Carlo fit is measured too, before the sweeps (on the test games played so far; the
final measurement also covers the test games of the sweeps).

A run lives in ``<runs-dir>/<edition>/<scenario>/value_<n>/``: ``config.yml`` (resolved
settings), ``command.txt``, ``seed.txt``, ``progress.json`` (stages done), ``data/*.npz`` (the
boards and the games' actions of each stage of play), ``labels/*.npz`` (backups),
``checkpoints/<stage>.safetensors`` + ``.json`` (the model after each fit), ``fits.csv``
(loss per epoch of each fit), ``learning_curve.png``, ``metrics.csv``, ``metrics.json`` and the
final ``value.safetensors`` + ``value.json`` (named apart from the RL runs' ``model.*``, so
nothing takes a board value for a policy). Nothing is pickled. ``--resume RUN_DIR`` skips
the stages done and continues with the next (a stage cut short by Ctrl-C or SIGTERM runs
again); the boards' states are rebuilt by replaying the recorded actions.

The settings live in :mod:`.value_config`, the games and boards in :mod:`.value_boards`.
"""

from __future__ import annotations

import json
import math
import shlex
import signal
import time
from collections.abc import Hashable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from psygym_experiments.harness.output import (
    check_output,
    json_text,
    output_folder,
    save_figure,
)
from psygym_experiments.harness.progress import ProgressBar
from psygym_experiments.harness.runs import (
    append_command,
    append_metrics,
    atomic_write,
    check_run_folder,
)
from psygym_experiments.harness.runs import read_metrics as _read_csv
from psygym_experiments.harness.train_config import load_rules
from psygym_experiments.harness.training import TrainingInterrupted
from psygym_experiments.harness.value_boards import (
    PART,
    TEST,
    TRAIN,
    VAL,
    Boards,
    backup,
    game_split,
    join_boards,
    next_phase_board,
    phase_index,
    play_boards,
    play_part,
    replay_states,
    write_npz,
    zero_value,
)
from psygym_experiments.harness.value_config import (
    FINAL,
    TUNABLE,
    ValueConfig,
    config_from_run,
)

FIT_FIELDS = ("fit", "epoch", "train_mse", "val_mse")
METRIC_FIELDS = (
    "model", "round", "boards", "target_sd", "mc_rmse", "bellman_boards", "bellman_rmse",
    "mean_value", "mean_backup",
)  # fmt: skip


class ValueTrainingInterrupted(TrainingInterrupted):
    """A signal stopped a value run between two units of work; finished stages are kept."""

    def __init__(self, run_dir: Path, stage: str, signum: int):
        super().__init__(run_dir, 0, signum)
        self.stage = stage
        self.args = (
            f"interrupted during stage {stage}; finished stages are saved. Resume with: "
            f"psygym train --resume {run_dir}",
        )

    def __str__(self) -> str:
        return str(self.args[0])


def save_value(value: Any, stem: Path) -> Path:
    """``value.save(stem)`` once neither of its files is a link (:func:`.output.check_output`)."""
    from psygym_agents.safe_model import safe_paths

    for file in safe_paths(stem):
        check_output(file)
    return value.save(stem)


# --------------------------------------------------------------------------------- the run
class _Stop:
    """SIGINT/SIGTERM set a flag that the work loops check between units of work."""

    def __init__(self) -> None:
        self.signum = 0
        self._old: dict[int, Any] = {}

    def install(self) -> None:
        """Install the handlers (main thread only)."""
        import threading

        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._old[sig] = signal.signal(sig, self._handler)

    def _handler(self, signum: int, _frame: Any) -> None:
        self.signum = signum

    def restore(self) -> None:
        """Put back the previous handlers."""
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old.clear()


class _Run:
    """One board-value run: its stages, their checkpoints, and the data they share."""

    def __init__(self, cfg: ValueConfig, run_dir: Path, show_progress: bool, stop: _Stop,
                 pool: Any = None):  # fmt: skip
        self.cfg, self.dir, self.show, self.stop = cfg, run_dir, show_progress, stop
        self.rules = load_rules(cfg.edition, cfg.scenario)
        self.progress_path = run_dir / "progress.json"
        self.record = self._read_record()
        self.shards: list[Boards] = []
        self._states: list[list[Hashable] | None] = []
        self.labels: dict[int, float] = {}  # global board index -> latest backup
        self.td_target: np.ndarray | None = None  # phase-TD labels of the first boards
        self.value: Any = None
        self.stage = ""
        self.pool = pool
        for d in ("data", "labels", "checkpoints"):
            output_folder(run_dir / d, run_dir)

    # ---- bookkeeping
    def _read_record(self) -> dict[str, Any]:
        if self.progress_path.is_file():
            doc = json.loads(self.progress_path.read_text())
            if isinstance(doc, dict) and isinstance(doc.get("done"), list):
                return doc
        return {"done": [], "timings": {}, "stage_metrics": {}}

    def _save_record(self) -> None:
        atomic_write(self.progress_path, json_text(self.record) + "\n")

    def done(self, stage: str) -> bool:
        """Whether ``stage`` finished in this run (now or before a resume)."""
        return stage in self.record["done"]

    def finish(self, stage: str) -> None:
        """Record ``stage`` as finished."""
        self.record["done"].append(stage)
        self._save_record()

    def check_stop(self) -> bool:
        """True once a signal arrived."""
        return self.stop.signum != 0

    def interrupted(self) -> ValueTrainingInterrupted:
        """The exception to raise after a signal."""
        return ValueTrainingInterrupted(self.dir, self.stage, self.stop.signum)

    def timing(self, key: str, seconds: float, count: int) -> None:
        """Add ``count`` units of work that took ``seconds`` to the run's timings."""
        t = self.record["timings"].setdefault(key, {"seconds": 0.0, "count": 0})
        t["seconds"] += seconds
        t["count"] += count

    # ---- data
    def all_rows(self, attr: str) -> np.ndarray:
        """One attribute of every board of every shard, concatenated."""
        return np.concatenate([getattr(s, attr) for s in self.shards])

    def states(self) -> list[Hashable]:
        """Every board state, in global order (replayed from the actions where needed)."""
        out: list[Hashable] = []
        for i, shard in enumerate(self.shards):
            if self._states[i] is None:
                self._states[i] = replay_states(self.rules, shard)
            out.extend(self._states[i])
        return out

    def play(self, stage: str, index: int, n_games: int, share: float) -> None:
        """Play (or reload) one stage's games as shard ``index``."""
        path = self.dir / "data" / f"games-{index}.npz"
        if self.done(stage):
            self.shards.append(Boards.load(path))
            self._states.append(None)
            return
        self.stage = stage
        cfg = self.cfg
        split = game_split(n_games, np.random.default_rng((cfg.seed, index, 3)),
                           cfg.test_fraction, cfg.val_fraction)  # fmt: skip
        t0 = time.perf_counter()
        what = "games (heuristics)" if share == 0 else "games (with search)"
        with ProgressBar(f"{stage}: {what}", n_games, enabled=self.show) as bar:

            def tick() -> bool:
                bar.advance()
                return self.check_stop()

            kw = {"seed": cfg.seed, "stage": index, "value": self.value, "search_share": share,
                  "random_move": cfg.random_move, "agents": cfg.agents}  # fmt: skip
            if self.pool is not None:
                boards, states = self._play_in_pool(n_games, split, kw, bar), None
            else:
                boards, states = play_boards(self.rules, n_games, split=split, on_game=tick, **kw)
        if self.check_stop():
            raise self.interrupted()
        self.timing("game_with_search" if share else "game_heuristic",
                    time.perf_counter() - t0, n_games)  # fmt: skip
        boards.save(path)
        self.shards.append(boards)
        self._states.append(states)
        self.finish(stage)

    def _play_in_pool(self, n_games: int, split: np.ndarray, kw: dict[str, Any],
                      bar: ProgressBar) -> Boards:  # fmt: skip
        """A stage's games played in :attr:`pool`, :data:`PART` a task; the same boards."""
        cfg, futures = self.cfg, []
        for a in range(0, n_games, PART):
            b = min(n_games, a + PART)
            futures.append(self.pool.submit(play_part, cfg.edition, cfg.scenario, a, b,
                                            {**kw, "split": split[a:b]}))  # fmt: skip
        parts = []
        try:
            for f in futures:  # in order; a signal stops between parts
                parts.append(f.result())
                bar.advance(len(parts[-1].offsets) - 1)
                if self.check_stop():
                    break
        finally:
            for f in futures:
                f.cancel()
        return join_boards(parts)

    def fit(self, stage: str, initial: bool) -> None:
        """Fit (or reload) the model of ``stage`` on the boards and backups so far."""
        from psygym_agents.value import BoardValue
        from psygym_agents.value.fit import fit_value

        stem = self.dir / "checkpoints" / stage
        if self.done(stage):
            self.value = BoardValue.load(stem.with_suffix(".safetensors"))
            return
        self.stage = stage
        cfg = self.cfg
        x, y, split = self.all_rows("x"), self.all_rows("target").copy(), self.all_rows("split")
        if self.td_target is not None:
            y[: len(self.td_target)] = self.td_target
        w = np.ones(len(y))
        if self.labels:
            idx = np.fromiter(self.labels, int)
            y[idx] = np.fromiter(self.labels.values(), float)
            w[idx] = cfg.label_weight
        labelled = np.zeros(len(y), bool)
        labelled[list(self.labels)] = True
        train = np.flatnonzero(split == TRAIN)
        plain = train[~labelled[train]]
        room = cfg.max_fit_boards - int(labelled[train].sum())
        if len(plain) > max(room, 0):
            pick = np.random.default_rng((cfg.seed, 5)).permutation(len(plain))[: max(room, 0)]
            train = np.sort(np.concatenate([plain[np.sort(pick)], train[labelled[train]]]))
        val = np.flatnonzero(split == VAL)
        if len(val) == 0 or len(train) == 0:
            raise ValueError(
                "too few boards to fit a value: play more games (--steps) so that training "
                "and validation games both reach a board"
            )
        epochs = cfg.max_epochs if initial else cfg.refit_epochs
        rows: list[tuple[int, float, float]] = []
        t0 = time.perf_counter()
        with ProgressBar(f"{stage}: fit", epochs, enabled=self.show) as bar:

            def on_epoch(epoch: int, tr: float, va: float) -> bool:
                bar.advance()
                bar.update(note=f"val MSE {va:.3f}")
                rows.append((epoch, tr, va))
                return self.check_stop()

            result = fit_value(
                x[train], y[train], x[val], y[val], w_train=w[train], w_val=w[val],
                hidden=cfg.hidden, lr=cfg.lr, batch=cfg.batch, max_epochs=epochs,
                patience=cfg.patience, seed=cfg.seed + len(self.record["done"]),
                init=None if initial else self.value,
                meta={"edition": cfg.edition, "scenario": cfg.scenario, "stage": stage},
                on_epoch=on_epoch,
            )  # fmt: skip
        if self.check_stop():
            raise self.interrupted()
        self.timing("fit", time.perf_counter() - t0, 1)
        for epoch, tr, va in result.history:
            append_metrics(self.dir / "fits.csv",
                           {"fit": stage, "epoch": epoch, "train_mse": tr, "val_mse": va},
                           FIT_FIELDS)  # fmt: skip
        save_value(result.value, stem)
        self.value = BoardValue.load(stem.with_suffix(".safetensors"))
        self.finish(stage)
        plot_value_curves(self.dir, f"board value of {cfg.edition} {cfg.scenario}")

    def relabel(self, stage: str, sweep: int, rnd: int) -> None:
        """Re-label a sample of round ``rnd``'s training and validation boards by a backup."""
        path = self.dir / "labels" / f"{stage}.npz"
        if path.is_file():
            with np.load(path, allow_pickle=False) as data:
                self.labels.update(zip(data["board"].tolist(), data["label"].tolist()))
            return
        self.stage = stage
        cfg = self.cfg
        rounds, split = self.all_rows("round"), self.all_rows("split")
        rows = np.flatnonzero((rounds == rnd) & (split != TEST))
        rng = np.random.default_rng((cfg.seed, 4, sweep, rnd))
        groups = self._distinct(rows, rng, cfg.relabel)
        labels = self._backups(stage, groups, "labels")
        if labels is None:
            raise self.interrupted()
        board, label = [], []
        for members, v in zip(groups, labels):
            for i in members:
                board.append(i)
                label.append(v)
        write_npz(path, board=np.asarray(board, np.int64), label=np.asarray(label, np.float64))
        self.labels.update(zip(board, label))

    def phase_td(self, stage: str) -> None:
        """Label every board so far by the gain to the next phase's first board plus ``V`` there."""
        path = self.dir / "labels" / f"{stage}.npz"
        if path.is_file():
            with np.load(path, allow_pickle=False) as data:
                self.td_target = data["target"]
            return
        self.stage = stage
        t0 = time.perf_counter()
        x, score, target = self.all_rows("x"), self.all_rows("score"), self.all_rows("target")
        nxt, base = [], 0
        for shard in self.shards:
            rows = next_phase_board(shard, phase_index(self.rules, shard))
            nxt.append(np.where(rows >= 0, rows + base, -1))
            base += len(shard)
        after = np.concatenate(nxt)
        has = after >= 0
        label = target.astype(np.float64).copy()
        label[has] = score[after[has]] - score[has] + self.value.predict(x[after[has]])
        write_npz(path, target=label)
        self.td_target = label
        self.timing("phase_td_labels", time.perf_counter() - t0, len(label))

    def _distinct(self, rows: np.ndarray, rng: np.random.Generator, n: int) -> list[list[int]]:
        """Up to ``n`` distinct states among ``rows``, each as the rows holding it.

        They are sorted by horizon, so that boards of one step share a solver.
        """
        states = self.states()
        by_state: dict[Hashable, list[int]] = {}
        for i in rng.permutation(rows).tolist():
            by_state.setdefault(states[i], []).append(i)
        chosen = list(by_state.values())[:n]
        horizon = self.rules.horizon
        chosen.sort(key=lambda m: (horizon(states[m[0]]), m[0]))
        return chosen

    def _backups(self, stage: str, groups: list[list[int]], what: str) -> list[float] | None:
        """The backup of each group's state with the current value (None if interrupted)."""
        states = self.states()
        out: list[float] = []
        t0 = time.perf_counter()
        with ProgressBar(f"{stage}: {what}", len(groups), enabled=self.show) as bar:
            for members in groups:
                out.append(backup(self.rules, self.value, states[members[0]]))
                bar.advance()
                if self.check_stop():
                    return None
        key = "backup" if what == "labels" else "bellman_backup"
        self.timing(key, time.perf_counter() - t0, len(groups))
        return out

    def evaluate(self, stage: str, model_name: str) -> list[dict[str, Any]]:
        """Per-round metrics of the current value on the test boards (and a total row)."""
        if self.done(stage):
            return self.record["stage_metrics"][stage]
        self.stage = stage
        cfg = self.cfg
        x, y = self.all_rows("x"), self.all_rows("target")
        rounds, split = self.all_rows("round"), self.all_rows("split")
        pred = self.value.predict(x)
        out: list[dict[str, Any]] = []
        all_v, all_b, all_err, all_t = [], [], [], []
        for rnd in sorted(set(rounds[split == TEST].tolist())):
            rows = np.flatnonzero((rounds == rnd) & (split == TEST))
            err = pred[rows] - y[rows]
            groups = self._distinct(rows, np.random.default_rng((cfg.seed, 6, rnd)),
                                    cfg.eval_boards)  # fmt: skip
            backs = self._backups(f"{stage} round {rnd}", groups, "Bellman error")
            if backs is None:
                raise self.interrupted()
            v = [float(pred[m[0]]) for m in groups]
            gaps = np.asarray(v) - np.asarray(backs)
            out.append(_metric_row(model_name, rnd, len(rows), y[rows], err, v, backs, gaps))
            all_v += v
            all_b += backs
            all_err.append(err)
            all_t.append(y[rows])
        errs = np.concatenate(all_err) if all_err else np.zeros(0)
        targets = np.concatenate(all_t) if all_t else np.zeros(0)
        gaps = np.asarray(all_v) - np.asarray(all_b)
        out.append(_metric_row(model_name, "all", len(errs), targets, errs, all_v, all_b, gaps))
        self.record["stage_metrics"][stage] = out
        for row in out:
            append_metrics(self.dir / "metrics.csv", row, METRIC_FIELDS)
        self.finish(stage)
        return out

    # ---- the whole run
    def run(self) -> None:
        """Every stage in order, skipping those already done."""
        cfg = self.cfg
        self.value = zero_value(self.rules)
        self.play("games-0", 0, cfg.steps, 0.0)
        self.fit("fit-0", initial=True)
        if cfg.eval_initial:
            self.evaluate("eval-0", "monte-carlo fit")
        for k in range(1, cfg.phase_td + 1):
            self.phase_td(f"td-{k}")
            self.fit(f"td-{k}", initial=False)
        rounds = sorted(set(self.all_rows("round").tolist()), reverse=True)
        for k in range(1, cfg.sweeps + 1):
            if cfg.games_per_sweep:
                self.play(f"games-{k}", k, cfg.games_per_sweep, cfg.search_share)
            for rnd in rounds:
                stage = f"sweep-{k}-round-{rnd}"
                self.relabel(stage, k, rnd)
                self.fit(stage, initial=False)
        final = self.evaluate("eval-final", "final")
        self.write_outputs(final)

    def write_outputs(self, final: list[dict[str, Any]]) -> None:
        """``value.*``, ``metrics.json`` and the learning curve of a finished run."""
        cfg = self.cfg
        total = final[-1]
        per_round = [r for r in final if r["round"] != "all"]
        timings = {k: {**t, "per_unit": t["seconds"] / t["count"] if t["count"] else None}
                   for k, t in self.record["timings"].items()}  # fmt: skip
        command = self.dir / "command.txt"
        meta = {
            "edition": cfg.edition, "scenario": cfg.scenario, "seed": cfg.seed,
            "rmse": _num(total["bellman_rmse"]), "mc_rmse": _num(total["mc_rmse"]),
            "rounds": per_round, "games": cfg.steps + cfg.sweeps * cfg.games_per_sweep,
            "boards": int(len(self.all_rows("round"))), "backed_up_boards": len(self.labels),
            "config": {k: v for k, v in asdict(cfg).items() if k in TUNABLE},
            "method": _method(cfg),
            "target": "score player 0 still gains from the board (final minus so far)",
            "trained_with": command.read_text().splitlines()[0] if command.is_file() else "",
        }  # fmt: skip
        self.value.meta = {**self.value.meta, **meta}
        self.value.meta.pop("stage", None)
        save_value(self.value, self.dir / FINAL)
        doc = {
            "config": asdict(cfg), "rmse": meta["rmse"], "mc_rmse": meta["mc_rmse"],
            "final": final, "stages": self.record["stage_metrics"], "timings": timings,
        }  # fmt: skip
        atomic_write(self.dir / "metrics.json", json_text(doc) + "\n")
        plot_value_curves(self.dir, f"board value of {cfg.edition} {cfg.scenario}")


def _method(cfg: ValueConfig) -> str:
    """The training method in words, for the model's JSON."""
    parts = ["Monte-Carlo fit"]
    if cfg.phase_td:
        parts.append(f"{cfg.phase_td} phase-TD refits")
    if cfg.sweeps:
        parts.append("fitted value iteration backward over rounds")
    return ", then ".join(parts) if len(parts) > 1 else "Monte-Carlo fit only"


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and math.isfinite(x) else None


def _rmse(a: Sequence[float] | np.ndarray) -> float:
    a = np.asarray(a, np.float64)
    return float(np.sqrt(np.mean(a**2))) if len(a) else float("nan")


def _metric_row(model: str, rnd: int | str, n: int, targets: np.ndarray, err: np.ndarray,
                values: Sequence[float], backs: Sequence[float],
                gaps: np.ndarray) -> dict[str, Any]:  # fmt: skip
    return {
        "model": model, "round": rnd, "boards": n,
        "target_sd": float(np.std(targets)) if len(targets) else float("nan"),
        "mc_rmse": _rmse(err), "bellman_boards": len(backs), "bellman_rmse": _rmse(gaps),
        "mean_value": float(np.mean(values)) if len(values) else float("nan"),
        "mean_backup": float(np.mean(backs)) if len(backs) else float("nan"),
    }  # fmt: skip


def plot_value_curves(run_dir: Path, title: str = "") -> Path | None:
    """Draw ``fits.csv`` as ``learning_curve.png``.

    The validation (and training) MSE per epoch of each fit: the Monte-Carlo fit and every
    refit of the sweeps, one after another.
    """
    rows = _read_csv(Path(run_dir) / "fits.csv")
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fits: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        fits.setdefault(r["fit"], []).append(r)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    colours = plt.cm.viridis(np.linspace(0, 0.9, len(fits)))
    start = 0
    for (name, rs), colour in zip(fits.items(), colours):
        x = [start + int(r["epoch"]) for r in rs]
        ax.plot(x, [float(r["val_mse"]) for r in rs], color=colour,
                label=name if len(fits) <= 14 else None)  # fmt: skip
        ax.plot(x, [float(r["train_mse"]) for r in rs], color=colour, ls=":", lw=0.8)
        start = x[-1]
    ax.set_xlabel("epoch (fits one after another)")
    ax.set_ylabel("weighted MSE (points²): validation solid, training dotted")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if len(fits) <= 14:
        ax.legend(fontsize=7, ncol=2)
    else:
        ax.text(0.99, 0.97, f"{len(fits)} fits, dark to light in order", ha="right", va="top",
                transform=ax.transAxes, fontsize=8)  # fmt: skip
    out = Path(run_dir) / "learning_curve.png"
    fig.tight_layout()
    save_figure(fig, out, dpi=100)
    plt.close(fig)
    return out


def run_value_training(cfg: ValueConfig, run_dir: str | Path, *, show_progress: bool = False,
                       handle_signals: bool = True, pool: Any = None) -> Path:  # fmt: skip
    """Run (or continue) every stage of a value run; returns the final model's path.

    ``pool``: a running pool (:mod:`.pools`, a Ray one say) that plays the stages' games,
    :data:`PART` games a task; the data are the same as when they are played here.

    Raises:
        ValueTrainingInterrupted: SIGINT/SIGTERM arrived; the finished stages are saved.
    """
    run = Path(run_dir)
    stop = _Stop()
    if handle_signals:
        stop.install()
    try:
        _Run(cfg, run, show_progress, stop, pool).run()
    finally:
        stop.restore()
    return (run / FINAL).with_suffix(".safetensors")


def resume_value_run(run_dir: str | Path, steps: int | None = None, *, show_progress: bool = False,
                     command: str | None = None, pool: Any = None) -> Path:  # fmt: skip
    """Continue a value run from its last finished stage.

    Raises:
        FileNotFoundError: not a value run.
        ValueError: ``steps`` differs from the run's (its games are already fixed).
    """
    run = Path(run_dir)
    cfg = config_from_run(run)
    prepare_resume(run, cfg.steps, steps, command)
    run_value_training(cfg, run, show_progress=show_progress, pool=pool)
    return run


def prepare_resume(run: Path, kept: int, steps: int | None, command: str | None) -> None:
    """Check a value run's folder and ``--steps`` (the run's ``kept``), record the command.

    Raises:
        ValueError: a link in the folder, or ``steps`` other than the run's.
    """
    check_run_folder(run)
    if steps is not None and steps != kept:
        raise ValueError(f"--steps {steps}: a value run keeps its {kept} games on resume")
    append_command(run, command or f"psygym train --resume {shlex.quote(str(run))}")


def final_value(run_dir: str | Path) -> Path | None:
    """A value run's final ``value.safetensors``, or ``None`` before the run finished."""
    path = (Path(run_dir) / FINAL).with_suffix(".safetensors")
    return path if path.is_file() and path.with_suffix(".json").is_file() else None


def export_value(run_dir: str | Path, dest: str | Path) -> Path:
    """Copy a value run's final model to ``dest`` (``<stem>.safetensors`` + ``.json``).

    Raises:
        FileNotFoundError: the run has no final model yet.
    """
    from psygym_agents.value import BoardValue

    src = final_value(run_dir)
    if src is None:
        raise FileNotFoundError(f"{run_dir} has no {FINAL}.safetensors to export (not finished)")
    model = BoardValue.load(src)
    p = Path(dest)
    stem = p.with_suffix("") if p.suffix in (".safetensors", ".json") else p
    return save_value(model, stem)


def read_value_metrics(run_dir: str | Path) -> list[dict[str, str]]:
    """Rows of a value run's ``metrics.csv`` (empty if none)."""
    return _read_csv(Path(run_dir) / "metrics.csv")


__all__ = [
    "ValueTrainingInterrupted", "export_value", "final_value", "plot_value_curves",
    "prepare_resume", "read_value_metrics", "resume_value_run", "run_value_training",
    "save_value",
]  # fmt: skip
