"""Which seats an agent plays: a model trained for one seat plays, and is scored, only there.

The one source for every command. A trained model's seats are in its JSON (``seat``: 0, 1 or
``"both"``, or ``seats``; :func:`model_seats`); any other agent plays both. ``compare`` scores a
model only on its seats, and a spec holding ``{seat}`` (:data:`SEAT_FIELD`) names one agent per
seat, such as ``agents/pretrained/7th-duel-seat{seat}.safetensors`` (``evaluate --until-clear``,
``mistakes``, ``play``, ``simulate``). :func:`check_plays` refuses a model in a seat it was not
trained for, in one line that the command completes with what to do instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

SEAT_FIELD = "{seat}"
"""In an agent spec, replaced by the seat it plays (models trained for one seat only:
``agents/pretrained/7th-duel-seat{seat}.safetensors``)."""

BOTH = (0, 1)
"""The seats of an agent that is not limited to one."""

MODEL_PREFIX = "sb3:"
"""How a trained model's spec (and the name of its loaded agent) starts."""


def seat_spec(spec: str, seat: int) -> str:
    """``spec`` for an agent playing ``seat`` (see :data:`SEAT_FIELD`)."""
    return spec.replace(SEAT_FIELD, str(seat))


def model_seats(spec: str) -> tuple[int, ...]:
    """The seats a PPO model was trained for, from its JSON metadata (``seat`` or ``seats``).

    ``spec`` is the model's path, with or without ``sb3:``: its ``.safetensors`` file, stem or
    run folder, or an SB3 ``.zip``. A model without metadata counts as trained for both seats.

    Raises:
        ValueError: the JSON records a seat other than 0, 1 or ``"both"``.
    """
    try:
        from psygym_agents.safe_model import is_safe_model, safe_paths
        from psygym_agents.sb3 import read_metadata
    except ImportError:
        return BOTH
    path: str | Path = spec.removeprefix(MODEL_PREFIX)
    if Path(path).suffix != ".zip" and is_safe_model(path):
        path = safe_paths(path)[0]  # a stem or run folder: the JSON beside its weights
    meta = read_metadata(path)
    seats = meta.get("seats")
    if seats is None and meta.get("seat") is not None:
        seat = meta["seat"]
        seats = list(BOTH) if str(seat) == "both" else [int(seat)]
    return tuple(sorted({int(x) for x in seats})) if seats else BOTH


def policy_seats(policy: Any) -> tuple[int, ...]:
    """The seats a loaded agent may play.

    A trained model's (its name is its ``sb3:`` spec, see :func:`model_seats`); for a split agent
    (``caster+denier``) the seats both parts may play; both seats for any other agent.
    """
    parts = [getattr(policy, "caster", None), getattr(policy, "denier", None)]
    if all(p is not None for p in parts):
        first, second = (policy_seats(p) for p in parts)
        return tuple(s for s in first if s in second)
    name = getattr(policy, "name", "")
    if isinstance(name, str) and name.startswith(MODEL_PREFIX):
        return model_seats(name)
    return BOTH


def seats_text(seats: Sequence[int]) -> str:
    """``"seat 0"``, ``"both seats"`` or ``"no seat"``, for messages."""
    if tuple(seats) == BOTH:
        return "both seats"
    return "seat " + " and ".join(map(str, seats)) if seats else "no seat"


def check_plays(policy: Any, seat: int, what: str, instead: str = "") -> None:
    """Refuse ``policy`` in ``seat`` when it is a model trained for the other seat only.

    Args:
        policy: the loaded agent.
        seat: the seat it would play.
        what: how the message names it (an option and the spec given).
        instead: what to do instead, ending the message after a colon.

    Raises:
        ValueError: one line naming the seat it was trained for and the one it would play.
    """
    seats = policy_seats(policy)
    if seat in seats:
        return
    tail = f": {instead}" if instead else ""
    raise ValueError(
        f"{what} is a model trained for {seats_text(seats)} only, and a model plays only the "
        f"seat it was trained for, not seat {seat}{tail}"
    )


__all__ = [
    "BOTH", "MODEL_PREFIX", "SEAT_FIELD", "check_plays", "model_seats", "policy_seats",
    "seat_spec", "seats_text",
]  # fmt: skip
