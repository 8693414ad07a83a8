"""Names of the built-in agents, exposed to ``psygym`` through the ``psygym.agents`` entry point.

``AGENTS`` maps a name to a factory ``f(rules, arg=None) -> Policy``. Edition heuristics live in
``psygym_agents.<edition module>.HEURISTICS``; edition-independent agents (``random``, ``optimal``,
``tuned``, ``sb3``) are imported only when asked for, so naming ``random`` never imports torch.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from psygym_agents.base import RandomPolicy

EDITION_MODULES: dict[str, str] = {
    "7th": "psygym_agents.seventh",
    "8th": "psygym_agents.eighth",
    "2nd": "psygym_agents.second",
    "rt": "psygym_agents.rogue_trader",
}
"""Edition id -> module whose ``HEURISTICS`` dict holds that edition's heuristics."""

GENERIC: dict[str, str] = {
    "optimal": "psygym_agents.solvers.policy:make_optimal",
    "tuned": "psygym_agents.parametric:make_tuned",
    "sb3": "psygym_agents.sb3:make_sb3",
}
"""Edition-independent agents: name -> ``module:factory`` (imported lazily)."""


def _heuristics(edition: str) -> dict[str, Callable[..., Any]]:
    mod = EDITION_MODULES.get(edition)
    if mod is None or importlib.util.find_spec(mod) is None:
        return {}
    return dict(importlib.import_module(mod).HEURISTICS)


def _load(target: str) -> Callable[..., Any]:
    mod, attr = target.split(":")
    return getattr(importlib.import_module(mod), attr)


class _Factory:
    """Factory for one agent name; knows which editions have it."""

    def __init__(self, name: str):
        self.name = name

    def supports(self, edition: str) -> bool:
        """Whether ``edition`` has an agent of this name."""
        if self.name == "random" or self.name in GENERIC:
            return (
                self.name == "random"
                or importlib.util.find_spec(GENERIC[self.name].split(":")[0]) is not None
            )
        return self.name in _heuristics(edition)

    def __call__(self, rules: Any, arg: str | None = None) -> Any:
        if self.name == "random":
            return RandomPolicy()
        if self.name in GENERIC:
            factory = _load(GENERIC[self.name])
            return factory(rules, arg) if arg is not None else factory(rules)
        table = _heuristics(rules.edition)
        if self.name not in table:
            raise ValueError(f"no agent {self.name!r} for edition {rules.edition}")
        return table[self.name](rules) if arg is None else table[self.name](rules, arg)


def all_names() -> list[str]:
    """Every built-in agent name across editions."""
    names = {"random", *GENERIC}
    for edition in EDITION_MODULES:
        names.update(_heuristics(edition))
    return sorted(names)


def make(name: str, rules: Any) -> Any:
    """Build an agent by name or path for ``rules`` (see ``psygym.policies.resolve_policy``)."""
    from psygym.policies import resolve_policy

    return resolve_policy(name, rules)


class _Agents(Mapping[str, _Factory]):
    """Lazy mapping of every built-in agent name to its factory."""

    def __getitem__(self, name: str) -> _Factory:
        if name not in all_names():
            raise KeyError(name)
        return _Factory(name)

    def __iter__(self) -> Iterator[str]:
        return iter(all_names())

    def __len__(self) -> int:
        return len(all_names())


AGENTS = _Agents()
