"""The legal actions of the 8th-edition rules (8E-2.1, 8E-2.2, 8E-3, 8E-5.1).

:class:`EighthLegality` is the part of :class:`~.rules.EighthRules` that lists the legal actions
of a decision, sorted. At ``SELECT``: a PSYKER unit of the active side not yet selected this
phase with a power it may attempt now, or end the phase (8E-2.1). At ``POWER``: a power the
selected unit knows and may still attempt (once per battle round for the army, or for the unit
for powers such as Smite, 8E-3.2, 8E-3.3) with a living target in range (8E-3.4), or stop
(8E-2.2). At ``DENY``: an enemy PSYKER within range with deny attempts left (only while some
deny roll can beat the test, 8E-5.1, 8E-5.2), or no deny.

Answers are memoised by the state fields legality reads; of the wounds, only which units are
alive matters.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from psygym.editions.eighth.effects import deny_chance
from psygym.editions.eighth.facts import MEMO_SIZE
from psygym.editions.eighth.state import Stage, State


@cache
def _deniable(total: int) -> bool:
    """Whether some Deny the Witch roll beats the test ``total`` (8E-5.2), as a plain bool."""
    return deny_chance(total) > 0


class EighthLegality:
    """Legal actions, cast options and deniers, mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.EighthFacts` fields, held by the rules as
    attributes) and the memos the rules set up (``_legal_cache``, ``_last_legal``,
    ``_options_cache``, ``_alive_cache``).
    """

    def legal_actions(self, state: State) -> list[int]:
        """Sorted legal actions (empty at chance and terminal nodes).

        The last answer is kept with the state it was asked about: the env's mask, the
        opponent and the caller ask about the same state object in a row. Only finished
        states come here (the copies transitions edit in place use :meth:`_legal`).
        """
        last_state, last = self._last_legal
        if last_state is state:
            return list(last)
        legal = self._legal(state)
        self._last_legal = (state, legal)
        return list(legal)

    def _legal(self, state: State) -> tuple[int, ...]:
        stage = state.stage
        # Memoised by the fields legality reads (8E-2.1, 8E-3, 8E-5.1); of the wounds, only which
        # units are alive matters.
        if stage == Stage.SELECT:
            alive = self._alive(state.wounds)
            key: tuple[Any, ...] = (stage, state.active, state.selected, state.attempts, alive)
        elif stage == Stage.POWER:
            alive = self._alive(state.wounds)
            key = (stage, state.caster, state.unit_powers, state.attempts, alive)
        elif stage == Stage.DENY:
            alive = self._alive(state.wounds)
            key = (stage, state.caster, state.total, alive, state.deny_left)
        else:
            return ()
        cached = self._legal_cache.get(key)
        if cached is None:
            if len(self._legal_cache) >= MEMO_SIZE:
                self._legal_cache.clear()
            cached = self._legal_cache[key] = tuple(self._find_legal(state))
        return cached

    def _find_legal(self, state: State) -> list[int]:
        stage = state.stage
        if stage == Stage.SELECT:
            out = [i for i in self.side_psykers[state.active] if self._selectable(state, i)]
            out.append(self.END_PHASE)
            return out
        if stage == Stage.POWER:
            return [*self._cast_options(state, state.caster, state.unit_powers), self.STOP]
        out = [self.actions.deny(d) for d in self.deniers(state)]
        out.append(self.NO_DENY)
        return out

    def _alive(self, wounds: tuple[int, ...]) -> int:
        """Bit ``i`` set: unit ``i`` has wounds left (8E-1.3); memoised by the wounds."""
        alive = self._alive_cache.get(wounds)
        if alive is None:
            if len(self._alive_cache) >= MEMO_SIZE:
                self._alive_cache.clear()
            alive = self._alive_cache[wounds] = sum(1 << i for i, w in enumerate(wounds) if w > 0)
        return alive

    def _selectable(self, s: State, i: int) -> bool:
        if (s.selected >> i) & 1 or not s.wounds[i]:
            return False
        return bool(self._cast_options(s, i, 0))

    def cast_options(self, state: State, unit: int) -> list[int]:
        """Sorted cast actions ``unit`` may attempt now (8E-3), whether or not it is selected.

        For the selected unit this is what it may still attempt (its own earlier powers this
        phase locked out, 8E-3.3); for another unit, what it could attempt once selected.
        """
        unit_powers = state.unit_powers if state.caster == unit else 0
        return list(self._cast_options(state, unit, unit_powers))

    def _cast_options(self, s: State, c: int, unit_powers: int) -> tuple[int, ...]:
        """Cast actions of unit ``c`` (8E-3): known, not locked out, with a living target."""
        key = (c, unit_powers, s.attempts, self._alive(s.wounds))  # aliveness only, as _legal
        cached = self._options_cache.get(key)
        if cached is None:
            if len(self._options_cache) > MEMO_SIZE:
                self._options_cache.clear()
            cached = self._options_cache[key] = tuple(self._find_cast_options(s, c, unit_powers))
        return cached

    def _find_cast_options(self, s: State, c: int, unit_powers: int) -> list[int]:
        out: list[int] = []
        wounds = s.wounds
        for p in self.known[c]:
            power = self.powers[p]
            if power.repeatable:
                if (unit_powers >> p) & 1:  # the same unit, once per round (8E-3.3)
                    continue
            elif s.attempts[p]:  # once per round for the whole army (8E-3.2)
                continue
            cast = self.actions.cast
            if power.chosen_target:
                out.extend(cast(p, t) for t in self.targets[c][p] if wounds[t] > 0)
            else:
                for t in self.targets[c][p]:
                    if wounds[t] > 0:
                        out.append(cast(p, t))
                        break
        out.sort()
        return out

    def deniers(self, state: State) -> list[int]:
        """Units that may deny the pending power (8E-5.1): PSYKERs within range with denies left."""
        if state.caster < 0 or not _deniable(state.total):
            return []
        return [
            d
            for d in self.deny_candidates[state.caster]
            if state.wounds[d] > 0 and state.deny_left[d] > 0
        ]

    def decode_cast(self, action: int) -> tuple[int, int]:
        """``(power index, target unit)`` of a cast action (typed: ``actions.decode_cast``)."""
        cast = self.actions.decode_cast(action)
        return cast.power, cast.target

    def cast_action(self, power: int | str, target: int) -> int:
        """The action that attempts ``power`` (index or name) on unit ``target``."""
        p = self.power_index[power] if isinstance(power, str) else power
        return self.actions.cast(p, target)


__all__ = ["EighthLegality"]
