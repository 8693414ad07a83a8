"""Registry of the editions: ids, aliases and ``load(edition, scenario)``.

Each edition is a package ``psygym.editions.<name>`` exposing ``EDITION`` (its id),
``DEFAULT_SCENARIO``, ``SCENARIO_DIR`` and ``rules_from_data(data, source) -> Rules``. Edition
packages are imported lazily, so loading one edition never imports another.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

from psygym.scenario import ScenarioError, read_edition, read_toml, resolve_path

MODULES: dict[str, str] = {
    "rt": "psygym.editions.rogue_trader",
    "2nd": "psygym.editions.second",
    "7th": "psygym.editions.seventh",
    "8th": "psygym.editions.eighth",
}
"""Edition id -> module path, oldest edition first."""

ALIASES: dict[str, str] = {
    "1st": "rt", "rogue-trader": "rt", "rogue_trader": "rt", "roguetrader": "rt", "1": "rt",
    "2": "2nd", "second": "2nd", "7": "7th", "seventh": "7th", "8": "8th", "eighth": "8th",
}  # fmt: skip


def edition_id(name: str) -> str:
    """Canonical edition id for a name or alias (``"seventh"`` -> ``"7th"``).

    Raises:
        ValueError: unknown edition; the message lists the known ids.
    """
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in MODULES:
        raise ValueError(f"unknown edition {name!r}; known editions: {', '.join(available())}")
    return key


def available() -> list[str]:
    """Edition ids whose rules package is installed."""
    out = []
    for eid, mod in MODULES.items():
        if importlib.util.find_spec(mod) is not None:
            out.append(eid)
    return out


def module(edition: str) -> ModuleType:
    """The rules package of an edition."""
    return importlib.import_module(MODULES[edition_id(edition)])


def scenario_names(edition: str) -> list[str]:
    """Names of the scenarios shipped with an edition."""
    return sorted(p.stem for p in Path(module(edition).SCENARIO_DIR).glob("*.toml"))


def load(edition: str, scenario: str | Path = "default", **overrides: Any) -> Any:
    """Build the ``Rules`` of an edition from a shipped scenario name or a TOML path.

    Args:
        edition: edition id or alias (``"7th"``, ``"8th"``, ``"2nd"``, ``"rt"``).
        scenario: ``"default"``, a shipped scenario name, or a path to a TOML file.
        **overrides: top-level ``game`` settings to override (e.g. ``battle_rounds=1``).

    Raises:
        ScenarioError: the file is missing or invalid, or is for another edition.
    """
    eid = edition_id(edition)
    mod = module(eid)
    name = mod.DEFAULT_SCENARIO if str(scenario) == "default" else scenario
    path = resolve_path(name, Path(mod.SCENARIO_DIR), eid)
    data = read_toml(path)
    found = read_edition(data, str(path))
    if found != eid:
        raise ScenarioError(
            str(path), "edition", f"the file is for edition {found!r}, not {eid!r}", eid
        )
    if overrides:
        data = {**data, "game": {**data.get("game", {}), **overrides}}
    return mod.rules_from_data(data, str(path))


def load_file(path: str | Path) -> Any:
    """Build ``Rules`` from a scenario file, taking the edition from the file itself."""
    data = read_toml(path)
    return load(read_edition(data, str(path)), path)
