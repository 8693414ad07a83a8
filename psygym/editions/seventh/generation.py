"""Power generation before the battle in 7th edition (7E-2).

:class:`SeventhGeneration` is the part of :class:`~.rules.SeventhRules` that plays it. Each
psyker that generates powers, in unit order, makes as many picks as its mastery level (7E-2.1):
a discipline (a decision only when more than one is still open), the roll of a numbered power
of it that the psyker does not know (a chance node: duplicates are re-rolled, so the roll is
uniform over the unknown ones), then keep that power or swap it for the discipline's Primaris
power (7E-2.2, asked only while the Primaris power is not known). Psychic Focus gives a psyker
that generated every power from one discipline its Primaris power too (7E-2.3). Fixed powers and
Force are known from the start (7E-2.4, the initial state). The first Psychic phase follows
(:mod:`.phases`).
"""

from __future__ import annotations

from psygym.core import Event, EventKind
from psygym.editions.seventh.facts import MEMO_SIZE
from psygym.editions.seventh.state import _DISCIPLINE, _GEN_ROLL, _SWAP, Draft, State
from psygym.editions.seventh.transitions import new_event

# Event kinds likewise (``EventKind.PERILS`` is the same slow lookup).
_EV_GENERATE = EventKind.GENERATE


class SeventhGeneration:
    """Power generation (7E-2), mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.SeventhFacts` fields, held by the rules as
    attributes) and the memo ``self._open_memo``; hands over to
    :meth:`~.phases.SeventhPhases._start_phase`.
    """

    def _on_discipline(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        d.stage, d.gen_disc = _GEN_ROLL, a - self.DISC

    def _on_gen_roll(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        d.gen_power = a
        disc = self.disciplines[d.gen_disc]
        prim = self.primaris[disc]
        if ev is not None:
            ev.append(
                new_event(
                    _EV_GENERATE,
                    f"{self.names[d.gen_unit]} rolls {self.powers[a].name} ({disc})",
                    self.owner[d.gen_unit],
                )
            )
        if prim < 0 or prim in d.units[d.gen_unit].powers:
            return self._finish_pick(d, swap=False, ev=ev)
        d.stage = _SWAP  # 7E-2.2
        return None

    def _on_swap(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        self._finish_pick(d, swap=a == self.SWAP + 1, ev=ev)

    def _next_generation(self, d: Draft, after: int, ev: list[Event] | None = None) -> None:
        for u in range(after + 1, len(self.specs)):
            psy = self.specs[u].psyker
            if psy is not None and psy.disciplines:
                d.gen_unit, d.gen_pick = u, 0
                return self._begin_pick(d, ev)
        d.gen_unit, d.gen_pick, d.gen_disc, d.gen_power = -1, 0, -1, -1
        return self._start_phase(d, 0)

    def _begin_pick(self, d: Draft, ev: list[Event] | None = None) -> None:
        psy = self.specs[d.gen_unit].psyker
        assert psy is not None
        if d.gen_pick >= psy.mastery:
            return self._focus(d, ev)
        options = self._open_disciplines(d, d.gen_unit)
        if not options:
            return self._focus(d, ev)
        if len(options) == 1:
            d.stage, d.gen_disc = _GEN_ROLL, options[0]
        else:
            d.stage, d.gen_disc, d.gen_power = _DISCIPLINE, -1, -1
        return None

    def _finish_pick(self, d: Draft, swap: bool, ev: list[Event] | None) -> None:
        disc = self.disciplines[d.gen_disc]
        power = self.primaris[disc] if swap else d.gen_power
        if swap and ev is not None:
            ev.append(
                new_event(
                    _EV_GENERATE,
                    f"{self.names[d.gen_unit]} takes the Primaris power "
                    f"{self.powers[power].name} instead",
                    self.owner[d.gen_unit],
                )
            )
        unit = d.units[d.gen_unit]
        d.set_unit(
            d.gen_unit,
            powers=tuple(sorted({*unit.powers, power})),
            generated=(*unit.generated, d.gen_disc),
        )
        d.gen_pick, d.gen_disc, d.gen_power = d.gen_pick + 1, -1, -1
        return self._begin_pick(d, ev)

    def _focus(self, d: Draft, ev: list[Event] | None = None) -> None:
        unit = d.units[d.gen_unit]
        if unit.generated and len(set(unit.generated)) == 1:  # 7E-2.3 Psychic Focus
            disc = self.disciplines[unit.generated[0]]
            prim = self.primaris[disc]
            if prim >= 0 and prim not in unit.powers:
                d.set_unit(d.gen_unit, powers=tuple(sorted({*unit.powers, prim})))
                if ev is not None:
                    ev.append(
                        new_event(
                            _EV_GENERATE,
                            f"Psychic Focus: {self.names[d.gen_unit]} generated all its powers "
                            f"from {disc}, so it also knows its Primaris power "
                            f"{self.powers[prim].name} (7E-2.3)",
                            self.owner[d.gen_unit],
                        )
                    )
        return self._next_generation(d, d.gen_unit, ev)

    def _open_disciplines(self, s: State, unit: int) -> list[int]:
        """Disciplines ``unit`` may still roll on (7E-2.1), memoised by its known powers."""
        key = (unit, s.units[unit].powers)
        got = self._open_memo.get(key)
        if got is None:
            if len(self._open_memo) >= MEMO_SIZE:
                self._open_memo.clear()
            got = self._open_memo[key] = self._find_open_disciplines(s, unit)
        return list(got)

    def _find_open_disciplines(self, s: State, unit: int) -> list[int]:
        known = set(s.units[unit].powers)
        spec = self.specs[unit].psyker
        assert spec is not None
        return [
            self.disciplines.index(d)
            for d in spec.disciplines
            if any(p not in known for p in self.numbered[d])
        ]


__all__ = ["SeventhGeneration"]
