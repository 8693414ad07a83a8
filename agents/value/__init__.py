"""Learned values of the board (:mod:`.model`) for the ``search`` agent's lookahead edge."""

from __future__ import annotations

from psygym_agents.value.model import (
    FORMAT,
    BoardValue,
    ValueModelError,
    pretrained_value_path,
    shipped_value,
)

__all__ = ["FORMAT", "BoardValue", "ValueModelError", "pretrained_value_path", "shipped_value"]
