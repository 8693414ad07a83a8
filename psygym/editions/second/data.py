"""2nd-edition data: power cards (2E-1, 2E-6) and the warp deck (2E-2), loaded from TOML.

``data/powers.toml`` lists the power cards in a small effect vocabulary (``attack``, ``mortal``,
``value``, ``duel``); ``data/deck.toml`` gives the warp deck's composition. Both are validated
with pydantic on load, so a bad entry raises one :class:`~psygym.scenario.ScenarioError` naming
the file and the field.
"""

from __future__ import annotations

from enum import IntEnum
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from psygym.scenario import (
    MAX_POWERS,
    Inches,
    Name,
    Names,
    RulesText,
    Spec,
    Text,
    Value,
    dice_field,
    field_problem,
    read_toml,
    validate,
)

DATA_DIR = Path(__file__).resolve().parent / "data"
"""Folder of the shipped data files."""


class Card(IntEnum):
    """The kinds of warp card (2E-2.1), in the order hands and decks are stored."""

    FORCE = 0
    NULLIFY = 1
    DAEMONIC_ATTACK = 2
    DESTROY_POWER = 3
    PSYCHIC_DUEL = 4
    REFLECTION = 5
    ULTIMATE_FORCE = 6
    ENERGY_DRAIN = 7


CARD_KEYS = tuple(c.name.lower() for c in Card)
"""Field names of the card kinds in ``deck.toml``, in :class:`Card` order."""
CARD_LABELS = tuple(c.name.replace("_", " ").title() for c in Card)
"""Readable names of the card kinds, in :class:`Card` order."""
NUM_CARDS = len(Card)


class _EffectBase(Spec):
    force: int = Field(ge=0, le=3, description="Force paid for this effect")


class AttackEffect(_EffectBase):
    """``attack(hits, to_hit, S, damage)``: wounds by the 2nd-edition chart, saves by Strength."""

    type: Literal["attack"]
    hits: str | int = Field(description="number of hits (a dice expression)")
    to_hit: Literal["auto", "bs"] = "auto"
    strength: int = Field(ge=1, le=10)
    damage: str | int = Field(1, description="wounds per unsaved wound (a dice expression)")
    saves: bool = Field(True, description="whether armour saves are allowed")

    _dice = field_validator("hits", "damage")(dice_field)


class MortalEffect(_EffectBase):
    """``mortal(wounds)``: wounds with no save."""

    type: Literal["mortal"]
    wounds: str | int

    _dice = field_validator("wounds")(dice_field)


class ValueEffect(_EffectBase):
    """``value(v)``: ``v`` wound-equivalents scored for the caster's side."""

    type: Literal["value"]
    value: Value


class DuelEffect(_EffectBase):
    """Each of caster and target rolls ``dice`` + ML; caster higher: target loses the difference."""

    type: Literal["duel"]
    dice: str = "D6"

    _dice = field_validator("dice")(dice_field)


Effect = Annotated[
    AttackEffect | MortalEffect | ValueEffect | DuelEffect, Field(discriminator="type")
]
TargetKind = Literal["self", "friendly", "enemy", "enemies", "enemy-psyker"]


class PowerSpec(Spec):
    """One power card (2E-1.1): Force cost, target and one effect per payable Force amount."""

    name: Name
    kind: str = ""
    cost: Annotated[int, Field(ge=0, le=3)] | str = Field(
        description="1, 2, 3, or a variable range such as '0-3' or '1-3'"
    )
    level: int = Field(1, ge=1, le=4, description="used only with rules.ml_limits_power_level")
    disciplines: Names = Field(min_length=1)
    remain_in_play: bool = False
    target: TargetKind
    range: Inches = Field(0.0, description="inches from the psyker (ignored for 'self')")
    effects: list[Effect] = Field(min_length=1, max_length=4)
    description: Text = ""
    text: RulesText = None

    @field_validator("cost")
    @classmethod
    def _cost_form(cls, value: int | str) -> int | str:
        cost_range(value)
        return value

    @property
    def min_force(self) -> int:
        """Smallest Force amount that may be paid."""
        return cost_range(self.cost)[0]

    @property
    def max_force(self) -> int:
        """Largest Force amount that may be paid."""
        return cost_range(self.cost)[1]

    @property
    def variable(self) -> bool:
        """Whether the caster chooses how much Force to pay (``0-3`` / ``1-3`` cards)."""
        return isinstance(self.cost, str) and "-" in self.cost

    @model_validator(mode="after")
    def _effects_cover_cost(self) -> PowerSpec:
        lo, hi = cost_range(self.cost)
        forces = [e.force for e in self.effects]
        if sorted(forces) != list(range(lo, hi + 1)):
            raise ValueError(
                f"power {self.name!r} costs {self.cost}: it needs exactly one effect for each "
                f"Force amount {list(range(lo, hi + 1))}, found {sorted(forces)}"
            )
        return self

    def effect(self, force: int) -> AttackEffect | MortalEffect | ValueEffect | DuelEffect:
        """The effect when ``force`` Force is paid."""
        for e in self.effects:
            if e.force == force:
                return e
        raise KeyError(force)


def cost_range(cost: int | str) -> tuple[int, int]:
    """``(lowest, highest)`` Force that may be paid for a cost of ``1``..``3`` or ``"0-3"``.

    Raises:
        ValueError: the cost is not of an allowed form.
    """
    allowed = "1, 2, 3, or a range 'a-b' with 0 <= a < b <= 3"
    if isinstance(cost, bool):
        raise ValueError(f"cost {cost!r} is not allowed; use {allowed}")
    if isinstance(cost, int) or str(cost).strip().isdigit():
        c = int(cost)
        if 1 <= c <= 3:
            return c, c
        raise ValueError(f"cost {cost!r} is not allowed; use {allowed}")
    parts = str(cost).replace(" ", "").split("-")
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        lo, hi = int(parts[0]), int(parts[1])
        if 0 <= lo < hi <= 3:
            return lo, hi
    raise ValueError(f"cost {cost!r} is not allowed; use {allowed}")


class PowersFile(Spec):
    """``powers.toml``: a list of power cards with unique names."""

    powers: list[PowerSpec] = Field(min_length=1, max_length=MAX_POWERS)

    @model_validator(mode="after")
    def _unique(self) -> PowersFile:
        seen: set[str] = set()
        for i, p in enumerate(self.powers):
            if p.name in seen:
                raise field_problem(
                    f"powers.{i}.name", f"power name {p.name!r} is used twice", "unique names"
                )
            seen.add(p.name)
        return self


class DeckCounts(Spec):
    """How many cards of each kind the warp deck holds (2E-2.1)."""

    force: int = Field(ge=0, le=100)
    nullify: int = Field(ge=0, le=100)
    daemonic_attack: int = Field(ge=0, le=100)
    destroy_power: int = Field(ge=0, le=100)
    psychic_duel: int = Field(ge=0, le=100)
    reflection: int = Field(ge=0, le=100)
    ultimate_force: int = Field(ge=0, le=100)
    energy_drain: int = Field(ge=0, le=100)


class DeckFile(Spec):
    """``deck.toml``: the ``[cards]`` table."""

    cards: DeckCounts

    @model_validator(mode="after")
    def _not_empty(self) -> DeckFile:
        if sum(self.counts()) < 1:
            raise field_problem("cards", "the deck has no cards", "at least one card")
        return self

    def counts(self) -> tuple[int, ...]:
        """Card counts in :class:`Card` order."""
        return tuple(getattr(self.cards, key) for key in CARD_KEYS)


@lru_cache(maxsize=8)
def load_powers(path: str | Path = DATA_DIR / "powers.toml") -> tuple[PowerSpec, ...]:
    """The power cards of a powers file (default: the shipped set), validated.

    Raises:
        ScenarioError: the file is missing or invalid; names the file and field.
    """
    return tuple(validate(PowersFile, read_toml(path), str(path)).powers)


@lru_cache(maxsize=8)
def load_deck(path: str | Path = DATA_DIR / "deck.toml") -> tuple[int, ...]:
    """Card counts of a deck file (default: the 36-card warp deck) in :class:`Card` order.

    Raises:
        ScenarioError: the file is missing or invalid; names the file and field.
    """
    return validate(DeckFile, read_toml(path), str(path)).counts()
