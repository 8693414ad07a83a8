"""Self-play training of one edition's general board value, resumable.

The command: ``psygym train --algo value --edition E --scenario random[,OPTIONS]``.

One value for every army list of an edition: an MLP over the edition's board features
(:mod:`psygym_agents.value.features`), trained on generated scenarios (:mod:`psygym.generator`),
one fresh list per game, so no list is seen twice.

Method: **TD(lambda) over search's own games**, with lambda-returns across the boards of each
game (a board is where a search's exact lookahead ends; :func:`.value_boards.is_board`).

1. **Start** (stage 0): ``steps`` games between the edition's heuristics (a move uniformly
   random with probability ``random_move``), fitted to their outcomes (lambda = 1). Cheap games
   (milliseconds) that teach the value what points, psykers and dice are worth on many lists.
2. **Iterations** 1 to ``iterations`` (fewer once a refit keeps the weights it started from:
   the returns have reached the value's fixed point, and the run ends there): ``games`` games
   in which each seat is ``search`` with the current value (probability ``search_share``) or a
   heuristic, each on a new list. Then every game kept (the start's and all iterations') is
   labelled with lambda-returns under the current value,
   ``G_t = r_t + (1 - lambda) V(b_{t+1}) + lambda G_{t+1}`` (``r_t`` the points scored between
   two boards, the last board's ``G`` its game's outcome), and the value is refitted from
   its current weights.
3. **Phase backups** (``backups`` games, default none; :mod:`.phase_backups`): the boards of the
   start's first ``backups`` games are labelled with the exact search of their Psychic phase
   with ``V`` at its edge, backward from each game's last phase, and the value is refitted
   level by level. The labels carry no dice, and they are the search's own Bellman targets.

Why TD(lambda) and not expert iteration: the search is the policy and needs only a value, so
there is no policy net to distil; and why not Monte-Carlo alone: one game's outcome carries the
dice of every phase after the board (several points of noise), while a return that leans on
``V`` one board later carries only the dice in between. ``lambda`` trades that noise against the
bias of an imperfect ``V`` (default 0.7).

Every iteration records, on ``eval_lists`` generated lists whose seeds training never uses
(:data:`EVAL_FROM` on; training lists start at :data:`TRAIN_FROM`), the value's error against
the outcomes of the iteration's strength games (a played-out continuation: it includes their
dice, so it is an upper bound of the value's own error) and the strength of ``search`` with the
new value, over both seats with common random numbers, against ``search`` with the previous one
and against each list's best heuristic (:mod:`.best_heuristic`, chosen once a run; runs
before 2026-12-07 measured the edition's reference heuristic, ``vs_reference``).

A run lives in ``<runs-dir>/<edition>/random/value_<n>/``: ``config.yml``, ``command.txt``,
``progress.json``, ``data/stage_<k>.npz`` (each stage's boards: features, round, score so far,
the game's outcome, game and list seed), ``checkpoints/iteration_<k>.*`` (the value after each
fit), ``metrics.csv``, ``metrics.json``, ``learning_curve.png`` and ``value.safetensors`` +
``value.json``. ``--resume RUN_DIR`` continues after the last finished stage.
"""

from __future__ import annotations

import json
import shlex
import shutil
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
from psygym_experiments.harness.best_heuristic import best_heuristic
from psygym_experiments.harness.output import check_output, output_folder, save_figure
from psygym_experiments.harness.progress import ProgressBar
from psygym_experiments.harness.runs import atomic_write, inside, numbered_run_dir
from psygym_experiments.harness.value_boards import write_npz
from psygym_experiments.harness.value_config import ALGO, FINAL
from psygym_experiments.harness.value_training import save_value

GENERAL = "random"
"""The ``--scenario`` of a general run (optionally ``random,OPTIONS``)."""
TRAIN_FROM = 1_000_000
"""Seeds of training lists start here (stage ``k``'s game ``g``: ``TRAIN_FROM * (k + 1) + g``)."""
EVAL_FROM = 500
"""Seeds of the lists each iteration is measured on start here; seeds below are never used."""
EVAL_STAGE = 999
"""The stage number of the games that measure an iteration's error (on the held-out lists)."""
METRIC_FIELDS = (
    "iteration", "start", "accepted", "boards", "fit_val_mse", "heldout_boards", "heldout_rmse",
    "vs_previous", "vs_previous_ci", "vs_best", "vs_best_ci",
)  # fmt: skip
OLD_FIELDS = ("vs_reference", "vs_reference_ci")  # rows of runs before vs_best


@dataclass
class GeneralConfig:
    """Everything that defines a general-value run (written to ``config.yml``).

    Attributes:
        edition: the edition valued.
        scenario: ``random`` or ``random,OPTIONS`` (the generator's options, such as
            ``psykers=2,rounds=4``, for every list).
        algo: always ``value``.
        general: always true (tells ``--resume`` this run is a general one).
        steps: heuristic games of the start.
        seed: seeds the games and fits.
        iterations: self-play iterations.
        games: games of each iteration.
        search_share: probability that a seat of an iteration's game is ``search``.
        random_move: probability that a heuristic's move is uniformly random.
        td_lambda: the lambda of the returns.
        eval_lists, eval_games: held-out lists of each iteration's measurement, and game pairs
            (both seats) per list and opponent.
        hidden, lr, batch, max_epochs, patience: fitting; ``refit_lr``: the learning rate of
            an iteration's refit, which starts from the current weights (Adam's first steps at
            ``lr`` move every weight by about ``lr`` and undo the fit's last epochs).
        workers: processes that play the games.
        backups: games of the start whose boards get phase backups after the iterations
            (:mod:`.phase_backups`; 0: none).
    """

    edition: str
    scenario: str = GENERAL
    algo: str = ALGO
    general: bool = True
    steps: int = 20_000
    seed: int = 0
    iterations: int = 4
    games: int = 400
    search_share: float = 0.75
    random_move: float = 0.05
    td_lambda: float = 0.7
    eval_lists: int = 4
    eval_games: int = 8
    hidden: list[int] = field(default_factory=lambda: [64, 64])
    lr: float = 1e-3
    refit_lr: float = 1e-4
    batch: int = 512
    max_epochs: int = 60
    patience: int = 6
    workers: int = 2
    backups: int = 0

    @property
    def options(self) -> str:
        """The generator options every list gets (``""``: the generator's defaults)."""
        return self.scenario.partition(",")[2]

    def list_seed(self, stage: int, game: int) -> int:
        """The seed of the list game ``game`` of ``stage`` is played on."""
        if stage == EVAL_STAGE:
            return EVAL_FROM + game % self.eval_lists
        return TRAIN_FROM * (stage + 1) + game

    def list_name(self, seed: int) -> str:
        """The scenario argument of the generated list with ``seed``."""
        return f"random:{seed}" + (f",{self.options}" if self.options else "")

    def play_list_game(
        self, stage: int, game: int, value_path: str | None = None
    ) -> tuple[Any, Any, list[Any], int]:
        """Game ``game`` of ``stage`` on its own list: its rules, boards, board states and seed.

        The ``search`` seats (each with probability ``search_share``) use the general value at
        ``value_path``; ``None``: heuristics only. The same arguments play the same game.
        """
        from psygym_agents.value.general import general_value
        from psygym_experiments.harness.value_boards import play_boards

        from psygym.editions import load

        seed = self.list_seed(stage, game)
        rules = load(self.edition, self.list_name(seed))
        value = general_value(rules, value_path) if value_path else None
        share = self.search_share if value is not None else 0.0
        boards, states = play_boards(rules, 1, seed=self.seed, stage=stage, first=game,
                                     value=value, search_share=share,
                                     random_move=self.random_move)  # fmt: skip
        return rules, boards, states, seed


def is_general_scenario(scenario: str) -> bool:
    """Whether ``--scenario`` asks for a general run (``random`` with no seed)."""
    return scenario == GENERAL or scenario.startswith(GENERAL + ",")


def check_general_config(cfg: GeneralConfig) -> None:
    """Raise ``ValueError`` in one line for a setting out of range."""
    for name, low in (("steps", 3), ("iterations", 0), ("games", 3), ("eval_lists", 1),
                      ("eval_games", 1), ("batch", 1), ("max_epochs", 1), ("patience", 1),
                      ("workers", 1), ("backups", 0)):  # fmt: skip
        v = getattr(cfg, name)
        if not isinstance(v, int) or isinstance(v, bool) or v < low:
            raise ValueError(f"{name} must be a whole number of at least {low}, not {v!r}")
    for name in ("search_share", "random_move", "td_lambda"):
        v = getattr(cfg, name)
        if not isinstance(v, int | float) or isinstance(v, bool) or not 0 <= v <= 1:
            raise ValueError(f"{name} must be a number from 0 to 1, not {v!r}")
    for name in ("lr", "refit_lr"):
        v = getattr(cfg, name)
        if not (isinstance(v, int | float) and not isinstance(v, bool) and v > 0):
            raise ValueError(f"{name} must be a positive number, not {v!r}")
    if cfg.backups > cfg.steps:
        raise ValueError(f"backups must be at most steps ({cfg.steps}): they replay the start's "
                         f"games, not {cfg.backups}")  # fmt: skip
    if cfg.backups and not _validation(cfg.seed, 0, np.arange(cfg.backups)).any():
        raise ValueError(f"backups: the first {cfg.backups} games of the start hold none of its "
                         "validation games (a tenth of them), which the refits stop on; give "
                         "more")  # fmt: skip
    if not (isinstance(cfg.hidden, list) and cfg.hidden
            and all(isinstance(h, int) and h >= 1 for h in cfg.hidden)):  # fmt: skip
        raise ValueError(f"hidden must be a list of layer widths such as [64, 64], not "
                         f"{cfg.hidden!r}")  # fmt: skip


def make_general_config(edition: str, scenario: str, steps: int, seed: int,
                        overrides: dict[str, Any] | None = None) -> GeneralConfig:  # fmt: skip
    """A checked configuration; the edition must declare board features.

    Raises:
        ValueError: unknown edition, no board features, bad generator options or settings.
    """
    from psygym_agents.solvers import has_hidden_information
    from psygym_agents.value.features import features_tool

    from psygym.edition import get
    from psygym.editions import load

    ed = get(edition).id
    if features_tool(ed) is None:
        raise ValueError(f"edition {ed} declares no board features, so it has no general value")
    cfg = GeneralConfig(edition=ed, scenario=scenario, steps=steps, seed=seed)
    unknown = sorted(set(overrides or {}) - {f.name for f in fields(GeneralConfig)})
    if unknown:
        raise ValueError(f"--config: unknown setting {', '.join(unknown)} for a general value")
    for key, value in (overrides or {}).items():
        setattr(cfg, key, value)
    check_general_config(cfg)
    rules = load(ed, cfg.list_name(EVAL_FROM))  # the options are checked once, in one line
    if has_hidden_information(rules) and (cfg.iterations or cfg.backups):
        # play_boards' search seats and the backups solve over the true state: both hands.
        raise ValueError(
            f"edition {ed} has hidden hands, and the search of an iteration's games or of a "
            "backup would see both; set iterations: 0 and backups: 0 (the heuristic games' fit "
            "only)"
        )
    return cfg


def write_config(run_dir: Path, cfg: GeneralConfig) -> None:
    """Write ``config.yml``."""
    import yaml

    text = "# Resolved configuration of this general board-value run.\n"
    text += "# Resume: psygym train --resume <this folder>\n"
    atomic_write(run_dir / "config.yml", text + yaml.safe_dump(asdict(cfg), sort_keys=False))


def is_general_run(run_dir: str | Path) -> bool:
    """Whether ``run_dir`` holds a general-value run."""
    import yaml

    path = Path(run_dir) / "config.yml"
    try:
        doc = yaml.safe_load(path.read_text()) if path.is_file() else None
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(doc, dict) and doc.get("general") is True


def read_config(run_dir: Path) -> GeneralConfig:
    """The configuration in a general run's ``config.yml``."""
    import yaml

    doc = yaml.safe_load((run_dir / "config.yml").read_text())
    cfg = GeneralConfig(
        **{k: v for k, v in doc.items() if k in {f.name for f in fields(GeneralConfig)}}
    )
    check_general_config(cfg)
    return cfg


def command_line(cfg: GeneralConfig, runs_dir: str | Path) -> str:
    """The ``psygym train`` command of a configuration (for runs started from Python)."""
    return shlex.join(["psygym", "train", "--algo", ALGO, "--edition", cfg.edition, "--scenario",
                       cfg.scenario, "--steps", str(cfg.steps), "--seed", str(cfg.seed),
                       "--runs-dir", str(runs_dir)])  # fmt: skip


def start_run(cfg: GeneralConfig, runs_dir: str | Path) -> Path:
    """Create ``<runs-dir>/<edition>/random/value_<n>`` with its configuration."""
    run_dir = numbered_run_dir(inside(runs_dir, cfg.edition, GENERAL), ALGO)
    write_config(run_dir, cfg)
    return run_dir


# ------------------------------------------------------------------------------ games
def play_lists(cfg: dict[str, Any], stage: int, games: range,
               value_path: str | None) -> dict[str, np.ndarray]:  # fmt: skip
    """Games ``games`` of ``stage``, each on its own generated list; their boards' features.

    Runs in a worker: ``cfg`` is the configuration as a dict, ``value_path`` the general value
    the ``search`` seats use (``None``: heuristics only).
    """
    from psygym_agents.value.features import board_features

    c = GeneralConfig(**cfg)
    out: dict[str, list[Any]] = {k: [] for k in ("phi", "round", "score", "final", "game")}
    seeds = []
    for g in games:
        rules, boards, _, seed = c.play_list_game(stage, g, value_path)
        seeds.append(seed)
        if len(boards) == 0:
            continue
        out["phi"].append(board_features(rules)(boards.x).astype(np.float32))
        out["round"].append(boards.round)
        out["score"].append(boards.score)
        out["final"].append(boards.score + boards.target)
        out["game"].append(np.full(len(boards), g))
    arrays = {k: np.concatenate(v) if v else np.zeros(0) for k, v in out.items()}
    arrays["seeds"] = np.asarray(seeds, np.int64)
    return arrays


def lambda_returns(data: dict[str, np.ndarray], values: np.ndarray, lam: float) -> np.ndarray:
    """Each board's lambda-return under ``values`` (``V`` of each board), game by game.

    Boards of one game are consecutive and in the order played (:func:`play_lists`).
    """
    score, final, game = data["score"], data["final"], data["game"]
    out = np.empty(len(score))
    n = len(score)
    i = n - 1
    while i >= 0:
        g = game[i]
        ret = final[i] - score[i]  # the last board of a game: its outcome
        out[i] = ret
        j = i - 1
        while j >= 0 and game[j] == g:
            step = score[j + 1] - score[j]
            ret = step + (1 - lam) * values[j + 1] + lam * ret
            out[j] = ret
            j -= 1
        i = j
    return out


# ------------------------------------------------------------------------------ the run
def accepted(row: dict[str, Any]) -> bool:
    """Whether an iteration's value is kept.

    The first always; a refit unless it clearly lost to the value it started from (its
    margin's 95% interval entirely below 0).
    """
    if row.get("iteration") == 0:
        return True
    return row["vs_previous"] + row["vs_previous_ci"] >= 0


MAX_WEIGHT = 10.0
"""Most weight a search game's board gets in a fit, against 1 for a heuristic game's."""


def _validation(seed: int, stage: int, game: np.ndarray) -> np.ndarray:
    """Whether each board's game is a validation game: a tenth of the games, fixed per game."""
    mixed = (game.astype(np.int64) * 2654435761 + stage * 40503 + seed * 9973) % 1_000_003
    return mixed % 10 == 0


def _hidden(cfg: GeneralConfig) -> bool:
    """Whether the edition's lists hide hands (checked on the first held-out list)."""
    from psygym_agents.solvers import has_hidden_information

    from psygym.editions import load

    return has_hidden_information(load(cfg.edition, cfg.list_name(EVAL_FROM)))


class _Run:
    """One general-value run: its stages, fits and measurements (see the module docstring)."""

    def __init__(self, cfg: GeneralConfig, run_dir: Path, show_progress: bool):
        self.cfg, self.dir, self.show = cfg, run_dir, show_progress
        self.progress_path = run_dir / "progress.json"
        done = json.loads(self.progress_path.read_text()) if self.progress_path.is_file() else {}
        self.done: list[int] = done.get("stages", [])
        self.metrics: list[dict[str, Any]] = done.get("metrics", [])
        self.best: list[str] | None = None  # each held-out list's best heuristic, once measured
        self.hidden = cfg.iterations == 0 and _hidden(cfg)

    def stage_path(self, k: int) -> Path:
        """The boards of stage ``k``."""
        return self.dir / "data" / f"stage_{k}.npz"

    def model_stem(self, k: int) -> Path:
        """The value after stage ``k``'s fit."""
        return self.dir / "checkpoints" / f"iteration_{k}"

    def run(self, pool: Any) -> Path:
        """Play and fit every stage not done yet; write the final value and the curve.

        An iteration's value is *accepted* unless it clearly loses to the value it was refitted
        from (the 95% interval of its margin below 0); the next iteration plays and refits the
        last accepted value, which is the run's final one. The run ends early once a refit kept
        the weights it started from (the returns have reached the value's fixed point).
        """
        from psygym_agents.value import BoardValue

        cfg = self.cfg
        best = 0
        for k in range(cfg.iterations + 1):
            if k not in self.done:
                start = None if k == 0 else self.weights(best)
                n = cfg.steps if k == 0 else cfg.games
                if not self.stage_path(k).is_file():  # a stage stopped after its games keeps them
                    data = self.play(pool, k, n, None if start is None else str(start))
                    write_npz(self.stage_path(k), root=self.dir, **data)
                    shutil.rmtree(self.parts_dir(k))
                init = None if start is None else BoardValue.load(start)
                self.record(pool, k, best, *self.fit(k, init))
            if k and self.kept_start(k, best):
                break  # the refit kept its start: more games of the same value change nothing
            if accepted(self.metrics[k]):
                best = k
        if cfg.backups:
            best = self.backups(pool, best)
        final = BoardValue.load(self.weights(best))
        final.meta["metrics"] = self.metrics
        final.meta["training"]["final_iteration"] = best
        save_value(final, self.dir / FINAL)
        self.plot()
        return self.dir / f"{FINAL}.safetensors"

    def backups(self, pool: Any, best: int) -> int:
        """The phase-backup stage (:mod:`.phase_backups`), numbered ``iterations + 1``.

        Measured like an iteration against ``best``'s value; returns the value kept.
        """
        from psygym_experiments.harness.phase_backups import Backups

        k = self.cfg.iterations + 1
        if k not in self.done:
            stage = Backups(self.cfg, self.dir, self.features(), self.validation, self.show)
            model, val_mse, boards = stage.run_stage(pool, self.weights(best))
            self.record(pool, k, best, model, val_mse, boards, kind="phase backups")
        row = next(m for m in self.metrics if m["iteration"] == k)
        return k if row["accepted"] else best

    def record(self, pool: Any, k: int, best: int, model: Any, val_mse: float, boards: int,
               **extra: Any) -> None:  # fmt: skip
        """Save iteration ``k``'s value, measure it against ``best``'s and record its row."""
        save_value(model, self.model_stem(k))
        row = {"iteration": k, **extra, "boards": boards, "fit_val_mse": round(val_mse, 4),
               "start": None if k == 0 else best}  # fmt: skip
        row.update(self.measure(pool, k, best))
        row["accepted"] = accepted(row)
        self.metrics.append(row)
        self.done.append(k)
        self.write_progress()
        self.report(row)

    def features(self) -> Any:
        """The edition's board features (those of the first held-out list: the same names)."""
        from psygym_agents.value.features import board_features

        from psygym.editions import load

        return board_features(load(self.cfg.edition, self.cfg.list_name(EVAL_FROM)))

    def validation(self, game: np.ndarray) -> np.ndarray:
        """Per board of the start, whether its game is one of the start's validation games."""
        return _validation(self.cfg.seed, 0, game)

    def kept_start(self, k: int, start: int) -> bool:
        """Whether iteration ``k``'s refit kept the weights of ``start``, its start."""
        return self.weights(k).read_bytes() == self.weights(start).read_bytes()

    def weights(self, k: int) -> Path:
        """The weights file of iteration ``k``'s value."""
        return self.model_stem(k).with_suffix(".safetensors")

    def play(self, pool: Any, stage: int, n: int, value_path: str | None) -> dict[str, np.ndarray]:
        """``n`` games of ``stage`` in the pool, in chunks, with progress.

        Each finished chunk is kept in ``data/stage_<k>_parts/`` until the stage's file is
        written, so a stopped run plays only the chunks it had not finished (a chunk's games
        depend on the settings, the stage and the value alone).
        """
        chunk = 50 if value_path is None else 5
        ranges = [range(i, min(n, i + chunk)) for i in range(0, n, chunk)]
        cfg = asdict(self.cfg)
        folder = output_folder(self.parts_dir(stage), self.dir)
        paths = [folder / f"games_{r.start}_{r.stop}.npz" for r in ranges]
        parts: dict[Path, dict[str, np.ndarray]] = {}
        with ProgressBar(f"stage {stage} games", n, enabled=self.show) as bar:
            futures = {}
            for r, path in zip(ranges, paths, strict=True):
                if path.is_file():  # finished before a stop
                    with np.load(check_output(path, self.dir), allow_pickle=False) as data:
                        parts[path] = {key: data[key] for key in data.files}
                    bar.advance(len(r))
                else:
                    futures[path] = pool.submit(play_lists, cfg, stage, r, value_path)
            for r, path in zip(ranges, paths, strict=True):
                if path in futures:
                    parts[path] = futures[path].result()
                    write_npz(path, root=self.dir, **parts[path])
                    bar.advance(len(r))
        done = [parts[path] for path in paths]
        return {k: np.concatenate([p[k] for p in done]) for k in done[0]}

    def parts_dir(self, stage: int) -> Path:
        """Where the finished chunks of ``stage``'s games wait for the stage's file."""
        return self.dir / "data" / f"stage_{stage}_parts"

    def fit(self, k: int, init: Any) -> tuple[Any, float, int]:
        """Refit on every stage so far with lambda-returns under ``init`` (stage 0: outcomes)."""
        from psygym_agents.value.fit import fit_value
        from psygym_agents.value.general import READS

        cfg = self.cfg
        stages = [self.load_stage(j) for j in range(k + 1)]
        x = np.concatenate([s["phi"] for s in stages]).astype(np.float64)
        ys = []
        for s in stages:
            if init is None:
                ys.append(s["final"] - s["score"])
            else:
                ys.append(lambda_returns(s, init.predict(s["phi"]), cfg.td_lambda))
        y = np.concatenate(ys)
        # A game stays on its side of the split in every fit: a validation game of one fit
        # trained no earlier value (which would then look best and stop the refit at once).
        val = np.concatenate([_validation(cfg.seed, j, s["game"]) for j, s in enumerate(stages)])
        # The search games of all iterations weigh as much as the start's heuristic games
        # (each board at most MAX_WEIGHT times one of those): they are fewer, and good play.
        n0 = len(stages[0]["final"])
        later = sum(len(s["final"]) for s in stages[1:])
        heavy = min(MAX_WEIGHT, max(1.0, n0 / later)) if later else 1.0
        w = np.concatenate([np.full(len(s["final"]), 1.0 if j == 0 else heavy)
                            for j, s in enumerate(stages)])  # fmt: skip
        features = self.features()
        names = list(features.names)
        training = {"iteration": k, "td_lambda": cfg.td_lambda, "boards": len(y),
                    "monotone": [dict(d) for d in features.monotone]}  # fmt: skip
        meta = {"edition": cfg.edition, "scenario": "", "reads": READS, "features": names,
                "training": training}  # fmt: skip
        result = fit_value(x[~val], y[~val], x[val], y[val], w_train=w[~val], w_val=w[val],
                           hidden=cfg.hidden, lr=cfg.lr if init is None else cfg.refit_lr,
                           batch=cfg.batch, max_epochs=cfg.max_epochs, patience=cfg.patience,
                           seed=cfg.seed + k, init=init, meta=meta,
                           monotone=features.directions())  # fmt: skip
        if init is not None:
            result.value.meta.update(meta)
        best = min((v for _, _, v in result.history), default=float("nan"))
        return result.value, float(best), len(y)

    def load_stage(self, k: int) -> dict[str, np.ndarray]:
        """The boards of stage ``k``."""
        with np.load(self.stage_path(k), allow_pickle=False) as data:
            return {key: data[key] for key in data.files}

    def measure(self, pool: Any, k: int, start: int) -> dict[str, Any]:
        """Held-out error and strength of iteration ``k``'s value (see the module docstring)."""
        from psygym_experiments.harness.games import mean_ci
        from psygym_experiments.harness.head_to_head import play_pairs

        from psygym.editions import load

        cfg = self.cfg
        mine = f"search:value={self.model_stem(k).with_suffix('.safetensors')}"
        prev = f"search:value={self.weights(start)}" if k else "search:value=none"
        lists = [load(cfg.edition, cfg.list_name(EVAL_FROM + i)) for i in range(cfg.eval_lists)]
        if self.best is None:
            self.best = [best_heuristic(rules, pool=pool) for rules in lists]
        out: dict[str, Any] = {"best_heuristics": self.best}
        for name, others in (("vs_previous", [prev] * len(lists)), ("vs_best", self.best)):
            jobs = []
            for rules, other in zip(lists, others):
                jobs.append(pool.submit(play_pairs, rules, (mine, other), cfg.seed,
                                        range(cfg.eval_games)))  # fmt: skip
            margins = np.array([(a + b) / 2 for j in jobs for a, b in j.result()])
            mean, half = mean_ci(margins)
            out[name], out[f"{name}_ci"] = round(float(mean), 3), round(float(half), 3)
        err = self.heldout_error(pool, k)
        out.update(err)
        return out

    def heldout_error(self, pool: Any, k: int) -> dict[str, Any]:
        """RMSE of ``V`` against the outcomes of search games on the held-out lists.

        ``search`` with this value in both seats, ``eval_games`` games per list; a board's
        outcome includes the dice after it, so the figure bounds the value's error from above.
        """
        from psygym_agents.value import BoardValue

        cfg = self.cfg
        path = str(self.model_stem(k).with_suffix(".safetensors"))
        model = BoardValue.load(path)
        # Hidden hands: heuristic games (a search seat of play_lists would see both hands).
        share = 0.0 if self.hidden else 1.0
        both = {**asdict(cfg), "search_share": share, "random_move": 0.0}
        n = cfg.eval_lists * cfg.eval_games
        step = max(1, n // (2 * cfg.workers))
        jobs = [pool.submit(play_lists, both, EVAL_STAGE, range(i, min(n, i + step)), path)
                for i in range(0, n, step)]  # fmt: skip
        parts = [j.result() for j in jobs]
        phi = np.concatenate([p["phi"] for p in parts if len(p["phi"])])
        target = np.concatenate([p["final"] - p["score"] for p in parts if len(p["phi"])])
        err = model.predict(phi) - target
        return {
            "heldout_boards": len(err),
            "heldout_rmse": round(float(np.sqrt(np.mean(err**2))), 3),
        }

    def write_progress(self) -> None:
        """Record the finished stages and metrics (``progress.json``, ``metrics.*``)."""
        done = {"stages": self.done, "metrics": self.metrics}
        atomic_write(self.progress_path, json.dumps(done, indent=2))
        old = [f for f in OLD_FIELDS if any(f in row for row in self.metrics)]
        lines = [",".join((*METRIC_FIELDS, *old))]
        for row in self.metrics:
            lines.append(",".join(str(row.get(f, "")) for f in (*METRIC_FIELDS, *old)))
        atomic_write(self.dir / "metrics.csv", "\n".join(lines) + "\n")
        atomic_write(self.dir / "metrics.json", json.dumps(self.metrics, indent=2) + "\n")

    def report(self, row: dict[str, Any]) -> None:
        """One line per finished iteration."""
        if self.show:
            print(f"{_name(row)}: {row['boards']} boards, "
                  f"vs previous {row['vs_previous']:+.2f} ± {row['vs_previous_ci']:.2f}, "
                  f"{_versus_heuristic(row)}", flush=True)  # fmt: skip

    def plot(self) -> None:
        """``learning_curve.png``: margins per iteration with their 95% intervals."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        for key, label in (("vs_previous", "vs the previous value"),
                           ("vs_best", "vs each list's best heuristic"),
                           ("vs_reference", "vs the reference heuristic")):  # fmt: skip
            rows = [m for m in self.metrics if key in m]
            if rows:
                ax.errorbar([m["iteration"] for m in rows], [m[key] for m in rows],
                            yerr=[m[f"{key}_ci"] for m in rows], marker="o", capsize=3,
                            label=label)  # fmt: skip
        ax.axhline(0, color="grey", lw=0.8)
        last = " and last: phase backups" if self.cfg.backups else ""
        ax.set_xlabel(f"iteration (0: heuristic games only{last})")
        ax.set_ylabel("search's margin, points a game")
        ax.set_title(f"{self.cfg.edition} general board value on held-out lists")
        ax.legend()
        save_figure(fig, self.dir / "learning_curve.png")
        plt.close(fig)


def run_general(cfg: GeneralConfig, run_dir: Path, *, show_progress: bool = True,
                pool: Any = None) -> Path:  # fmt: skip
    """Train (or continue) a general value in ``run_dir``; returns the final weights' path."""
    from psygym_experiments.harness.tournament import worker_pool

    if pool is not None:
        return _Run(cfg, run_dir, show_progress).run(pool)
    with worker_pool(cfg.workers) as own:
        return _Run(cfg, run_dir, show_progress).run(own)


def resume_general(run_dir: str | Path, steps: int | None = None, *, show_progress: bool = False,
                   command: str | None = None, pool: Any = None) -> Path:  # fmt: skip
    """Continue a general run after its last finished stage.

    Raises:
        ValueError: ``steps`` differs from the run's (its games are already fixed).
    """
    from psygym_experiments.harness.value_training import prepare_resume

    run = Path(run_dir)
    cfg = read_config(run)
    prepare_resume(run, cfg.steps, steps, command)
    run_general(cfg, run, show_progress=show_progress, pool=pool)
    return run


def _name(row: dict[str, Any]) -> str:
    """An iteration's name in the run's lines (``iteration 2``, ``iteration 5 (phase backups)``)."""
    kind = row.get("kind")
    return f"iteration {row['iteration']}" + (f" ({kind})" if kind else "")


def _versus_heuristic(row: dict[str, Any]) -> str:
    """``vs best heuristic +0.41 ± 0.20`` (``vs reference`` in a row of an older run)."""
    key = "vs_best" if "vs_best" in row else "vs_reference"
    words = "best heuristic" if key == "vs_best" else "reference"
    return f"vs {words} {row[key]:+.2f} ± {row[f'{key}_ci']:.2f}"


def summary_lines(run_dir: str | Path) -> list[str]:
    """One line per iteration of a general run's ``metrics.json``, for the command's summary."""
    path = Path(run_dir) / "metrics.json"
    rows = json.loads(path.read_text()) if path.is_file() else []
    return [
        f"{_name(r)}: held-out error {r['heldout_rmse']:.2f} points "
        f"({r['heldout_boards']} boards), vs previous {r['vs_previous']:+.2f} ± "
        f"{r['vs_previous_ci']:.2f}, {_versus_heuristic(r)}"
        for r in rows
    ]


__all__ = [
    "EVAL_FROM", "GENERAL", "GeneralConfig", "TRAIN_FROM", "command_line", "is_general_run",
    "is_general_scenario", "lambda_returns", "make_general_config", "play_lists", "read_config",
    "resume_general", "run_general", "start_run", "summary_lines",
]  # fmt: skip
