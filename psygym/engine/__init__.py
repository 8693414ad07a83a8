"""The compiled engine: which engine runs, and the compiled twin of a rules object.

Every edition has a pure-Python reference (its ``rules.py``); an edition may also have a
compiled twin in its own ``engine/`` folder, C++ registered in ``psygym.engine._core`` under
the edition's id, with a Python codec that encodes a scenario as numbers and a state as bytes
(:class:`Codec`). Python loads and validates the scenario, then hands the numbers to the core;
the core never parses text.

``PSYGYM_ENGINE`` chooses: ``core`` (the default where the core is built) or ``python`` (the
reference everywhere, so any result can be checked against it). Where the core is not built
(no C++17 compiler at install time) everything runs on the reference.
"""

from __future__ import annotations

import os
from typing import Any, Protocol

from psygym.per_rules import PerRules

ENGINE_VARIABLE = "PSYGYM_ENGINE"
"""Environment variable choosing the engine."""
ENGINES = ("core", "python")
"""Its allowed values."""


class Codec(Protocol):
    """What an edition's ``engine`` package provides for its compiled twin.

    A codec whose state layout depends on more of the scenario than a state says also has
    ``bind(rules)``: the codec of that scenario's states, which the compiled game holds.

    Attributes:
        game_id: the id its C++ registers (the edition's id).
    """

    game_id: str

    def encode_scenario(self, rules: Any) -> tuple[list[int], list[float]]:
        """The scenario of ``rules`` as flat numbers (ScenarioError past a compiled limit)."""

    def encode(self, state: Any) -> bytes:
        """A reference state as the twin's state bytes."""

    def decode(self, data: bytes) -> Any:
        """The twin's state bytes as the reference state (equal to the one encoded)."""


def requested_engine() -> str:
    """The engine ``PSYGYM_ENGINE`` asks for (``core`` when unset).

    Raises:
        ValueError: the variable holds something else, in one line naming what is allowed.
    """
    value = os.environ.get(ENGINE_VARIABLE, "core").strip().lower() or "core"
    if value not in ENGINES:
        raise ValueError(
            f"{ENGINE_VARIABLE}={os.environ.get(ENGINE_VARIABLE)!r} is not an engine "
            f"(allowed: {', '.join(ENGINES)})"
        )
    return value


CORE_DIR_VARIABLE = "PSYGYM_CORE_DIR"
"""Environment variable naming a folder whose ``_core`` build replaces the installed one (a
development or sanitizer build); setting it is the opt-in to load that file."""
_LOADED: dict[str, Any] = {}


def core_module() -> Any | None:
    """The compiled module, or ``None`` where it was not built (or Python is asked for)."""
    if requested_engine() == "python":
        return None
    where = os.environ.get(CORE_DIR_VARIABLE, "")
    if where not in _LOADED:
        _LOADED[where] = _load_core(where)
    return _LOADED[where]


def _load_core(where: str) -> Any | None:
    """Import the installed core, or the build in folder ``where``."""
    if not where:
        try:
            from psygym.engine import _core
        except ImportError:
            return None
        return _core
    import importlib.util
    import sys
    from pathlib import Path

    found = sorted(Path(where).glob("_core*.so")) + sorted(Path(where).glob("_core*.pyd"))
    if not found:
        raise ValueError(f"{CORE_DIR_VARIABLE}={where}: no _core build in that folder")
    spec = importlib.util.spec_from_file_location("psygym.engine._core", found[0])
    module = importlib.util.module_from_spec(spec)
    sys.modules["psygym.engine._core"] = module
    spec.loader.exec_module(module)
    return module


def engine_name() -> str:
    """``core`` or ``python``: what runs the editions that have a compiled twin."""
    return "core" if core_module() is not None else "python"


def compiled_game(rules: Any) -> Any | None:
    """The compiled twin of ``rules`` (built once, kept for the rules used last), or ``None``.

    ``None`` where the reference runs: ``PSYGYM_ENGINE=python``, no core built, an edition
    without a twin, or rules of a subclass that changes the reference's behaviour.
    """
    core = core_module()
    if core is None:
        return None
    # Kept beside the rules, not in them: a rules object still pickles (to worker processes)
    # as before, and the core's objects do not pickle.
    built = _BUILT.setdefault(rules, {})
    if id(core) not in built:
        from psygym.engine.compiled import build_compiled

        built[id(core)] = build_compiled(rules, core)
    return built[id(core)]


_BUILT: PerRules[dict[int, Any]] = PerRules()
"""Rules object -> {id of the core module: its compiled twin or None}, for the rules objects
used most recently (a twin holds its rules, so a weak key would keep them for good)."""


__all__ = [
    "CORE_DIR_VARIABLE",
    "ENGINES",
    "ENGINE_VARIABLE",
    "Codec",
    "compiled_game",
    "core_module",
    "engine_name",
    "requested_engine",
]
