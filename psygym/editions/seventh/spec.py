"""Validated formats of the 7th-edition data files and scenarios (7E-1, 7E-6, 7E-9)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from psygym.scenario import (
    MAX_BATTLE_ROUNDS,
    MAX_POWERS,
    MAX_UNITS,
    Inches,
    Name,
    Names,
    Player,
    RulesText,
    ScenarioSpec,
    SideSpec,
    SignedValue,
    Spec,
    UnitSpec,
    Value,
    dice_field,
    field_problem,
    read_toml,
    repeated,
    validate,
)

DATA_DIR = Path(__file__).parent / "data"

AREA_HITS = {"template": 3, "blast": 2, "large_blast": 4}
"""Hits of area attacks: min(target models, n) (disciplines.md)."""


class Attack(Spec):
    """``attack`` effect (7E-7.1): hits, to-hit, Strength, AP and damage per unsaved wound."""

    hits: str = "1"
    to_hit: Literal["auto", "bs"] = "auto"
    strength: str = "4"
    ap: str = "none"
    damage: str = "1"
    heal_caster: bool = False
    always_wounds_on: int | None = Field(None, ge=2, le=6)

    @field_validator("hits")
    @classmethod
    def _hits(cls, v: str) -> str:
        return v if v in AREA_HITS else dice_field(v)

    @field_validator("strength", "damage")
    @classmethod
    def _dice(cls, v: str) -> str:
        return dice_field(v)

    @field_validator("ap")
    @classmethod
    def _ap(cls, v: str) -> str:
        return v if v == "none" else dice_field(v)


class Effect(Spec):
    """What a manifested power does: exactly one of attack, mortal, rolloff_mortal or value."""

    attack: Attack | None = None
    mortal: str | None = None
    minus_target_ld: bool = False
    rolloff_mortal: str | None = None
    value: SignedValue | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Effect:
        given = [
            k
            for k in ("attack", "mortal", "rolloff_mortal", "value")
            if getattr(self, k) is not None
        ]
        if len(given) != 1:
            raise ValueError(
                f"an effect needs exactly one of attack, mortal, rolloff_mortal, value; got {given}"
            )
        for k in ("mortal", "rolloff_mortal"):
            if getattr(self, k) is not None:
                dice_field(getattr(self, k))
        return self


class Power(Spec):
    """One psychic power (7E-9)."""

    name: Name
    discipline: str = ""
    number: int = Field(ge=-1, le=6, description="0 Primaris, 1-6 numbered, -1 none")
    warp_charge: int = Field(ge=1, le=3)
    kind: Literal[
        "witchfire", "focused witchfire", "beam", "nova", "blessing", "malediction", "conjuration"
    ]
    target: Literal["self", "friendly", "enemy", "enemies", "none"]
    range: Inches = 0
    effect: Effect
    doubles_perils_unless: Literal["grey_knight", "daemon"] | None = None
    perils_on_fail: bool = False
    default: bool = Field(
        False,
        description="numbers no source gives (psygym defaults, listed in the edition docstring)",
    )
    text: RulesText = None


class PowerFile(Spec):
    """A disciplines data file: a list of ``[[power]]`` tables."""

    power: list[Power] = Field(min_length=1, max_length=MAX_POWERS)

    @model_validator(mode="after")
    def _unique(self) -> PowerFile:
        seen: set[str] = set()
        for i, p in enumerate(self.power):
            if p.name in seen:
                raise field_problem(f"power.{i}.name", f"power {p.name!r} is listed twice")
            seen.add(p.name)
        return self


class PerilsResult(Spec):
    """One line of the Perils of the Warp table (7E-6)."""

    roll: int = Field(ge=1, le=6)
    name: str
    ld_test: bool
    on_pass: Literal["wound", "removed", "surge", "nothing"]
    on_fail: Literal["wound", "removed", "surge", "nothing"] = "nothing"
    extra: Literal["purge", "drain"] | None = None


class RemovedHits(Spec):
    """Hits a unit takes when its psyker is Dragged into the Warp (7E-6.1)."""

    hits: str = "D6"
    strength: int = Field(6, ge=1, le=10)
    ap: int = Field(1, ge=1, le=6)

    _dice = field_validator("hits")(dice_field)


class PerilsFile(Spec):
    """The perils table data file."""

    result: list[PerilsResult] = Field(min_length=6, max_length=6)
    removed_hits: RemovedHits = RemovedHits()

    @model_validator(mode="after")
    def _all_rolls(self) -> PerilsFile:
        if sorted(r.roll for r in self.result) != list(range(1, 7)):
            raise field_problem("result", "the table needs exactly one line per roll", "1-6")
        return self


@lru_cache(maxsize=8)
def load_powers(path: str = str(DATA_DIR / "disciplines.toml")) -> PowerFile:
    """Load and validate a disciplines file."""
    return validate(PowerFile, read_toml(path), path)


@lru_cache(maxsize=8)
def load_perils(path: str = str(DATA_DIR / "perils.toml")) -> PerilsFile:
    """Load and validate the perils table."""
    return validate(PerilsFile, read_toml(path), path)


class Psyker(Spec):
    """Psyker profile of a unit (7E-1.2, 7E-2)."""

    mastery: int = Field(ge=1, le=4, description="mastery level")
    disciplines: Names = Field(default_factory=list, description="to generate powers from")
    powers: Names = Field(default_factory=list, description="fixed powers")
    adamantium_will: bool = False
    force_weapon: bool = False
    daemon: bool = False
    grey_knight: bool = False


class Unit(UnitSpec):
    """A 7th-edition unit (7E-1)."""

    ballistic_skill: int = Field(4, ge=1, le=10)
    psyker: Psyker | None = None
    advance: Inches = Field(
        0, description="inches toward the nearest enemy before each later battle round"
    )


class Side(SideSpec):
    """A 7th-edition army."""

    units: list[Unit] = Field(min_length=1, max_length=MAX_UNITS)
    pool_bonus: int = Field(0, ge=0, le=10, description="extra warp charge dice (7E-3.1)")


class Game(Spec):
    """Game settings (7E-8)."""

    battle_rounds: int = Field(5, ge=1, le=MAX_BATTLE_ROUNDS)
    first_player: Player = 0
    phase_limit: int | None = Field(
        None, ge=1, le=2 * MAX_BATTLE_ROUNDS, description="stop after this many Psychic phases"
    )
    warp_surge_value: Value = 1.0
    generate_powers: bool = True
    instant_death: bool = Field(
        True,
        description="an unsaved wound of Strength >= 2 x Toughness removes a multi-wound model",
    )


class Scenario(ScenarioSpec):
    """A 7th-edition scenario file."""

    edition: Literal["7th"]
    game: Game = Game()
    sides: list[Side] = Field(min_length=2, max_length=2)
    powers_file: str | None = Field(None, description="another disciplines TOML file")

    @model_validator(mode="after")
    def _each_name_once(self) -> Scenario:
        # A discipline listed twice would offer its choice twice at generation (7E-2.1), and a
        # power listed twice is one power: either is a mistake in the file.
        for i, side in enumerate(self.sides):
            for j, unit in enumerate(side.units):
                if unit.psyker is None:
                    continue
                for key, kind in (("disciplines", "discipline"), ("powers", "power")):
                    names = getattr(unit.psyker, key)
                    k = repeated(names)
                    if k is not None:
                        raise field_problem(
                            f"sides.{i}.units.{j}.psyker.{key}.{k}",
                            f"{kind} {names[k]!r} is listed twice",
                            f"each {kind} once",
                        )
        return self
