"""One board value per edition: an MLP over the edition's board features, for any army list.

A general value is an ordinary :class:`~psygym_agents.value.model.BoardValue` file whose input
is the edition's board features (:mod:`psygym_agents.value.features`) instead of one
scenario's observation; its JSON says so with ``"reads": "board-features"`` and lists the
features' names. :func:`compose` folds a scenario's feature map into the first layer, which
gives a board value over that scenario's observation: the same numbers, evaluated by the same
code (the compiled search's ``ValueNet`` included).

Shipped as ``agents/pretrained/value-<edition>.safetensors`` + ``.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from psygym_agents.value.features import BoardFeatures, board_features
from psygym_agents.value.model import (
    PRETRAINED,
    BoardValue,
    ValueModelError,
    pretrained_value_path,
)

from psygym.per_rules import memo_per_rules

READS = "board-features"
"""The ``"reads"`` key of a general value's JSON."""


def is_general(model: BoardValue) -> bool:
    """Whether ``model`` reads board features (a general value) rather than an observation."""
    return model.meta.get("reads") == READS


def compose(model: BoardValue, features: BoardFeatures, scenario: str = "") -> BoardValue:
    """``model`` (over board features) as a board value over the scenario's observation.

    With ``phi = obs @ M + c`` and the model's first layer reading ``(phi - mean) / scale``,
    the composed first layer is ``obs @ (M / scale) @ W0 + ((c - mean) / scale) @ W0 + b0``
    with no input scaling of its own.

    Raises:
        ValueModelError: the model lists other features than the map gives.
    """
    names = tuple(model.meta.get("features", ()))
    if names != features.names:
        at = next((k for k, (a, b) in enumerate(zip(names, features.names)) if a != b),
                  min(len(names), len(features.names)))  # fmt: skip
        raise ValueModelError(
            f"board value of {model.meta.get('edition', '?')} reads {len(names)} features, "
            f"this edition's board features are {len(features.names)}; they part at feature "
            f"{at}: {list(names[at : at + 2])} against {list(features.names[at : at + 2])} "
            "(retrain the value, or use the version of psygym it was trained with)"
        )
    (w0, b0), *rest = model.weights
    scaled = features.matrix / model.scale
    first = (scaled @ w0, b0 + ((features.offset - model.mean) / model.scale) @ w0)
    size = features.matrix.shape[0]
    meta = {**model.meta, "scenario": scenario, "reads": "observation", "general": True}
    return BoardValue([first, *rest], np.zeros(size), np.ones(size), meta)


def general_value_path(edition: str) -> Path:
    """Where the shipped general value of ``edition`` lives (it may not exist)."""
    return PRETRAINED / f"value-{edition}.safetensors"


def general_value(rules: Any, path: str | Path | None = None) -> BoardValue | None:
    """The general value (shipped, or at ``path``) composed for ``rules``' scenario, or ``None``.

    ``None`` when no path is given and the edition ships none, or its agents declare no board
    features.

    Raises:
        ValueModelError: the file cannot be used for ``rules``.
    """
    if path is None:
        path = general_value_path(rules.edition)
        if not path.is_file():
            return None
    model = BoardValue.load(path)
    if not is_general(model):
        raise ValueModelError(f"board value {path}: not a general value (it reads observations)")
    return _composed(model, rules, path)


def _composed(model: BoardValue, rules: Any, path: str | Path) -> BoardValue | None:
    """General ``model`` (read from ``path``) composed for ``rules``; ``None``: no features.

    Raises:
        ValueModelError: the model is of another edition.
    """
    if model.meta.get("edition") != rules.edition:
        raise ValueModelError(
            f"board value {path} is of edition {model.meta.get('edition')}, not {rules.edition}"
        )
    features = board_features(rules)
    if features is None:
        return None
    composed = compose(model, features, getattr(rules.scenario, "name", ""))
    composed.check_rules(rules)
    return composed


@memo_per_rules
def shipped_value(rules: Any) -> BoardValue | None:
    """The shipped board value for ``rules``: its scenario's own, else the edition's general one.

    ``None`` when neither exists. One object per rules object, read once: a search built again
    for the same game (a hint at each click) reuses the phase search kept for its value
    (:func:`~psygym_agents.solvers.search.phase_solver` keeps one per value and budget) instead
    of keeping one more each time.
    """
    scenario = getattr(getattr(rules, "scenario", None), "name", "")
    path = pretrained_value_path(rules.edition, scenario)
    return load_value(rules, path) if path.is_file() else general_value(rules)


def load_value(rules: Any, path: str | Path) -> BoardValue:
    """The board value at ``path`` for ``rules``: a scenario's own, or a general one composed.

    Raises:
        ValueModelError: the file cannot be used for ``rules``.
    """
    model = BoardValue.load(path)
    if is_general(model):
        composed = _composed(model, rules, path)
        if composed is None:
            raise ValueModelError(f"edition {rules.edition} declares no board features")
        return composed
    model.check_rules(rules)
    return model


__all__ = [
    "READS",
    "compose",
    "general_value",
    "general_value_path",
    "is_general",
    "load_value",
    "shipped_value",
]
