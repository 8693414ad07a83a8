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
"""

from __future__ import annotations

import io
import json
import math
import shlex
import signal
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
from psygym_experiments.harness.output import (
    check_output,
    json_text,
    output_folder,
    save_figure,
    write_bytes,
)
from psygym_experiments.harness.progress import ProgressBar
from psygym_experiments.harness.runs import (
    append_command,
    append_metrics,
    atomic_write,
    check_run_folder,
    inside,
    numbered_run_dir,
)
from psygym_experiments.harness.runs import read_metrics as _read_csv
from psygym_experiments.harness.training import TrainingInterrupted

from psygym.core import CHANCE, TERMINAL, EventKind, sample_action

ALGO = "value"
"""The ``--algo`` name of board-value training."""
FINAL = "value"
"""Stem of a finished run's model (``value.safetensors`` + ``value.json``)."""

FIT_FIELDS = ("fit", "epoch", "train_mse", "val_mse")
METRIC_FIELDS = (
    "model", "round", "boards", "target_sd", "mc_rmse", "bellman_boards", "bellman_rmse",
    "mean_value", "mean_backup",
)  # fmt: skip
_TRAIN, _VAL, _TEST = 0, 1, 2


@dataclass
class ValueConfig:
    """Everything that defines a board-value run (written to ``config.yml``).

    Attributes:
        edition, scenario: what is valued.
        algo: always ``"value"`` (tells ``--resume`` which kind of run this is).
        steps: games of the Monte-Carlo stage (heuristics only).
        seed: seeds the games, splits, samples and fits.
        phase_td: phase-TD refits after the Monte-Carlo fit (labels: the gain to the next
            Psychic phase's first board plus ``V`` there).
        sweeps: fitted value-iteration sweeps after the Monte-Carlo fit (and phase-TD refits).
        sweep_games: games played at the start of each sweep (``search`` among the agents);
            ``None``: a tenth of ``steps``.
        search_share: probability that a seat of a sweep game is ``search``.
        random_move: probability that a move is uniformly random instead of the agent's.
        relabel: distinct boards re-labelled by a backup per round and sweep.
        eval_boards: distinct test boards per round for the Bellman error.
        eval_initial: also measure the Monte-Carlo fit (before any sweep) on the test boards.
        label_weight: weight of a backed-up board in the fit (a Monte-Carlo board has 1).
        hidden: hidden layer widths of the MLP.
        lr, batch, max_epochs, refit_epochs, patience: fitting (``refit_epochs`` bounds the
            refits of the sweeps, which start from the current weights).
        max_fit_boards: at most this many training boards in a fit (backed-up ones always).
        test_fraction, val_fraction: shares of each stage's games held out.
        agents: agent specs (names, ``tuned:PATH``, ...) each seat of a game draws from;
            ``None``: every heuristic of the edition.
    """

    edition: str
    scenario: str
    algo: str = ALGO
    steps: int = 2000
    seed: int = 0
    phase_td: int = 0
    sweeps: int = 2
    sweep_games: int | None = None
    search_share: float = 0.5
    random_move: float = 0.1
    relabel: int = 200
    eval_boards: int = 50
    eval_initial: bool = True
    label_weight: float = 10.0
    hidden: list[int] = field(default_factory=lambda: [64, 64])
    lr: float = 1e-3
    batch: int = 256
    max_epochs: int = 200
    refit_epochs: int = 40
    patience: int = 10
    max_fit_boards: int = 60_000
    test_fraction: float = 0.15
    val_fraction: float = 0.10
    agents: list[str] | None = None

    @property
    def games_per_sweep(self) -> int:
        """Games played at the start of each sweep."""
        return max(1, self.steps // 10) if self.sweep_games is None else self.sweep_games


TUNABLE = tuple(
    f.name
    for f in fields(ValueConfig)
    if f.name not in ("edition", "scenario", "algo", "steps", "seed")
)
"""Keys a ``--config`` YAML file may set for a value run."""


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


# --------------------------------------------------------------------------------- config
def _load_rules(edition: str, scenario: str) -> Any:
    from psygym.editions import load

    return load(edition, scenario)


def make_value_config(
    edition: str, scenario: str, steps: int = 2000, seed: int = 0, *,
    config: str | Path | None = None, overrides: dict[str, Any] | None = None,
) -> ValueConfig:  # fmt: skip
    """Resolve and validate a board-value configuration.

    Args:
        edition: the edition id or alias.
        scenario: a shipped scenario name or a TOML path.
        steps: games of the Monte-Carlo stage.
        seed: the run's seed.
        config: a YAML file whose keys (:data:`TUNABLE`) override the defaults.
        overrides: more overrides, applied last.

    Raises:
        ValueError: unknown edition or scenario, hidden hands, a bad number or an unknown key.
    """
    from psygym_agents.solvers import has_hidden_information

    if steps < 3:
        raise ValueError(
            f"--steps must be at least 3 games for --algo value (training, validation and "
            f"test games), not {steps}"
        )
    rules = _load_rules(edition, scenario)
    extra: dict[str, Any] = {}
    if config:
        from psygym_experiments.harness.training import read_yaml

        doc = read_yaml(config)
        if not isinstance(doc, dict):
            raise ValueError(f"--config {config}: expected a mapping of settings")
        extra.update(doc)
    extra.update(overrides or {})
    unknown = sorted(set(extra) - set(TUNABLE))
    if unknown:
        raise ValueError(
            f"--config: unknown setting {', '.join(unknown)} for --algo value; allowed: "
            f"{', '.join(TUNABLE)}"
        )
    name = rules.scenario.name if str(scenario) == "default" else str(scenario)
    cfg = ValueConfig(edition=rules.edition, scenario=name, steps=steps, seed=seed)
    for key, value in extra.items():
        setattr(cfg, key, value)
    check_value_config(cfg)
    if has_hidden_information(rules) and (cfg.sweeps or cfg.eval_boards):
        # A backup solves the next phase exactly over the true state, so it would see both
        # hands: with hidden hands only the Monte-Carlo fit is honest.
        raise ValueError(
            f"--algo value: edition {rules.edition} has hidden hands, and exact backups would "
            "see both; set sweeps: 0 and eval_boards: 0 (a Monte-Carlo fit only), as "
            f"experiments/configs/value/{rules.edition}-{rules.scenario.name}.yml does"
        )
    if cfg.agents is not None:
        from psygym.policies import resolve_policy

        for spec in cfg.agents:
            try:
                resolve_policy(spec, rules)
            except Exception as exc:  # noqa: BLE001 - any bad agent spec is one clear line
                raise ValueError(f"agents: {exc}") from None
    return cfg


def check_value_config(cfg: ValueConfig) -> None:
    """Raise ``ValueError`` (one line: which setting, what is allowed) for a bad setting."""

    def need(ok: bool, text: str) -> None:
        if not ok:
            raise ValueError(text)

    def whole(name: str, low: int) -> None:
        v = getattr(cfg, name)
        need(isinstance(v, int) and not isinstance(v, bool) and v >= low,
             f"{name} must be a whole number of at least {low}, not {v!r}")  # fmt: skip

    def share(name: str, high: float = 1.0) -> None:
        v = getattr(cfg, name)
        need(isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= high,
             f"{name} must be a number from 0 to {high}, not {v!r}")  # fmt: skip

    for name in ("steps",):
        whole(name, 3)
    for name in ("seed", "phase_td", "sweeps", "relabel", "eval_boards"):
        whole(name, 0)
    for name in ("batch", "max_epochs", "refit_epochs", "patience", "max_fit_boards"):
        whole(name, 1)
    if cfg.sweep_games is not None:
        whole("sweep_games", 0)
    share("search_share")
    share("random_move")
    share("test_fraction", 0.5)
    share("val_fraction", 0.5)
    need(isinstance(cfg.eval_initial, bool), f"eval_initial must be true or false, not "
         f"{cfg.eval_initial!r}")  # fmt: skip
    for name in ("label_weight", "lr"):
        v = getattr(cfg, name)
        need(isinstance(v, int | float) and not isinstance(v, bool) and v > 0,
             f"{name} must be a positive number, not {v!r}")  # fmt: skip
    need(isinstance(cfg.hidden, list) and len(cfg.hidden) >= 1
         and all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in cfg.hidden),
         f"hidden must be a list of layer widths such as [64, 64], not {cfg.hidden!r}")  # fmt: skip
    agents = cfg.agents
    need(agents is None or (isinstance(agents, list) and len(agents) >= 1
                            and all(isinstance(a, str) and a for a in agents)),
         f"agents must be a list of agent names such as [pass], not {agents!r}")  # fmt: skip


def is_value_run(run_dir: str | Path) -> bool:
    """Whether ``run_dir`` holds a board-value run (its ``config.yml`` says ``algo: value``)."""
    path = Path(run_dir) / "config.yml"
    if not path.is_file():
        return False
    import yaml

    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(doc, dict) and doc.get("algo") == ALGO


def config_from_run(run_dir: str | Path) -> ValueConfig:
    """The configuration recorded in a value run's ``config.yml``.

    Raises:
        FileNotFoundError: not a value run.
    """
    import yaml

    path = Path(run_dir) / "config.yml"
    if not is_value_run(run_dir):
        raise FileNotFoundError(f"{run_dir} is not a board-value run (no config.yml with algo "
                                "value)")  # fmt: skip
    doc = yaml.safe_load(path.read_text())
    names = {f.name for f in fields(ValueConfig)}
    cfg = ValueConfig(**{k: v for k, v in doc.items() if k in names})
    check_value_config(cfg)
    return cfg


def write_value_config(run_dir: Path, cfg: ValueConfig) -> None:
    """Write the resolved configuration as ``config.yml``."""
    import yaml

    text = "# Resolved configuration of this board-value run (psygym train --algo value).\n"
    text += "# Resume: psygym train --resume <this folder>\n"
    text += yaml.safe_dump(asdict(cfg), sort_keys=False)
    atomic_write(run_dir / "config.yml", text)


def value_command_line(cfg: ValueConfig, runs_dir: str | Path, config: str | None = None) -> str:
    """The ``psygym train`` command equivalent to a configuration (for API-started runs)."""
    args = [
        "psygym", "train", "--algo", ALGO, "--edition", cfg.edition, "--scenario",
        cfg.scenario, "--steps", str(cfg.steps), "--seed", str(cfg.seed), "--runs-dir",
        str(runs_dir),
    ]  # fmt: skip
    if config:
        args += ["--config", str(config)]
    return shlex.join(args)


def start_value_run(cfg: ValueConfig, runs_dir: str | Path) -> Path:
    """Create ``<runs-dir>/<edition>/<scenario>/value_<n>`` with its config and seed."""
    rules = _load_rules(cfg.edition, cfg.scenario)
    run_dir = numbered_run_dir(inside(runs_dir, cfg.edition, rules.scenario.name), ALGO)
    write_value_config(run_dir, cfg)
    atomic_write(run_dir / "seed.txt", f"{cfg.seed}\n")
    return run_dir


def write_npz(path: Path, **arrays: np.ndarray) -> None:
    """Write ``arrays`` as a compressed ``.npz`` (plain arrays), atomically and never via a link."""
    data = io.BytesIO()
    np.savez_compressed(data, **arrays)
    write_bytes(path, data.getvalue())


def save_value(value: Any, stem: Path) -> Path:
    """``value.save(stem)`` once neither of its files is a link (:func:`.output.check_output`)."""
    from psygym_agents.safe_model import safe_paths

    for file in safe_paths(stem):
        check_output(file)
    return value.save(stem)


# --------------------------------------------------------------------------------- data
@dataclass
class Boards:
    """The boards of one stage of play, and the games that reached them.

    Attributes:
        x: ``rules.observe(board, 0)`` per board (float32 rows).
        round: battle round of each board (``rules.horizon(board)[0]``).
        score: player 0's score so far at each board.
        target: final score minus score so far (the Monte-Carlo target).
        game: index (within this stage) of the game each board comes from.
        ply: the board is the state after the game's actions ``0..ply``.
        split: per board: 0 training, 1 validation, 2 test (the split of its game).
        actions, offsets: the games' actions (decisions and chance outcomes), game ``g`` being
            ``actions[offsets[g]:offsets[g + 1]]``.
        agents: ``"seat0 vs seat1"`` agent names per game.
    """

    x: np.ndarray
    round: np.ndarray
    score: np.ndarray
    target: np.ndarray
    game: np.ndarray
    ply: np.ndarray
    split: np.ndarray
    actions: np.ndarray
    offsets: np.ndarray
    agents: np.ndarray

    def save(self, path: Path) -> None:
        """Write the shard as a compressed ``.npz`` (plain arrays), atomically."""
        write_npz(path, **{f.name: getattr(self, f.name) for f in fields(self)})

    @classmethod
    def load(cls, path: Path) -> Boards:
        """Read a shard written by :meth:`save` (no pickles allowed)."""
        with np.load(path, allow_pickle=False) as data:
            return cls(**{f.name: data[f.name] for f in fields(cls)})

    def __len__(self) -> int:
        return len(self.round)


def game_split(n_games: int, rng: np.random.Generator, test: float, val: float) -> np.ndarray:
    """Per game: 0 training, 1 validation, 2 test; at least one of each from 3 games on."""
    split = np.zeros(n_games, np.int8)
    if n_games < 3:
        return split
    n_test = max(1, round(n_games * test)) if test > 0 else 0
    n_val = max(1, round(n_games * val)) if val > 0 else 0
    order = rng.permutation(n_games)
    split[order[:n_test]] = _TEST
    split[order[n_test : n_test + n_val]] = _VAL
    return split


def is_board(rules: Any, before: Hashable, after: Hashable) -> bool:
    """Whether ``after = apply(before, a)`` is a board: not terminal, on another horizon."""
    return rules.current_player(after) != TERMINAL and rules.horizon(after) != rules.horizon(before)


def play_boards(
    rules: Any, n_games: int, *, seed: int, stage: int, value: Any = None,
    search_share: float = 0.0, random_move: float = 0.1, split: np.ndarray | None = None,
    on_game: Callable[[], bool] | None = None, agents: Sequence[str] | None = None,
    first: int = 0,
) -> tuple[Boards, list[Hashable]]:  # fmt: skip
    """Play ``n_games`` games among the edition's heuristics (and ``search``), keep the boards.

    Game ``g`` draws its seats' agents from ``default_rng((seed, stage, g, 1))`` (``search``
    with probability ``search_share``, else a uniform heuristic) and its dice and random moves
    from ``default_rng((seed, stage, g, 2))``, so a stage is reproducible.

    Args:
        rules: the rules to play.
        n_games: games to play.
        seed: the run's seed.
        stage: the stage's number (each stage of a run plays other games).
        value: the board value of the ``search`` seats.
        search_share: probability that a seat is ``search``.
        random_move: probability that a move is uniformly random.
        split: per game 0/1/2 (training, validation, test); default all training.
        on_game: called after each game; a true return value stops early (the games played
            so far are returned).
        agents: agent specs the seats draw from instead of the edition's heuristics.
        first: the stage's number of the first game (games ``first..first + n_games - 1`` are
            played, numbered from 0 in the result: a part of a stage, see :func:`join_boards`).

    Returns:
        The boards, and the board states in the same order.
    """
    from psygym_agents.solvers.search import LookaheadPolicy

    from psygym.policies import bots_for, resolve_policy

    if agents:
        names = list(agents)
        made = {n: resolve_policy(n, rules) for n in names}
    else:
        bots = bots_for(rules.edition)
        if bots is None:
            raise ValueError(f"edition {rules.edition} has no heuristics to play the games with")
        names = list(bots.heuristics)
        made = {n: bots.heuristics[n](rules) for n in names}
    search = LookaheadPolicy(rules, value, steps=1) if search_share > 0 else None
    split = np.zeros(n_games, np.int8) if split is None else split
    cols: dict[str, list[Any]] = {k: [] for k in ("x", "round", "score", "target", "game", "ply")}
    states: list[Hashable] = []
    actions: list[int] = []
    offsets = [0]
    agents: list[str] = []
    for g in range(n_games):
        pick = np.random.default_rng((seed, stage, first + g, 1))
        seats, labels = [], []
        for _ in range(rules.num_players):
            if search is not None and pick.random() < search_share:
                seats.append(search)
                labels.append(search.name)
            else:
                name = names[int(pick.integers(len(names)))]
                seats.append(made[name])
                labels.append(name)
        rng = np.random.default_rng((seed, stage, first + g, 2))
        s = rules.initial_state()
        game_states, game_plies, ply = [], [], 0
        while (p := rules.current_player(s)) != TERMINAL:
            if p == CHANCE:
                a = rules.sample_chance(s, rng)
            elif random_move > 0 and rng.random() < random_move:
                legal = rules.legal_actions(s)
                a = legal[int(rng.integers(len(legal)))]
            else:
                a = sample_action(seats[p], rules, s, p, rng)
            s2 = rules.apply(s, a, check=False)
            actions.append(int(a))
            if is_board(rules, s, s2):
                game_states.append(s2)
                game_plies.append(ply)
            s, ply = s2, ply + 1
        final = rules.returns(s)[0]
        for b, bp in zip(game_states, game_plies):
            so_far = rules.returns(b)[0]
            cols["x"].append(rules.observe(b, 0))
            cols["round"].append(rules.horizon(b)[0])
            cols["score"].append(so_far)
            cols["target"].append(final - so_far)
            cols["game"].append(g)
            cols["ply"].append(bp)
        states.extend(game_states)
        offsets.append(len(actions))
        agents.append(" vs ".join(labels))
        if on_game is not None and on_game():
            break
    played = len(agents)
    game = np.asarray(cols["game"], np.int32)
    boards = Boards(
        x=np.asarray(cols["x"], np.float32).reshape(-1, rules.observation_size),
        round=np.asarray(cols["round"], np.int32),
        score=np.asarray(cols["score"], np.float64),
        target=np.asarray(cols["target"], np.float64),
        game=game,
        ply=np.asarray(cols["ply"], np.int32),
        split=np.asarray(split[:played], np.int8)[game] if len(game) else np.zeros(0, np.int8),
        actions=np.asarray(actions, np.int32),
        offsets=np.asarray(offsets, np.int64),
        agents=np.asarray(agents, dtype=str),
    )
    return boards, states


def join_boards(parts: Sequence[Boards]) -> Boards:
    """The boards of consecutive parts of a stage as one shard (games renumbered in order)."""
    games = np.cumsum([0] + [len(p.offsets) - 1 for p in parts])
    moves = np.cumsum([0] + [len(p.actions) for p in parts])
    joined = {f.name: np.concatenate([getattr(p, f.name) for p in parts])
              for f in fields(Boards) if f.name not in ("game", "offsets")}  # fmt: skip
    return Boards(
        **joined,
        game=np.concatenate([p.game + games[k] for k, p in enumerate(parts)]).astype(np.int32),
        offsets=np.concatenate([[0]] + [p.offsets[1:] + moves[k] for k, p in enumerate(parts)])
        .astype(np.int64),
    )  # fmt: skip


def _play_part(edition: str, scenario: str, first: int, stop: int, kw: dict[str, Any]) -> Boards:
    """Games ``first..stop - 1`` of a stage in a pool worker (:func:`play_boards`'s ``kw``)."""
    return play_boards(_load_rules(edition, scenario), stop - first, first=first, **kw)[0]


PART = 50
"""Games of one pool task of a stage's play (:meth:`_Run.play` with a pool)."""


def replay_states(rules: Any, boards: Boards) -> list[Hashable]:
    """The board states of a shard, rebuilt by replaying its games' recorded actions."""
    wanted: dict[int, list[int]] = {}
    for i, g in enumerate(boards.game.tolist()):
        wanted.setdefault(g, []).append(i)
    out: list[Hashable] = [None] * len(boards)
    for g, rows in wanted.items():
        acts = boards.actions[boards.offsets[g] : boards.offsets[g + 1]].tolist()
        at = {int(boards.ply[i]): i for i in rows}
        s = rules.initial_state()
        for ply, a in enumerate(acts):
            s = rules.apply(s, a, check=False)
            if ply in at:
                out[at[ply]] = s
    return out


def phase_index(rules: Any, boards: Boards) -> np.ndarray:
    """Per board, how many Psychic phases had begun when its game reached it.

    Replays the games' recorded actions; a transition with an ``EventKind.PHASE`` event begins
    a phase (so the count is edition-blind).
    """
    out = np.zeros(len(boards), np.int64)
    rows: dict[int, list[int]] = {}
    for i, g in enumerate(boards.game.tolist()):
        rows.setdefault(g, []).append(i)
    for g, members in rows.items():
        acts = boards.actions[boards.offsets[g] : boards.offsets[g + 1]].tolist()
        at = {int(boards.ply[i]): i for i in members}
        s, phases = rules.initial_state(), 0
        for ply, a in enumerate(acts):
            s, events = rules.apply_with_events(s, a, check=False)
            phases += any(e.kind == EventKind.PHASE for e in events)
            if ply in at:
                out[at[ply]] = phases
    return out


def next_phase_board(boards: Boards, phase: np.ndarray) -> np.ndarray:
    """Per board, the row of the first board of a later phase of the same game (-1: none)."""
    first: dict[tuple[int, int], int] = {}
    for i in np.lexsort((-boards.ply, boards.game)).tolist():  # within a game, last ply first
        first[(int(boards.game[i]), int(phase[i]))] = i  # so the earliest board stays
    later: dict[int, list[int]] = {}
    for g, p in sorted(first):
        later.setdefault(g, []).append(p)
    out = np.full(len(boards), -1, np.int64)
    for i, (g, p) in enumerate(zip(boards.game.tolist(), phase.tolist())):
        for q in later[g]:
            if q > p:
                out[i] = first[(g, q)]
                break
    return out


def backup(rules: Any, value: Any, state: Hashable) -> float:
    """One-step backup of a board: what player 0 still gains, as ``V`` predicts it.

    The exact search of the board's step with ``score + V`` at its edge, minus the score so far.
    """
    from psygym_agents.solvers.search import LookaheadPolicy

    return LookaheadPolicy(rules, value, steps=1).value_of(rules, state) - rules.returns(state)[0]


def zero_value(rules: Any) -> Any:
    """A board value that is 0 everywhere (the ``search`` leaf is then the score so far)."""
    from psygym_agents.value import BoardValue

    n = rules.observation_size
    return BoardValue([(np.zeros((n, 1)), np.zeros(1))], np.zeros(n), np.ones(n))


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
        self.rules = _load_rules(cfg.edition, cfg.scenario)
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
            futures.append(self.pool.submit(_play_part, cfg.edition, cfg.scenario, a, b,
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
        train = np.flatnonzero(split == _TRAIN)
        plain = train[~labelled[train]]
        room = cfg.max_fit_boards - int(labelled[train].sum())
        if len(plain) > max(room, 0):
            pick = np.random.default_rng((cfg.seed, 5)).permutation(len(plain))[: max(room, 0)]
            train = np.sort(np.concatenate([plain[np.sort(pick)], train[labelled[train]]]))
        val = np.flatnonzero(split == _VAL)
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
        rows = np.flatnonzero((rounds == rnd) & (split != _TEST))
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
        for rnd in sorted(set(rounds[split == _TEST].tolist())):
            rows = np.flatnonzero((rounds == rnd) & (split == _TEST))
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
    "ALGO", "Boards", "TUNABLE", "ValueConfig", "ValueTrainingInterrupted", "backup",
    "check_value_config", "config_from_run", "export_value", "final_value", "game_split",
    "is_board", "is_value_run", "join_boards", "make_value_config", "play_boards", "prepare_resume",
    "plot_value_curves", "read_value_metrics", "replay_states", "resume_value_run",
    "run_value_training", "start_value_run", "value_command_line", "write_value_config",
    "zero_value",
]  # fmt: skip
