"""Casting a power and Deny the Witch in 7th edition (7E-4, 7E-5).

:class:`SeventhCasting` is the part of :class:`~.rules.SeventhRules` that plays a cast: the
choice of psyker, power and target, or the end of the phase (7E-4.1); the dice (7E-4.3); the
casting roll, its successes and whether Perils strike (7E-4.3, 7E-4.4; Perils itself is
:mod:`.perils`). Once the roll and any Perils are resolved, a power that passed its warp charge
can be denied: the deny dice (7E-5.1) and the deny roll (7E-5.2, 7E-5.3); a power not denied
takes effect (:mod:`.effects`).
"""

from __future__ import annotations

from psygym.core import Event, EventKind
from psygym.editions.seventh.state import Cast, Draft, Stage, recast
from psygym.editions.seventh.transitions import new_event
from psygym.text import plural

# Stage members as module constants (the same objects): in Python 3.11 ``Stage.SELECT`` is a
# class-attribute lookup through the enum metaclass, and transitions make dozens.
_SELECT = Stage.SELECT
_DICE = Stage.DICE
_CAST_ROLL = Stage.CAST_ROLL
_PERILS = Stage.PERILS
_DENY = Stage.DENY
_DENY_ROLL = Stage.DENY_ROLL
# Event kinds likewise (``EventKind.PERILS`` is the same slow lookup).
_EV_ATTEMPT = EventKind.ATTEMPT
_EV_DENIED = EventKind.DENIED
_EV_DENY_ATTEMPT = EventKind.DENY_ATTEMPT
_EV_DENY_FAILED = EventKind.DENY_FAILED
_EV_END_PHASE = EventKind.END_PHASE
_EV_PASSED = EventKind.PASSED
_EV_PERILS = EventKind.PERILS


class SeventhCasting:
    """Casting and denying (7E-4, 7E-5), mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.SeventhFacts` fields, held by the rules as
    attributes) and the ``Cast`` each choose-cast action starts (``self._new_casts``).
    """

    # The handlers of this section's stages (``rules._on_stage``): a decision or a chance outcome.
    def _on_select(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        if a == 0:  # 7E-4.1: end the phase
            if ev is not None:
                key = (_EV_END_PHASE, d.active)
                got = self._event_memo.get(key)
                if got is None:
                    text = f"{self._side(d.active)} ends the Psychic phase"
                    got = self._remember(key, [new_event(_EV_END_PHASE, text, d.active)])
                ev.extend(got)
            return self._start_phase(d, d.phase + 1, ev)
        d.stage, d.cast = _DICE, self._new_casts[a - self.CAST]
        return None

    def _on_dice(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        assert d.cast is not None
        d.stage, d.cast = _CAST_ROLL, recast(d.cast, dice=a - self.DICE + 1)

    def _on_cast_roll(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        self._cast_rolled(d, a // 2, bool(a % 2), ev)

    def _on_deny(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        self._deny(d, a - self.DENY, ev)

    def _on_deny_roll(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        cast = d.cast
        assert cast is not None
        if a:
            if ev is not None:
                key = (_EV_DENIED, d.active, cast.power)
                got = self._event_memo.get(key)
                if got is None:
                    text = f"{self._side(1 - d.active)} denies {self.powers[cast.power].name}"
                    got = self._remember(key, [new_event(_EV_DENIED, text, 1 - d.active)])
                ev.extend(got)
            d.stage, d.cast = _SELECT, None
            return self._settle_select(d, ev)
        if ev is not None:
            key = (_EV_DENY_FAILED, d.active)
            got = self._event_memo.get(key)
            if got is None:
                event = new_event(_EV_DENY_FAILED, "the deny fails", 1 - d.active)
                got = self._remember(key, [event])
            ev.extend(got)
        return self._manifest(d, ev)

    def _cast_rolled(self, d: Draft, successes: int, perils: bool, ev: list[Event] | None) -> None:
        cast = d.cast
        assert cast is not None
        power = self.powers[cast.power]
        active = d.active
        pools = d.pools
        d.pools = (
            (pools[0] - cast.dice, pools[1]) if active == 0 else (pools[0], pools[1] - cast.dice)
        )
        d.attempted = d.attempted | {(cast.caster, cast.power)}
        passed = successes >= power.warp_charge
        perils_now = perils or (power.perils_on_fail and not passed)  # 7E-4.4, Vortex of Doom
        if ev is not None:
            key = (_EV_ATTEMPT, cast.caster, cast.power, cast.dice, successes, perils, active)
            got = self._event_memo.get(key)
            if got is None:
                got = self._remember(key, self._attempt_events(cast, successes, perils, active))
            ev.extend(got)
        if perils_now:
            d.stage, d.cast = _PERILS, recast(cast, successes=successes, perils=perils)
            return
        # No Perils: the dice are forgotten at once, as _after_perils would (one copy, not two).
        d.cast = recast(cast, successes=successes, dice=0)
        self._after_perils(d, ev)

    def _attempt_events(self, cast: Cast, successes: int, perils: bool, active: int) -> list[Event]:
        """The events of a casting roll: the attempt, and whether it passed and Perils strike."""
        power = self.powers[cast.power]
        passed = successes >= power.warp_charge
        out = [
            new_event(
                _EV_ATTEMPT,
                f"{self.names[cast.caster]} casts {power.name} with "
                f"{plural(cast.dice, 'die')}: {plural(successes, 'success')}"
                f"{' and Perils of the Warp' if perils else ''}",
                active,
                (("power", power.name), ("dice", cast.dice), ("successes", successes)),
            )
        ]
        if passed:
            out.append(new_event(_EV_PASSED, f"{power.name} is cast", active))
        if perils or (power.perils_on_fail and not passed):
            out.append(
                new_event(
                    _EV_PERILS,
                    f"{self.names[cast.caster]} suffers Perils of the Warp",
                    active,
                )
            )
        return out

    def _after_perils(self, d: Draft, ev: list[Event] | None) -> None:
        # Once the roll and any Perils are resolved, only the successes matter to what follows
        # (7E-5.3): forgetting the dice, the perils flag and the perils roll lets solvers merge
        # states that differ only in how they got here.
        cast = d.cast
        assert cast is not None
        power = self.powers[cast.power]
        d.perils_roll = 0
        # 7E-6 note: a power still takes effect when its caster dies to Perils; a power aimed at a
        # unit needs that unit still on the table (conjurations and novas aim at none).
        if cast.successes < power.warp_charge or (
            power.target in ("enemy", "friendly", "self") and d.units[cast.target].wounds <= 0
        ):
            d.stage, d.cast = _SELECT, None
            return self._settle_select(d, ev)
        if cast.dice or cast.perils:
            d.cast = recast(cast, dice=0, perils=False)
        if d.pools[1 - d.active] > 0:
            d.stage = _DENY
            return None
        return self._manifest(d, ev)

    def _deny(self, d: Draft, dice: int, ev: list[Event] | None) -> None:
        if dice == 0:
            return self._manifest(d, ev)
        assert d.cast is not None
        if ev is not None:
            unit, threshold = self.deny_unit_and_threshold(d, d.cast)
            key = (_EV_DENY_ATTEMPT, unit, threshold, dice, d.active)
            got = self._event_memo.get(key)
            if got is None:
                who = self.names[unit] if unit is not None else self._side(1 - d.active)
                event = new_event(
                    _EV_DENY_ATTEMPT,
                    f"{who} tries to deny with {plural(dice, 'die')} ({threshold}+)",
                    1 - d.active,
                    (("dice", dice),),
                )
                got = self._remember(key, [event])
            ev.extend(got)
        pools = d.pools
        pools = (pools[0] - dice, pools[1]) if d.active == 1 else (pools[0], pools[1] - dice)
        d.stage, d.pools, d.cast = _DENY_ROLL, pools, recast(d.cast, deny_dice=dice)
        return None


__all__ = ["SeventhCasting"]
