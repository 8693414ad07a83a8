"""The events of 8th-edition transitions: what happened, in words and data.

:class:`EighthEvents` is the part of :class:`~.rules.EighthRules` that builds the events a
transition reports (a unit selected, an attempt, the test, Perils, a deny, a power manifested,
wounds, a unit slain, a new Psychic phase). An event is an immutable value fixed by its
builder's arguments, so :meth:`EighthEvents._emit` builds each one (its text formatted) once
per scenario and shares it afterwards; nothing is built in event-free search.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from psygym.core import Event, EventKind
from psygym.editions.eighth.facts import MEMO_SIZE
from psygym.text import plural


def _data(**kw: Any) -> tuple[tuple[str, Any], ...]:
    """Event data as given: call sites name the keys in sorted order (``Event.data`` is sorted)."""
    return tuple(kw.items())


class EighthEvents:
    """Event builders and their memo, mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.EighthFacts` fields, held by the rules as
    attributes) and the memo ``self._event_cache``.
    """

    def _emit(self, events: list[Event] | None, make: Callable[..., Event], *args: Any) -> None:
        """Append the event ``make(*args)`` to ``events``; nothing when ``events`` is ``None``.

        An event is an immutable value fixed by its builder's arguments, so each one is built
        (text formatted) once per scenario and shared afterwards.
        """
        if events is None:
            return
        key = (make.__func__, args)  # type: ignore[attr-defined]
        event = self._event_cache.get(key)
        if event is None:
            if len(self._event_cache) >= MEMO_SIZE:
                self._event_cache.clear()
            event = self._event_cache[key] = make(*args)
        events.append(event)

    def _select_event(self, unit: int, player: int) -> Event:
        name = self.names[unit]
        text = f"{name} is selected to manifest powers."
        return Event(EventKind.SELECT, text, player, _data(unit=name))

    def _attempt_event(self, caster: int, p: int, t: int, wc: int, player: int) -> Event:
        power = self.powers[p]
        at = "" if power.target in ("self", "none") else f" at {self.names[t]}"
        text = f"{self.names[caster]} attempts {power.name} (WC {wc}){at}."
        data = _data(
            caster=self.names[caster], power=power.name, target=self.names[t], warp_charge=wc
        )
        return Event(EventKind.ATTEMPT, text, player, data)

    def _deny_attempt_event(self, unit: int, p: int, total: int, player: int) -> Event:
        name, power = self.names[unit], self.powers[p].name
        text = f"{name} attempts to deny {power} (test {total})."
        return Event(EventKind.DENY_ATTEMPT, text, player, _data(power=power, unit=name))

    def _test_event(self, caster: int, p: int, wc: int, total: int, player: int) -> Event:
        power = self.powers[p].name
        passed = total >= wc > 0  # State.passed (8E-4.1)
        text = (
            f"{self.names[caster]} rolls {total} for {power} (WC {wc}): "
            f"{'passed' if passed else 'failed'}."
        )
        kind = EventKind.PASSED if passed else EventKind.FAILED
        return Event(kind, text, player, _data(power=power, total=total))

    def _perils_event(self, caster: int, total: int, player: int) -> Event:
        name = self.names[caster]
        text = f"{name} suffers Perils of the Warp (double {1 if total == 2 else 6})."
        return Event(EventKind.PERILS, text, player, _data(unit=name))

    def _perils_slain_event(self, p: int, caster: int, player: int) -> Event:
        power = self.powers[p].name
        text = f"{power} fails: {self.names[caster]} is destroyed by Perils of the Warp."
        return Event(EventKind.FAILED, text, player, _data(power=power))

    def _deny_roll_event(self, denied: bool, denier: int, p: int, player: int) -> Event:
        name, power = self.names[denier], self.powers[p].name
        data = _data(power=power, unit=name)
        if denied:
            return Event(EventKind.DENIED, f"{name} denies {power}.", player, data)
        return Event(EventKind.DENY_FAILED, f"{name} fails to deny {power}.", player, data)

    def _manifest_event(self, p: int, target: int, wounds: int, player: int) -> Event:
        power = self.powers[p].name
        value = wounds * self.units[target].value_per_wound
        text = f"{power} is manifested: {self.names[target]} loses {plural(wounds, 'wound')}."
        return Event(
            EventKind.MANIFEST, text, player, _data(power=power, value=value, wounds=wounds)
        )

    def _value_event(self, p: int, player: int) -> Event:
        power = self.powers[p]
        text = f"{power.name} is manifested (worth {power.value:g})."
        return Event(EventKind.MANIFEST, text, player, _data(power=power.name, value=power.value))

    def _wounds_event(self, unit: int, amount: int, cause: str) -> Event:
        name = self.names[unit]
        text = f"{name} loses {plural(amount, 'wound')} to {cause}."
        return Event(EventKind.WOUNDS, text, self.side_of[unit], _data(amount=amount, unit=name))

    def _slain_event(self, unit: int) -> Event:
        name = self.names[unit]
        return Event(EventKind.SLAIN, f"{name} is destroyed.", self.side_of[unit], _data(unit=name))

    def _phase_event(self, rnd: int, active: int) -> Event:
        text = f"Battle round {rnd}: {self.side_names[active]}'s Psychic phase."
        return Event(EventKind.PHASE, text, active, _data(round=rnd))


__all__ = ["EighthEvents"]
