"""Editions as plug-ins: the :class:`Edition` declaration and the registry every layer reads.

Each edition package declares ``EDITION = Edition(...)`` in its ``__init__.py``: its id and
aliases, title, Gymnasium id, information kind, scenario folder and default scenario, the factory
of its rules and its odds tables. Nothing outside the edition's own folders names an edition id:
every table keyed by edition is derived from these declarations.

Editions are found through the entry-point group ``psygym.editions`` (the shipped ones are
declared in ``pyproject.toml`` like any third-party edition), and :func:`register` adds one at
run time (a test's toy edition, a notebook's variant). Declarations are light: an edition's
rules module is imported only when its rules are built.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from psygym.core import Information


def resolve(target: str | Callable[..., Any]) -> Callable[..., Any]:
    """A callable given directly or as ``"module:attribute"`` (imported on first use)."""
    if callable(target):
        return target
    module, _, attr = str(target).partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class Edition:
    """The declaration of one edition: everything the layers above need to know about it.

    Attributes:
        id: canonical id (``"7th"``), used in scenario files, run folders and reports.
        title: name for people (``"7th edition"``).
        env_id: Gymnasium id registered for it (``"psygym/Seventh-v0"``).
        information: what its players see of each other (:class:`~psygym.core.Information`).
        scenario_dir: folder of its shipped scenarios (``*.toml``).
        default_scenario: the scenario ``"default"`` means.
        rules: ``f(data, source) -> Rules`` building its rules from a scenario's validated
            TOML data, or ``"module:function"`` naming it.
        aliases: other names accepted for ``id`` (``"seventh"``, ``"7"``).
        odds: odds table name -> ``f(**options) -> Table`` (or ``"module:function"``), one
            table each; the first is the default of ``psygym odds``.
        summary: one line on what its psychic phase is, for listings.
        solvable_scenarios: shipped scenarios small enough to solve exactly in seconds.
        default: whether commands use this edition when none is named (one edition says so).
        engine: ``"module:attribute"`` of the codec of its compiled twin
            (:class:`psygym.engine.Codec`), or ``None``: the edition runs on its Python rules.
        generator: ``f(seed, options) -> data`` generating a random scenario from the edition's
            own data (:mod:`psygym.generator`), or ``"module:function"`` naming it, or ``None``:
            ``psygym scenario random`` and ``random:SEED`` scenarios are not offered.
    """

    id: str
    title: str
    env_id: str
    information: Information
    scenario_dir: Path
    default_scenario: str
    rules: str | Callable[..., Any]
    aliases: tuple[str, ...] = ()
    odds: Mapping[str, str | Callable[..., Any]] = field(default_factory=dict)
    summary: str = ""
    solvable_scenarios: tuple[str, ...] = ()
    default: bool = False
    engine: str | None = None
    generator: str | Callable[..., Any] | None = None

    @property
    def env_version(self) -> int:
        """The version number of :attr:`env_id` (``"psygym/Seventh-v0"`` -> 0)."""
        return int(self.env_id.rsplit("-v", 1)[1])

    @property
    def hidden_information(self) -> bool:
        """Whether some of the state is private to one player (exact search does not apply)."""
        return self.information == Information.HIDDEN

    def scenario_names(self) -> list[str]:
        """Names of the shipped scenarios, sorted."""
        return sorted(p.stem for p in Path(self.scenario_dir).glob("*.toml"))

    def build_rules(self, data: dict[str, Any], source: str) -> Any:
        """Validate a scenario's data and build this edition's rules."""
        return resolve(self.rules)(data, source)

    def odds_table(self, table: str | None = None, **options: Any) -> Any:
        """The one odds table named ``table`` (default: the first declared).

        ``options`` (``max_dice=6``, ...) go to the table's function when it takes them; the
        others are ignored, so one command line serves every edition.

        Raises:
            ValueError: the edition has no such table; the message lists its tables.
        """
        if not self.odds:
            raise ValueError(f"edition {self.id} has no odds tables")
        name = table or next(iter(self.odds))
        if name not in self.odds:
            raise ValueError(
                f"edition {self.id} has no odds table {name!r}; tables: {', '.join(self.odds)}"
            )
        fn = resolve(self.odds[name])
        accepted = inspect.signature(fn).parameters
        return fn(**{k: v for k, v in options.items() if k in accepted})


class _Registry:
    """Editions by id, from the ``psygym.editions`` entry points and :func:`register`."""

    def __init__(self) -> None:
        self._added: dict[str, Edition] = {}

    @cached_property
    def _installed(self) -> dict[str, Edition]:
        found: dict[str, Edition] = {}
        for ep in entry_points(group="psygym.editions"):
            edition = ep.load()
            if not isinstance(edition, Edition):
                raise TypeError(f"entry point {ep.name} ({ep.value}) is not an Edition")
            found[edition.id] = edition
        return found

    def all(self) -> dict[str, Edition]:
        return {**self._installed, **self._added}

    def add(self, edition: Edition) -> None:
        self._added[edition.id] = edition

    def remove(self, edition_id: str) -> None:
        self._added.pop(edition_id, None)


_REGISTRY = _Registry()


def register(edition: Edition) -> Edition:
    """Add an edition at run time (it then shows in every command); returns it."""
    _REGISTRY.add(edition)
    return edition


def unregister(edition_id: str) -> None:
    """Remove an edition added with :func:`register` (installed ones stay)."""
    _REGISTRY.remove(edition_id)


def editions() -> list[Edition]:
    """Every known edition, oldest first as the shipped ids sort, then any others."""
    return sorted(_REGISTRY.all().values(), key=lambda e: _sort_key(e.id))


def _sort_key(edition_id: str) -> tuple[int, str]:
    digits = "".join(ch for ch in edition_id if ch.isdigit())
    return (int(digits) if digits else 1, edition_id)


def ids() -> list[str]:
    """The ids of every known edition, in :func:`editions` order."""
    return [e.id for e in editions()]


def aliases() -> dict[str, str]:
    """Every accepted name (ids and aliases, lower case) -> edition id."""
    out: dict[str, str] = {}
    for e in editions():
        out[e.id.lower()] = e.id
        for alias in e.aliases:
            out[alias.lower()] = e.id
    return out


def get(name: str | Edition) -> Edition:
    """The edition with this id or alias.

    Raises:
        ValueError: no such edition; the message lists the known ids.
    """
    if isinstance(name, Edition):
        return name
    key = str(name).strip().lower()
    table = aliases()
    if key not in table:
        raise ValueError(f"unknown edition {name!r}; known editions: {', '.join(ids())}")
    return _REGISTRY.all()[table[key]]


def default() -> Edition:
    """The edition commands use when none is named: the one declared ``default``, else the first.

    Raises:
        ValueError: no edition is installed.
    """
    known = editions()
    if not known:
        raise ValueError("no psygym edition is installed")
    return next((e for e in known if e.default), known[0])


def edition_of(rules: Any) -> Edition:
    """The declaration of the edition a ``Rules`` object belongs to."""
    return get(rules.edition)


__all__ = [
    "Edition", "aliases", "default", "edition_of", "editions", "get", "ids", "register", "resolve",
    "unregister",
]  # fmt: skip
