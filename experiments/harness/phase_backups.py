"""Phase backups of a general value: fitted value iteration over the start's games, backward.

The last stage of ``psygym train --algo value --scenario random`` when ``backups`` is set. The
first ``backups`` games of the start (stage 0, between heuristics) are replayed, and each of
their boards is labelled with what ``search`` says it is worth: the exact search of the whole
Psychic phase from the board (every cast and deny of both sides, every chance outcome weighted
exactly; the rest of the game where that fits, :data:`~psygym_agents.solvers.search.EXACT_BUDGET`),
with ``score + V`` at the phase's edge, minus the score so far. That is the value's Bellman
target under the search's own play, with no dice noise in it: a game's outcome carries the dice
of every phase after the board (on the 8th's start games, 3 to 10 points of noise against these
labels), a backup none.

Backward by phases left: the boards of each game's last phase first (where the phase fits the
search's budget, :data:`~psygym_agents.solvers.search.PHASE_BUDGET` states, their search reaches
the end of the game, so their labels are exact whatever ``V`` is; elsewhere the search falls
back to one cast with ``V`` at its edge, as ``search`` does), then the value is refitted (from
its current weights) on every board labelled so far; then the boards with one more phase left,
labelled with that refitted value at their phase's edge; and so on to the first phase. Each
level is checkpointed (``checkpoints/backups_<level>.*`` and ``data/backups.npz``), so a stopped
run labels only the levels it had not finished.

Hidden hands are refused (:func:`~.general_value.make_general_config`): the search would see
both hands.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from psygym_experiments.harness.output import check_output
from psygym_experiments.harness.progress import ProgressBar
from psygym_experiments.harness.value_boards import phase_index, write_npz
from psygym_experiments.harness.value_training import save_value

CHUNK = 25
"""Games of one pool task of a level's labelling."""


def _replay(cfg: Any, g: int) -> tuple[Any, Any, list[Any], np.ndarray]:
    """Game ``g`` of the start: its rules, boards, board states and phases left per board."""
    rules, boards, states, _ = cfg.play_list_game(0, g)
    phase = phase_index(rules, boards) if len(boards) else np.zeros(0, np.int64)
    left = phase.max() - phase if len(phase) else phase
    return rules, boards, states, left


def board_table(cfg: Any, games: range) -> dict[str, np.ndarray]:
    """Features, game and phases left of every board of the start's games ``games`` (a worker).

    ``cfg`` is the run's :class:`~.general_value.GeneralConfig`.
    """
    from psygym_agents.value.features import board_features

    phi, game, left = [], [], []
    for g in games:
        rules, boards, _, lft = _replay(cfg, g)
        if len(boards):
            phi.append(board_features(rules)(boards.x).astype(np.float32))
            game.append(np.full(len(boards), g))
            left.append(lft)
    if not phi:
        return {"phi": np.zeros((0, 0), np.float32), "game": np.zeros(0, np.int64),
                "left": np.zeros(0, np.int64)}  # fmt: skip
    return {"phi": np.concatenate(phi), "game": np.concatenate(game), "left": np.concatenate(left)}


def label_level(cfg: Any, games: list[int], level: int,
                value_path: str) -> list[tuple[int, int, float]]:  # fmt: skip
    """``(game, board of the game, label)`` of the boards ``level`` phases from their game's end.

    Runs in a worker; ``value_path`` is the general value at the phase's edge.
    """
    from psygym_agents.solvers.search import LookaheadPolicy
    from psygym_agents.value.general import general_value

    out = []
    for g in games:
        rules, _, states, left = _replay(cfg, g)
        search = LookaheadPolicy(rules, general_value(rules, value_path), phase=True)
        for i in np.flatnonzero(left == level).tolist():
            state = states[i]
            out.append((g, i, search.value_of(rules, state) - rules.returns(state)[0]))
    return out


class Backups:
    """The phase-backup stage of one general run (see the module docstring).

    Args:
        cfg: the run's :class:`~.general_value.GeneralConfig`.
        run_dir: the run's folder.
        features: the edition's board features (their monotone directions hold in each fit).
        validation: ``validation(game)``, per board whether its game is a validation game of
            the start (the run's own split, so no start validation game is trained on).
        show: whether to show progress.
    """

    def __init__(self, cfg: Any, run_dir: Path, features: Any,
                 validation: Callable[[np.ndarray], np.ndarray], show: bool):  # fmt: skip
        self.cfg, self.dir, self.features = cfg, run_dir, features
        self.validation, self.show = validation, show

    @property
    def data_path(self) -> Path:
        """The boards and the labels of the levels finished so far."""
        return self.dir / "data" / "backups.npz"

    def stem(self, level: int) -> Path:
        """The value refitted after ``level``."""
        return self.dir / "checkpoints" / f"backups_{level}"

    def table(self, pool: Any) -> dict[str, np.ndarray]:
        """Every board of the start's first ``backups`` games, and the labels kept so far."""
        if self.data_path.is_file():
            with np.load(check_output(self.data_path, self.dir), allow_pickle=False) as data:
                return {key: data[key] for key in data.files}
        cfg, n = self.cfg, self.cfg.backups
        jobs = [pool.submit(board_table, cfg, range(i, min(n, i + CHUNK)))
                for i in range(0, n, CHUNK)]  # fmt: skip
        parts = [p for p in (j.result() for j in jobs) if len(p["game"])]
        table = {k: np.concatenate([p[k] for p in parts]) for k in ("phi", "game", "left")}
        table["label"] = np.full(len(table["game"]), np.nan)
        table["levels_done"] = np.asarray(0)
        return table

    def run_stage(self, pool: Any, start: Path) -> tuple[Any, float, int]:
        """Label and refit level by level from ``start``'s value; the last refit and its MSE."""
        from psygym_agents.value import BoardValue

        table = self.table(pool)
        done = int(table["levels_done"])
        path = self.stem(done - 1).with_suffix(".safetensors") if done else start
        model, mse = BoardValue.load(path), float("nan")
        game, left = table["game"], table["left"]
        val = self.validation(game)
        levels = int(left.max()) + 1 if len(left) else 0
        cfg = self.cfg
        with ProgressBar("phase backups", int((left >= done).sum()), enabled=self.show) as bar:
            for level in range(done, levels):
                todo = sorted(set(game[left == level].tolist()))
                chunks = [todo[i : i + CHUNK] for i in range(0, len(todo), CHUNK)]
                jobs = [pool.submit(label_level, cfg, c, level, str(path)) for c in chunks]
                first = {g: int(np.flatnonzero(game == g)[0]) for g in todo}
                for job in jobs:
                    rows = job.result()
                    for g, i, y in rows:
                        table["label"][first[g] + i] = y
                    bar.advance(len(rows))
                model, mse = self.refit(table, left <= level, val, model, level)
                path = save_value(model, self.stem(level))
                table["levels_done"] = np.asarray(level + 1)
                write_npz(self.data_path, root=self.dir, **table)
        return model, mse, int(np.isfinite(table["label"]).sum())

    def refit(self, table: dict[str, np.ndarray], rows: np.ndarray, val: np.ndarray,
              init: Any, level: int) -> tuple[Any, float]:  # fmt: skip
        """The value refitted from ``init`` on the labelled ``rows``; its best validation MSE."""
        from psygym_agents.value.fit import fit_value

        cfg = self.cfg
        x, y = table["phi"].astype(np.float64), table["label"]
        train, check = rows & ~val, rows & val
        result = fit_value(x[train], y[train], x[check], y[check], hidden=cfg.hidden,
                           lr=cfg.refit_lr, batch=cfg.batch, max_epochs=cfg.max_epochs,
                           patience=cfg.patience, seed=cfg.seed + level, init=init,
                           meta=dict(init.meta), monotone=self.features.directions())  # fmt: skip
        result.value.meta.update(init.meta)
        result.value.meta["training"] = {**init.meta.get("training", {}),
                                         "phase_backups": {"games": cfg.backups,
                                                           "boards": int(rows.sum()),
                                                           "level": level}}  # fmt: skip
        best = min((v for _, _, v in result.history), default=float("nan"))
        return result.value, float(best)


__all__ = ["CHUNK", "Backups", "board_table", "label_level"]
