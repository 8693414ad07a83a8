"""The read-only facts of one Rogue Trader scenario: names, sizes and tables (RT-1 to RT-6).

:class:`RTFacts` is built once from a validated scenario and the ability data by
:meth:`RTFacts.build`. The rules copy its fields as their own attributes (``rules.names``,
``rules.bid_limit``...) and :class:`~.views.RTViews` reads it, so the views need a state and the
facts only, never the rules class. Nothing in it changes during a game.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from psygym.core import CHANCE, TERMINAL
from psygym.dice import distribution
from psygym.editions.rogue_trader.abilities import AbilityData, AbilitySpec
from psygym.editions.rogue_trader.actions import ActionLayout
from psygym.editions.rogue_trader.spec import RTGame, RTScenario, RTUnit
from psygym.editions.rogue_trader.state import DECISIONS, Phase, State

_OVER, _SAVE_BID = Phase.OVER, Phase.SAVE_BID  # Enum attribute access is slow on hot paths


@dataclass(frozen=True, eq=False)
class RTFacts:
    """What one scenario fixes for a whole game (see the module docstring).

    Units are numbered in scenario order, side 0's units first; abilities by their position in
    ``data/abilities.toml``.

    Attributes:
        game: the scenario's ``[game]`` settings.
        names, owner, specs: per unit, its name, its side and its validated spec.
        side_names: the two sides' names.
        n_units: the number of units.
        side_units, psykers_of: per side, its units and its psykers (unit indices).
        max_hp, per_model: per unit, its wounds in all and per model.
        single: per unit, whether it is a single model (a character).
        psyker: per unit, whether it is a psyker (mastery above 0, RT-1).
        vpw: per unit, the score of one of its wounds (RT-6.2).
        abilities: the ability data, by ability id.
        value: per ability, what it scores when it works (the scenario's ``ability_values``
            first, RT-4.8).
        n_abilities: the number of abilities in the data.
        random_level, random_abilities: per unit, whether its psi-level and its abilities are
            generated at random at set-up (RT-1.1, RT-1.3).
        max_psi_points: the most psi-points any psyker of the scenario can hold (its psi-level,
            or the highest random roll, RT-1.1).
        bid_limit: the largest bid of the scenario (RT-3.2, RT-3.3): ``max_psi_points``, or the
            optional house cap ``game.max_bid`` when lower.
        max_number: the largest number action (``bid_limit`` or the most wounds Cure Wounds
            can heal, whichever is larger).
        actions: the scenario's :class:`~.actions.ActionLayout`.
        target_base, number_base, num_actions: the layout's first target action, first number
            action and size.
    """

    game: RTGame
    names: tuple[str, ...]
    owner: tuple[int, ...]
    specs: tuple[RTUnit, ...]
    side_names: tuple[str, ...]
    n_units: int
    side_units: tuple[tuple[int, ...], ...]
    psykers_of: tuple[tuple[int, ...], ...]
    max_hp: tuple[int, ...]
    per_model: tuple[int, ...]
    single: tuple[bool, ...]
    psyker: tuple[bool, ...]
    vpw: tuple[float, ...]
    abilities: tuple[AbilitySpec, ...]
    value: tuple[float, ...]
    n_abilities: int
    random_level: tuple[bool, ...]
    random_abilities: tuple[bool, ...]
    max_psi_points: int
    bid_limit: int
    max_number: int
    actions: ActionLayout
    target_base: int
    number_base: int
    num_actions: int

    @classmethod
    def build(cls, scenario: RTScenario, data: AbilityData) -> RTFacts:
        """The facts of ``scenario`` (validated) with the ability data ``data``."""
        game = scenario.game
        specs, owner = [], []
        for p, side in enumerate(scenario.sides):
            for unit in side.units:
                specs.append(unit)
                owner.append(p)
        n = len(specs)
        psyker = tuple(u.mastery > 0 for u in specs)
        side_units = tuple(tuple(i for i in range(n) if owner[i] == p) for p in (0, 1))
        max_hp = tuple(u.wounds * u.models for u in specs)
        single = tuple(u.models == 1 for u in specs)
        # Random generation set-up (RT-1).
        random_level = tuple(
            u.mastery > 0 and u.psi_level is None and game.psi_level == "random" for u in specs
        )
        max_psi_points = max(
            (_most_points(data, specs[i], random_level[i]) for i in range(n) if psyker[i]),
            default=0,
        )
        # RT-3.2/RT-3.3 set no cap: a bid is limited by the bidder's points (which never exceed
        # max_psi_points), or by the optional house cap ``game.max_bid``.
        bid_limit = max_psi_points if game.max_bid is None else min(game.max_bid, max_psi_points)
        cure_max = max((max_hp[i] for i in range(n) if single[i]), default=0)
        max_number = max(bid_limit, cure_max)
        n_abilities = len(data.abilities)
        actions = ActionLayout(n_abilities, n, max_number)
        return cls(
            game=game,
            names=tuple(u.name for u in specs),
            owner=tuple(owner),
            specs=tuple(specs),
            side_names=tuple(side.name for side in scenario.sides),
            n_units=n,
            side_units=side_units,
            psykers_of=tuple(tuple(i for i in side_units[p] if psyker[i]) for p in (0, 1)),
            max_hp=max_hp,
            per_model=tuple(u.wounds for u in specs),
            single=single,
            psyker=psyker,
            vpw=tuple(float(u.value_per_wound) for u in specs),
            abilities=data.abilities,
            value=tuple(float(game.ability_values.get(a.name, a.value)) for a in data.abilities),
            n_abilities=n_abilities,
            random_level=random_level,
            random_abilities=tuple(u.abilities == "random" for u in specs),
            max_psi_points=max_psi_points,
            bid_limit=bid_limit,
            max_number=max_number,
            actions=actions,
            target_base=actions.target_base,
            number_base=actions.number_base,
            num_actions=actions.num_actions,
        )

    def fields(self) -> dict[str, object]:
        """Every field by name (what the rules copy as their own attributes)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    # The rules class takes the two methods below as its own (one definition, no extra call).
    def current_player(self, state: State) -> int:
        """Player to decide, :data:`CHANCE` or :data:`TERMINAL`.

        The target decides its augmented-save bid (RT-3.3); the active player every other
        decision.
        """
        phase = state.phase
        if phase == _OVER:
            return TERMINAL
        if phase == _SAVE_BID:
            return self.owner[state.target]
        if phase in DECISIONS:
            return state.active
        return CHANCE

    def will_power(self, s: State, t: int) -> int:
        """Current will power of unit ``t`` (with Strength of Mind, RT-4.7)."""
        return self.specs[t].will_power + s.units[t].wp_bonus


def _most_points(data: AbilityData, spec: RTUnit, random_level: bool) -> int:
    """The most psi-points a psyker can ever hold: its psi-level, or the highest roll.

    Points start at most at the psi-level and resting never raises them above it (RT-1.1,
    RT-5), so this bounds every bid the psyker can make (RT-3.2, RT-3.3).
    """
    if spec.psi_level is not None:
        return spec.psi_level
    row = data.mastery_row(spec.mastery)
    if random_level:
        return max(distribution(row.random_psi_level))
    return row.psi_level


__all__ = ["RTFacts"]
