"""Naming a single state for ``psygym advise``, in any edition: a replayed game or a state file.

- :func:`replay`: the state after a list of actions (decisions and chance outcomes alike, as
  ``psygym`` replays record them) from the initial state.
- :func:`load_state_file`: a JSON state file::

      {"edition": "<edition id>", "scenario": "single-phase", "actions": [0, 5, 9]}
      {"edition": "<edition id>", "scenario": "single-phase", "situation": "dice=7,enemy_dice=4"}

  ``edition`` and ``scenario`` are optional (the command's options decide). A ``situation`` is
  read by the edition's own ``situation`` tool (its ``BOTS.tools``).
- :func:`first_decision`: the first decision from a state, taking the likeliest chance outcomes.
- :func:`key_values`: the compact ``key=value,key=value`` form every edition's situations read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable
from pathlib import Path
from typing import Any

from psygym.core import TERMINAL


def key_values(text: str) -> dict[str, str]:
    """``"dice=7,powers=Smite;Psychic Maelstrom"`` -> ``{"dice": "7", "powers": "Smite;..."}``.

    Pairs are separated by commas; a comma not followed by ``key=`` belongs to the value.

    Raises:
        ValueError: a part is not ``key=value``.
    """
    out: dict[str, str] = {}
    for part in re.split(r",(?=\s*[A-Za-z_][\w-]*\s*=)", text.strip()):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"--situation: {part.strip()!r} is not key=value")
        out[key.strip()] = value.strip()
    return out


def check_options(
    options: Any,
    keys: tuple[str, ...],
    whole: tuple[str, ...],
    *,
    unknown: str,
    minimum: int | None = None,
) -> dict[str, Any]:
    """An edition's situation options checked: known keys, whole numbers, ``None`` dropped.

    Args:
        options: key -> value (``-`` in a key counts as ``_``).
        keys: the keys the edition knows.
        whole: the keys whose values are whole numbers (strings are converted).
        unknown: the message for an unknown key, with ``{key}`` and ``{known}`` fields.
        minimum: the least whole number allowed, if any.

    Raises:
        ValueError: an unknown key, or a value of ``whole`` that is not a whole number (or is
            below ``minimum``).
    """
    out: dict[str, Any] = {}
    for key, value in options.items():
        key = key.replace("-", "_")
        if key not in keys:
            raise ValueError(unknown.format(key=repr(key), known=", ".join(keys)))
        if value is None:
            continue
        if key in whole:
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise ValueError(
                    f"situation: {key} must be a whole number, got {value!r}"
                ) from None
            if minimum is not None and value < minimum:
                raise ValueError(f"situation: {key} must be {minimum} or more, got {value}")
        out[key] = value
    return out


def replay(rules: Any, actions: list[int]) -> Hashable:
    """The state after ``actions`` (decisions and chance outcomes) from the initial state.

    Raises:
        ValueError: an action is not legal where it is played (the message lists the legal
            ones and the step).
    """
    s = rules.initial_state()
    for i, a in enumerate(actions):
        if rules.current_player(s) == TERMINAL:
            raise ValueError(f"state file: the game is over after {i} actions")
        try:
            s = rules.apply(s, int(a))
        except ValueError as exc:
            raise ValueError(f"state file: step {i}: {exc}") from None
    return s


def load_state_file(path: str | Path) -> dict[str, Any]:
    """Read a state file (see the module docstring).

    Returns:
        ``{"edition": str | None, "scenario": str | None, "actions": list[int] | None,
        "situation": dict | str | None}``; the situation is as written (the edition's
        ``situation`` tool reads it).

    Raises:
        ValueError: not JSON, not an object, or without ``actions`` or ``situation``.
        FileNotFoundError: no such file.
    """
    p = Path(path)
    try:
        doc = json.loads(p.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{p}: a state file holds a JSON object")
    unknown = set(doc) - {"edition", "scenario", "actions", "situation"}
    if unknown:
        raise ValueError(
            f"{p}: unknown keys {sorted(unknown)}; allowed: edition, scenario, actions, situation"
        )
    actions, situation = doc.get("actions"), doc.get("situation")
    if (actions is None) == (situation is None):
        raise ValueError(
            f"{p}: give exactly one of 'actions' (a list of action numbers) or "
            "'situation' (for an edition whose agents build situations)"
        )
    if actions is not None and not (
        isinstance(actions, list)
        and all(isinstance(a, int) and not isinstance(a, bool) for a in actions)
    ):
        raise ValueError(f"{p}: 'actions' must be a list of whole numbers")
    if situation is not None and not isinstance(situation, (str, dict)):
        raise ValueError(f"{p}: 'situation' must be an object or a text description")
    return {
        "edition": doc.get("edition"),
        "scenario": doc.get("scenario"),
        "actions": actions,
        "situation": situation,
    }


def first_decision(rules: Any, state: Hashable | None = None) -> Hashable:
    """The first decision node from ``state``, taking the most likely outcome at chance nodes.

    Ties go to the middle one of the tied outcomes (a D6 roll: 4).

    Raises:
        ValueError: the game ends before any decision.
    """
    s = rules.initial_state() if state is None else state
    while True:
        player = rules.current_player(s)
        if player >= 0:
            return s
        if player == TERMINAL:
            raise ValueError("the game ends before any decision")
        outcomes = rules.chance_outcomes(s)
        best = max(p for _, p in outcomes)
        tied = [o for o, p in outcomes if p >= best - 1e-12]
        s = rules.apply(s, tied[len(tied) // 2])


__all__ = ["key_values", "first_decision", "load_state_file", "replay"]
