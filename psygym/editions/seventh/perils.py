"""Perils of the Warp in 7th edition (7E-6).

:class:`SeventhPerils` is the part of :class:`~.rules.SeventhRules` that resolves Perils, in
full right after the casting roll and before the deny (the rules' module docstring): the D6 on
the scenario's Perils table, the Leadership test of the rows that ask for one (a chance node
with the exact 2D6 chance), then the row's outcome: a wound; a Warp Surge (a 3++ save and its
score, 7E-6.6); Dragged into the Warp (a model's worth of wounds and the unit's psyker, then D6
S6 AP1 hits on the models left, 7E-6.1); Mental Purge (a known power forgotten, 7E-6.2); Power
Drain (D3 dice off both pools, 7E-6.3). The cast then goes on
(:meth:`~.casting.SeventhCasting._after_perils`).
"""

from __future__ import annotations

from psygym.core import Event, EventKind
from psygym.editions.seventh.state import Draft, Stage
from psygym.editions.seventh.transitions import new_event
from psygym.text import plural

# Stage members as module constants (the same objects): in Python 3.11 ``Stage.SELECT`` is a
# class-attribute lookup through the enum metaclass, and transitions make dozens.
_LD_TEST = Stage.LD_TEST
_PERILS_HITS = Stage.PERILS_HITS
_PURGE = Stage.PURGE
_DRAIN = Stage.DRAIN
# Event kinds likewise (``EventKind.PERILS`` is the same slow lookup).
_EV_DRAIN = EventKind.DRAIN
_EV_LD_TEST = EventKind.LD_TEST
_EV_PERILS_ROLL = EventKind.PERILS_ROLL
_EV_PURGE = EventKind.PURGE
_EV_SLAIN = EventKind.SLAIN
_EV_SURGE = EventKind.SURGE


class SeventhPerils:
    """Perils of the Warp (7E-6), mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.SeventhFacts` fields, held by the rules as
    attributes: ``perils_table``, ``scenario.game.warp_surge_value``...).
    """

    def _on_perils(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        self._perils(d, a, ev)

    def _on_ld_test(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        cast = d.cast
        assert cast is not None
        row = self.perils_table[d.perils_roll]
        passed = bool(a)
        if ev is not None:
            ev.append(
                new_event(
                    _EV_LD_TEST,
                    f"{self.names[cast.caster]} "
                    f"{'passes' if passed else 'fails'} its Leadership test",
                    self.owner[cast.caster],
                )
            )
        self._perils_outcome(d, row.on_pass if passed else row.on_fail, ev)

    def _on_perils_hits(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        assert d.cast is not None
        self._wound(d, d.cast.caster, a, ev, "Dragged into the Warp hits")
        self._after_perils(d, ev)

    def _on_purge(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        cast = d.cast
        assert cast is not None
        unit = d.units[cast.caster]
        d.set_unit(cast.caster, powers=tuple(p for p in unit.powers if p != a))  # 7E-6.2
        if ev is not None:
            ev.append(
                new_event(
                    _EV_PURGE,
                    f"{self.names[cast.caster]} forgets {self.powers[a].name}",
                    self.owner[cast.caster],
                )
            )
        self._after_perils(d, ev)

    def _on_drain(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        if ev is not None:
            ev.append(
                new_event(_EV_DRAIN, f"Power Drain: both pools lose {plural(a, 'die')}", None)
            )
        d.pools = tuple(max(0, x - a) for x in d.pools)  # 7E-6.3
        self._after_perils(d, ev)

    def _perils(self, d: Draft, roll: int, ev: list[Event] | None) -> None:
        row = self.perils_table[roll]
        if ev is not None:
            ev.append(
                new_event(
                    _EV_PERILS_ROLL,
                    f"Perils roll {roll}: {row.name}",
                    d.active,
                    (("roll", roll),),
                )
            )
        d.perils_roll = roll
        if row.ld_test:
            d.stage = _LD_TEST
            return
        self._perils_outcome(d, row.on_pass, ev)

    def _perils_outcome(self, d: Draft, outcome: str, ev: list[Event] | None) -> None:
        cast = d.cast
        assert cast is not None
        caster = cast.caster
        row = self.perils_table[d.perils_roll]
        if outcome == "wound":
            self._wound(d, caster, 1, ev, row.name)
        elif outcome == "surge":
            d.set_unit(caster, surge=True)
            self._score(d, self.owner[caster], self.scenario.game.warp_surge_value)
            if ev is not None:
                ev.append(
                    new_event(
                        _EV_SURGE,
                        f"{self.names[caster]} is filled with a Warp Surge",
                        self.owner[caster],
                    )
                )
        elif outcome == "removed":
            lost = d.units[caster].wounds % self.specs[caster].wounds or self.specs[caster].wounds
            self._wound(d, caster, lost, ev, "Dragged into the Warp")
            d.set_unit(caster, psyker=False)
            if ev is not None:
                ev.append(
                    new_event(
                        _EV_SLAIN,
                        f"{self.names[caster]}'s psyker is dragged into the warp",
                        self.owner[caster],
                        (("unit", self.names[caster]),),
                    )
                )
            if d.units[caster].wounds > 0:
                d.stage = _PERILS_HITS
                return
        if row.extra == "purge" and d.units[caster].wounds > 0 and d.units[caster].powers:
            d.stage = _PURGE
        elif row.extra == "drain":
            d.stage = _DRAIN
        else:
            self._after_perils(d, ev)


__all__ = ["SeventhPerils"]
