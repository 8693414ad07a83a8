"""The editions' rules packages, and ``load(edition, scenario)`` over the edition registry.

Each edition is a package ``psygym.editions.<name>`` declaring ``EDITION``
(:class:`psygym.edition.Edition`); the registry (:mod:`psygym.edition`) finds them through the
``psygym.editions`` entry points. Nothing here names an edition: loading one edition never
imports another's rules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from psygym import edition as registry
from psygym.generator import is_random, random_rules
from psygym.scenario import ScenarioError, read_edition, read_toml, resolve_path


def edition_id(name: str) -> str:
    """Canonical edition id for a name or alias (``"seventh"`` -> ``"7th"``).

    Raises:
        ValueError: unknown edition; the message lists the known ids.
    """
    return registry.get(name).id


def available() -> list[str]:
    """Ids of every known edition, oldest first."""
    return registry.ids()


def scenario_names(edition: str) -> list[str]:
    """Names of the scenarios shipped with an edition."""
    return registry.get(edition).scenario_names()


def load(edition: str, scenario: str | Path = "default", **overrides: Any) -> Any:
    """Build the ``Rules`` of an edition from a shipped scenario name or a TOML path.

    Args:
        edition: edition id or alias (``"7th"``, ``"seventh"``).
        scenario: ``"default"``, a shipped scenario name, a path to a TOML file, or a generated
            scenario ``random:SEED[,psykers=K][,mastery=LO-HI][,rounds=R]``
            (:mod:`psygym.generator`).
        **overrides: top-level ``game`` settings to override (e.g. ``battle_rounds=1``).

    Raises:
        ScenarioError: the file is missing or invalid, or is for another edition; a generated
            scenario's name is malformed.
        ValueError: the edition has no scenario generator.
    """
    ed = registry.get(edition)
    if is_random(scenario):
        return random_rules(ed, str(scenario), **overrides)
    name = ed.default_scenario if str(scenario) == "default" else scenario
    path = resolve_path(name, Path(ed.scenario_dir), ed.id)
    data = read_toml(path)
    found = read_edition(data, str(path))
    if found != ed.id:
        raise ScenarioError(
            str(path), "edition", f"the file is for edition {found!r}, not {ed.id!r}", ed.id
        )
    if overrides:
        data = {**data, "game": {**data.get("game", {}), **overrides}}
    return ed.build_rules(data, str(path))


def load_file(path: str | Path) -> Any:
    """Build ``Rules`` from a scenario file, taking the edition from the file itself."""
    data = read_toml(path)
    return load(read_edition(data, str(path)), path)
