"""Resolve an agent given by name or path into a :class:`~psygym.core.Policy`.

``psygym`` never imports ``psygym_agents``: names resolve through the ``psygym.agents``
entry-point group declared in ``pyproject.toml``. An entry point loads one of:

- a :class:`Bots` manifest: one edition's agents (its heuristics with one-sentence
  descriptions, the reference heuristic, its parametric family and edition-only tools), as each
  ``psygym_agents.<edition>:BOTS`` declares;
- a mapping ``{name: factory}`` of edition-independent agents (``psygym_agents.registry:AGENTS``);
- a single factory ``f(rules, arg) -> Policy`` registered under the entry point's name.

Third-party bots plug in the same way, or at run time with :func:`register_bots`.

Accepted specs: a policy object; ``"name"``; ``"prefix:argument"`` (``"tuned:runs/x/best.json"``,
``"sb3:runs/x/model.safetensors"``); a path ending in ``.safetensors`` (a model in psygym's safe
format), ``.zip`` (a stable-baselines3 archive, loaded only when pickles are trusted) or ``.json``
(tuned parameters); ``"caster+denier"`` combines a casting and a denying agent.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any

from psygym.core import Policy, restart_policies

Factory = Callable[..., Policy]


class UnknownAgentError(ValueError):
    """An agent name no installed entry point provides; the message lists the known names.

    ``known`` holds them, so a command that accepts more names can list those too.
    """

    def __init__(self, spec: str, edition: str, known: list[str]):
        self.spec, self.edition, self.known = spec, edition, list(known)
        super().__init__(
            f"unknown agent {spec!r} for edition {edition}; known agents: {', '.join(known)}; "
            "or a path to a trained model (.safetensors) or tuned parameters (.json)"
        )

    def __reduce__(self) -> tuple[Any, tuple[str, str, list[str]]]:
        return (type(self), (self.spec, self.edition, self.known))  # workers send it back


@dataclass(frozen=True)
class Bots:
    """One edition's agents, declared once in ``psygym_agents.<edition>`` as ``BOTS``.

    Attributes:
        edition: the edition id they play.
        heuristics: name -> factory ``f(rules, arg=None) -> Policy``, in listing order.
        descriptions: name -> one sentence on how that heuristic plays.
        reference: the heuristic to measure others against and to roll out with in searches
            (it reads only what its player observes).
        family: the parametric family ``psygym tune --target parametric`` searches, if any.
        tools: edition-only helpers by name (advise situations, report tables, ...).
    """

    edition: str
    heuristics: Mapping[str, Factory]
    descriptions: Mapping[str, str]
    reference: str
    family: Any = None
    tools: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        missing = [n for n in self.heuristics if not self.descriptions.get(n)]
        if missing:
            raise ValueError(f"bots of {self.edition}: no description for {', '.join(missing)}")
        if self.reference not in self.heuristics:
            raise ValueError(f"bots of {self.edition}: reference {self.reference!r} is unknown")

    def make_reference(self, rules: Any) -> Policy:
        """The reference heuristic built for ``rules``."""
        return self.heuristics[self.reference](rules)


_ADDED_BOTS: dict[str, Bots] = {}


@lru_cache(maxsize=1)
def _entry_points() -> tuple[dict[str, Factory], dict[str, Bots]]:
    factories: dict[str, Factory] = {}
    bots: dict[str, Bots] = {}
    for ep in entry_points(group="psygym.agents"):
        obj = ep.load()
        if isinstance(obj, Bots):
            bots[obj.edition] = obj
        elif isinstance(obj, Mapping):
            factories.update(obj)
        else:
            factories[ep.name] = obj
    return factories, bots


def _factories() -> dict[str, Factory]:
    return _entry_points()[0]


def register_bots(bots: Bots) -> Bots:
    """Add an edition's agents at run time (a plug-in edition's, a test's); returns them."""
    _ADDED_BOTS[bots.edition] = bots
    return bots


def unregister_bots(edition: str) -> None:
    """Remove agents added with :func:`register_bots`."""
    _ADDED_BOTS.pop(edition, None)


def bots_for(edition: str) -> Bots | None:
    """The :class:`Bots` manifest of an edition id (``None`` if it has none)."""
    return _ADDED_BOTS.get(edition) or _entry_points()[1].get(edition)


def editions_with_bots() -> list[str]:
    """Edition ids that have a :class:`Bots` manifest."""
    return sorted({*_entry_points()[1], *_ADDED_BOTS})


def reference_policy(rules: Any) -> Policy | None:
    """The reference heuristic of ``rules``' edition, built for ``rules`` (None if it has none)."""
    bots = bots_for(rules.edition)
    return bots.make_reference(rules) if bots is not None else None


def describe_agent(name: str, rules: Any) -> str:
    """One sentence on how the agent ``name`` plays (``""`` when nothing says)."""
    bots = bots_for(rules.edition)
    if bots is not None and name in bots.descriptions:
        return bots.descriptions[name]
    factory = _factories().get(name.split(":", 1)[0])
    return str(getattr(factory, "description", "") or "")


def agent_names(rules: Any | None = None) -> list[str]:
    """Names of the installed agents (for ``rules``' edition when given)."""
    factories = _factories()
    if rules is None:
        names = set(factories)
        for edition in editions_with_bots():
            names.update(bots_for(edition).heuristics)
        return sorted(names)
    names = set()
    for name, factory in factories.items():
        supports = getattr(factory, "supports", None)
        if supports is None or supports(rules):
            names.add(name)
    bots = bots_for(rules.edition)
    if bots is not None:
        names.update(bots.heuristics)
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
    if "+" in spec and not _is_file(spec):  # a model file's own name may hold a "+"
        caster, denier = spec.split("+", 1)
        return SplitPolicy(resolve_policy(caster, rules), resolve_policy(denier, rules))
    name, arg = spec, None
    bots = bots_for(rules.edition)
    head, colon, tail = spec.partition(":")
    if colon and ((bots is not None and head in bots.heuristics) or head in agent_names(rules)):
        name, arg = head, tail  # a named agent's option may be a path: search:value.safetensors
    elif spec.endswith((".zip", ".safetensors")):
        name, arg = "sb3", spec
    elif spec.endswith(".json"):
        name, arg = "tuned", spec
    elif colon:
        name, arg = head, tail
    factory = bots.heuristics.get(name) if bots is not None else None
    if factory is None and name in agent_names(rules):
        factory = _factories().get(name)
    if factory is None:
        raise UnknownAgentError(spec, rules.edition, agent_names(rules))
    return factory(rules, arg) if arg is not None else factory(rules)


def _is_file(spec: str) -> bool:
    """Whether ``spec`` names an existing file or a model stem (``<spec>.safetensors``)."""
    return os.path.exists(spec) or os.path.exists(spec + ".safetensors")


class SplitPolicy:
    """One policy for casting and another for responses: the spec ``"double-wc+deny-never"``.

    ``caster`` answers the decisions of the player whose phase it is, ``denier`` the responses
    (denies, nullifies, bids) of the other player, as the rules' ``is_response(state)`` tells.
    """

    def __init__(self, caster: Policy, denier: Policy):
        self.caster, self.denier = caster, denier
        self.name = f"{caster.name}+{denier.name}"

    def restart(self) -> None:
        """A new game starts: restart both parts (those that remember a game)."""
        restart_policies([self.caster, self.denier])

    def action_probabilities(self, rules: Any, state: Any, player: int) -> dict[int, float]:
        """Ask the denier at response decisions and the caster otherwise."""
        part = self.denier if rules.is_response(state) else self.caster
        return part.action_probabilities(rules, state, player)
