"""The edition-independent built-in agents, exposed through the ``psygym.agents`` entry point.

``AGENTS`` maps a name to a factory ``f(rules, arg=None) -> Policy``: ``random``, ``optimal``,
``search``, ``tuned`` and ``sb3``. They are imported only when asked for, so naming ``random``
never imports torch. Each edition's heuristics are declared by its own ``BOTS`` manifest
(``psygym_agents.<edition>``), a separate entry point.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from psygym_agents.base import RandomPolicy

GENERIC: dict[str, tuple[str, str]] = {
    "random": ("psygym_agents.base:RandomPolicy", "chooses uniformly among the legal actions"),
    "optimal": (
        "psygym_agents.solvers.policy:make_optimal",
        "the exact solver where the game can be solved; otherwise says so and searches",
    ),
    "search": (
        "psygym_agents.solvers.search:make_search",
        "solves each cast (or turn) exactly and values the board beyond it with a learned "
        "value; an information-set search where hands are hidden",
    ),
    "tuned": (
        "psygym_agents.parametric:make_tuned",
        "the edition's parametric family with parameters found by psygym tune",
    ),
    "sb3": ("psygym_agents.sb3:make_sb3", "a trained stable-baselines3 model"),
}
"""Edition-independent agents: name -> (``module:factory``, one-sentence description)."""


def _load(target: str) -> Callable[..., Any]:
    mod, attr = target.split(":")
    return getattr(importlib.import_module(mod), attr)


class _Factory:
    """Factory for one generic agent name (imports its module on first call)."""

    def __init__(self, name: str):
        self.name = name
        self.description = GENERIC[name][1]

    def supports(self, rules: Any) -> bool:
        """Whether this agent can play ``rules`` (every generic agent can)."""
        return True

    def __call__(self, rules: Any, arg: str | None = None) -> Any:
        if self.name == "random":
            return RandomPolicy()
        factory = _load(GENERIC[self.name][0])
        return factory(rules, arg) if arg is not None else factory(rules)


def make(name: str, rules: Any) -> Any:
    """Build an agent by name or path for ``rules`` (see ``psygym.policies.resolve_policy``)."""
    from psygym.policies import resolve_policy

    return resolve_policy(name, rules)


class _Agents(Mapping[str, _Factory]):
    """Lazy mapping of every generic agent name to its factory."""

    def __getitem__(self, name: str) -> _Factory:
        if name not in GENERIC:
            raise KeyError(name)
        return _Factory(name)

    def __iter__(self) -> Iterator[str]:
        return iter(GENERIC)

    def __len__(self) -> int:
        return len(GENERIC)


AGENTS = _Agents()
