"""The transitions of the 8th-edition rules: the stages of a Psychic phase (8E-2 to 8E-8).

:class:`EighthTransitions` is the part of :class:`~.rules.EighthRules` that plays a decision or
a chance outcome: select a unit or end the phase (8E-2.1), a power and target or stop (8E-2.2,
8E-3, with its warp charge, 8E-4.2), the test and Perils (8E-4.1, 8E-4.3, 8E-6.1), the blast of
a psyker slain by Perils (8E-6.2), the deny (8E-5), the effect and the score (8E-7, 8E-8.2), then
the decisions the rules leave no choice in are skipped and the next phase begins or the game
ends (8E-8.1).

Each transition copies its input state once and builds the next state in that copy
(:func:`_update`), however many steps it chains; ``events`` collects what happened, or is
``None`` in event-free search (``apply``).
"""

from __future__ import annotations

from typing import Any

from psygym.core import Event
from psygym.editions.eighth.effects import is_perils
from psygym.editions.eighth.state import PHASE_START, Stage, State
from psygym.kernel import evolve


def _update(s: State, **changes: Any) -> None:
    """Set fields of ``s`` in place: only ever a transition's own new copy, before it returns.

    Each transition copies its input once with :func:`~psygym.kernel.evolve` and builds the next
    state in that copy, so it costs one copy however many steps it chains (a test, its Perils,
    the deny, the effect, the decisions skipped, the next phase). Nothing else has seen the copy
    yet (it is neither hashed nor shared), so every state a caller receives stays immutable.
    """
    s.__dict__.update(changes)


class EighthTransitions:
    """Transitions (8E-2 to 8E-8), mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.EighthFacts` fields, held by the rules as
    attributes), the legality of :class:`~.legality.EighthLegality`, the chance tables of
    :class:`~.chances.EighthChances` and the event builders of :class:`~.events.EighthEvents`.
    """

    def _apply(self, state: State, action: int) -> tuple[State, tuple[Event, ...]]:
        events: list[Event] = []
        return self._step(state, action, events), tuple(events)

    def _transition(self, state: State, action: int) -> State:
        """The next state through the same code as :meth:`_apply`, building no events (search)."""
        return self._step(state, action, None)

    def _step(self, state: State, action: int, events: list[Event] | None) -> State:
        """The state after ``action``; what happened goes to ``events`` unless it is ``None``.

        The one copy of the transition is made here; the steps below build the next state in
        it (see :func:`_update`).
        """
        s = evolve(state)
        self._dispatch(s, action, events)
        return s

    def _dispatch(self, s: State, action: int, events: list[Event] | None) -> None:
        """Run the handler of ``s``'s stage on ``s`` itself (a transition's own copy)."""
        stage = s.stage
        if stage == Stage.SELECT:
            self._select(s, action, events)
        elif stage == Stage.POWER:
            self._power(s, action, events)
        elif stage == Stage.DENY:
            self._deny(s, action, events)
        else:
            self._chance_result(s, action, events)

    def _select(self, s: State, a: int, events: list[Event] | None) -> None:
        if a == self.END_PHASE:  # 8E-2.1
            self._next_phase(s, events)
            return self._advance(s, events)
        self._emit(events, self._select_event, a, s.active)
        _update(
            s,
            stage=Stage.POWER,
            caster=a,
            manifests_left=self.units[a].manifest,
            unit_powers=0,
            selected=s.selected | (1 << a),
        )

    def _power(self, s: State, a: int, events: list[Event] | None) -> None:
        if a == self.STOP:  # 8E-2.2
            _update(s, stage=Stage.SELECT, caster=-1, manifests_left=0, unit_powers=0)
            return self._advance(s, events)
        layout = self.actions
        p, t = divmod(a - layout.CAST, layout.n_units)  # decode_cast, without the typed view
        wc = self.warp_charge(s, p)  # 8E-4.2
        attempts = list(s.attempts)
        attempts[p] += 1
        self._emit(events, self._attempt_event, s.caster, p, t, wc, s.active)
        _update(
            s,
            stage=Stage.TEST,
            attempts=tuple(attempts),
            unit_powers=s.unit_powers | (1 << p),
            manifests_left=s.manifests_left - 1,
            power=p,
            target=t,
            warp_charge=wc,
            total=0,
        )

    def _deny(self, s: State, a: int, events: list[Event] | None) -> None:
        if a == self.NO_DENY:
            return self._to_effect(s, events)
        d = a - self.actions.DENY  # decode(a).unit, without the typed view
        deny_left = list(s.deny_left)
        deny_left[d] -= 1
        self._emit(events, self._deny_attempt_event, d, s.power, s.total, 1 - s.active)
        _update(s, stage=Stage.DENY_ROLL, denier=d, deny_left=tuple(deny_left))

    def _chance_result(self, s: State, a: int, events: list[Event] | None) -> None:
        stage = s.stage
        if stage == Stage.TEST:  # 8E-4.1, 8E-4.3
            _update(s, total=a)
            self._emit(events, self._test_event, s.caster, s.power, s.warp_charge, a, s.active)
            if is_perils(a):
                self._emit(events, self._perils_event, s.caster, a, s.active)
                _update(s, stage=Stage.PERILS)
                return self._enter_chance(s, events)
            if s.passed:
                return self._to_deny(s, events)
            return self._after_attempt(s, events)
        if stage == Stage.PERILS:  # 8E-6.1
            self._hurt(s, s.caster, a, events, "Perils of the Warp")
            if s.wounds[s.caster] == 0:  # 8E-6.2: the power fails, then the blast
                self._emit(events, self._perils_slain_event, s.power, s.caster, s.active)
                blast = tuple(j for j in self.blast_candidates[s.caster] if s.wounds[j] > 0)
                if blast:
                    _update(s, stage=Stage.BLAST, blast=blast)
                    return self._enter_chance(s, events)
                return self._after_attempt(s, events)
            if s.passed:
                return self._to_deny(s, events)
            return self._after_attempt(s, events)
        if stage == Stage.BLAST:  # 8E-6.2
            self._hurt(s, s.blast[0], a, events, self._blast_causes[s.caster])
            _update(s, blast=s.blast[1:])
            if s.blast:
                return self._enter_chance(s, events)
            return self._after_attempt(s, events)
        if stage == Stage.DENY_ROLL:  # 8E-5.2
            self._emit(events, self._deny_roll_event, bool(a), s.denier, s.power, 1 - s.active)
            if a:
                return self._after_attempt(s, events)
            return self._to_effect(s, events)
        # Stage.EFFECT (8E-7)
        self._emit(events, self._manifest_event, s.power, s.target, a, s.active)
        self._hurt(s, s.target, a, events, self.powers[s.power].name)
        self._after_attempt(s, events)

    def _to_deny(self, s: State, events: list[Event] | None) -> None:
        if self.deniers(s):  # 8E-5.1
            return _update(s, stage=Stage.DENY)
        self._to_effect(s, events)

    def _to_effect(self, s: State, events: list[Event] | None) -> None:
        power = self.powers[s.power]
        if power.value is not None:  # value effects score for the caster (8E-7.3, 8E-8.2)
            sign = 1.0 if s.active == 0 else -1.0
            self._emit(events, self._value_event, s.power, s.active)
            _update(s, score=s.score + sign * power.value)
            return self._after_attempt(s, events)
        _update(s, stage=Stage.EFFECT)
        self._enter_chance(s, events)

    def _enter_chance(self, s: State, events: list[Event] | None) -> None:
        """Resolve a chance node at once when it has a single outcome."""
        outcomes = self._chance(s).outcomes
        if len(outcomes) == 1:
            self._chance_result(s, outcomes[0][0], events)

    def _hurt(
        self, s: State, unit: int, amount: int, events: list[Event] | None, cause: str
    ) -> None:
        """Remove ``amount`` wounds from ``unit`` (spilling over models, 8E-7.2) and score them."""
        if amount <= 0:
            return
        wounds = list(s.wounds)
        wounds[unit] -= amount
        owner = self.side_of[unit]
        delta = amount * self.units[unit].value_per_wound
        self._emit(events, self._wounds_event, unit, amount, cause)
        if wounds[unit] == 0:  # 8E-1.3
            self._emit(events, self._slain_event, unit)
        _update(s, wounds=tuple(wounds), score=s.score + (delta if owner else -delta))

    def _after_attempt(self, s: State, events: list[Event] | None) -> None:
        _update(
            s, stage=Stage.POWER, power=-1, target=-1, warp_charge=0, total=0, denier=-1, blast=()
        )
        self._advance(s, events)

    def _advance(self, s: State, events: list[Event] | None) -> None:
        """Skip decisions the rules leave no choice in; end the game when it is over."""
        if s.stage == Stage.OVER:
            return
        alive = self._alive(s.wounds)  # the wounds do not change below
        if not (alive & self._side_masks[0] and alive & self._side_masks[1]):  # 8E-8.1
            return _update(s, stage=Stage.OVER)
        while True:
            # A decision with more than one legal action is asked (the last one is stop/end).
            if s.stage == Stage.POWER:
                if s.wounds[s.caster] > 0 and s.manifests_left > 0 and len(self._legal(s)) > 1:
                    return
                _update(s, stage=Stage.SELECT, caster=-1, manifests_left=0, unit_powers=0)
            elif s.stage == Stage.SELECT:
                if len(self._legal(s)) > 1:
                    return
                self._next_phase(s, events)
            else:
                return

    def _next_phase(self, s: State, events: list[Event] | None) -> None:
        """The next Psychic phase (8E-8.1), or the end of the game."""
        played = s.phases_played + 1
        limit = self.game.phase_limit
        phase, rnd = (1, s.round) if s.phase == 0 else (0, s.round + 1)
        if (limit is not None and played >= limit) or rnd > self.game.battle_rounds:
            return _update(s, stage=Stage.OVER, caster=-1)
        first = self.game.first_player
        active = first if phase == 0 else 1 - first
        self._emit(events, self._phase_event, rnd, active)
        # Wounds and score carry over; everything else starts afresh (8E-1.2, 8E-2).
        _update(
            s,
            **PHASE_START,
            deny_left=self._full_deny,
            attempts=self._no_attempts,
            round=rnd,
            phase=phase,
            phases_played=played,
            active=active,
        )


__all__ = ["EighthTransitions"]
