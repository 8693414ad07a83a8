"""The Rogue Trader ability list and generation charts, loaded from ``data/*.toml`` (RT-1, RT-4).

``data/abilities.toml`` holds all 40 abilities of the seed with level, cost, effect (a small
vocabulary, see the file's header) and ``value``; ``data/charts.toml`` the psi-level and
number-of-abilities charts per mastery and the D10 charts per level. Both are validated with
pydantic on load; a problem raises one :class:`~psygym.scenario.ScenarioError` naming the file and
the field.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from psygym.scenario import (
    MAX_POWERS,
    Inches,
    Name,
    Names,
    ScenarioError,
    Spec,
    Value,
    dice_field,
    field_problem,
    read_toml,
    validate,
)

DATA_DIR = Path(__file__).parent / "data"
"""Folder of the edition's data files."""

Effect = Literal[
    "mental", "missile", "aura", "destroy_aura", "transfer_aura", "steal_mind", "remove",
    "confuse", "fear", "cure_injury", "cure_wounds", "strength_of_mind", "value",
]  # fmt: skip
"""The effect vocabulary of ``abilities.toml`` (RT-4)."""

SAVED_EFFECTS = frozenset({"mental", "steal_mind", "remove", "confuse", "fear"})
"""Effects that may allow a psychic save (the ability's ``psychic_save`` flag decides)."""

SCORING_EFFECTS = frozenset({"mental", "missile", "remove"})
"""Effects that change the score from the first turn: wounds, and a unit put out of the fight
scoring its wounds (RT-4.5, RT-6.2). An ability with a ``value`` of its own scores too; the
cures score only wounds lost before, and the other effects never."""


class AbilitySpec(Spec):
    """One ability of ``abilities.toml``."""

    name: Name
    level: int = Field(ge=1, le=4, description="ability level 1-4 (RT-1.2)")
    cost: int = Field(ge=0, le=100, description="psi-points (per wound for cure_wounds)")
    effect: Effect
    target: Literal["enemy", "friend", "self"] = "self"
    range: Inches = Field(0.0, description="inches (0 for self)")
    strength: int = Field(0, ge=0, le=10)
    damage: str = "1"
    aura: int = Field(0, ge=0, le=4, description="aura level given or dispelled")
    duration: str = "D6"
    psychic_save: bool = False
    value: Value = Field(0.0, description="score of the effect when it works")
    summary: str = ""

    @field_validator("damage", "duration")
    @classmethod
    def _dice(cls, v: str) -> str:
        return dice_field(v)

    @model_validator(mode="after")
    def _consistent(self) -> AbilitySpec:
        # Plain ValueErrors: pydantic then names the ability's position (abilities.<i>).
        if self.effect in ("mental", "missile") and self.strength < 1:
            raise ValueError(f"{self.name}: an attack needs a strength (allowed: 1..10)")
        if self.effect in ("aura", "destroy_aura") and self.aura < 1:
            raise ValueError(f"{self.name}: an aura effect needs an aura level (allowed: 1..4)")
        if self.psychic_save and self.effect not in SAVED_EFFECTS:
            allowed = ", ".join(sorted(SAVED_EFFECTS))
            raise ValueError(
                f"{self.name}: effect {self.effect} has no psychic save (allowed: {allowed})"
            )
        if self.psychic_save and self.target != "enemy":
            raise ValueError(f"{self.name}: a psychic save needs target enemy (allowed: enemy)")
        targeted = self.effect not in ("aura", "strength_of_mind", "value")
        if targeted and self.target == "self":
            raise ValueError(
                f"{self.name}: effect {self.effect} needs target enemy or friend (allowed: "
                "enemy, friend)"
            )
        if self.target != "self" and self.range <= 0:
            raise ValueError(f"{self.name}: a targeted ability needs a range > 0")
        return self


class AbilityFile(Spec):
    """``abilities.toml``: the list of abilities, names unique."""

    abilities: list[AbilitySpec] = Field(min_length=1, max_length=MAX_POWERS)

    @model_validator(mode="after")
    def _unique(self) -> AbilityFile:
        seen: set[str] = set()
        for i, a in enumerate(self.abilities):
            if a.name in seen:
                raise field_problem(
                    f"abilities.{i}.name", f"ability {a.name!r} is listed twice", "unique names"
                )
            seen.add(a.name)
        return self


class MasteryRow(Spec):
    """One mastery grade of the generation charts (RT-1.1)."""

    mastery: int = Field(ge=1, le=4)
    psi_level: int = Field(ge=1, le=200, description="typical psi-level")
    random_psi_level: str
    abilities: int = Field(ge=0, le=40, description="typical number of abilities")
    random_abilities: str

    @field_validator("random_psi_level", "random_abilities")
    @classmethod
    def _dice(cls, v: str) -> str:
        return dice_field(v)


class ChartFile(Spec):
    """``charts.toml``: psi-level and ability-count charts and the D10 chart of each level."""

    max_abilities: int = Field(10, ge=1, le=40)
    mastery: list[MasteryRow] = Field(min_length=4, max_length=4)
    charts: dict[Literal["1", "2", "3", "4"], Names]

    @model_validator(mode="after")
    def _complete(self) -> ChartFile:
        if [row.mastery for row in self.mastery] != [1, 2, 3, 4]:
            raise field_problem("mastery", "rows must be masteries 1, 2, 3, 4 in order", "1..4")
        for level in ("1", "2", "3", "4"):
            if level not in self.charts:
                raise field_problem(f"charts.{level}", "missing chart", "a list of 10 names")
            if len(self.charts[level]) != 10:
                raise field_problem(f"charts.{level}", "a D10 chart needs 10 entries", "10 names")
        return self


class AbilityData:
    """All abilities (ids are positions in ``abilities.toml``) and the generation charts.

    Raises:
        ScenarioError: a chart names an unknown ability or one of another level.
    """

    def __init__(self, abilities: list[AbilitySpec], charts: ChartFile, charts_source: str):
        self.abilities: tuple[AbilitySpec, ...] = tuple(abilities)
        self.names: tuple[str, ...] = tuple(a.name for a in abilities)
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        self.charts = charts
        for level, names in charts.charts.items():
            for j, name in enumerate(names):
                where = f"charts.{level}.{j}"
                if name not in self.index:
                    raise ScenarioError(
                        charts_source, where, f"unknown ability {name!r}", ", ".join(self.names)
                    )
                found = self.abilities[self.index[name]].level
                if found != int(level):
                    raise ScenarioError(
                        charts_source,
                        where,
                        f"{name} is a level {found} ability",
                        f"level {level} abilities",
                    )

    def __len__(self) -> int:
        return len(self.abilities)

    def by_level(self, max_level: int) -> tuple[int, ...]:
        """Ids of the abilities on the charts of levels 1..``max_level`` (RT-1.2, RT-1.3)."""
        out = []
        for level in range(1, max_level + 1):
            out += [self.index[n] for n in self.charts.charts[str(level)]]  # type: ignore[index]
        return tuple(sorted(out))

    def mastery_row(self, mastery: int) -> MasteryRow:
        """The generation chart row of a mastery grade (RT-1.1)."""
        return self.charts.mastery[mastery - 1]


def _load(model: type[Spec], path: Path) -> Spec:
    return validate(model, read_toml(path), str(path))


@lru_cache(maxsize=4)
def load_data(data_dir: str = str(DATA_DIR)) -> AbilityData:
    """Load and validate ``abilities.toml`` and ``charts.toml`` (cached).

    Raises:
        ScenarioError: a data file is missing or invalid; the message names file and field.
    """
    d = Path(data_dir)
    abilities = _load(AbilityFile, d / "abilities.toml")
    charts = _load(ChartFile, d / "charts.toml")
    return AbilityData(abilities.abilities, charts, str(d / "charts.toml"))  # type: ignore[attr-defined]
