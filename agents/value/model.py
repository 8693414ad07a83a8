"""A learned value of the board: the score a side can still expect, from a small MLP.

``V(state)`` is the expected score player 0 still gains from ``state`` to the end of the game
under good play (the game is zero-sum, so player 1 expects ``-V``). The ``search`` agent adds it
to the score so far at the edge of its exact lookahead (:mod:`psygym_agents.solvers.search`).

The input is the state's full view, ``rules.observe(state, 0)``: in a perfect-information
edition it holds every fact that matters (wounds, living psykers and their powers, pools, flags,
round), and the edition keeps its layout documented in its ``views.py``.

A model is two files with one stem:

- ``<stem>.safetensors``: the layers' float32 weights ``w0, b0, w1, b1, ...`` and the input
  scaling ``mean`` and ``scale``, read with ``safetensors.numpy`` (no code runs);
- ``<stem>.json``: ``"format"`` (:data:`FORMAT`), the edition, scenario, observation size,
  activation, the SHA-256 of the weights, and the training run's metrics. An optional
  ``"checked"`` block holds a ``psygym value-check`` run of the model (``"by"``: the command;
  ``"rmse"``; ``"rounds"``: ``{"round", "boards", "rmse", "mean_se"}`` per battle round), copied
  from that run's ``summary.json`` (:func:`checked_block`).

Shipped models live in ``agents/pretrained/value-<edition>-<scenario>.safetensors``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

FORMAT = "psygym-board-value/1"
"""Value of the ``"format"`` key of a board-value model's JSON."""

PRETRAINED = Path(__file__).resolve().parent.parent / "pretrained"
"""Folder of the shipped models."""


class ValueModelError(ValueError):
    """A board-value file that cannot be used; the message says which and why, in one line."""


class BoardValue:
    """An MLP ``observation -> expected score player 0 still gains`` (inference in numpy).

    Args:
        weights: ``[(W0, b0), (W1, b1), ...]``; hidden layers use ``tanh``, the last is linear.
        mean, scale: the input is ``(obs - mean) / scale`` before the first layer.
        meta: the JSON metadata (edition, scenario, metrics, ...).
    """

    def __init__(
        self,
        weights: Sequence[tuple[np.ndarray, np.ndarray]],
        mean: np.ndarray,
        scale: np.ndarray,
        meta: dict[str, Any] | None = None,
    ):
        self.weights = [(np.asarray(w, np.float64), np.asarray(b, np.float64)) for w, b in weights]
        self.mean = np.asarray(mean, np.float64)
        self.scale = np.asarray(scale, np.float64)
        self.meta = dict(meta or {})
        self._memo: dict[Hashable, float] = {}

    @property
    def input_size(self) -> int:
        """Length of the observation the model reads."""
        return int(self.mean.shape[0])

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Values of a batch of observations (rows)."""
        h = (np.atleast_2d(np.asarray(x, np.float64)) - self.mean) / self.scale
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(self.weights):
            h = h @ w + b
            if i < last:
                h = np.tanh(h)
        return h[:, 0]

    def __call__(self, rules: Any, state: Hashable) -> float:
        """``V(state)`` for player 0, memoised by state (a search meets the same leaf often)."""
        hit = self._memo.get(state)
        if hit is None:
            if len(self._memo) > 500_000:
                self._memo.clear()
            hit = self._memo[state] = float(self.predict(rules.observe(state, 0))[0])
        return hit

    @property
    def error_note(self) -> str:
        """The value's error estimate in player words ("its error about ..."), or ``""``.

        A ``checked`` block (``V`` against the mean of games played out from sampled boards) is
        quoted before the training run's Bellman ``rmse`` (``V`` against one phase's search with
        ``V`` beyond it), since only the check measures against play to the end. The worst
        round is named when it is well above the whole figure.
        """
        checked = self.meta.get("checked")
        if checked:
            rounds = checked["rounds"]
            worst = max(rounds, key=lambda r: r["rmse"]) if rounds else None
            text = f"its error about {checked['rmse']:.2f} points against games played out"
            if worst is not None and worst["rmse"] >= 1.25 * checked["rmse"]:
                text += f", {worst['rmse']:.2f} in round {worst['round']}"
            return text
        err = self.meta.get("rmse")
        return f"its error about {err:.2f} points" if isinstance(err, float) else ""

    def check_rules(self, rules: Any) -> None:
        """Raise :class:`ValueModelError` unless the model reads ``rules``' observations.

        Raises:
            ValueModelError: another edition, or an observation of another length.
        """
        edition = self.meta.get("edition")
        if edition and edition != rules.edition:
            raise ValueModelError(
                f"board value of edition {edition} cannot value {rules.edition} boards"
            )
        if self.input_size != rules.observation_size:
            raise ValueModelError(
                f"board value reads {self.input_size} observation entries, but "
                f"{rules.edition} {getattr(rules.scenario, 'name', '')} has "
                f"{rules.observation_size}"
            )

    def save(self, stem: str | Path) -> Path:
        """Write ``<stem>.safetensors`` and ``<stem>.json``; returns the weights path."""
        from safetensors.numpy import save_file

        stem = Path(stem)
        weights_path = stem.with_suffix(".safetensors")
        tensors = {"mean": self.mean.astype(np.float32), "scale": self.scale.astype(np.float32)}
        for i, (w, b) in enumerate(self.weights):
            tensors[f"w{i}"] = np.ascontiguousarray(w, np.float32)
            tensors[f"b{i}"] = np.ascontiguousarray(b, np.float32)
        stem.parent.mkdir(parents=True, exist_ok=True)
        save_file(tensors, str(weights_path))
        meta = {
            **self.meta,
            "format": FORMAT,
            "layers": len(self.weights),
            "activation": "tanh",
            "input_size": self.input_size,
            "weights_sha256": _sha256(weights_path),
        }
        stem.with_suffix(".json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        return weights_path

    @classmethod
    def load(cls, path: str | Path) -> BoardValue:
        """Read a model from its ``.safetensors``, ``.json`` or stem path (no unpickling).

        Raises:
            ValueModelError: a file is missing, or the JSON does not describe the weights.
        """
        from safetensors.numpy import load_file

        stem = Path(path)
        if stem.suffix in (".safetensors", ".json"):
            stem = stem.with_suffix("")
        weights_path, meta_path = stem.with_suffix(".safetensors"), stem.with_suffix(".json")
        for p in (weights_path, meta_path):
            if not p.is_file():
                raise ValueModelError(f"board value {stem}: {p.name} is missing")
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError) as exc:
            raise ValueModelError(f"board value {meta_path}: not readable JSON ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ValueModelError(f"board value {meta_path}: format is not {FORMAT!r}")
        if meta.get("weights_sha256") != _sha256(weights_path):
            raise ValueModelError(
                f"board value {weights_path}: the weights file changed since its JSON was written"
            )
        try:
            tensors = load_file(str(weights_path))
            n = int(meta["layers"])
            weights = [(tensors[f"w{i}"], tensors[f"b{i}"]) for i in range(n)]
            mean, scale = tensors["mean"], tensors["scale"]
        except Exception as exc:  # noqa: BLE001 - any malformed file is one clear line
            raise ValueModelError(f"board value {weights_path}: {exc}") from None
        if "checked" in meta:
            _check_checked(meta["checked"], meta_path)
        return cls(weights, mean, scale, meta)


class CheckedRound(BaseModel):
    """One battle round of a ``"checked"`` block: its boards, RMSE of ``V`` and mean se."""

    model_config = ConfigDict(extra="forbid", strict=True)
    round: int = Field(ge=1)
    boards: int = Field(ge=1)
    rmse: float = Field(ge=0)
    mean_se: float = Field(ge=0)


class Checked(BaseModel):
    """A model JSON's ``"checked"`` block (made by :func:`checked_block`)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    by: str
    rmse: float = Field(ge=0)
    rounds: list[CheckedRound]


def checked_block(summary: dict[str, Any], by: str) -> dict[str, Any]:
    """The ``"checked"`` block of a model's JSON from a ``value-check`` run's ``summary.json``.

    Raises:
        ValueModelError: the run is not finished (every board), so its figures are partial.
    """
    if summary.get("finished") != summary.get("total"):
        raise ValueModelError(
            f"value check {by}: {summary.get('finished')} of {summary.get('total')} boards "
            "finished; only a finished check goes into a model"
        )
    rounds = [r for r in summary["rounds"] if r["round"] != "all"]
    (whole,) = [r for r in summary["rounds"] if r["round"] == "all"]
    keep = CheckedRound.model_fields
    block = {"by": by, "rmse": whole["rmse"], "rounds": [{k: r[k] for k in keep} for r in rounds]}
    return Checked.model_validate(block).model_dump()


def _check_checked(block: Any, path: Path) -> None:
    """Raise :class:`ValueModelError` unless ``block`` has the shape :func:`checked_block` makes."""
    try:
        Checked.model_validate(block)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in ("checked", *err.get("loc", ())))
        fields = ", ".join(f'"{f}"' for f in CheckedRound.model_fields)
        raise ValueModelError(
            f"board value {path}: {where}: {err.get('msg', 'invalid')} (a block is "
            f'{{"by": command, "rmse": number, "rounds": [{{{fields}}}]}})'
        ) from None


def pretrained_value_path(edition: str, scenario: str) -> Path:
    """Where the shipped board value of ``edition``/``scenario`` lives (it may not exist)."""
    return PRETRAINED / f"value-{edition}-{scenario}.safetensors"


def shipped_value(rules: Any) -> BoardValue | None:
    """The shipped board value for ``rules``' edition and scenario, or ``None``."""
    scenario = getattr(getattr(rules, "scenario", None), "name", "")
    path = pretrained_value_path(rules.edition, scenario)
    if not path.is_file():
        return None
    model = BoardValue.load(path)
    model.check_rules(rules)
    return model


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


__all__ = [
    "FORMAT",
    "BoardValue",
    "ValueModelError",
    "checked_block",
    "pretrained_value_path",
    "shipped_value",
]
