"""The read-only facts of one 2nd-edition scenario: names, sizes, cards and powers (2E-1 to 2E-8).

:class:`SecondFacts` is built once from a validated scenario, the power-card data and the warp
deck by :meth:`SecondFacts.build`. The rules copy its fields as their own attributes
(``rules.units``, ``rules.ml``...) and :class:`~.views.SecondViews` reads it, so the views need
a state and the facts only, never the rules class. Nothing in it changes during a game.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from psygym.core import CHANCE, TERMINAL
from psygym.editions.second.actions import ActionLayout
from psygym.editions.second.data import DuelEffect, PowerSpec, load_deck, load_powers
from psygym.editions.second.spec import (
    GameSettings,
    RuleSettings,
    SecondScenario,
    SecondUnit,
    draw_pool,
)
from psygym.editions.second.state import OVER, RESPONSE, TURN, Effect, SecondState

MEMO_SIZE = 200_000
"""Entries a memo of the rules or views keeps before it is cleared (long runs stay bounded)."""


@dataclass(frozen=True, eq=False)
class SecondFacts:
    """What one scenario fixes for a whole game (see the module docstring).

    Units are numbered in scenario order over both sides, psykers in the order of their units,
    powers by their position in the power data.

    Attributes:
        scenario_name: the scenario's name.
        settings: the scenario's ``[rules]`` settings (every default of rules/second.md).
        game: the scenario's ``[game]`` settings.
        power_data: the power cards, by power index.
        deck_counts: card counts of the warp deck in ``Card`` order (2E-2).
        power_index: power index by name.
        force_range: per power, the lowest and highest Force that may be paid (2E-1.1,
            ``variable_min_force``).
        power_value: per power, the scenario's ``power_values`` entry or ``None``.
        effect_table: per power, its effect by Force paid (``PowerSpec.effect``).
        units, owner: per unit, its validated spec and its side.
        side_names: the two sides' names.
        num_units: the number of units.
        side_units: per side, its units.
        max_wounds: per unit, its wounds in all.
        psyker_unit: per psyker, its unit; ``unit_psyker``: per unit, its psyker or -1.
        num_psykers: the number of psykers.
        ml, psyker_side, hood: per psyker, its mastery level, its side and whether it wears a
            psychic hood (2E-5.2).
        side_psykers: per side, its psykers.
        draw_pools: per psyker, the powers it draws from at set-up, or ``None`` (2E-1.1).
        num_slots: power-card slots per psyker.
        initial_powers: per psyker, the power in each slot before set-up (-1: empty).
        psyker_names: per psyker, the name of its unit.
        actions: the public :class:`~.actions.ActionLayout` of the scenario.
        end_base, nullify_base, cast_base, num_actions: the layout's first end-power, first
            nullify-in-play and first cast action, and its size.
    """

    scenario_name: str
    settings: RuleSettings
    game: GameSettings
    power_data: tuple[PowerSpec, ...]
    deck_counts: tuple[int, ...]
    power_index: dict[str, int]
    force_range: tuple[tuple[int, int], ...]
    power_value: tuple[float | None, ...]
    effect_table: tuple[dict[int, object], ...]
    units: tuple[SecondUnit, ...]
    owner: tuple[int, ...]
    side_names: tuple[str, ...]
    num_units: int
    side_units: tuple[tuple[int, ...], ...]
    max_wounds: tuple[int, ...]
    psyker_unit: tuple[int, ...]
    unit_psyker: tuple[int, ...]
    num_psykers: int
    ml: tuple[int, ...]
    psyker_side: tuple[int, ...]
    side_psykers: tuple[tuple[int, ...], ...]
    hood: tuple[bool, ...]
    draw_pools: tuple[tuple[int, ...] | None, ...]
    num_slots: int
    initial_powers: tuple[tuple[int, ...], ...]
    psyker_names: tuple[str, ...]
    actions: ActionLayout
    end_base: int
    nullify_base: int
    cast_base: int
    num_actions: int

    @classmethod
    def build(
        cls,
        scenario: SecondScenario,
        powers: tuple[PowerSpec, ...] | None = None,
        deck: tuple[int, ...] | None = None,
    ) -> SecondFacts:
        """The facts of ``scenario`` (validated).

        Args:
            scenario: the validated scenario.
            powers: the power-card data (default: the shipped ``data/powers.toml``).
            deck: card counts of the warp deck in ``Card`` order (default: ``data/deck.toml``).
        """
        settings = scenario.rules
        power_data = powers if powers is not None else load_powers()
        floor = settings.variable_min_force
        force_range = tuple(
            (min(max(p.min_force, floor), p.max_force) if p.variable else p.min_force, p.max_force)
            for p in power_data
        )
        units, owner = [], []
        for side_idx, side in enumerate(scenario.sides):
            for unit in side.units:
                units.append(unit)
                owner.append(side_idx)
        psyker_unit = tuple(i for i, u in enumerate(units) if u.psyker is not None)
        num_psykers = len(psyker_unit)
        profiles = [units[u].psyker for u in psyker_unit]
        psyker_side = tuple(owner[u] for u in psyker_unit)
        power_index = {p.name: i for i, p in enumerate(power_data)}
        ml_limits = settings.ml_limits_power_level
        fixed = [p.powers or [] for p in profiles]
        num_slots = max([len(f) or p.mastery for f, p in zip(fixed, profiles)] or [1])
        actions = ActionLayout(num_psykers, num_slots, len(units))
        return cls(
            scenario_name=scenario.name,
            settings=settings,
            game=scenario.game,
            power_data=power_data,
            deck_counts=tuple(deck if deck is not None else load_deck()),
            power_index=power_index,
            force_range=force_range,
            power_value=tuple(scenario.power_values.get(p.name) for p in power_data),
            effect_table=tuple({e.force: e for e in p.effects} for p in power_data),
            units=tuple(units),
            owner=tuple(owner),
            side_names=tuple(side.name for side in scenario.sides),
            num_units=len(units),
            side_units=tuple(tuple(u for u in range(len(units)) if owner[u] == s) for s in (0, 1)),
            max_wounds=tuple(u.models * u.wounds for u in units),
            psyker_unit=psyker_unit,
            unit_psyker=tuple(
                psyker_unit.index(i) if u.psyker is not None else -1 for i, u in enumerate(units)
            ),
            num_psykers=num_psykers,
            ml=tuple(p.mastery for p in profiles),
            psyker_side=psyker_side,
            side_psykers=tuple(
                tuple(i for i in range(num_psykers) if psyker_side[i] == s) for s in (0, 1)
            ),
            hood=tuple(p.psychic_hood for p in profiles),
            draw_pools=tuple(
                draw_pool(p, power_data, ml_limits) if p.disciplines else None for p in profiles
            ),
            num_slots=num_slots,
            initial_powers=tuple(
                tuple(power_index[n] for n in f) + (-1,) * (num_slots - len(f)) for f in fixed
            ),
            psyker_names=tuple(units[u].name for u in psyker_unit),
            actions=actions,
            end_base=actions.end_base,
            nullify_base=actions.nullify_base,
            cast_base=actions.cast_base,
            num_actions=actions.num_actions,
        )

    def fields(self) -> dict[str, object]:
        """Every field by name (what the rules copy as their own attributes)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def next_drawer(self, powers: tuple[tuple[int, ...], ...]) -> int:
        """The psyker that draws a power card next at set-up, or -1 when set-up is done (2E-1.1).

        The first psyker (in psyker order) with a draw pool and fewer cards than its ML.
        """
        for i, pool in enumerate(self.draw_pools):
            if pool is not None and powers[i].count(-1) > self.num_slots - self.ml[i]:
                return i
        return -1

    # The rules class takes the methods below as its own (one definition, no extra call).
    def current_player(self, state: SecondState) -> int:
        """0 or 1 at a decision, else CHANCE or TERMINAL."""
        stage = state.stage
        if stage == OVER:
            return TERMINAL
        if state.effects:
            return CHANCE
        if stage == TURN:
            return state.to_move
        if stage == RESPONSE:
            return 1 - self.psyker_side[state.pending.psyker]  # the responder (2E-5.2)
        return CHANCE  # SETUP, FLUX, DEAL, ROLL

    def active(self, state: SecondState) -> int:
        """The player whose Psychic phase it is."""
        return (self.game.first_player + state.phase) % 2

    def battle_round(self, state: SecondState) -> int:
        """Battle round of the state, from 1."""
        return min(state.phase // 2 + 1, self.game.battle_rounds)

    def effect_units(self, eff: Effect) -> tuple[int, int]:
        """``(attacker unit, victim unit)`` of an effect, Reflection included (2E-5.2)."""
        caster = self.psyker_unit[eff.psyker]
        if not eff.reflected:
            return caster, eff.target
        if isinstance(self.effect_table[eff.power][eff.force], DuelEffect):
            return eff.target, caster
        return caster, caster


__all__ = ["MEMO_SIZE", "SecondFacts"]
