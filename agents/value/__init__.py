"""Learned values of the board (:mod:`.model`) for the ``search`` agent's lookahead edge."""

from __future__ import annotations

from psygym_agents.value.general import general_value, load_value, shipped_value
from psygym_agents.value.model import (
    FORMAT,
    BoardValue,
    ValueModelError,
    pretrained_value_path,
)

__all__ = [
    "FORMAT", "BoardValue", "ValueModelError", "general_value", "load_value",
    "pretrained_value_path", "shipped_value",
]  # fmt: skip
