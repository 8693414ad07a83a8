"""A manifested power's effect, wounds and the score in 7th edition (7E-7, 7E-8.2).

:class:`SeventhEffects` is the part of :class:`~.rules.SeventhRules` that resolves a power that
takes effect. A blessing, malediction or conjuration scores its ``value`` for the caster's side
and stays in force on its target until its owner's next Psychic phase (7E-7.2). A witchfire or
a nova wounds its targets one by one (7E-7.1): a chance node over the wounds where they are not
certain (the distributions of :mod:`.chances`), at once where they are; Life Leech heals its
caster a wound if it wounded. Each wound lost moves the score by the unit's value per wound,
each wound healed back (7E-8.2); a unit with no wounds left loses its psyker.
"""

from __future__ import annotations

from psygym.core import Event, EventKind
from psygym.editions.seventh.state import Draft, Stage
from psygym.editions.seventh.transitions import new_event
from psygym.text import plural

# Stage members as module constants (the same objects): in Python 3.11 ``Stage.SELECT`` is a
# class-attribute lookup through the enum metaclass, and transitions make dozens.
_SELECT = Stage.SELECT
_EFFECT = Stage.EFFECT
# Event kinds likewise (``EventKind.PERILS`` is the same slow lookup).
_EV_HEAL = EventKind.HEAL
_EV_MANIFEST = EventKind.MANIFEST
_EV_SLAIN = EventKind.SLAIN
_EV_WOUNDS = EventKind.WOUNDS


class SeventhEffects:
    """Effects, wounds and the score (7E-7, 7E-8.2), mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.SeventhFacts` fields, held by the rules as
    attributes) and the wound distributions of :class:`~.chances.SeventhChances`.
    """

    def _on_effect(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        cast = d.cast
        assert cast is not None
        self._wound(d, d.targets[0], a, ev, self.powers[cast.power].name)
        attack = self.powers[cast.power].effect.attack
        if a > 0 and attack is not None and attack.heal_caster:
            self._heal(d, cast.caster, ev)
        d.targets = d.targets[1:]
        self._next_target(d, ev)

    def _manifest(self, d: Draft, ev: list[Event] | None) -> None:
        cast = d.cast
        assert cast is not None
        power = self.powers[cast.power]
        side = self.owner[cast.caster]
        value = power.effect.value
        if ev is not None:
            key = (_EV_MANIFEST, cast.power, side)
            got = self._event_memo.get(key)
            if got is None:
                event = new_event(
                    _EV_MANIFEST,
                    f"{power.name} takes effect",
                    side,
                    (("power", power.name), ("value", value or 0.0)),
                )
                got = self._remember(key, [event])
            ev.extend(got)
        if value is not None:
            self._score(d, side, value)
            d.effects = d.effects | {(cast.power, cast.target, side)}
            d.stage, d.cast = _SELECT, None
            return self._settle_select(d, ev)
        if power.target == "enemies":
            d.targets = self.nova_targets(d, cast.caster, power)
        else:
            d.targets = (cast.target,)
        return self._next_target(d, ev)

    def _next_target(self, d: Draft, ev: list[Event] | None) -> None:
        """Resolve the manifested power's targets; deterministic results need no chance node."""
        cast = d.cast
        assert cast is not None
        power = self.powers[cast.power]
        while d.targets:
            target = d.targets[0]
            if d.units[target].wounds <= 0:
                d.targets = d.targets[1:]
                continue
            dist = self.effect_distribution(d, target)
            if len(dist) > 1:
                d.stage = _EFFECT
                return
            wounds = next(iter(dist))
            self._wound(d, target, wounds, ev, power.name)
            if wounds and power.effect.attack is not None and power.effect.attack.heal_caster:
                self._heal(d, cast.caster, ev)
            d.targets = d.targets[1:]
        d.stage, d.cast = _SELECT, None
        self._settle_select(d, ev)

    def _score(self, d: Draft, side: int, value: float) -> None:
        d.score = d.score + (value if side == 0 else -value)

    def _wound(self, d: Draft, unit: int, amount: int, ev: list[Event] | None, cause: str) -> None:
        u = d.units[unit]
        amount = min(amount, u.wounds)
        if amount <= 0:
            if ev is not None:
                ev.extend(self._wound_events(unit, 0, False, cause))
            return
        left = u.wounds - amount
        if left > 0:
            d.set_unit(unit, wounds=left)
        else:
            d.set_unit(unit, wounds=left, psyker=False)  # a destroyed unit has no psyker
        # 7E-8.2: the wounded unit's owner loses the value, the other side gains it.
        self._score(d, 1 - self.owner[unit], amount * self.specs[unit].value_per_wound)
        if ev is not None:
            ev.extend(self._wound_events(unit, amount, left <= 0, cause))

    def _wound_events(self, unit: int, amount: int, slain: bool, cause: str) -> tuple[Event, ...]:
        """The events of ``amount`` wounds to ``unit`` from ``cause`` (and of its destruction)."""
        key = (_EV_WOUNDS, unit, amount, slain, cause)
        got = self._event_memo.get(key)
        if got is not None:
            return got
        name, owner = self.names[unit], self.owner[unit]
        if amount <= 0:
            text = f"{cause}: {name} takes no wounds"
        else:
            text = f"{cause}: {name} loses {plural(amount, 'wound')}"
        out = [new_event(_EV_WOUNDS, text, owner, (("unit", name), ("amount", amount)))]
        if slain:
            out.append(new_event(_EV_SLAIN, f"{name} is destroyed", owner, (("unit", name),)))
        return self._remember(key, out)

    def _heal(self, d: Draft, unit: int, ev: list[Event] | None) -> None:
        u = d.units[unit]
        if u.wounds <= 0 or u.wounds >= self.max_wounds[unit]:
            return
        d.set_unit(unit, wounds=u.wounds + 1)
        self._score(d, self.owner[unit], self.specs[unit].value_per_wound)
        if ev is not None:
            ev.append(new_event(_EV_HEAL, f"{self.names[unit]} regains a wound", self.owner[unit]))


__all__ = ["SeventhEffects"]
