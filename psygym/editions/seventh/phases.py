"""The Psychic phases of 7th edition: order, warp charge pools and the end of the game.

:class:`SeventhPhases` is the part of :class:`~.rules.SeventhRules` that starts each Psychic
phase: the players alternate, the first player's first (7E-8.1); a side with no living psyker
that knows a power skips its phase (no pool roll); the blessings, maledictions and Warp Surges of
the active side end (7E-6.6, 7E-7.2). It rolls the pools: the D6 plus each side's living
psykers' mastery levels, plus the active side's bonus (7E-3.1). It keeps the casting decision
while there is a cast to make (pool dice left and a legal cast), and ends the game after the
last phase or once a side has no unit left (7E-8.1).
"""

from __future__ import annotations

from psygym.core import Event, EventKind
from psygym.editions.seventh.state import NO_ATTEMPTS, Draft, Stage, State, UnitState
from psygym.editions.seventh.transitions import new_event
from psygym.kernel import evolve
from psygym.text import plural

# Stage members as module constants (the same objects): in Python 3.11 ``Stage.SELECT`` is a
# class-attribute lookup through the enum metaclass, and transitions make dozens.
_PHASE_ROLL = Stage.PHASE_ROLL
_SELECT = Stage.SELECT
_OVER = Stage.OVER
# Event kinds likewise (``EventKind.PERILS`` is the same slow lookup).
_EV_PHASE = EventKind.PHASE
_EV_POOLS = EventKind.POOLS


class SeventhPhases:
    """Psychic phases, pools and the end of the game (7E-3, 7E-8.1), mixed into the rules.

    Reads the scenario's facts (:class:`~.facts.SeventhFacts` fields, held by the rules as
    attributes) and keeps the answers of ``_side_facts`` and ``_both_sides_alive`` for the last
    units tuple asked about (``_last_facts``, ``_last_alive``).
    """

    def _on_phase_roll(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        active = d.active
        bonus = self._pool_bonus[active]
        # 7E-3.1: the roll plus the living psykers' mastery levels, plus the active side's bonus.
        pools = (
            a + self._living_ml(d, 0) + (bonus if active == 0 else 0),
            a + self._living_ml(d, 1) + (bonus if active == 1 else 0),
        )
        if ev is not None:
            key = (_EV_POOLS, a, active, pools)
            got = self._event_memo.get(key)
            if got is None:
                event = new_event(
                    _EV_POOLS,
                    f"Warp charge roll {a}: {self._side(active)} has "
                    f"{plural(pools[active], 'die')}, {self._side(1 - active)} "
                    f"{pools[1 - active]} to deny",
                    active,
                    (("roll", a),),
                )
                got = self._remember(key, [event])
            ev.extend(got)
        d.stage, d.pools = _SELECT, pools
        self._settle_select(d, ev)

    def _start_phase(self, d: Draft, phase: int, ev: list[Event] | None = None) -> None:
        first = self._first_player
        while True:
            if phase >= self.total_phases or not self._both_sides_alive(d):
                d.stage, d.phase, d.cast, d.targets = _OVER, phase, None, ()
                return
            active = first if phase % 2 == 0 else 1 - first
            # Blessings, maledictions and Warp Surge end at their owner's next phase (7E-6.6).
            # (Units with no Warp Surge to end keep their tuple, and effects with nothing to end
            # keep their set: memos compare them by identity.)
            units = d.units
            for i in self.side_units[active]:
                if units[i].surge:
                    d.units = tuple(
                        evolve(u, surge=False) if self.owner[i] == active and u.surge else u
                        for i, u in enumerate(units)
                    )
                    break
            d.phase, d.active, d.pools, d.cast, d.targets = phase, active, (0, 0), None, ()
            d.attempted = NO_ATTEMPTS
            effects = d.effects
            for e in effects:
                if e[2] == active:
                    d.effects = frozenset(e for e in effects if e[2] != active)
                    break
            if self._can_cast(d, active):
                if ev is not None:
                    key = (_EV_PHASE, phase, active)
                    got = self._event_memo.get(key)
                    if got is None:
                        text = (
                            f"Battle round {phase // 2 + 1}: {self._side(active)}'s Psychic phase"
                        )
                        got = self._remember(key, [new_event(_EV_PHASE, text, active)])
                    ev.extend(got)
                d.stage = _PHASE_ROLL
                return
            phase += 1

    def _settle_select(self, d: Draft, ev: list[Event] | None) -> None:
        """Stay in the casting decision while there is a cast to make, else end the phase.

        A side with no units left ends the game at once (7E-8.1).
        """
        if d.pools[d.active] > 0 and self._both_sides_alive(d) and self._legal_casts(d):
            return
        d.stage = _SELECT
        self._start_phase(d, d.phase + 1, ev)

    def _living_ml(self, s: State, side: int) -> int:
        return self._side_facts(s.units)[side][0]

    def _can_cast(self, s: State, side: int) -> bool:
        return self._side_facts(s.units)[side][1]

    def _side_facts(self, units: tuple[UnitState, ...]) -> tuple[tuple[int, bool], ...]:
        """Per side: its living psykers' mastery levels (7E-3.1), and whether one knows a power.

        Kept for the last units tuple asked about (held, compared by identity).
        """
        last = self._last_facts
        if last[0] is units:
            return last[1]
        facts = []
        for side in self.side_units:
            total, can = 0, False
            for i in side:
                u = units[i]
                if u.psyker and u.wounds > 0:
                    total += self.mastery[i]
                    can = can or bool(u.powers)
            facts.append((total, can))
        out = tuple(facts)
        self._last_facts = (units, out)
        return out

    def _both_sides_alive(self, s: State) -> bool:
        """Whether each side still has a unit with wounds (else the game ends, 7E-8.1).

        The answer for the last units tuple asked about is kept (held, compared by identity).
        """
        units = s.units
        last = self._last_alive
        if last[0] is units:
            return last[1]
        answer = True
        for side in self.side_units:
            for i in side:
                if units[i].wounds > 0:
                    break
            else:
                answer = False
                break
        self._last_alive = (units, answer)
        return answer


__all__ = ["SeventhPhases"]
