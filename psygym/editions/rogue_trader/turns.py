"""Turns, resting and the end of a Rogue Trader game, with its score bounds (RT-5, RT-6).

:class:`RTTurns` is the part of :class:`~.rules.RogueTraderRules` that runs the turns: at the
start of a turn the active player's psykers that rested regain a point, never above their
psi-level (RT-5), and its confused units try to recover; its psykers then act one after the
other in scenario order (RT-2.1), skipping a stolen or confused mind (RT-4.5); at the end of the
turn its stolen minds count one turn. The game ends after the last turn or when a side has no
unit left in the fight (RT-6.1); the score is zero-sum (RT-6.2), and
:meth:`RTTurns.game_info` bounds it.
"""

from __future__ import annotations

import math
from typing import Any

from psygym.combat import capped
from psygym.core import Event, EventKind, GameInfo
from psygym.dice import distribution
from psygym.editions.rogue_trader.state import Events, Phase, State, UnitState
from psygym.editions.rogue_trader.units import evolve_unit, put, shared_units
from psygym.kernel import evolve

_CHOOSE, _RECOVER, _OVER = Phase.CHOOSE, Phase.RECOVER, Phase.OVER
_SETUP = frozenset({Phase.SETUP_LEVEL, Phase.SETUP_COUNT, Phase.SETUP_DRAW})
_RESET = {"used": 0, "ability": -1, "target": -1, "amount": 0, "attack_bid": 0, "save_bid": 0}
"""Fields cleared whenever a psyker starts choosing (no ability under way)."""
_UNBOUNDED = (-math.inf, math.inf)


class RTTurns:
    """Turns, resting, the end and the score bounds (RT-5, RT-6), mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.RTFacts` fields, held by the rules as
    attributes); a psyker's choice is :class:`~.casting.RTCasting`'s.
    """

    def _begin_turn(
        self, s: State, units: list[UnitState], changed: bool, turn: int, p: int, ev: Events
    ) -> State:
        """Start turn ``turn`` of player ``p``: resting psykers regain a point (RT-5)."""
        self._note(
            ev,
            lambda: Event(
                EventKind.PHASE,
                f"Turn {turn + 1}: {self.side_names[p]}'s turn.",
                p,
                (("turn", turn + 1),),
            ),
            ("phase", turn, p),
        )
        for i in self.psykers_of[p]:
            us = units[i]
            if us.resting:
                gain = min(us.points + 1, us.level) - us.points
                units[i] = evolve_unit(us, {"points": us.points + gain, "resting": False})
                changed = True
                if gain:
                    self._regained(ev, i, p, us.points + gain)
        units_now = shared_units(tuple(units)) if changed else s.units
        fresh = {
            "units": units_now, "turn": turn, "active": p, "left": 0, "used": 0, "ability": -1,
            "target": -1, "amount": 0, "attack_bid": 0, "save_bid": 0,
        }  # fmt: skip
        # One copy for the new turn and its first node (a recovery roll or the first psyker).
        for i in self.side_units[p]:
            us = units_now[i]
            if us.confused and us.fighting:
                return evolve(s, phase=_RECOVER, actor=i, **fresh)
        i = self._first_actor(units_now, p, -1, ev)
        if i >= 0:
            return evolve(s, phase=_CHOOSE, actor=i, **fresh)
        return self._end_turn(evolve(s, phase=_CHOOSE, actor=-1, **fresh), ev)

    def _recover_from(self, s: State, start: int, ev: Events) -> State:
        """The next confused unit from ``start`` on tries to recover, else the psykers act."""
        for i in self.side_units[s.active]:
            if i >= start and s.units[i].confused and s.units[i].fighting:
                return evolve(s, phase=_RECOVER, actor=i)
        return self._next_actor(s, -1, ev)

    def _recovered(self, s: State, ok: bool, ev: Events) -> State:
        """Confused unit ``s.actor`` made its psychic save (``ok``) or stays confused."""
        u = s.actor
        if ok:
            s = evolve(s, units=put(s.units, u, confused=False))
            self._note(
                ev,
                lambda: Event(
                    EventKind.RECOVERED,
                    f"{self.names[u]} shakes off its confusion.",
                    self.owner[u],
                    (("unit", self.names[u]),),
                ),
                ("recovered", u),
            )
        else:
            self._note(
                ev,
                lambda: Event(
                    EventKind.CONFUSED,
                    f"{self.names[u]} is still confused.",
                    self.owner[u],
                    (("unit", self.names[u]),),
                ),
                ("confused", u),
            )
        return self._recover_from(s, u + 1, ev)

    def _next_actor(
        self, s: State, after: int, ev: Events, units: tuple[UnitState, ...] | None = None
    ) -> State:
        """The next psyker of the active player after ``after`` chooses, else the turn ends.

        ``units``, when given, replaces ``s.units`` in the same copy.
        """
        units = s.units if units is None else units
        i = self._first_actor(units, s.active, after, ev)
        if i >= 0:
            return evolve(s, phase=_CHOOSE, actor=i, units=units, **_RESET)
        return self._end_turn(s, ev, units)

    def _first_actor(
        self, units: tuple[UnitState, ...], active: int, after: int, ev: Events
    ) -> int:
        """The first psyker of ``active`` after ``after`` able to act, or -1 (RT-2.1, RT-4.5)."""
        for i in self.psykers_of[active]:
            if i <= after:
                continue
            us = units[i]
            if not us.fighting:
                continue
            if us.stolen or us.confused:
                self._idle(ev, i, active, "its mind is stolen" if us.stolen else "it is confused")
                continue
            return i
        return -1

    def _regained(self, ev: Events, i: int, p: int, points: int) -> None:
        """Psyker ``i`` of player ``p`` regains a point after resting, to ``points`` (RT-5)."""
        self._note(
            ev,
            lambda: Event(
                EventKind.REGAIN,
                f"{self.names[i]} regains 1 psi-point after resting.",
                p,
                (("unit", self.names[i]), ("points", points)),
            ),
            ("regain", i, p, points),
        )

    def _idle(self, ev: Events, i: int, active: int, why: str) -> None:
        """Psyker ``i`` does nothing this turn, for reason ``why`` (RT-4.5, Cause Confusion)."""
        self._note(
            ev,
            lambda: Event(
                EventKind.IDLE,
                f"{self.names[i]} does nothing: {why}.",
                active,
                (("unit", self.names[i]),),
            ),
            ("idle", i, active, why),
        )

    def _end_turn(self, s: State, ev: Events, units: tuple[UnitState, ...] | None = None) -> State:
        """End the active player's turn: its stolen minds count one turn (RT-4.5).

        ``units``, when given, replaces ``s.units`` (saving a copy of the state).
        """
        changed = units is not None and units is not s.units
        units = list(s.units if units is None else units)
        for i in self.side_units[s.active]:
            us = units[i]
            if us.stolen:
                units[i] = evolve_unit(us, {"stolen": us.stolen - 1})
                changed = True
        turn = s.turn + 1
        if turn >= self.game.turns:
            units_now = shared_units(tuple(units)) if changed else s.units
            return self._game_over(s, ev, "the last turn is over", units=units_now, turn=turn)
        return self._begin_turn(s, units, changed, turn, 1 - s.active, ev)

    def _game_over(self, s: State, ev: Events, why: str, **changes: Any) -> State:
        """The terminal state (RT-6.2); ``changes`` go into the same copy."""
        self._note(
            ev,
            lambda: Event(
                EventKind.END,
                f"The game ends: {why} (score {s.score:+g}).",
                None,
                (("score", s.score),),
            ),
            ("end", why, s.score),
        )
        return evolve(s, phase=_OVER, actor=-1, **_RESET, **changes)

    def horizon(self, state: State) -> tuple[int, int]:
        """``(battle round, player turn within it)``: one unit of ``search`` lookahead.

        ``search`` looks ahead one whole turn, its secret bids solved as matrix games (RT-2,
        RT-3.4).
        """
        return (state.turn // 2 + 1, state.turn % 2)

    def returns(self, state: State) -> tuple[float, float]:
        """Zero-sum scores (RT-6.2)."""
        return (state.score, -state.score)

    def rest_bounds(self, state: State) -> tuple[float, float]:
        """Bounds on what the rest of the game adds to player 0's score (RT-6.2).

        The score moves only when an ability takes effect, or a Cure Injury fails (RT-4,
        RT-2.5): by an ability under way, or by one a psyker of a side with a turn left holds,
        with a candidate target still in the fight, each one way or both
        (:meth:`score_moves`). Where none can raise player 0's score the high bound is 0, where
        none can lower it the low one; the other sides are unbounded. A search's leaf is then
        worth no more (or no less) than the score so far, whatever a board value reads. Loose
        on purpose: costs, stolen and confused minds, and a cure's target at full wounds are
        ignored; before the abilities are drawn (RT-1.3) the rest is unbounded.
        """
        phase = state.phase
        if phase == _OVER:
            return (0.0, 0.0)
        if phase in _SETUP:  # the abilities are still being drawn
            return _UNBOUNDED
        units = state.units
        ways = [0, 0]  # per side: 1 the rest can raise its score, 2 lower it
        if state.ability >= 0:  # an ability under way, whatever its target
            for _, way in self._moves.get((state.actor, state.ability), ()):
                ways[state.active] |= way
        for p in (state.active, 1 - state.active)[: min(self.game.turns - state.turn, 2)]:
            for u in self.psykers_of[p]:
                if units[u].fighting:
                    for a in units[u].abilities:
                        for t, way in self._moves[(u, a)]:
                            if units[t].fighting:
                                ways[p] |= way
        up = ways[0] & 1 or ways[1] & 2
        down = ways[0] & 2 or ways[1] & 1
        return (-math.inf if down else 0.0, math.inf if up else 0.0)

    def score_moves(self, u: int, a: int) -> tuple[tuple[int, int], ...]:
        """How ability ``a`` of psyker ``u`` can move the score, per candidate target (static).

        ``(target, way)`` for each target it can move the score with: ``way`` 1 where it can
        raise the score of ``u``'s side, 2 lower it, 3 both (RT-4, RT-2.5, RT-6.2). Wounds move
        the score by the target's value per wound against its side (a heal for it), a removal
        credits the caster with the wounds it takes off (``removal_scores_wounds``), and an
        ability's own ``value`` credits the caster (RT-4.8).
        """
        ab = self.abilities[a]
        effect, value, own = ab.effect, self.value[a], self.owner[u]
        out = []
        for t in self._cands[(u, a)]:
            way = (1 if value > 0 else 0) | (2 if value < 0 else 0)
            vpw = self.vpw[t]
            up = 1 if vpw > 0 else 2  # the way a wound's worth credited to u's side goes
            mine = up if self.owner[t] == own else 3 - up  # a heal of t, for u's side
            if vpw != 0:
                if effect in ("mental", "missile"):
                    way |= 3 - mine
                elif effect == "remove" and self.game.removal_scores_wounds:
                    way |= up
                elif effect == "cure_wounds":
                    way |= mine
                elif effect == "cure_injury":  # it heals, or wounds when it fails (RT-2.5)
                    way |= 3
            if way:
                out.append((t, way))
        return tuple(out)

    def game_info(self) -> GameInfo:
        """Sizes and bounds: the largest chance node and player 0's score bounds (RT-6.2).

        As :class:`~psygym.core.GameInfo` says, the utilities bound player 0's score: player
        1's lie in ``[-max_utility, -min_utility]`` (zero-sum). A side's score can gain at
        most the value of every enemy wound (healing gives wounds' value back; a removal scores
        only the wounds left), plus the best ``value`` of its abilities once per possible use
        (``turns`` x psykers x ``abilities_per_turn``), minus the other side's most negative
        ``value`` likewise: ``max_utility`` is what side 0 can gain, ``min_utility`` minus
        what side 1 can.
        """
        per_turn = self.game.abilities_per_turn
        first, turns = self.game.first_player, self.game.turns
        turns_of = [0, 0]
        turns_of[first], turns_of[1 - first] = (turns + 1) // 2, turns // 2
        uses = [turns_of[p] * len(self.psykers_of[p]) * per_turn for p in (0, 1)]
        values = [
            [self.value[a] for u in self.psykers_of[p] for a in self._possible(u)] for p in (0, 1)
        ]
        best = [max(v, default=0.0) for v in values]
        worst = [min(v, default=0.0) for v in values]

        def most(p: int) -> float:
            wounds = sum(
                self.max_hp[t] * self.vpw[t]
                for t in range(self.n_units)
                if self.owner[t] != p or self._self_removable(t)
            )
            return wounds + uses[p] * max(0.0, best[p]) - uses[1 - p] * min(0.0, worst[1 - p])

        return evolve(
            super().game_info(),
            max_chance_outcomes=self._max_chance_outcomes(),
            min_utility=-most(1),
            max_utility=most(0),
        )

    def _self_removable(self, t: int) -> bool:
        """Whether a psyker of ``t``'s own side may put ``t`` out of the fight (and score it)."""
        return any(
            self.abilities[a].effect == "remove" and t in self._cands[(u, a)]
            for u in self.psykers_of[self.owner[t]]
            for a in self._possible(u)
        )

    def _max_chance_outcomes(self) -> int:
        """The most outcomes one chance node of this scenario may list."""
        most = 2  # tests, recoveries and the resolution of effects that only take hold
        for u in (i for i in range(self.n_units) if self.psyker[i]):
            spec = self.specs[u]
            if self.random_level[u]:
                most = max(most, len(self._level_outcomes(u)))
            if self.random_abilities[u]:
                if self.game.ability_count == "random":
                    most = max(most, len(self._count_outcomes(u)))
                most = max(most, len(self.data.by_level(spec.mastery)))
            for a in self._possible(u):
                ab = self.abilities[a]
                if ab.effect in ("mental", "missile"):
                    dist = distribution(ab.damage)
                    for t in self._cands[(u, a)]:
                        wounds = capped(dist, self.per_model[t])
                        most = max(most, 2 + sum(1 for w in wounds if w > 0))
                elif ab.effect == "steal_mind":
                    most = max(most, 1 + sum(1 for d in distribution(ab.duration) if d > 0))
        return most


__all__ = ["RTTurns"]
