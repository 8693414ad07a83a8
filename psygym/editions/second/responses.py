"""Answering a power in the 2nd edition: response cards and the rolls they call for (2E-5.2).

After every cast that may still be answered the opponent decides (a decision even with no
response card in hand, so skipping it tells nothing): PASS, or Nullify (a D6 roll shifted by
mastery levels, :func:`nullify_roll_needed`, with a psychic hood's re-roll,
:func:`nullify_chance`), Destroy Power, Reflection or Daemonic Attack. :class:`SecondResponses`
is the part of :class:`~.rules.SecondRules` that lists and plays these answers and resolves the
rolls of the phase: Nullify against the power being cast or one in play (2E-4.1), Daemonic Attack
and the Psychic Duel (2E-7).
"""

from __future__ import annotations

from fractions import Fraction

from psygym.combat import roll_chance
from psygym.core import Event, EventKind
from psygym.editions.second.actions import (
    DESTROY_POWER,
    NULLIFY,
    PASS,
    REFLECTION,
    RESPONSE_CARDS,
)
from psygym.editions.second.data import CARD_LABELS, Card
from psygym.editions.second.spec import RuleSettings
from psygym.editions.second.state import (
    RESPONSE,
    ROLL,
    ROLL_DAEMONIC,
    ROLL_NULLIFY,
    ROLL_NULLIFY_IN_PLAY,
    TURN,
    Roll,
    SecondState,
)
from psygym.kernel import evolve

_NULLIFY = int(Card.NULLIFY)
_RESPONSES = tuple((action, int(card)) for action, card in RESPONSE_CARDS.items())
"""Response actions and the card each plays, in action order (``RESPONSE_CARDS``)."""


def nullify_roll_needed(settings: RuleSettings, best_ml: int, caster_ml: int) -> int:
    """D6 score a Nullify needs (2E-5.2).

    ``nullify_target`` shifted one ``nullify_ml_step`` per ML the nullifier's best psyker has
    above (easier) or below (harder) the caster, limited to ``nullify_best``..``nullify_worst``.
    """
    need = settings.nullify_target - settings.nullify_ml_step * (best_ml - caster_ml)
    return min(max(need, settings.nullify_best), settings.nullify_worst)


def nullify_chance(need: int, reroll: bool) -> Fraction:
    """Chance that a Nullify roll of ``need``+ succeeds, with one re-roll of a failure (2E-5.2)."""
    p = roll_chance(need)
    return p + (1 - p) * p if reroll else p


class SecondResponses:
    """Response cards and the rolls of the phase (2E-5.2, 2E-7), mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.SecondFacts` fields, held by the rules as
    attributes); a power that goes on is finished by :class:`~.casting.SecondCasting`, wounds
    are :class:`~.effects.SecondEffects`'.
    """

    def is_response(self, state: SecondState) -> bool:
        """Whether the player to move is answering the other player's power (2E-5.2)."""
        return state.stage == RESPONSE and not state.effects

    def responder(self, state: SecondState) -> int:
        """The player who may answer the pending power."""
        assert state.pending is not None
        return 1 - self.psyker_side[state.pending.psyker]

    def nullify_need(self, state: SecondState, side: int, caster: int) -> tuple[int, bool]:
        """D6 score a Nullify by ``side`` needs against ``caster``'s power, and the hood re-roll.

        2E-5.2: see :func:`nullify_roll_needed`; the best ML counts living psykers only (0 when
        the side has none), and a living psyker with a psychic hood allows one re-roll.
        """
        mine = [i for i in self.side_psykers[side] if self.alive(state, i)]
        best = max((self.ml[i] for i in mine), default=0)
        need = nullify_roll_needed(self.settings, best, self.ml[caster])
        return need, any(self.hood[i] for i in mine)

    def _response_actions(self, state: SecondState) -> list[int]:
        """PASS and the response cards the responder may play on the pending power (2E-5.2)."""
        pending = state.pending
        assert pending is not None
        if pending.responses >= self.settings.responses_per_power:
            return [PASS]
        hand = state.hands[1 - self.psyker_side[pending.psyker]]  # the responder's
        acts = [PASS]
        for action, card in _RESPONSES:
            if hand[card] and not (card == _NULLIFY and pending.ultimate):
                acts.append(action)
        return acts

    def _apply_response(self, s: SecondState, action: int, events: list[Event]) -> SecondState:
        """The responder plays no card (PASS) or a response card (2E-5.2); ``s``: own copy."""
        pending = s.pending
        assert pending is not None
        if action == PASS:
            return self._finish_pending(s, events, reflected=False, stopped=False)
        p = self.responder(s)
        name = self.side_names[p]
        power = self.power_data[pending.power].name
        card = RESPONSE_CARDS[action]
        label = CARD_LABELS[card]
        data = (("power", power), ("card", label))
        events.append(
            self._shared_event(
                ("answer", name, power, label, p),
                lambda: Event(
                    EventKind.DENY_ATTEMPT, f"{name} answers {power} with {label}.", p, data
                ),
            )
        )
        if action == NULLIFY:
            need, reroll = self.nullify_need(s, p, pending.psyker)
            roll = Roll(ROLL_NULLIFY, pending.psyker, -1, need, reroll, p)
            s.__dict__.update(stage=ROLL, roll=roll, **self._played(s, p, card))
            return s
        s = self._play_card(s, p, card)
        events.append(
            self._shared_event(
                ("stops", label, power, p),
                lambda: Event(EventKind.DENIED, f"{label} stops {power}.", p, data),
            )
        )
        if action == DESTROY_POWER:
            if self.settings.destroy_power == "lose-card":
                powers = list(s.powers)
                slots = list(powers[pending.psyker])
                slots[pending.slot] = -1
                powers[pending.psyker] = tuple(slots)
                s.__dict__.update(powers=tuple(powers))
                events.append(
                    Event(
                        EventKind.POWER_DESTROYED,
                        f"{self.psyker_names[pending.psyker]} "
                        f"loses {power} for the rest of the game.",
                        1 - p,
                        (("power", power),),
                    )
                )
            return self._finish_pending(s, events, reflected=False, stopped=True)
        if action == REFLECTION:
            return self._finish_pending(
                s, events, reflected=self.settings.reflection == "caster", stopped=True
            )
        s = self._finish_pending(s, events, reflected=False, stopped=True)
        s.__dict__.update(stage=ROLL, roll=Roll(ROLL_DAEMONIC, pending.psyker, player=p))
        return s

    def _apply_roll(self, s: SecondState, outcome: int, events: list[Event]) -> SecondState:
        """A Nullify (2E-5.2, 2E-4.1), Daemonic Attack (2E-5.2) or Psychic Duel (2E-7) roll."""
        roll = s.roll
        assert roll is not None
        done = {"roll": None, "stage": TURN}  # every roll ends so; set with the outcome's changes
        if roll.kind == ROLL_NULLIFY:
            pending = s.pending
            assert pending is not None
            power = self.power_data[pending.power].name
            if outcome:
                events.append(
                    self._shared_event(
                        ("nullified", power, roll.player),
                        lambda: Event(
                            EventKind.DENIED,
                            f"Nullify succeeds: {power} is stopped.",
                            roll.player,
                            (("power", power), ("card", "Nullify")),
                        ),
                    )
                )
                return self._finish_pending(s, events, reflected=False, stopped=True, **done)
            events.append(
                self._shared_event(
                    ("nullify failed", power, roll.player),
                    lambda: Event(
                        EventKind.NULLIFY_FAILED,
                        f"Nullify fails: {power} goes on.",
                        roll.player,
                        (("power", power),),
                    ),
                )
            )
            s.__dict__.update(
                roll=None,
                stage=RESPONSE,
                pending=evolve(pending, responses=pending.responses + 1),
            )
            return s
        if roll.kind == ROLL_NULLIFY_IN_PLAY:
            entry = next(ip for ip in s.in_play if (ip.psyker, ip.slot) == (roll.a, roll.b))
            power = self.power_data[entry.power].name
            done["to_move"] = 1 - roll.player
            if outcome:
                events.append(
                    Event(
                        EventKind.NULLIFIED,
                        f"Nullify ends {power}.",
                        roll.player,
                        (("power", power),),
                    )
                )
                s.__dict__.update(in_play=tuple(ip for ip in s.in_play if ip != entry), **done)
                return s
            events.append(
                Event(
                    EventKind.NULLIFY_FAILED,
                    f"Nullify fails: {power} stays in play.",
                    roll.player,
                    (("power", power),),
                )
            )
            s.__dict__.update(**done)
            return s
        if roll.kind == ROLL_DAEMONIC:
            done["to_move"] = roll.player
            unit = self.psyker_unit[roll.a]
            if outcome:
                events.append(
                    Event(
                        EventKind.DAEMONIC_ATTACK,
                        f"Daemonic Attack: {self.units[unit].name} is dragged into the warp.",
                        self.owner[unit],
                    )
                )
                return self._wound(s, unit, s.wounds[unit], events, "Daemonic Attack", **done)
            events.append(
                Event(
                    EventKind.DAEMONIC_ATTACK,
                    f"{self.units[unit].name} survives the Daemonic Attack.",
                    self.owner[unit],
                )
            )
            s.__dict__.update(**done)
            return s
        # Psychic Duel (2E-7)
        done["to_move"] = 1 - roll.player
        if outcome > 0:
            return self._wound(s, self.psyker_unit[roll.b], outcome, events, "Psychic Duel", **done)
        if outcome < 0:
            return self._wound(
                s, self.psyker_unit[roll.a], -outcome, events, "Psychic Duel", **done
            )
        events.append(Event(EventKind.DUEL_TIE, "The Psychic Duel is a tie.", roll.player))
        s.__dict__.update(**done)
        return s

    def daemonic_chance(self, psyker: int) -> Fraction:
        """Chance that Daemonic Attack slays ``psyker``: D6 + ML below the setting (2E-5.2)."""
        below = self.settings.daemonic_attack_below
        return Fraction(sum(1 for d in range(1, 7) if d + self.ml[psyker] < below), 6)


__all__ = ["SecondResponses", "nullify_chance", "nullify_roll_needed"]
