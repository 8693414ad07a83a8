"""Casting a power in the 2nd edition: targets, payment and resolution (2E-5.1, 2E-5.3).

:class:`SecondCasting` is the part of :class:`~.rules.SecondRules` that knows which units each
psyker's powers may target (range and kind, fixed by the scenario), lists the cast actions of a
power with their payment (0..3 Force cards or Ultimate Force, 2E-1.1, 2E-5.1), plays a cast (the
cards paid lie on the table while the opponent may answer, 2E-5.2) and finishes the power being
cast: it takes effect, possibly staying in play, or it is stopped or reflected; either way the
paid cards go to the discard pile (2E-5.3).
"""

from __future__ import annotations

from psygym.core import Event, EventKind
from psygym.editions.second.actions import PAY_OPTIONS, PAY_ULTIMATE, CastAction
from psygym.editions.second.data import Card
from psygym.editions.second.deck import NO_CARDS, add_cards, plus
from psygym.editions.second.facts import MEMO_SIZE
from psygym.editions.second.state import RESPONSE, TURN, Effect, InPlay, Pending, SecondState
from psygym.scenario import distance

_FORCE, _ULTIMATE_FORCE = int(Card.FORCE), int(Card.ULTIMATE_FORCE)


class SecondCasting:
    """Targets, casts and their resolution (2E-5.1, 2E-5.3), mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.SecondFacts` fields, held by the rules as
    attributes), the cast tables the rules build at start (``_targets``, ``_area``,
    ``_cast_codes``) and their memos; the answer to a cast is :class:`~.responses.SecondResponses`'.
    """

    def _geometry(
        self,
    ) -> tuple[dict[tuple[int, int], tuple[int, ...]], dict[tuple[int, int], tuple[int, ...]]]:
        """Per (psyker, power): the units it may target, and the enemies an area power hits."""
        targets: dict[tuple[int, int], tuple[int, ...]] = {}
        area: dict[tuple[int, int], tuple[int, ...]] = {}
        for i, unit_i in enumerate(self.psyker_unit):
            me = self.units[unit_i]
            side = self.psyker_side[i]
            for k, power in enumerate(self.power_data):
                in_range = [
                    u
                    for u in range(self.num_units)
                    if distance(me.position, self.units[u].position) <= power.range + 1e-9
                ]
                kind = power.target
                if kind == "self":
                    found: tuple[int, ...] = (unit_i,)
                elif kind == "friendly":
                    found = tuple(u for u in in_range if self.owner[u] == side)
                elif kind == "enemy":
                    found = tuple(u for u in in_range if self.owner[u] != side)
                elif kind == "enemy-psyker":
                    found = tuple(
                        u for u in in_range if self.owner[u] != side and self.unit_psyker[u] >= 0
                    )
                else:  # "enemies": every enemy unit in range
                    area[(i, k)] = tuple(u for u in in_range if self.owner[u] != side)
                    found = (self.num_units,) if area[(i, k)] else ()
                targets[(i, k)] = found
        return targets, area

    def cast_action(self, psyker: int, slot: int, target: int, pay: int) -> int:
        """Index of a cast action (:meth:`ActionLayout.encode_cast`)."""
        return self.actions.encode_cast(psyker, slot, target, pay)

    def targets_of(self, psyker: int, power: int) -> tuple[int, ...]:
        """The units ``psyker`` may aim ``power`` at (2E-5.1; ``num_units``: an area power)."""
        return self._targets[(psyker, power)]

    def decode_cast(self, action: int) -> CastAction:
        """``(psyker, slot, target, pay)`` of a cast action (:meth:`ActionLayout.decode_cast`)."""
        return self.actions.decode_cast(action)

    def _cast_spec(
        self, psyker: int, slot: int, power: int
    ) -> tuple[int, int, tuple[tuple[int, tuple[int, ...] | None, tuple[int, ...]], ...]]:
        """Force range of ``power`` in ``slot`` of ``psyker``, and its targets with cast actions.

        Per target: the enemies an area power hits (``None`` for one unit) and the five cast
        actions indexed by payment (0..3 Force, Ultimate Force). 2E-1.2: with
        ``ml_limits_power_level`` a power above the psyker's ML has no targets.
        """
        lo, hi = self.force_range[power]
        if self.settings.ml_limits_power_level and self.power_data[power].level > self.ml[psyker]:
            return lo, hi, ()
        encode = self.actions.encode_cast
        targets = tuple(
            (
                t,
                None if t < self.num_units else self._area[(psyker, power)],
                tuple(encode(psyker, slot, t, pay) for pay in range(PAY_OPTIONS)),
            )
            for t in self._targets[(psyker, power)]
        )
        return lo, hi, targets

    def _cast(self, s: SecondState, action: int, events: list[Event]) -> SecondState:
        """Pay for a power and open the response window (2E-5.1).

        Everything but the hand and the used flags follows from the action, the power in its
        slot and the caster's side: built once per such triple (:meth:`_cast_plan`).
        """
        i, j, _, _ = self._cast_codes[action - self.cast_base]
        p = s.to_move
        k = s.powers[i][j]
        plan = self._cast_plans.get((action, k, p))
        if plan is None:
            plan = self._cast_plan(action, k, p)
        pending, card, n, paid, attempt, passed = plan
        hands = s.hands
        hand = list(hands[p])
        hand[card] -= n
        used = list(s.used)
        used[i] = True
        events.append(attempt)
        events.append(passed)
        s.__dict__.update(
            hands=(tuple(hand), hands[1]) if p == 0 else (hands[0], tuple(hand)),
            paid=paid,
            used=tuple(used),
            passes=0,
            stage=RESPONSE,
            pending=pending,
        )
        return s

    def _cast_plan(self, action: int, k: int, p: int) -> tuple:
        """What the cast ``action`` of power ``k`` by player ``p`` does, whatever the hand.

        ``(pending power, card paid, how many, the cards paid, attempt event, paid event)``:
        Ultimate Force pays the highest Force with one card, else one Force card per Force
        (2E-5.1). Memoised in :attr:`_cast_plans` (bounded).
        """
        i, j, target, pay = self._cast_codes[action - self.cast_base]
        power = self.power_data[k]
        if pay == PAY_ULTIMATE:
            force, card, n = self.force_range[k][1], _ULTIMATE_FORCE, 1
        else:
            force, card, n = pay, _FORCE, pay
        attempt = self._shared_event(
            ("attempt", action, k, p),
            lambda: Event(
                EventKind.ATTEMPT,
                f"{self.views.cast_view(action, k, p).label}.",
                p,
                (("power", power.name), ("force", force), ("ultimate", pay == PAY_ULTIMATE)),
            ),
        )
        passed = self._shared_event(
            ("passed", k, p),
            lambda: Event(
                EventKind.PASSED, f"{power.name} is paid for.", p, (("power", power.name),)
            ),
        )
        pending = Pending(i, j, k, target, force, pay == PAY_ULTIMATE)
        plan = (pending, card, n, plus(NO_CARDS, card, n), attempt, passed)
        if len(self._cast_plans) >= MEMO_SIZE:
            self._cast_plans.clear()
        self._cast_plans[(action, k, p)] = plan
        return plan

    def _finish_pending(
        self, s: SecondState, events: list[Event], *, reflected: bool, stopped: bool, **changes
    ) -> SecondState:
        """Resolve or cancel the power being cast; paid cards go to the discard pile (2E-5.3).

        ``s`` is a transition's own copy (changed in place and returned). ``changes``: other
        fields the same transition sets.
        """
        pending = s.pending
        assert pending is not None
        side = self.psyker_side[pending.psyker]
        power = self.power_data[pending.power]
        in_play = s.in_play
        effects: tuple[Effect, ...] = ()
        if not stopped:
            event = self._event_values.get(("manifest", pending.power, pending.force, side))
            if event is None:
                event = self._manifest_event(pending.power, pending.force, side)
            events.append(event)
            if power.remain_in_play:
                entry = InPlay(
                    pending.psyker,
                    pending.slot,
                    pending.power,
                    pending.target,
                    pending.force,
                    pending.ultimate,
                )
                in_play = tuple(sorted((*in_play, entry), key=lambda e: (e.psyker, e.slot)))
            effects = self._effects(
                s, pending.psyker, pending.power, pending.force, pending.target, False
            )
        elif reflected:
            events.append(
                Event(
                    EventKind.REFLECTED,
                    f"{power.name} is turned against its caster.",
                    1 - side,
                    (("power", power.name),),
                )
            )
            effects = self._effects(
                s, pending.psyker, pending.power, pending.force, pending.target, True
            )
        changes.update(
            pending=None,
            stage=TURN,
            to_move=1 - side,
            in_play=in_play,
            discard=add_cards(s.discard, s.paid),
            paid=NO_CARDS,
            effects=s.effects + effects,
        )
        s.__dict__.update(**changes)
        return s

    def _manifest_event(self, power: int, force: int, side: int) -> Event:
        """The event of ``side``'s ``power`` cast with ``force`` taking effect (2E-5.3)."""
        name = self.power_data[power].name
        value = self._value_of(power, force)
        return self._shared_event(
            ("manifest", power, force, side),
            lambda: Event(
                EventKind.MANIFEST,
                f"{name} takes effect.",
                side,
                (("power", name), ("force", force), ("value", value)),
            ),
        )


__all__ = ["SecondCasting"]
