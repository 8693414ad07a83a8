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

import json
import math
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from psygym_agents.mlp import dense_forward
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
        return dense_forward(h, self.weights, np.tanh)[:, 0]

    def __call__(self, rules: Any, state: Hashable) -> float:
        """``V(state)`` for player 0, memoised by state (a search meets the same leaf often).

        Clamped to ``rules.rest_bounds(state)``: a value never contradicts what the rules prove
        the rest of the game can add (the compiled search clamps its leaves the same way).
        """
        hit = self._memo.get(state)
        if hit is None:
            if len(self._memo) > 500_000:
                self._memo.clear()
            bounds = getattr(rules, "rest_bounds", None)
            lo, hi = bounds(state) if bounds is not None else (-math.inf, math.inf)
            if lo == hi:  # the rules leave one value: no need to run the network
                hit = lo
            else:
                hit = min(max(float(self.predict(rules.observe(state, 0))[0]), lo), hi)
            self._memo[state] = hit
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
        """Write ``<stem>.safetensors`` and ``<stem>.json``; returns the weights path.

        The same model always gives the same bytes (``safe_model.write_safetensors``).
        """
        from psygym_agents.safe_model import file_sha256, write_safetensors
        from safetensors.numpy import save

        stem = Path(stem)
        weights_path = stem.with_suffix(".safetensors")
        tensors = {"mean": self.mean.astype(np.float32), "scale": self.scale.astype(np.float32)}
        for i, (w, b) in enumerate(self.weights):
            tensors[f"w{i}"] = np.ascontiguousarray(w, np.float32)
            tensors[f"b{i}"] = np.ascontiguousarray(b, np.float32)
        stem.parent.mkdir(parents=True, exist_ok=True)
        write_safetensors(weights_path, save(tensors))
        meta = {
            **self.meta,
            "format": FORMAT,
            "layers": len(self.weights),
            "activation": "tanh",
            "input_size": self.input_size,
            "weights_sha256": file_sha256(weights_path),
        }
        stem.with_suffix(".json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        return weights_path

    @classmethod
    def load(cls, path: str | Path) -> BoardValue:
        """Read a model from its ``.safetensors``, ``.json`` or stem path (no unpickling).

        Every size is checked against the safe format's maxima (:mod:`psygym_agents.safe_model`)
        before anything is read whole, and every weight must be a finite number.

        Raises:
            ValueModelError: a file is missing or too big, or the JSON does not describe the
                weights.
        """
        from psygym_agents.safe_model import MAX_JSON_BYTES, MAX_WEIGHTS_BYTES, file_sha256
        from safetensors.numpy import load_file

        stem = Path(path)
        if stem.suffix in (".safetensors", ".json"):
            stem = stem.with_suffix("")
        weights_path, meta_path = stem.with_suffix(".safetensors"), stem.with_suffix(".json")
        for p, most in ((weights_path, MAX_WEIGHTS_BYTES), (meta_path, MAX_JSON_BYTES)):
            if not p.is_file():
                raise ValueModelError(f"board value {stem}: {p.name} is missing")
            if p.stat().st_size > most:
                raise ValueModelError(
                    f"board value {p}: {p.stat().st_size} bytes; at most {most} bytes"
                )
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError, RecursionError) as exc:
            raise ValueModelError(f"board value {meta_path}: not readable JSON ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ValueModelError(f"board value {meta_path}: format is not {FORMAT!r}")
        if meta.get("weights_sha256") != file_sha256(weights_path):
            raise ValueModelError(
                f"board value {weights_path}: the weights file changed since its JSON was written"
            )
        n, size = _sizes(meta, meta_path)
        try:
            tensors = load_file(str(weights_path))
        except Exception as exc:  # noqa: BLE001 - any malformed file is one clear line
            raise ValueModelError(f"board value {weights_path}: {exc}") from None
        _check_tensors(tensors, n, size, weights_path)
        if "checked" in meta:
            _check_checked(meta["checked"], meta_path)
        weights = [(tensors[f"w{i}"], tensors[f"b{i}"]) for i in range(n)]
        return cls(weights, tensors["mean"], tensors["scale"], meta)


def _sizes(meta: dict[str, Any], path: Path) -> tuple[int, int]:
    """The JSON's ``layers`` (hidden and output) and ``input_size``, checked against the maxima."""
    from psygym_agents.safe_model import MAX_LAYERS, MAX_OBSERVATION_SIZE

    n, size = meta.get("layers"), meta.get("input_size")
    if type(n) is not int or not 1 <= n <= MAX_LAYERS + 1:
        raise ValueModelError(f"board value {path}: layers is {n!r}; 1 to {MAX_LAYERS + 1}")
    if type(size) is not int or not 1 <= size <= MAX_OBSERVATION_SIZE:
        raise ValueModelError(
            f"board value {path}: input_size is {size!r}; 1 to {MAX_OBSERVATION_SIZE}"
        )
    return n, size


def _check_tensors(tensors: dict[str, np.ndarray], n: int, size: int, path: Path) -> None:
    """Check the tensors of an ``n``-layer model reading ``size`` entries.

    Their names, chained shapes (``mean``, ``scale``: ``size``; ``w<i>``: rows by columns;
    ``b<i>``: columns; one output), finite numbers and a ``scale`` without zeros.

    Raises:
        ValueModelError: naming the file and the first tensor that is wrong.
    """
    names = ["mean", "scale"] + [f"{k}{i}" for i in range(n) for k in "wb"]
    missing = [k for k in names if k not in tensors]
    extra = sorted(set(tensors) - set(names))
    if missing or extra:
        what = f"missing tensor {missing[0]}" if missing else f"unexpected tensor {extra[0]}"
        raise ValueModelError(f"board value {path}: {what} for {n} layers")
    expected = {"mean": (size,), "scale": (size,)}
    rows = size
    for i in range(n):
        w = tensors[f"w{i}"]
        cols = 1 if i == n - 1 else (w.shape[-1] if w.ndim == 2 else -1)
        expected[f"w{i}"], expected[f"b{i}"] = (rows, cols), (cols,)
        rows = cols
    for key in names:
        t = tensors[key]
        if t.shape != expected[key]:
            raise ValueModelError(
                f"board value {path}: tensor {key} is {t.shape}, the layers need {expected[key]}"
            )
        if not np.isfinite(t).all():
            raise ValueModelError(f"board value {path}: tensor {key} holds NaN or infinite values")
    if not np.all(tensors["scale"] != 0):
        raise ValueModelError(f"board value {path}: tensor scale holds 0 (the input is divided)")


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


__all__ = [
    "FORMAT",
    "BoardValue",
    "ValueModelError",
    "checked_block",
    "pretrained_value_path",
]
