"""Shared test helpers: scripted walks with forced chance outcomes, scenario builders, exact walks.

Generic over editions: everything here uses only the ``RulesBase`` API (``current_player``,
``chance_outcomes``, ``legal_actions``, ``apply_with_events``, ``describe``), plus the optional
``chance_distribution`` (exact Fractions) when a rules object has it.

Typical use::

    rules = rules_from(scenario7([unit7("Lib", psyker=psyker7(2, powers=["Smite"]))],
                                 [unit7("Target", (0, 10), wounds=3)]))
    s = force(rules, rules.initial_state(), 4)          # the warp charge roll
    s = choose(rules, s, "Smite")                        # a decision by label
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

from rich.console import Console

from psygym.core import CHANCE, TERMINAL, Event

REPO = Path(__file__).resolve().parents[1]
"""The repository root (``/work/main``)."""
SHARED = REPO.parent / "shared"
"""Shared documents beside the repository (may be absent)."""
SEEDS = SHARED / "seeds"


def policy_decisions(rules: Any, policy: Any, seeds: Iterable[int]) -> Iterable[tuple[Any, int]]:
    """``(state, player)`` at every decision with several legal actions, along games of ``policy``.

    One game per seed, its chance outcomes drawn from ``numpy.random.default_rng(seed)``.
    """
    import numpy as np

    for seed in seeds:
        rng = np.random.default_rng(seed)
        s = rules.initial_state()
        while (p := rules.current_player(s)) != TERMINAL:
            if p == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, rng))
                continue
            if len(rules.legal_actions(s)) > 1:
                yield s, p
            s = rules.apply(s, policy.choose(rules, s, p))


# ----------------------------------------------------------------------------- chance nodes
def outcomes(rules: Any, state: Hashable) -> dict[int, float]:
    """The chance outcomes of ``state`` as ``{outcome: probability}`` (asserts a chance node)."""
    assert rules.current_player(state) == CHANCE, (
        f"expected a chance node, current player is {rules.current_player(state)} "
        f"({describe_state(rules, state)})"
    )
    return dict(rules.chance_outcomes(state))


def exact_outcomes(rules: Any, state: Hashable) -> dict[int, Fraction]:
    """Exact chance outcomes: ``rules.chance_distribution`` if present, else the floats as-is.

    When the edition exposes exact Fractions, also checks that the float outcomes are exactly
    their conversion (same keys, ``float(Fraction)`` values).
    """
    floats = outcomes(rules, state)
    exact_fn = getattr(rules, "chance_distribution", None)
    if exact_fn is None:
        return {k: Fraction(v) for k, v in floats.items()}
    exact = {int(k): Fraction(p) for k, p in exact_fn(state) if p}
    assert floats == {k: float(p) for k, p in exact.items()}, (
        f"chance_outcomes {floats} are not the float conversion of {exact}"
    )
    return exact


def force(rules: Any, state: Hashable, outcome: int) -> Hashable:
    """Apply a chance ``outcome`` after asserting that ``state`` is a chance node listing it."""
    return force_ev(rules, state, outcome)[0]


def force_ev(rules: Any, state: Hashable, outcome: int) -> tuple[Hashable, tuple[Event, ...]]:
    """Like :func:`force`, also returning the events."""
    listed = outcomes(rules, state)
    assert outcome in listed, (
        f"outcome {outcome} is not listed at this chance node; listed: {sorted(listed)} "
        f"({describe_state(rules, state)})"
    )
    return rules.apply_with_events(state, outcome)


def describe_state(rules: Any, state: Hashable) -> str:
    """Short text for assertion messages (the stage name when the state has one)."""
    stage = getattr(state, "stage", None)
    return f"stage {getattr(stage, 'name', stage)}" if stage is not None else repr(state)[:200]


# ----------------------------------------------------------------------------- decisions
def labels(rules: Any, state: Hashable) -> dict[int, str]:
    """Legal action -> label at a decision node."""
    return {a: rules.action_label(state, a) for a in rules.legal_actions(state)}


def act(rules: Any, state: Hashable, action: int, player: int | None = None) -> Hashable:
    """Apply a decision after asserting a decision node (of ``player`` if given) and legality."""
    return act_ev(rules, state, action, player)[0]


def act_ev(
    rules: Any, state: Hashable, action: int, player: int | None = None
) -> tuple[Hashable, tuple[Event, ...]]:
    """Like :func:`act`, also returning the events."""
    current = rules.current_player(state)
    assert current >= 0, f"expected a decision node, got player {current}"
    if player is not None:
        assert current == player, f"expected player {player} to move, not {current}"
    legal = rules.legal_actions(state)
    assert action in legal, f"action {action} is not legal; legal: {labels(rules, state)}"
    return rules.apply_with_events(state, action)


def action_by_label(rules: Any, state: Hashable, text: str, *, exact: bool = False) -> int:
    """The one legal action whose label equals ``text``, else the one that contains it
    (``exact``: equality only)."""
    found = labels(rules, state)
    hits = [a for a, lbl in found.items() if lbl == text]
    if not hits and not exact:
        hits = [a for a, lbl in found.items() if text in lbl]
    assert len(hits) == 1, f"{len(hits)} legal actions match {text!r}: {found}"
    return hits[0]


def choose(rules: Any, state: Hashable, text: str, *, exact: bool = False) -> Hashable:
    """Apply the one legal action whose label contains ``text``."""
    return act(rules, state, action_by_label(rules, state, text, exact=exact))


def choose_ev(rules: Any, state: Hashable, text: str) -> tuple[Hashable, tuple[Event, ...]]:
    """Like :func:`choose`, also returning the events."""
    return act_ev(rules, state, action_by_label(rules, state, text))


def kinds(events: Iterable[Event]) -> list[str]:
    """The kinds of some events, in order."""
    return [e.kind for e in events]


# ----------------------------------------------------------------------------- exact walks
def walk_exact(
    rules: Any,
    state: Hashable,
    stop: Callable[[Hashable], bool],
    decide: Callable[[Hashable], int] | None = None,
    *,
    max_states: int = 200_000,
) -> dict[Hashable, Fraction]:
    """Exact distribution of the first states where ``stop`` holds (or the game ends).

    Chance nodes are expanded with their exact outcomes; decision nodes take ``decide(state)``
    (required if a decision node is met before ``stop``).
    """
    out: dict[Hashable, Fraction] = {}
    frontier: dict[Hashable, Fraction] = {state: Fraction(1)}
    seen = 0
    while frontier:
        nxt: dict[Hashable, Fraction] = {}
        for s, p in frontier.items():
            seen += 1
            assert seen <= max_states, "walk_exact visited too many states"
            player = rules.current_player(s)
            if stop(s) or player == TERMINAL:
                out[s] = out.get(s, Fraction(0)) + p
                continue
            if player == CHANCE:
                for o, q in exact_outcomes(rules, s).items():
                    s2 = rules.apply(s, o)
                    nxt[s2] = nxt.get(s2, Fraction(0)) + p * q
            else:
                assert decide is not None, f"decision node met: {labels(rules, s)}"
                s2 = rules.apply(s, decide(s))
                nxt[s2] = nxt.get(s2, Fraction(0)) + p
        frontier = nxt
    assert sum(out.values()) == 1, "walk_exact lost probability"
    return out


# ----------------------------------------------------------------------------- TOML and scenarios
def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return (
            "{ "
            + ", ".join(f"{_key(k)} = {_toml_value(x)}" for k, x in v.items() if x is not None)
            + " }"
        )
    raise TypeError(f"cannot write {v!r} as TOML")


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _toml_value(k)


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list | tuple) and bool(v) and all(isinstance(x, Mapping) for x in v)


def toml_dumps(data: Mapping[str, Any], prefix: str = "") -> str:
    """A small TOML writer for scenario dicts (tables, arrays of tables, inline values).

    Top-level mappings become ``[table]``s, lists of mappings become arrays of tables at any
    depth (``[[sides.units]]``), other mappings are inline tables; ``None`` values are left out.
    """
    lines: list[str] = []
    nested: list[tuple[str, Any]] = []
    for k, v in data.items():
        if v is None:
            continue
        if _is_table_array(v) or (isinstance(v, Mapping) and not prefix):
            nested.append((k, v))
        else:
            lines.append(f"{_key(k)} = {_toml_value(v)}")
    for k, v in nested:
        name = f"{prefix}.{_key(k)}" if prefix else _key(k)
        if isinstance(v, Mapping):
            lines += ["", f"[{name}]", toml_dumps(v, name)]
        else:
            for item in v:
                lines += ["", f"[[{name}]]", toml_dumps(item, name)]
    return "\n".join(lines).strip("\n") + "\n"


def write_toml(path: Path, data: Mapping[str, Any]) -> Path:
    """Write ``data`` as TOML to ``path`` and return the path."""
    path.write_text(toml_dumps(data))
    return path


def unit7(
    name: str, position: Sequence[float] = (0, 0), *, wounds: int = 1, **fields: Any
) -> dict[str, Any]:
    """A 7th-edition unit dict (any UnitSpec / 7th Unit field may be passed)."""
    return {"name": name, "wounds": wounds, "position": list(position), **fields}


def psyker7(
    mastery: int = 1, *, powers: Sequence[str] = (), disciplines: Sequence[str] = (), **flags: Any
) -> dict[str, Any]:
    """A 7th-edition ``psyker`` table (flags: adamantium_will, force_weapon, daemon, ...)."""
    out: dict[str, Any] = {"mastery": mastery}
    if powers:
        out["powers"] = list(powers)
    if disciplines:
        out["disciplines"] = list(disciplines)
    out.update(flags)
    return out


def scenario_dict(
    edition: str,
    sides: Sequence[Sequence[Mapping[str, Any]]],
    *,
    game: Mapping[str, Any] | None = None,
    name: str = "test",
    side_names: Sequence[str] = ("Attackers", "Defenders"),
    side_fields: Sequence[Mapping[str, Any]] = ({}, {}),
    **top: Any,
) -> dict[str, Any]:
    """A scenario dict for any edition: two sides of unit dicts, a ``game`` table, extras."""
    return {
        "edition": edition,
        "name": name,
        "description": f"test scenario {name}",
        **top,
        "game": dict(game or {}),
        "sides": [
            {"name": side_names[i], **side_fields[i], "units": [dict(u) for u in units]}
            for i, units in enumerate(sides)
        ],
    }


def scenario7(
    side0: Sequence[Mapping[str, Any]],
    side1: Sequence[Mapping[str, Any]],
    *,
    generate: bool = False,
    phases: int | None = 1,
    rounds: int = 1,
    **game: Any,
) -> dict[str, Any]:
    """A small 7th-edition scenario: fixed powers and one Psychic phase unless told otherwise."""
    settings: dict[str, Any] = {"battle_rounds": rounds, "generate_powers": generate, **game}
    if phases is not None:
        settings["phase_limit"] = phases
    return scenario_dict("7th", [side0, side1], game=settings)


def rules_from(data: Mapping[str, Any], source: str = "<test scenario>") -> Any:
    """Build an edition's rules from a scenario dict (no file involved)."""
    from psygym.edition import get

    return get(data["edition"]).build_rules(dict(data), source)


# ----------------------------------------------------------------------------- editions, envs
def ready_editions() -> list[str]:
    """Installed editions whose package is complete enough to load (others are in progress)."""
    from psygym.editions import available

    return available()


def ready_env_ids() -> list[str]:
    """Registered Gymnasium ids of the editions that can load."""
    import gymnasium as gym

    import psygym

    ready = set(ready_editions())
    return [i for e, i in psygym.env_ids().items() if e in ready and i in gym.registry]


# ----------------------------------------------------------------------------- seed tables
_ROW = re.compile(r"^\|\s*(\d+)D6\s*\|\|(.*)$")


def parse_casting_table(text: str) -> dict[int, list[Decimal]]:
    """Rows of the seed's "Chances of Success and Perils" table: dice -> 7 percentages."""
    rows: dict[int, list[Decimal]] = {}
    for line in text.splitlines():
        m = _ROW.match(line.strip())
        if m:
            cells = [c.strip().rstrip("%") for c in m.group(2).split("||")]
            rows[int(m.group(1))] = [Decimal(c) for c in cells]
    return rows


def round_half_up(p: Fraction, places: int = 2) -> Decimal:
    """``p`` as a percentage rounded half-up, computed independently of ``psygym.odds``."""
    scaled = p * 100 * 10**places
    q, r = divmod(scaled.numerator, scaled.denominator)
    if 2 * r >= scaled.denominator:
        q += 1
    return Decimal(q).scaleb(-places)


TINY_SEVENTH = """\
edition = "7th"
name = "tiny"
description = "One Librarian with Smite (7E-4, 7E-7) against a squad of Boyz; one Psychic phase."

[game]
battle_rounds = 1
first_player = 0
phase_limit = 1
generate_powers = false

[[sides]]
name = "Ultramarines"

[[sides.units]]
name = "Librarian"
wounds = 2
toughness = 4
save = 3
leadership = 10
ballistic_skill = 5
position = [0, 0]
psyker = { mastery = 1, powers = ["Smite"] }

[[sides]]
name = "Orks"

[[sides.units]]
name = "Boyz"
models = 5
wounds = 1
toughness = 4
save = 6
leadership = 7
position = [0, 10]
"""
"""A tiny solvable 7th scenario (one Librarian with Smite against Boyz) for evaluation tests."""


class ScriptedConsole(Console):
    """A console fed as by piped input: prints each prompt, answers from a list, records all.

    An empty list of answers ends the input, as a closed pipe does (``EOFError``).
    """

    def __init__(self, width: int = 200) -> None:
        super().__init__(file=io.StringIO(), width=width)
        self.answers: list[str] = []

    def input(self, prompt: str = "", **_: object) -> str:  # noqa: D102
        self.print(prompt, end="")
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)

    def take(self) -> str:
        """Everything printed since the last call."""
        text = self.file.getvalue()
        self.file.seek(0)
        self.file.truncate()
        return text


class RestartCounter:
    """A policy that counts its ``restart()`` calls and always plays its first legal action."""

    name = "counting"

    def __init__(self) -> None:
        self.restarts = 0

    def restart(self) -> None:
        """A new game starts."""
        self.restarts += 1

    def action_probabilities(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """The first legal action, with probability 1."""
        return {rules.legal_actions(state)[0]: 1.0}
