"""Alternating play in a 2nd-edition Psychic phase: turns, passes and the phase's end (2E-4).

:class:`SecondTurns` is the part of :class:`~.rules.SecondRules` that lists a turn's legal
actions (pass; Energy Drain; Psychic Duel, 2E-7; end your own power in play or Nullify the
other's, 2E-4.1; each living psyker that has not cast yet casts a power, 2E-4.2, 2E-5.1) and
plays them, passes (two in a row end the phase, 2E-4.3) and ends the phase: hands are discarded,
face down unless ``public_discards``, keeping non-Force cards with ``retain_specials`` (2E-4.3).
"""

from __future__ import annotations

from operator import sub

from psygym.core import Event, EventKind
from psygym.editions.second.actions import ENERGY_DRAIN, PASS, PAY_ULTIMATE
from psygym.editions.second.data import Card
from psygym.editions.second.deck import NO_CARDS, add_cards, plus
from psygym.editions.second.state import (
    FLUX,
    OVER,
    ROLL,
    ROLL_DUEL,
    ROLL_NULLIFY_IN_PLAY,
    Roll,
    SecondState,
)

_FORCE, _NULLIFY, _PSYCHIC_DUEL = int(Card.FORCE), int(Card.NULLIFY), int(Card.PSYCHIC_DUEL)
_ULTIMATE_FORCE, _ENERGY_DRAIN = int(Card.ULTIMATE_FORCE), int(Card.ENERGY_DRAIN)


class SecondTurns:
    """Alternating play (2E-4), mixed into :class:`~.rules.SecondRules`.

    Reads the scenario's facts (:class:`~.facts.SecondFacts` fields, held by the rules as
    attributes), the cast tables the rules build at start (``_specs``, ``_side_psyker_units``)
    and their shared events; a cast is :class:`~.casting.SecondCasting`'s.
    """

    def _turn_actions(self, state: SecondState) -> list[int]:
        """Legal actions on a turn of alternating play (2E-4, 2E-5.1, 2E-7), sorted.

        Built in increasing order (PASS, Energy Drain, duels, then each living psyker's casts by
        slot, target and payment); only the powers in play may come out of order, so the list
        is sorted only when there are some.
        """
        p = state.to_move
        hand = state.hands[p]
        wounds = state.wounds
        acts = [PASS]
        if hand[_ENERGY_DRAIN]:
            acts.append(ENERGY_DRAIN)
        side_psykers = self._side_psyker_units[p]
        if hand[_PSYCHIC_DUEL]:
            mine = [i for i, u in side_psykers if wounds[u] > 0]
            if mine:
                enemies = [k for k, u in self._side_psyker_units[1 - p] if wounds[u] > 0]
                encode_duel = self.actions.encode_duel
                acts.extend(encode_duel(i, k) for i in mine for k in enemies)
        used = state.used
        in_play = state.in_play
        held: set[tuple[int, int]] = set()
        if in_play:
            layout = self.actions
            for ip in in_play:
                held.add((ip.psyker, ip.slot))
                if self.psyker_side[ip.psyker] == p:
                    if not used[ip.psyker]:
                        acts.append(layout.encode_end(ip.psyker, ip.slot))
                elif hand[_NULLIFY] and not ip.ultimate:
                    # 2E-5.1: paid with Ultimate Force, it cannot be nullified in play either.
                    acts.append(layout.encode_nullify(ip.psyker, ip.slot))
        forces, ultimate = hand[_FORCE], hand[_ULTIMATE_FORCE]
        specs, powers = self._specs, state.powers
        for i, u in side_psykers:  # each living psyker that has not cast, in psyker order
            if used[i] or wounds[u] <= 0:
                continue
            slots = specs[i]
            for j, k in enumerate(powers[i]):
                if k < 0 or (in_play and (i, j) in held):
                    continue
                lo, hi, targets = slots[j][k]
                top = hi if hi < forces else forces  # pay lo..top Force cards, or Ultimate Force
                if top < lo and not ultimate:
                    continue
                for t, area, row in targets:
                    if area is None:
                        if wounds[t] <= 0:
                            continue
                    elif not any(wounds[v] > 0 for v in area):
                        continue
                    acts.extend(row[lo : top + 1])
                    if ultimate:
                        acts.append(row[PAY_ULTIMATE])
        if in_play:
            acts.sort()
        return acts

    def _apply_turn(self, s: SecondState, action: int, events: list[Event]) -> SecondState:
        """A turn's decision (2E-4.1): pass, Energy Drain, duel, end or Nullify one in play, cast.

        ``s`` is the transition's own copy (changed in place and returned).
        """
        p = s.to_move
        if action == PASS:
            events.append(self._pass_events[p])
            return self._pass(s, events)
        name = self.side_names[p]
        if action == ENERGY_DRAIN:
            s = self._play_card(s, p, Card.ENERGY_DRAIN)
            events.append(
                self._shared_event(
                    ("drain", p),
                    lambda: Event(
                        EventKind.ENERGY_DRAIN, f"{name} plays Energy Drain: the phase ends.", p
                    ),
                )
            )
            return self._end_phase(s, events)
        if action < self.end_base:
            i, k = self.actions.decode_duel(action)
            events.append(
                self._shared_event(
                    ("duel", i, k, p),
                    lambda: Event(
                        EventKind.DUEL,
                        f"{name} plays Psychic Duel: "
                        f"{self.psyker_names[i]} against {self.psyker_names[k]}.",
                        p,
                    ),
                )
            )
            roll = Roll(ROLL_DUEL, i, k, player=p)
            s.__dict__.update(
                stage=ROLL, roll=roll, passes=0, **self._played(s, p, Card.PSYCHIC_DUEL)
            )
            return s
        if action < self.cast_base:
            nullify = action >= self.nullify_base
            i, j = self.actions.decode_in_play(action)
            power = self.power_data[s.powers[i][j]].name
            if not nullify:
                events.append(
                    Event(EventKind.END_POWER, f"{self.psyker_names[i]} ends {power}.", p)
                )
                used = list(s.used)
                used[i] = True
                s.__dict__.update(
                    used=tuple(used),
                    to_move=1 - p,
                    passes=0,
                    in_play=tuple(ip for ip in s.in_play if (ip.psyker, ip.slot) != (i, j)),
                )
                return s
            need, reroll = self.nullify_need(s, p, i)
            events.append(
                Event(
                    EventKind.DENY_ATTEMPT,
                    f"{name} plays Nullify on {power} "
                    f"(needs {need}+{', hood re-roll' if reroll else ''}).",
                    p,
                    (("power", power), ("card", "Nullify")),
                )
            )
            roll = Roll(ROLL_NULLIFY_IN_PLAY, i, j, need, reroll, p)
            s.__dict__.update(stage=ROLL, roll=roll, passes=0, **self._played(s, p, Card.NULLIFY))
            return s
        return self._cast(s, action, events)

    def _played(self, s: SecondState, player: int, card: int) -> dict[str, tuple]:
        """The ``hands`` and ``discard`` after ``player`` plays one ``card`` from hand."""
        hands = list(s.hands)
        hands[player] = plus(hands[player], card, -1)
        return {"hands": (hands[0], hands[1]), "discard": plus(s.discard, card)}

    def _play_card(self, s: SecondState, player: int, card: int) -> SecondState:
        """Move one card from ``player``'s hand to the discard pile (in ``s``, returned)."""
        s.__dict__.update(**self._played(s, player, card))
        return s

    def _pass(self, s: SecondState, events: list[Event]) -> SecondState:
        """A pass; two in a row end the phase (2E-4.3). ``s``: a transition's own copy."""
        if s.passes + 1 >= 2:
            return self._end_phase(s, events)
        s.__dict__.update(passes=s.passes + 1, to_move=1 - s.to_move)
        return s

    def _end_phase(self, s: SecondState, events: list[Event]) -> SecondState:
        """Discard hands (keeping non-Force cards with ``retain_specials``) and move on (2E-4.3).

        ``s``: a transition's own copy (changed in place and returned).
        """
        discard = s.discard
        face_down = list(s.face_down)
        hands = []
        for p, hand in enumerate(s.hands):
            keep = (
                plus(hand, Card.FORCE, -hand[Card.FORCE])
                if self.settings.retain_specials
                else NO_CARDS
            )
            thrown = hand if keep is NO_CARDS else tuple(map(sub, hand, keep))
            if any(thrown):  # adding no cards changes nothing
                discard = add_cards(discard, thrown)
                if not self.settings.public_discards:  # face down: only its owner has seen them
                    face_down[p] = add_cards(face_down[p], thrown)
            hands.append(keep)
        events.append(self._phase_end_events[self.active(s)])
        phase = s.phase + 1
        stage = FLUX if phase < 2 * self.game.battle_rounds else OVER
        s.__dict__.update(
            stage=stage,
            phase=phase,
            discard=discard,
            face_down=(face_down[0], face_down[1]),
            hands=(hands[0], hands[1]),
            used=self._unused,
            passes=0,
            to_deal=0,
            to_move=(self.game.first_player + phase) % 2,
        )
        return s


__all__ = ["SecondTurns"]
