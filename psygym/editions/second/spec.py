"""2nd-edition scenario format: units with mastery levels and power cards, game and rule settings.

A scenario file has ``edition = "2nd"``, ``name``, ``description``, a ``[game]`` table (battle
rounds, first player), a ``[rules]`` table holding every default of ``rules/second.md`` as a
named setting (each may be left out), an optional ``[power_values]`` table overriding the score
of ``value`` effects per power, and two ``[[sides]]`` with ``[[sides.units]]``. A psyker is a
unit with a ``psyker`` table (as in the 7th edition's files): ``mastery`` and either fixed
``powers`` or ``disciplines`` to draw its power cards from at set-up (2E-1.1), and optionally
``psychic_hood``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from psygym.editions.second.data import CARD_KEYS, DeckCounts, PowerSpec, load_powers
from psygym.scenario import (
    MAX_BATTLE_ROUNDS,
    MAX_POWERS,
    MAX_UNITS,
    Name,
    Names,
    ScenarioSpec,
    SideSpec,
    Spec,
    UnitSpec,
    Value,
    dice_field,
    field_problem,
    repeated,
)

MAX_POWER_CARDS = 4
"""Most power cards a psyker may hold (ML 4)."""


class Psyker(Spec):
    """Psyker profile of a unit (2E-1.1): mastery level and power cards."""

    mastery: int = Field(ge=1, le=4, description="mastery level (ML 1-4)")
    powers: Names | None = Field(None, description="fixed power cards (names)")
    disciplines: Names | None = Field(None, description="draw ML power cards from these")
    psychic_hood: bool = Field(False, description="lets its side re-roll a Nullify (2E-5.2)")


class SecondUnit(UnitSpec):
    """A 2nd-edition unit; a psyker when it has a ``psyker`` table (2E-1.1)."""

    ballistic_skill: int = Field(4, ge=1, le=10, description="for powers that hit on BS")
    psyker: Psyker | None = None


class SecondSide(SideSpec):
    """One player's army."""

    units: list[SecondUnit] = Field(min_length=1, max_length=MAX_UNITS)


class GameSettings(Spec):
    """The ``[game]`` table: length of the game and who goes first (2E-8)."""

    battle_rounds: int = Field(
        5, ge=1, le=MAX_BATTLE_ROUNDS, description="2E-8: battle rounds (default 5)"
    )
    first_player: int = Field(0, ge=0, le=1, description="the side whose phase comes first")


class RuleSettings(Spec):
    """The ``[rules]`` table: every default of ``rules/second.md`` as a named setting."""

    ml_limits_power_level: bool = Field(
        False, description="2E-1.2: a psyker may only use powers of level <= its ML"
    )
    variable_min_force: int = Field(
        1,
        ge=0,
        le=3,
        description="2E-1.1: least Force a variable-cost power is cast with (a card's own "
        "higher lower bound wins); 1: no card text gives an effect for 0 Force",
    )
    warp_flux_dice: int = Field(2, ge=1, le=6, description="2E-3.1: F, the dice of warp flux")
    flux_cap: Literal["both-sides", "none"] = Field(
        "both-sides",
        description="2E-3.2: F is capped by the psykers of both sides that can use powers",
    )
    deal_first: Literal["active", "inactive"] = Field(
        "active", description="2E-3.3: who gets the first (and any odd) card"
    )
    retain_specials: bool = Field(
        False, description="2E-4.3: keep non-Force cards in hand at the end of a phase"
    )
    public_discards: bool = Field(
        False,
        description="2E-4.3: hands discarded at the end of a phase go face up (both players "
        "see them); false: face down, seen only by the player who discarded them",
    )
    responses_per_power: int = Field(
        1, ge=0, le=8, description="2E-5.2: response cards the opponent may play on one power"
    )
    nullify_target: int = Field(4, ge=2, le=6, description="2E-5.2: Nullify succeeds on this+")
    nullify_ml_step: int = Field(
        1, ge=0, le=3, description="2E-5.2: shift of the Nullify roll per ML of difference"
    )
    nullify_best: int = Field(2, ge=2, le=6, description="2E-5.2: easiest Nullify roll")
    nullify_worst: int = Field(6, ge=2, le=6, description="2E-5.2: hardest Nullify roll")
    destroy_power: Literal["lose-card", "cancel"] = Field(
        "lose-card", description="2E-5.2: Destroy Power also removes the power card for the game"
    )
    reflection: Literal["caster", "cancel"] = Field(
        "caster", description="2E-5.2: a reflected power resolves against the caster's unit"
    )
    daemonic_attack_below: int = Field(
        4, ge=0, le=12, description="2E-5.2: Daemonic Attack slays the caster if D6 + ML < this"
    )
    psychic_duel_dice: str = Field("2D6", description="2E-7: dice each duellist rolls")
    psychic_duel_add_ml: bool = Field(True, description="2E-7: add the ML to the duel roll")

    _dice = field_validator("psychic_duel_dice")(dice_field)

    @model_validator(mode="after")
    def _bounds(self) -> RuleSettings:
        if self.nullify_best > self.nullify_worst:
            raise field_problem(
                "rules.nullify_best",
                f"{self.nullify_best} is harder than nullify_worst {self.nullify_worst}",
                f"2..{self.nullify_worst}",
            )
        return self


class SecondScenario(ScenarioSpec):
    """A whole 2nd-edition scenario."""

    edition: Literal["2nd"]
    sides: list[SecondSide] = Field(min_length=2, max_length=2)
    game: GameSettings = Field(default_factory=GameSettings)
    rules: RuleSettings = Field(default_factory=RuleSettings)
    power_values: dict[Name, Value] = Field(
        default_factory=dict, max_length=MAX_POWERS,
        description="score of a power's value effects, by power name",
    )  # fmt: skip
    deck: DeckCounts | None = Field(
        None,
        description="the warp deck's card counts, every kind listed (default: data/deck.toml, "
        "the 36-card deck of 2E-2.1); a shortened deck makes a game small enough to solve",
    )

    @model_validator(mode="after")
    def _known_powers(self) -> SecondScenario:
        self.check_powers(load_powers())
        if self.deck is not None and sum(self.deck_counts()) < 1:
            raise field_problem("deck", "the deck has no cards", "at least one card")
        return self

    def deck_counts(self) -> tuple[int, ...] | None:
        """The scenario's own deck in card order, or ``None`` for the shipped deck."""
        if self.deck is None:
            return None
        return tuple(getattr(self.deck, key) for key in CARD_KEYS)

    def check_powers(self, powers: tuple[PowerSpec, ...]) -> None:
        """Check every power and discipline name against the power data.

        Raises:
            ValueError: from :func:`psygym.scenario.field_problem`, naming the field.
        """
        names = [p.name for p in powers]
        allowed = ", ".join(names)
        disciplines = sorted({d for p in powers for d in p.disciplines})
        for name, value in self.power_values.items():
            if name not in names:
                raise field_problem(f"power_values.{name}", f"unknown power {name!r}", allowed)
            if value < 0:
                raise field_problem(f"power_values.{name}", f"negative value {value}", ">= 0")
        for i, side in enumerate(self.sides):
            for j, unit in enumerate(side.units):
                where = f"sides.{i}.units.{j}"
                psyker = unit.psyker
                if psyker is None:
                    continue
                if unit.models != 1:
                    raise field_problem(f"{where}.models", "a psyker is a single model", "1")
                if (psyker.powers is None) == (psyker.disciplines is None):
                    raise field_problem(
                        f"{where}.psyker",
                        f"psyker {unit.name!r} needs exactly one of powers or disciplines",
                        "powers = [...] (fixed cards) or disciplines = [...] (drawn at set-up)",
                    )
                if psyker.powers is not None:
                    self._check_fixed(psyker.powers, names, allowed, f"{where}.psyker")
                else:
                    self._check_disciplines(psyker, powers, disciplines, f"{where}.psyker")

    @staticmethod
    def _check_fixed(chosen: list[str], names: list[str], allowed: str, where: str) -> None:
        if not 1 <= len(chosen) <= MAX_POWER_CARDS:
            raise field_problem(
                f"{where}.powers", f"{len(chosen)} power cards", f"1..{MAX_POWER_CARDS} cards"
            )
        for k, name in enumerate(chosen):
            if name not in names:
                raise field_problem(f"{where}.powers.{k}", f"unknown power {name!r}", allowed)
            if name in chosen[:k]:
                raise field_problem(
                    f"{where}.powers.{k}", f"power {name!r} is listed twice", "distinct powers"
                )

    def _check_disciplines(
        self, psyker: Psyker, powers: tuple[PowerSpec, ...], known: list[str], where: str
    ) -> None:
        chosen = psyker.disciplines or []
        if not chosen:
            raise field_problem(f"{where}.disciplines", "no discipline given", ", ".join(known))
        for k, name in enumerate(chosen):
            if name not in known:
                raise field_problem(
                    f"{where}.disciplines.{k}", f"unknown discipline {name!r}", ", ".join(known)
                )
        k = repeated(chosen)
        if k is not None:  # a discipline listed twice adds no card to draw from (2E-1.1)
            raise field_problem(
                f"{where}.disciplines.{k}",
                f"discipline {chosen[k]!r} is listed twice",
                "each discipline once",
            )
        pool = draw_pool(psyker, powers, self.rules.ml_limits_power_level)
        if len(pool) < psyker.mastery:
            raise field_problem(
                f"{where}.disciplines",
                f"only {len(pool)} powers to draw for a mastery level {psyker.mastery}",
                f"disciplines holding at least {psyker.mastery} usable powers",
            )


def draw_pool(psyker: Psyker, powers: tuple[PowerSpec, ...], ml_limits: bool) -> tuple[int, ...]:
    """Indices of the powers a psyker draws from at set-up (2E-1.1): those of its disciplines.

    With ``ml_limits`` (2E-1.2 setting) only powers of level <= the psyker's ML qualify.
    """
    chosen = set(psyker.disciplines or ())
    return tuple(
        i
        for i, p in enumerate(powers)
        if chosen.intersection(p.disciplines) and (not ml_limits or p.level <= psyker.mastery)
    )
