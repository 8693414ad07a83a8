"""Set-up of a Rogue Trader game: psi-levels and abilities, given or random (RT-1).

:class:`RTGeneration` is the part of :class:`~.rules.RogueTraderRules` that builds the first
state and, when the scenario asks for random generation, its set-up chance nodes: each random
psi-level (``Phase.SETUP_LEVEL``, RT-1.1), each random number of abilities
(``Phase.SETUP_COUNT``) and each ability drawn (``Phase.SETUP_DRAW``). A repeated roll is
re-rolled (RT-1.3): D(mastery) for the level then D10 on that chart, re-rolled when already
held, is exactly a uniform draw among the abilities of level <= mastery not yet held, which is
what each draw node lists.
"""

from __future__ import annotations

from fractions import Fraction

from psygym.combat import capped
from psygym.core import Event, EventKind
from psygym.dice import distribution
from psygym.editions.rogue_trader.state import Events, Phase, State, UnitState
from psygym.editions.rogue_trader.units import put, shared, shared_units
from psygym.kernel import evolve

_SETUP_LEVEL, _SETUP_COUNT, _SETUP_DRAW = Phase.SETUP_LEVEL, Phase.SETUP_COUNT, Phase.SETUP_DRAW


class RTGeneration:
    """Set-up (RT-1), mixed into :class:`~.rules.RogueTraderRules`.

    Reads the scenario's facts (:class:`~.facts.RTFacts` fields, which the rules hold as
    attributes) and the ability data ``self.data``; the first turn comes from
    :class:`~.turns.RTTurns` and events are recorded with the rules' ``_note``.
    """

    def _build_initial_state(self) -> State:
        """The first state: units as the scenario gives them, then set-up and the first turn."""
        units = []
        for i, u in enumerate(self.specs):
            if not self.psyker[i]:
                units.append(shared(UnitState(hp=self.max_hp[i])))
                continue
            level = u.psi_level
            if level is None:
                level = 0 if self.random_level[i] else self.data.mastery_row(u.mastery).psi_level
            points = level if u.psi_points is None else min(u.psi_points, level)
            held = (
                ()
                if u.abilities == "random"
                else tuple(sorted(self.data.index[a] for a in u.abilities or ()))
            )
            unit = UnitState(hp=self.max_hp[i], points=points, level=level, abilities=held)
            units.append(shared(unit))
        s = State(units=shared_units(tuple(units)))
        ev: list[Event] = []
        s = self._setup_from(s, 0, ev)
        return self._settle(s, ev)

    def _setup_from(self, s: State, u: int, ev: Events, *, count_stage: bool = False) -> State:
        """The next set-up chance node from psyker ``u`` on, or the first turn when none is left.

        ``count_stage``: ``u``'s psi-level is rolled already, its abilities come next.
        """
        for i in range(u, self.n_units):
            if not count_stage and self.random_level[i]:
                return evolve(s, phase=_SETUP_LEVEL, actor=i)
            count_stage = False
            if self.random_abilities[i]:
                if self.game.ability_count == "random":
                    return evolve(s, phase=_SETUP_COUNT, actor=i)
                row = self.data.mastery_row(self.specs[i].mastery)
                k = min(row.abilities, self._count_cap(i))
                if k > 0:
                    return evolve(s, phase=_SETUP_DRAW, actor=i, left=k)
        return self._start_game(s, ev)

    def _set_level(self, s: State, level: int, ev: Events) -> State:
        """Psyker ``s.actor`` rolled psi-level ``level``; its points start there (RT-1.1)."""
        u = s.actor
        spec = self.specs[u]
        points = level if spec.psi_points is None else min(spec.psi_points, level)
        units = put(s.units, u, level=level, points=points)
        self._note(
            ev,
            lambda: Event(
                EventKind.SETUP,
                f"{self.names[u]}'s psi-level is {level}.",
                self.owner[u],
                (("unit", self.names[u]), ("psi_level", level)),
            ),
            ("level", u, level),
        )
        return self._setup_from(evolve(s, units=units), u, ev, count_stage=True)

    def _set_count(self, s: State, count: int, ev: Events) -> State:
        """Psyker ``s.actor`` rolled ``count`` random abilities, drawn next (RT-1.1)."""
        u = s.actor
        self._note(
            ev,
            lambda: Event(
                EventKind.SETUP,
                f"{self.names[u]} has {count} random abilities.",
                self.owner[u],
                (("unit", self.names[u]), ("abilities", count)),
            ),
            ("count", u, count),
        )
        if count > 0:
            return evolve(s, phase=_SETUP_DRAW, left=count)
        return self._setup_from(s, u + 1, ev)

    def _draw(self, s: State, a: int, ev: Events) -> State:
        """Psyker ``s.actor`` draws ability ``a``, one it does not hold yet (RT-1.3)."""
        u = s.actor
        held = tuple(sorted((*s.units[u].abilities, a)))
        self._note(
            ev,
            lambda: Event(
                EventKind.SETUP,
                f"{self.names[u]} knows {self.abilities[a].name}.",
                self.owner[u],
                (("unit", self.names[u]), ("ability", self.abilities[a].name)),
            ),
            ("draw", u, a),
        )
        s = evolve(s, units=put(s.units, u, abilities=held), left=s.left - 1)
        if s.left > 0 and self._draw_pool(s, u):
            return s
        return self._setup_from(evolve(s, left=0), u + 1, ev)

    def _start_game(self, s: State, ev: Events) -> State:
        """Set-up is over: the first player's first turn begins (RT-6.1)."""
        units = list(s.units)
        return self._begin_turn(s, units, False, 0, self.game.first_player, ev)

    def _level_outcomes(self, u: int) -> list[tuple[int, Fraction]]:
        """Psi-levels of psyker ``u`` rolled at random (RT-1.1)."""
        row = self.data.mastery_row(self.specs[u].mastery)
        return [(o, p) for o, p in sorted(distribution(row.random_psi_level).items()) if p > 0]

    def _count_outcomes(self, u: int) -> list[tuple[int, Fraction]]:
        """Random numbers of abilities of psyker ``u`` (RT-1.1, capped)."""
        dist = distribution(self.data.mastery_row(self.specs[u].mastery).random_abilities)
        return [(o, p) for o, p in sorted(capped(dist, self._count_cap(u)).items()) if p > 0]

    def expected_abilities(self, u: int) -> float:
        """How many abilities psyker ``u`` draws at set-up, in expectation (RT-1.1, capped)."""
        if self.game.ability_count == "random":
            return float(sum(o * p for o, p in self._count_outcomes(u)))
        return float(min(self.data.mastery_row(self.specs[u].mastery).abilities,
                         self._count_cap(u)))  # fmt: skip

    def _count_cap(self, u: int) -> int:
        """The most abilities psyker ``u`` may hold: intelligence, the charts' cap, its levels."""
        spec = self.specs[u]
        return min(
            spec.intelligence, self.data.charts.max_abilities, len(self.data.by_level(spec.mastery))
        )

    def _draw_pool(self, s: State, u: int) -> tuple[int, ...]:
        """The abilities psyker ``u`` may still draw: of its levels, not held yet (RT-1.3)."""
        held = set(s.units[u].abilities)
        return tuple(a for a in self.data.by_level(self.specs[u].mastery) if a not in held)

    def _possible(self, u: int) -> tuple[int, ...]:
        """Abilities psyker ``u`` may hold in some game (drawn at random or given, RT-1.3)."""
        spec = self.specs[u]
        if spec.abilities == "random":
            return self.data.by_level(spec.mastery)
        return tuple(sorted(self.data.index[a] for a in spec.abilities or ()))


__all__ = ["RTGeneration"]
