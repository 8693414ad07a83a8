"""Validated formats of the 8th-edition power data file and scenarios (8E-1, 8E-7, 8E-8).

Power data (``data/powers.toml``): a list of ``[[powers]]`` tables, each with a ``name``, a
``warp_charge``, a ``range`` in inches, a ``target`` kind and one ``effect`` from the vocabulary
of 8E-7.3 (see :class:`Effect`). Smite is data too: ``known_by_all_psykers`` (every PSYKER knows
it), ``repeatable`` (exempt from the army-wide once-per-round rule 8E-3.2 but limited to once per
unit by 8E-3.3) and ``escalation`` (+1 warp charge per earlier attempt of the army this phase,
8E-4.2).

Scenario files: ``edition = "8th"``, ``name``, ``description``, a ``[game]`` table
(:class:`Game`) and two ``[[sides]]`` with ``[[sides.units]]`` (:class:`Unit`).
"""

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
    ScenarioError,
    ScenarioSpec,
    SideSpec,
    SignedValue,
    Spec,
    Text,
    UnitSpec,
    Value,
    dice_field,
    field_problem,
    read_toml,
    validate,
)

DATA_DIR = Path(__file__).parent / "data"
POWERS_FILE = DATA_DIR / "powers.toml"

TargetKind = Literal["closest_enemy", "enemy", "friendly", "self", "none"]
"""Target kinds (8E-7.3): the closest enemy in range, an enemy the caster chooses, a friendly unit
in range (the caster itself included), the caster itself, or no target."""


def _as_text(value: str | int) -> str:
    """A checked dice expression, as text."""
    return str(dice_field(value))


class Attack(Spec):
    """``attack`` effect (8E-7.3): automatic hits, Strength, AP and damage per unsaved wound.

    Wounds use the 8th-edition wound table; the armour save is worsened by ``ap`` (0, -1, -2 ...)
    and the invulnerable save is used when better. Damage does not spill over to other models.
    """

    hits: str = Field("1", description="number of hits, a dice expression")
    strength: int = Field(ge=1, le=20)
    ap: int = Field(0, ge=-6, le=0, description="armour penetration: 0, -1, -2 ...")
    damage: str = Field("1", description="damage per unsaved wound, a dice expression")

    @field_validator("hits", "damage", mode="before")
    @classmethod
    def _dice(cls, v: str | int) -> str:
        return _as_text(v)


class Rolloff(Spec):
    """``rolloff`` effect: caster and target each roll ``dice`` + Leadership (disciplines.md).

    If the caster's total is higher the target suffers ``win`` mortal wounds (a dice expression or
    ``"difference"``: the difference between the totals); on a tie it suffers ``tie``.
    """

    dice: str = "D6"
    win: str = "D3"
    tie: str = "0"

    @field_validator("dice", "tie", mode="before")
    @classmethod
    def _dice(cls, v: str | int) -> str:
        return _as_text(v)

    @field_validator("win", mode="before")
    @classmethod
    def _win(cls, v: str | int) -> str:
        return "difference" if v == "difference" else _as_text(v)


class Effect(Spec):
    """What a manifested power does (8E-7.3): exactly one of the vocabulary's entries.

    * ``mortal_wounds = "<dice>"``: mortal wounds on the target (8E-7.2), and optionally
      ``boosted = "<dice>"`` instead when the psychic test total is at least ``boosted_at``.
    * ``attack = {hits, strength, ap, damage}``: see :class:`Attack`.
    * ``value = <number>``: a buff or debuff scored as that many wound-equivalents for the caster.
    * ``rolloff = {dice, win, tie}``: a Leadership roll-off (Psychic Scourge, Mind War); an
      addition to 8E-7.3's vocabulary needed by the shipped powers (disciplines.md).
    """

    mortal_wounds: str | None = None
    boosted_at: int | None = Field(None, ge=2, le=12, description="test total for `boosted`")
    boosted: str | None = None
    attack: Attack | None = None
    value: Value | None = None
    rolloff: Rolloff | None = None

    @field_validator("mortal_wounds", "boosted", mode="before")
    @classmethod
    def _dice(cls, v: str | int | None) -> str | None:
        return None if v is None else _as_text(v)

    @model_validator(mode="after")
    def _exactly_one(self) -> Effect:
        given = [
            k
            for k in ("mortal_wounds", "attack", "value", "rolloff")
            if getattr(self, k) is not None
        ]
        if len(given) != 1:
            raise ValueError(
                "an effect needs exactly one of mortal_wounds, attack, value, rolloff; "
                f"got {given or 'none'}"
            )
        if (self.boosted is None) != (self.boosted_at is None):
            raise ValueError("boosted and boosted_at go together")
        if self.boosted is not None and self.mortal_wounds is None:
            raise ValueError("boosted only applies to a mortal_wounds effect")
        return self

    @property
    def deals_damage(self) -> bool:
        """Whether the effect removes wounds (anything but ``value``)."""
        return self.value is None


class Power(Spec):
    """One psychic power (8E-3, 8E-4, 8E-7)."""

    name: Name
    warp_charge: int = Field(ge=1, le=12)
    range: Inches = Field(0.0, description="inches, for enemy and friendly targets")
    target: TargetKind
    character_only: bool = Field(False, description="the target must be a CHARACTER")
    known_by_all_psykers: bool = Field(False, description="every PSYKER knows it (Smite)")
    repeatable: bool = Field(
        False, description="exempt from 8E-3.2; the same unit may still attempt it once (8E-3.3)"
    )
    escalation: int = Field(
        0, ge=0, le=6, description="warp charge added per earlier attempt of the army (8E-4.2)"
    )
    effect: Effect
    description: Text = ""

    @model_validator(mode="after")
    def _target_fits_effect(self) -> Power:
        if self.effect.deals_damage and self.target not in ("closest_enemy", "enemy"):
            raise field_problem(
                "target",
                f"a damaging effect needs an enemy target, not {self.target!r}",
                "closest_enemy, enemy",
            )
        return self


class PowerFile(Spec):
    """A power data file: a list of ``[[powers]]`` tables with unique names."""

    powers: list[Power] = Field(min_length=1, max_length=MAX_POWERS)

    @model_validator(mode="after")
    def _unique(self) -> PowerFile:
        seen: set[str] = set()
        for i, p in enumerate(self.powers):
            if p.name in seen:
                raise field_problem(
                    f"powers.{i}.name",
                    f"power {p.name!r} is listed twice",
                    "a name no other power in the file has",
                )
            seen.add(p.name)
        return self


@lru_cache(maxsize=8)
def load_powers(path: str = str(POWERS_FILE)) -> PowerFile:
    """Load and validate a power data file (errors name the file and the field).

    Raises:
        ScenarioError: the file is missing, not TOML, or invalid.
    """
    return validate(PowerFile, read_toml(path), path)


class Unit(UnitSpec):
    """An 8th-edition unit (8E-1).

    ``psyker = true`` makes it a PSYKER unit (8E-1.2) that knows ``powers`` plus every power
    marked ``known_by_all_psykers`` (Smite), may attempt ``manifest`` powers in its own Psychic
    phase and may attempt to deny ``deny`` powers in each enemy Psychic phase.
    ``character = true`` marks a CHARACTER (targets of Mind War, Might of Heroes).
    """

    psyker: bool = False
    powers: Names = Field(default_factory=list, description="powers known besides Smite")
    manifest: int = Field(1, ge=0, le=10, description="powers attempted per own phase (8E-1.2)")
    deny: int = Field(1, ge=0, le=10, description="deny attempts per enemy phase (8E-1.2)")
    character: bool = False


class Side(SideSpec):
    """An 8th-edition army."""

    units: list[Unit] = Field(min_length=1, max_length=MAX_UNITS)


class Game(Spec):
    """Game settings; every default is the spec's (8E-5, 8E-6, 8E-8)."""

    battle_rounds: int = Field(
        5, ge=1, le=MAX_BATTLE_ROUNDS, description="battle rounds (8E-8.1)"
    )
    first_player: Player = Field(0, description="who has the first Psychic phase")
    phase_limit: int | None = Field(
        None, ge=1, le=2 * MAX_BATTLE_ROUNDS,
        description="stop after this many Psychic phases (1: the first player's only)",
    )  # fmt: skip
    deny_range: Inches = Field(24.0, description="deny range in inches (8E-5.1)")
    perils_mortal_wounds: str = Field("D3", description="Perils damage to the psyker (8E-6.1)")
    perils_blast_range: Inches = Field(6.0, description="Perils blast range (8E-6.2)")
    perils_blast_mortal_wounds: str = Field("D3", description="per unit in range (8E-6.2)")
    power_values: dict[Name, SignedValue] = Field(
        default_factory=dict, max_length=MAX_POWERS,
        description="override the value of value-effect powers by name",
    )  # fmt: skip

    @field_validator("perils_mortal_wounds", "perils_blast_mortal_wounds", mode="before")
    @classmethod
    def _dice(cls, v: str | int) -> str:
        return _as_text(v)


class Scenario(ScenarioSpec):
    """An 8th-edition scenario file."""

    edition: Literal["8th"]
    game: Game = Game()
    sides: list[Side] = Field(min_length=2, max_length=2)
    powers_file: str | None = Field(
        None, description="another power data file (relative to the scenario file)"
    )

    @model_validator(mode="after")
    def _psyker_fields(self) -> Scenario:
        for i, side in enumerate(self.sides):
            for j, unit in enumerate(side.units):
                where = f"sides.{i}.units.{j}"
                if not unit.psyker:
                    for key in ("powers", "manifest", "deny"):
                        if key in unit.model_fields_set:
                            raise field_problem(
                                f"{where}.{key}",
                                f"{unit.name!r} is not a PSYKER (8E-1.2)",
                                "set psyker = true, or remove the field",
                            )
                seen: set[str] = set()
                for k, power in enumerate(unit.powers):
                    if power in seen:
                        raise field_problem(
                            f"{where}.powers.{k}",
                            f"power {power!r} is listed twice",
                            "each power once",
                        )
                    seen.add(power)
        return self


def powers_path(powers_file: str | None, source: str) -> str:
    """Path of the power data file a scenario read from ``source`` uses (``None``: shipped)."""
    if powers_file is None:
        return str(POWERS_FILE)
    p = Path(powers_file)
    if not p.is_absolute():
        p = Path(source).parent / p
    return str(p)


def load_scenario(data: dict, source: str) -> tuple[Scenario, PowerFile]:
    """Validate scenario data read from ``source`` and the power data file it uses.

    Unknown power names (units' ``powers``, ``game.power_values``) are reported against the
    scenario with the list of known names; a bad data file is reported against that file.

    Raises:
        ScenarioError: naming the file, the field and the allowed values.
    """
    scenario = validate(Scenario, data, source)
    path = powers_path(scenario.powers_file, source)
    if scenario.powers_file is not None and not Path(path).is_file():
        raise ScenarioError(
            source, "powers_file", f"no such file {path!r}", "a path to a power TOML file"
        )
    catalogue = load_powers(path)
    by_name = {p.name: p for p in catalogue.powers}
    allowed = ", ".join(by_name)
    for i, side in enumerate(scenario.sides):
        for j, unit in enumerate(side.units):
            for k, power in enumerate(unit.powers):
                if power not in by_name:
                    raise ScenarioError(
                        source,
                        f"sides.{i}.units.{j}.powers.{k}",
                        f"unknown power {power!r}",
                        allowed,
                    )
    for name in scenario.game.power_values:
        if name not in by_name:
            raise ScenarioError(
                source, f"game.power_values.{name}", f"unknown power {name!r}", allowed
            )
        if by_name[name].effect.value is None:
            values = ", ".join(p.name for p in catalogue.powers if p.effect.value is not None)
            raise ScenarioError(
                source,
                f"game.power_values.{name}",
                f"{name!r} has no value effect to override",
                values,
            )
    return scenario, catalogue
