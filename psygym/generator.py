"""Random scenarios: what every edition's generator shares, and ``random:SEED`` scenario names.

Each edition that has a generator declares it in its :class:`~psygym.edition.Edition`
(``generator = "module:function"``): a function ``f(seed, options) -> data`` returning the
scenario as the data its own loader validates (a dict as read from TOML), drawn from the
edition's own data files and the units of its shipped scenarios. The draw is deterministic per
(edition, seed, options): one :func:`numpy.random.default_rng` seeded with ``seed``, never the
global random state.

A scenario argument ``random:SEED`` (optionally ``random:SEED,psykers=K,mastery=LO-HI,rounds=R``)
names a generated scenario wherever a shipped name or a TOML path is accepted
(:func:`psygym.editions.load`), so ``play``, ``simulate``, training and evaluation take it like
any other. ``psygym scenario random`` writes the same scenario as a TOML file.

Values no source gives (the numbers of units, the distance between the armies, the chance of
each optional flag) are psygym defaults, named as such where each edition's generator sets them;
the module constants here are the defaults shared by all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from psygym.scenario import MAX_BATTLE_ROUNDS, ScenarioError, read_toml

RANDOM_PREFIX = "random:"
"""A scenario argument starting with this names a generated scenario."""

MAX_SEED = 2**63 - 1
"""Largest seed of a generated scenario."""

FORM = "random:SEED[,psykers=K][,mastery=LO-HI][,rounds=R]"
"""The form of a generated scenario's name, for messages."""

SOURCE = "random scenario"
"""What error messages about a generated scenario's options name as their source."""

PSYKERS = (1, 4)
"""Psykers a side a generated scenario may ask for (psygym default: games stay small enough for
the searches; every compiled twin holds far more)."""

DEFAULT_PSYKERS = (1, 2)
"""Psykers a side when the options give none: drawn in this range per side (psygym default)."""

DEFAULT_ROUNDS = (1, 5)
"""Battle rounds when the options give none: drawn in this range (psygym default; the shipped
duels last 5)."""

SQUADS = (0, 2)
"""Units that are not psykers on each side, drawn in this range (psygym default)."""

SIDES = ("Blue", "Red")
"""Names of the two sides of a generated scenario."""

SPACING = 4.0
"""Inches between neighbouring units of one side (psygym default)."""

GAP = (6, 18)
"""Inches between the two armies' lines, drawn in this range (psygym default: the shipped
scenarios stand 6" to 16" apart)."""


@dataclass(frozen=True)
class RandomOptions:
    """What the caller fixes of a generated scenario; ``None`` lets the generator draw it.

    Attributes:
        psykers: psykers on each side.
        mastery: the lowest and highest mastery level a psyker is drawn from (the edition's own
            levels; its generator's docstring says what a level is there).
        rounds: battle rounds (where players take single turns, two turns a round).
    """

    psykers: int | None = None
    mastery: tuple[int, int] | None = None
    rounds: int | None = None

    def text(self) -> str:
        """The options as they are written after the seed (``psykers=2,mastery=1-3``)."""
        parts = []
        if self.psykers is not None:
            parts.append(f"psykers={self.psykers}")
        if self.mastery is not None:
            parts.append(f"mastery={self.mastery[0]}-{self.mastery[1]}")
        if self.rounds is not None:
            parts.append(f"rounds={self.rounds}")
        return ",".join(parts)


@dataclass(frozen=True)
class Limits:
    """The options an edition's generator accepts.

    Attributes:
        mastery: the edition's lowest and highest mastery level.
        rounds: the fewest and most battle rounds.
    """

    mastery: tuple[int, int]
    rounds: tuple[int, int] = (1, MAX_BATTLE_ROUNDS)


@dataclass(frozen=True)
class Plan:
    """The sizes of one generated scenario, drawn from the options and the defaults.

    Attributes:
        rng: the generator every further draw of the scenario uses.
        psykers: psykers on each side.
        squads: units that are not psykers on each side.
        mastery: the range each psyker's mastery level is drawn from.
        rounds: battle rounds.
        gap: inches between the two armies' lines.
        first_player: the player whose phase (or turn) comes first.
    """

    rng: np.random.Generator
    psykers: tuple[int, int]
    squads: tuple[int, int]
    mastery: tuple[int, int]
    rounds: int
    gap: int
    first_player: int

    def masteries(self, side: int) -> list[int]:
        """The mastery level of each psyker of ``side``, drawn."""
        lo, hi = self.mastery
        return [int(self.rng.integers(lo, hi + 1)) for _ in range(self.psykers[side])]


def check_options(options: RandomOptions, limits: Limits, edition: str) -> None:
    """Check ``options`` against an edition's ``limits``.

    Raises:
        ScenarioError: one line naming the option and what is allowed.
    """
    if options.psykers is not None and not PSYKERS[0] <= options.psykers <= PSYKERS[1]:
        raise ScenarioError(
            SOURCE, "psykers", f"{options.psykers} psykers a side",
            f"{PSYKERS[0]} to {PSYKERS[1]}",
        )  # fmt: skip
    if options.mastery is not None:
        lo, hi = options.mastery
        top_lo, top_hi = limits.mastery
        if not top_lo <= lo <= hi <= top_hi:
            raise ScenarioError(
                SOURCE, "mastery", f"{lo}-{hi} is not a range of the {edition} edition's "
                "mastery levels", f"LO-HI with {top_lo} <= LO <= HI <= {top_hi}",
            )  # fmt: skip
    if options.rounds is not None and not limits.rounds[0] <= options.rounds <= limits.rounds[1]:
        raise ScenarioError(
            SOURCE, "rounds", f"{options.rounds} battle rounds",
            f"{limits.rounds[0]} to {limits.rounds[1]}",
        )  # fmt: skip


def plan(seed: int, options: RandomOptions, limits: Limits, edition: str) -> Plan:
    """Check the options and draw the sizes of a scenario: the first draws of ``seed``'s rng.

    Raises:
        ScenarioError: a seed or option out of range (one line naming it).
    """
    check_seed(seed)
    check_options(options, limits, edition)
    rng = np.random.default_rng(seed)

    def draw(bounds: tuple[int, int]) -> int:
        return int(rng.integers(bounds[0], bounds[1] + 1))

    psykers = (draw(DEFAULT_PSYKERS), draw(DEFAULT_PSYKERS))
    if options.psykers is not None:
        psykers = (options.psykers, options.psykers)
    squads = (draw(SQUADS), draw(SQUADS))
    rounds = draw(DEFAULT_ROUNDS) if options.rounds is None else options.rounds
    return Plan(
        rng=rng,
        psykers=psykers,
        squads=squads,
        mastery=options.mastery or limits.mastery,
        rounds=rounds,
        gap=draw(GAP),
        first_player=draw((0, 1)),
    )


def check_seed(seed: Any) -> int:
    """``seed`` if it is a whole number from 0 to :data:`MAX_SEED`.

    Raises:
        ScenarioError: it is not (one line).
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ScenarioError(SOURCE, "seed", f"{seed!r} is not a seed", f"0 to {MAX_SEED}")
    return seed


# ----------------------------------------------------------------------------- units
def shipped_units(scenario_dir: Path) -> list[dict[str, Any]]:
    """Every unit of the shipped scenarios, as read from TOML, each name once (files sorted)."""
    seen: dict[str, dict[str, Any]] = {}
    for path in sorted(Path(scenario_dir).glob("*.toml")):
        for side in read_toml(path).get("sides", []):
            for unit in side.get("units", []):
                seen.setdefault(str(unit["name"]), dict(unit))
    return list(seen.values())


def profile(unit: Mapping[str, Any], drop: tuple[str, ...]) -> dict[str, Any]:
    """A shipped unit's profile: its fields (``name`` first) without ``position`` and ``drop``."""
    return {k: v for k, v in unit.items() if k not in ("position", *drop)}


def pick(rng: np.random.Generator, items: list[Any]) -> Any:
    """One item of ``items``, drawn uniformly."""
    return items[int(rng.integers(len(items)))]


def sample(rng: np.random.Generator, items: list[Any], k: int) -> list[Any]:
    """``k`` distinct items of ``items`` (at most all of them), in the order drawn."""
    order = rng.permutation(len(items))[: min(k, len(items))]
    return [items[int(i)] for i in order]


def army(
    plan: Plan,
    side: int,
    psykers: list[dict[str, Any]],
    squads: list[dict[str, Any]],
    taken: set[str],
) -> list[dict[str, Any]]:
    """One side's units, named uniquely and placed in a line.

    Args:
        plan: the scenario's sizes; side 0 stands on y = 0, side 1 on y = ``plan.gap``.
        side: 0 or 1.
        psykers: the side's psyker units (each a dict with ``name`` and its fields).
        squads: the side's other units.
        taken: unit names used so far in the scenario (updated).
    """
    units = [*psykers, *squads]
    offset = 0.0 if side == 0 else float(plan.rng.integers(-2, 3))
    y = 0.0 if side == 0 else float(plan.gap)
    out = []
    for i, unit in enumerate(units):
        x = SPACING * i - SPACING * (len(units) - 1) / 2 + offset
        name = unique_name(str(unit["name"]), taken)
        out.append({"name": name, **{k: v for k, v in unit.items() if k != "name"},
                    "position": [x, y]})  # fmt: skip
    return out


def unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name 2``, ``name 3``... whichever is not yet in ``taken`` (then added)."""
    out, n = name, 1
    while out in taken:
        n += 1
        out = f"{name} {n}"
    taken.add(out)
    return out


def scenario_name(seed: int, options: RandomOptions) -> str:
    """The ``random:SEED[,options]`` argument that names a generated scenario."""
    extra = options.text()
    return f"{RANDOM_PREFIX}{seed}" + (f",{extra}" if extra else "")


def short_name(seed: int, options: RandomOptions) -> str:
    """The ``name`` of a generated scenario: ``random-3-psykers2-mastery1-2``.

    Its seed and options, in characters a file or folder name may hold (run folders are named
    after the scenario).
    """
    extra = options.text().replace("=", "").replace(",", "-")
    return f"random-{seed}" + (f"-{extra}" if extra else "")


def describe(edition: str, seed: int, options: RandomOptions, what: str) -> str:
    """The description of a generated scenario: how to make it again, then ``what`` it holds."""
    return (
        f"Generated by psygym (scenario {scenario_name(seed, options)} of the {edition} edition; "
        f"psygym scenario random --edition {edition} --seed {seed}"
        + "".join(f" --{part.replace('=', ' ')}" for part in options.text().split(",") if part)
        + f"). {what}"
    )


# ----------------------------------------------------------------------------- names and calls
_OPTION = re.compile(r"(psykers|mastery|rounds)=(\S+)")


def is_random(scenario: Any) -> bool:
    """Whether a scenario argument names a generated scenario (``random:...``)."""
    return isinstance(scenario, str) and scenario.startswith(RANDOM_PREFIX)


def parse_mastery(text: str, where: str = "mastery") -> tuple[int, int]:
    """``"LO-HI"`` (or one level ``"N"``) as ``(LO, HI)``.

    Raises:
        ScenarioError: not that form (one line).
    """
    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    if m is None:
        raise ScenarioError(SOURCE, where, f"{_short(text)!r} is not a range of mastery levels",
                            "LO-HI such as 1-3, or one level such as 2")  # fmt: skip
    lo = _whole(m.group(1), SOURCE, where)
    return lo, _whole(m.group(2), SOURCE, where) if m.group(2) else lo


_MOST_DIGITS = 30
"""Digits an option's number may have; a longer one is refused as far too large without being
read. No option's range comes near; a shorter number out of range gets the edition's range
message (:func:`check_options`)."""


def _short(text: str) -> str:
    """``text`` for a message, cut short if long (a number of thousands of digits, say)."""
    return text if len(text) <= 40 else f"{text[:20]}...{text[-8:]} ({len(text)} characters)"


def _whole(digits: str, source: str, field: str) -> int:
    """A string of digits as a number, unless it is far too long to be any option's.

    Raises:
        ScenarioError: more than :data:`_MOST_DIGITS` digits (one line).
    """
    if len(digits.lstrip("0")) > _MOST_DIGITS:
        raise ScenarioError(source, field, f"{_short(digits)} is far too large", FORM)
    return int(digits)


def parse(scenario: str) -> tuple[int, RandomOptions]:
    """The seed and options of ``random:SEED[,psykers=K][,mastery=LO-HI][,rounds=R]``.

    Raises:
        ScenarioError: another form (one line naming the part and the form allowed).
    """
    body = scenario[len(RANDOM_PREFIX) :] if is_random(scenario) else scenario
    seed_text, *rest = body.split(",")
    if not re.fullmatch(r"\d{1,19}", seed_text.strip()):
        raise ScenarioError(scenario, "seed", f"{seed_text!r} is not a seed",
                            f"{FORM} with SEED 0 to {MAX_SEED}")  # fmt: skip
    seed = int(seed_text)
    if seed > MAX_SEED:
        raise ScenarioError(scenario, "seed", f"{seed} is too large", f"0 to {MAX_SEED}")
    found: dict[str, Any] = {}
    for part in rest:
        m = _OPTION.fullmatch(part.strip())
        if m is None or m.group(1) in found:
            why = "is given twice" if m is not None else "is not an option"
            raise ScenarioError(scenario, "", f"{part.strip()!r} {why}", FORM)
        key, value = m.groups()
        if key == "mastery":
            found[key] = parse_mastery(value)
        elif re.fullmatch(r"\d+", value):
            # Any whole number: the edition's range check (check_options) names the range.
            found[key] = _whole(value, _short(scenario), key)
        else:
            raise ScenarioError(scenario, key, f"{_short(value)!r} is not a whole number", FORM)
    return seed, RandomOptions(**found)


def generator_of(edition: Any) -> Callable[[int, RandomOptions], dict[str, Any]]:
    """The scenario generator an edition declares.

    Raises:
        ValueError: it declares none (one line naming the editions that have one).
    """
    from psygym.edition import editions, resolve

    if edition.generator is None:
        having = ", ".join(e.id for e in editions() if e.generator is not None) or "none"
        raise ValueError(
            f"edition {edition.id} has no scenario generator (editions with one: {having})"
        )
    return resolve(edition.generator)


def generate(edition: Any, seed: int, options: RandomOptions | None = None) -> dict[str, Any]:
    """The data of a generated scenario of ``edition`` (an id, alias or declaration).

    Raises:
        ValueError: no such edition, or it has no generator; ``ScenarioError`` (a
            ``ValueError``) for a seed or option out of range.
    """
    from psygym.edition import get

    ed = get(edition)
    return generator_of(ed)(check_seed(seed), options or RandomOptions())


def random_rules(edition: Any, scenario: str, **overrides: Any) -> Any:
    """The rules of the generated scenario ``random:SEED[,...]`` (game settings overridden).

    Raises:
        ScenarioError: a malformed name, or options out of range.
        ValueError: the edition has no generator.
    """
    from psygym.edition import get

    ed = get(edition)
    seed, options = parse(scenario)
    data = generate(ed, seed, options)
    if overrides:
        data = {**data, "game": {**data.get("game", {}), **overrides}}
    return ed.build_rules(data, scenario)


__all__ = [
    "DEFAULT_PSYKERS", "DEFAULT_ROUNDS", "FORM", "GAP", "Limits", "MAX_SEED", "PSYKERS", "Plan",
    "RANDOM_PREFIX", "RandomOptions", "SIDES", "SPACING", "SQUADS", "army", "check_options",
    "check_seed", "describe", "generate", "generator_of", "is_random", "parse",
    "parse_mastery", "pick", "plan", "profile", "random_rules", "sample", "scenario_name",
    "short_name",
    "shipped_units", "unique_name",
]  # fmt: skip
