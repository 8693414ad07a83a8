"""Resolve an agent given by name or path into a :class:`~psygym.core.Policy`.

``psygym`` never imports ``psygym_agents``: names resolve through the ``psygym.agents`` entry-point group
declared in ``pyproject.toml``. An entry point loads either a factory ``f(rules, arg) -> Policy``
registered under the entry point's name, or a mapping ``{name: factory}`` (a collection, as the
built-in ``psygym_agents.registry:AGENTS``). Third-party bots plug in the same way.

Accepted specs: a policy object; ``"name"``; ``"prefix:argument"`` (``"tuned:runs/x/best.json"``,
``"sb3:runs/x/model.zip"``); a path ending in ``.zip`` (a stable-baselines3 model) or ``.json``
(tuned parameters); ``"caster+denier"`` combines a casting and a denying agent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any

from psygym.core import Policy

Factory = Callable[..., Policy]


class UnknownAgentError(ValueError):
    """An agent name no installed entry point provides; the message lists the known names."""


@lru_cache(maxsize=1)
def _factories() -> dict[str, Factory]:
    out: dict[str, Factory] = {}
    for ep in entry_points(group="psygym.agents"):
        obj = ep.load()
        if isinstance(obj, Mapping):
            out.update(obj)
        else:
            out[ep.name] = obj
    return out


def agent_names(rules: Any | None = None) -> list[str]:
    """Names of the installed agents (for ``rules``' edition when given)."""
    factories = _factories()
    if rules is None:
        return sorted(factories)
    names = []
    for name, factory in factories.items():
        supports = getattr(factory, "supports", None)
        if supports is None or supports(rules.edition):
            names.append(name)
    return sorted(names)


def resolve_policy(spec: Any, rules: Any) -> Policy:
    """Turn ``spec`` (a policy, a name or a path) into a policy for ``rules``.

    Raises:
        UnknownAgentError: no installed agent has that name; the message lists the known ones.
    """
    if not isinstance(spec, str):
        if not hasattr(spec, "action_probabilities"):
            raise TypeError(f"{spec!r} is neither an agent name nor a Policy")
        return spec
    if "+" in spec and not spec.endswith((".zip", ".json")):
        caster, denier = spec.split("+", 1)
        return SplitPolicy(resolve_policy(caster, rules), resolve_policy(denier, rules))
    name, arg = spec, None
    if spec.endswith(".zip"):
        name, arg = "sb3", spec.removeprefix("sb3:")
    elif spec.endswith(".json"):
        name, arg = "tuned", spec.removeprefix("tuned:")
    elif ":" in spec:
        name, arg = spec.split(":", 1)
    factories = _factories()
    if name not in factories or name not in agent_names(rules):
        known = ", ".join(agent_names(rules))
        raise UnknownAgentError(
            f"unknown agent {spec!r} for edition {rules.edition}; known agents: {known}; "
            "or a path to a trained model (.zip) or tuned parameters (.json)"
        )
    factory = factories[name]
    return factory(rules, arg) if arg is not None else factory(rules)


class SplitPolicy:
    """One policy for casting and another for responses: the spec ``"double-wc+deny-never"``.

    ``caster`` answers the decisions of the player whose phase it is, ``denier`` the responses
    (denies, nullifies, bids) of the other player, as the rules' ``is_response(state)`` tells.
    """

    def __init__(self, caster: Policy, denier: Policy):
        self.caster, self.denier = caster, denier
        self.name = f"{caster.name}+{denier.name}"

    def action_probabilities(self, rules: Any, state: Any, player: int) -> dict[int, float]:
        """Ask the denier at response decisions and the caster otherwise."""
        part = self.denier if rules.is_response(state) else self.caster
        return part.action_probabilities(rules, state, player)
