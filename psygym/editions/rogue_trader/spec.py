"""Scenario files of the Rogue Trader edition: units with RT profiles, psykers, game settings.

A Rogue Trader scenario (``edition = "rt"``) has a ``[game]`` table (:class:`RTGame`, every
default of rules/rogue-trader.md is a named setting) and two ``[[sides]]`` of
``[[sides.units]]`` (:class:`RTUnit`): the shared unit fields (``wounds``, ``toughness``,
``save``, ``leadership``, ``position``, ``models``, ``value_per_wound``) plus ``will_power`` and
``intelligence`` (RT-1.4) and, for psykers, ``mastery`` 1-4 with ``abilities`` (a list of names
or ``"random"``), and optionally ``psi_level`` / ``psi_points``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from psygym.editions.rogue_trader.abilities import AbilityData, load_data
from psygym.scenario import (
    MAX_POWERS,
    MAX_UNITS,
    Name,
    Names,
    ScenarioSpec,
    SideSpec,
    SignedValue,
    Spec,
    UnitSpec,
    field_problem,
)


class RTGame(Spec):
    """Game settings of a Rogue Trader scenario (defaults from rules/rogue-trader.md)."""

    turns: int = Field(6, ge=1, le=200, description="player turns in total, alternating (RT-6.1)")
    first_player: int = Field(0, ge=0, le=1, description="player whose turn comes first")
    abilities_per_turn: int = Field(1, ge=1, le=10, description="abilities per psyker (RT-2.1)")
    max_bid: int | None = Field(
        None,
        ge=0,
        le=500,
        description="optional house cap on the psi-points one side may bid on a psychic save; "
        "the books have none: by default a bid is limited only by the bidder's points (RT-3.2, "
        "RT-3.3)",
    )
    no_test_at: int = Field(
        12, ge=1, le=200, description="with this many points or more an ability needs no test"
    )
    psi_level: Literal["typical", "random"] = Field(
        "typical", description="psi-level of psykers without an explicit psi_level (RT-1.1)"
    )
    ability_count: Literal["typical", "random"] = Field(
        "typical", description="number of abilities of psykers with abilities = 'random'"
    )
    removal_scores_wounds: bool = Field(
        True, description="a unit put out of the fight scores its remaining wounds (RT-4.5)"
    )
    augment_breaks_rest: bool = Field(
        True, description="spending points on an augmented save cancels a rest (RT-5)"
    )
    ability_values: dict[Name, SignedValue] = Field(
        default_factory=dict, max_length=MAX_POWERS,
        description="ability name -> value, overriding abilities.toml",
    )  # fmt: skip


class RTUnit(UnitSpec):
    """A unit or character with a Rogue Trader profile; ``mastery >= 1`` makes it a psyker."""

    will_power: int = Field(7, ge=0, le=20, description="WP for psychic saves (RT-3.1)")
    intelligence: int = Field(7, ge=0, le=20, description="caps the number of abilities")
    mastery: int = Field(0, ge=0, le=4, description="psychic mastery 1-4, 0 for non-psykers")
    abilities: Names | Literal["random"] | None = Field(
        None, description="ability names, or 'random' to roll them on the charts (RT-1.3)"
    )
    psi_level: int | None = Field(None, ge=0, le=500, description="explicit psi-level")
    psi_points: int | None = Field(None, ge=0, le=500, description="psi-points at the start")


class RTSide(SideSpec):
    """One player's units."""

    units: list[RTUnit] = Field(min_length=1, max_length=MAX_UNITS)


class RTScenario(ScenarioSpec):
    """A whole Rogue Trader scenario."""

    edition: Literal["rt"]
    game: RTGame = Field(default_factory=RTGame)
    sides: list[RTSide] = Field(min_length=2, max_length=2)

    @model_validator(mode="after")
    def _psykers(self) -> RTScenario:
        data = load_data()
        names = ", ".join(data.names)
        psykers = 0
        for i, side in enumerate(self.sides):
            for j, unit in enumerate(side.units):
                where = f"sides.{i}.units.{j}"
                if unit.invulnerable is not None:
                    raise field_problem(
                        f"{where}.invulnerable",
                        "Rogue Trader has no invulnerable saves (auras give extra saves)",
                        "leave it out",
                    )
                if unit.mastery == 0:
                    for key in ("abilities", "psi_level", "psi_points"):
                        if getattr(unit, key) is not None:
                            raise field_problem(
                                f"{where}.{key}",
                                "only psykers have psychic abilities and points",
                                "set mastery 1-4 or leave the field out",
                            )
                    continue
                psykers += 1
                if unit.models != 1:
                    raise field_problem(f"{where}.models", "a psyker is a single character", "1")
                if unit.abilities is None:
                    raise field_problem(
                        f"{where}.abilities",
                        "a psyker needs its abilities",
                        "a list of ability names or 'random'",
                    )
                if isinstance(unit.abilities, list):
                    self._check_abilities(unit, where, data, names)
                level = unit.psi_level
                if level is None and self.game.psi_level == "typical":
                    level = data.mastery_row(unit.mastery).psi_level
                if level is not None and unit.psi_points is not None and unit.psi_points > level:
                    raise field_problem(
                        f"{where}.psi_points",
                        f"{unit.psi_points} is above the psi-level {level}",
                        f"0..{level}",
                    )
        if psykers == 0:
            raise field_problem(
                "sides", "no unit is a psyker", "at least one unit with mastery 1-4"
            )
        for name in self.game.ability_values:
            if name not in data.index:
                raise field_problem(f"game.ability_values.{name}", "unknown ability", names)
        return self

    @staticmethod
    def _check_abilities(unit: RTUnit, where: str, data: AbilityData, names: str) -> None:
        seen: set[str] = set()
        assert isinstance(unit.abilities, list)
        index = data.index
        for k, name in enumerate(unit.abilities):
            if name not in index:
                raise field_problem(f"{where}.abilities.{k}", f"unknown ability {name!r}", names)
            level = data.abilities[index[name]].level
            if level > unit.mastery:
                raise field_problem(
                    f"{where}.abilities.{k}",
                    f"{name} is level {level}, above mastery {unit.mastery} (RT-1.2)",
                    f"abilities of level 1..{unit.mastery}",
                )
            if name in seen:
                raise field_problem(
                    f"{where}.abilities.{k}", f"{name} is listed twice", "each ability once"
                )
            seen.add(name)
        cap = min(unit.intelligence, data.charts.max_abilities)
        if len(unit.abilities) > cap:
            raise field_problem(
                f"{where}.abilities",
                f"{len(unit.abilities)} abilities, more than intelligence {unit.intelligence} "
                f"or the maximum {data.charts.max_abilities} allow (RT-1.1)",
                f"at most {cap}",
            )
