"""Using an ability in Rogue Trader: legal choices, targets, costs and the test (RT-2).

:class:`RTCasting` is the part of :class:`~.rules.RogueTraderRules` that lists the legal actions
of a decision (memoised) and plays a psyker's choice: rest or end its turn (RT-2.1, RT-5), an
ability it can pay for (RT-2.2) with a legal target (range and the effect's conditions, RT-4),
the amount of Cure Wounds (RT-4.6), then the 2D6 test below ``no_test_at`` points (RT-2.3), the
cost deducted either way (RT-2.4), and a failed Cure Injury wounding its target (RT-2.5).
"""

from __future__ import annotations

from psygym.core import Event, EventKind
from psygym.editions.rogue_trader.abilities import AbilitySpec
from psygym.editions.rogue_trader.actions import ABILITY_BASE, END, REST
from psygym.editions.rogue_trader.state import DECISIONS, Events, Phase, State
from psygym.editions.rogue_trader.units import put
from psygym.kernel import evolve
from psygym.text import plural

_CHOOSE, _TARGET, _AMOUNT, _TEST = Phase.CHOOSE, Phase.TARGET, Phase.AMOUNT, Phase.TEST
_ATTACK_BID, _SAVE_BID, _RESOLVE = Phase.ATTACK_BID, Phase.SAVE_BID, Phase.RESOLVE
_MAX_LEGAL = 50_000  # memoised legal sets kept


class RTCasting:
    """Legal actions and the use of an ability (RT-2), mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.RTFacts` fields, held by the rules as
    attributes), the static candidate targets ``self._cands`` and the memos the rules set up
    (``_bids``, ``_legal_memo``); bids and effects continue in :class:`~.bids.RTBids` and
    :class:`~.effects.RTEffects`.
    """

    def _candidates(self, u: int, ab: AbilitySpec) -> tuple[int, ...]:
        """Units psyker ``u`` could ever aim ``ab`` at: side, range and kind (RT-4, static)."""
        if ab.target == "self" or ab.effect in ("aura", "strength_of_mind", "value"):
            return (u,)
        out = []
        for t in range(self.n_units):
            same = self.owner[t] == self.owner[u]
            if (ab.target == "enemy") == same or self.dist[u][t] > ab.range + 1e-9:
                continue
            if ab.effect in ("cure_injury", "cure_wounds", "transfer_aura") and not self.single[t]:
                continue
            if ab.effect == "transfer_aura" and t == u:
                continue
            out.append(t)
        return tuple(out)

    def _legal(self, state: State) -> tuple[int, ...]:
        """The legal actions, memoised by every field legality reads (the units included).

        A bid's legal actions are the numbers 0 to a cap (RT-3.2, RT-3.3): one shared tuple per
        cap, as :meth:`_find_legal` lists them.
        """
        phase = state.phase
        if phase not in DECISIONS:
            return ()
        if phase == _ATTACK_BID:
            cap = min(state.units[state.actor].points, self.bid_limit)
            if cap >= 0:
                return self._bids[cap]
        elif phase == _SAVE_BID:
            t = state.target
            cap = min(state.units[t].points, self.bid_limit) if self._can_augment(state, t) else 0
            if cap >= 0:
                return self._bids[cap]
        key = (phase, state.actor, state.used, state.ability, state.target, state.units)
        legal = self._legal_memo.get(key)
        if legal is None:
            if len(self._legal_memo) >= _MAX_LEGAL:
                self._legal_memo.clear()
            legal = self._legal_memo[key] = tuple(self._find_legal(state))
        return legal

    def _find_legal(self, state: State) -> list[int]:
        """The legal actions of a decision node, listed in order (what :meth:`_legal` keeps)."""
        phase = state.phase
        if phase == _CHOOSE:
            u = state.actor
            us = state.units[u]
            acts = [REST] if state.used == 0 else [END]
            if state.used < self.game.abilities_per_turn:
                acts += [ABILITY_BASE + a for a in us.abilities if self._usable(state, u, a)]
            return acts
        if phase == _TARGET:
            return [self.target_base + t for t in self.targets(state, state.actor, state.ability)]
        nb = self.number_base
        if phase == _AMOUNT:
            return [nb + k for k in range(1, self._max_amount(state, state.target) + 1)]
        if phase == _ATTACK_BID:
            cap = min(state.units[state.actor].points, self.bid_limit)
            return list(range(nb, nb + cap + 1))
        if phase == _SAVE_BID:
            t = state.target
            cap = min(state.units[t].points, self.bid_limit) if self._can_augment(state, t) else 0
            return list(range(nb, nb + cap + 1))
        return []

    def _usable(self, s: State, u: int, a: int) -> bool:
        """Whether psyker ``u`` may attempt ability ``a`` now (RT-2.2 and a legal target)."""
        if self.abilities[a].cost > s.units[u].points:
            return False
        return any(self._valid(s, u, a, t) for t in self._cands[(u, a)])

    def targets(self, s: State, u: int, a: int) -> list[int]:
        """Units psyker ``u`` may aim ability ``a`` at in ``s`` (range, effect conditions)."""
        return [t for t in self._cands[(u, a)] if self._valid(s, u, a, t)]

    def _valid(self, s: State, u: int, a: int, t: int) -> bool:
        """Whether unit ``t`` is a target of ability ``a`` of psyker ``u`` now (RT-4)."""
        ab = self.abilities[a]
        ts = s.units[t]
        if not ts.fighting:
            return False
        effect = ab.effect
        if effect in ("mental", "missile", "remove", "value"):
            return True
        if effect == "aura":
            return ab.aura > ts.aura
        if effect == "steal_mind":
            return ts.stolen == 0
        if effect == "confuse":
            return not ts.confused
        if effect == "fear":
            return not ts.afraid
        if effect == "destroy_aura":
            return 1 <= ts.aura <= ab.aura
        if effect == "transfer_aura":
            return s.units[u].aura > ts.aura
        if effect == "cure_injury":
            return ts.hp == self.max_hp[t] - 1
        if effect == "cure_wounds":
            return ts.hp < self.max_hp[t]
        if effect == "strength_of_mind":
            return ts.wp_bonus == 0
        return False  # pragma: no cover - the data model rejects other effects

    def _max_amount(self, s: State, t: int) -> int:
        """The most wounds Cure Wounds may heal on ``t``: wounds lost, points (RT-4.6)."""
        cost = self.abilities[s.ability].cost
        by_points = s.units[s.actor].points // cost if cost else self.max_number
        return min(self.max_hp[t] - s.units[t].hp, by_points, self.max_number)

    def _can_act(self, s: State, u: int) -> bool:
        """Whether unit ``u`` is in the fight with its mind free and unconfused (RT-4.5)."""
        us = s.units[u]
        return us.fighting and us.stolen == 0 and not us.confused

    def _cost(self, s: State) -> int:
        """The points the ability under way costs: per wound for Cure Wounds (RT-2.4)."""
        ab = self.abilities[s.ability]
        return ab.cost * s.amount if ab.effect == "cure_wounds" else ab.cost

    def _choose(self, s: State, a: int, ev: Events) -> State:
        """Psyker ``s.actor`` rests (RT-5), ends its turn or picks an ability (RT-2.1)."""
        u = s.actor
        if a == REST:
            self._note(
                ev,
                lambda: Event(
                    EventKind.REST, f"{self.names[u]} rests.", s.active, (("unit", self.names[u]),)
                ),
                ("rest", u, s.active),
            )
            return self._next_actor(s, u, ev, put(s.units, u, resting=True))
        if a == END:
            return self._next_actor(s, u, ev)
        ability = a - ABILITY_BASE
        if self._cands[(u, ability)] == (u,):
            return self._after_target(s, ability, u, 0, ev)
        return evolve(s, ability=ability, target=-1, amount=0, phase=_TARGET)

    def _after_target(self, s: State, ability: int, target: int, amount: int, ev: Events) -> State:
        """``ability`` is aimed at ``target``: Cure Wounds asks how much, others are attempted."""
        if self.abilities[ability].effect == "cure_wounds":
            return evolve(s, ability=ability, target=target, amount=amount, phase=_AMOUNT)
        return self._attempt(s, ev, ability, target, amount)

    def _attempt(self, s: State, ev: Events, ability: int, target: int, amount: int) -> State:
        """Psyker ``s.actor`` uses ``ability`` on ``target`` (RT-2.2); a test below 12 points."""
        u = s.actor
        ab = self.abilities[ability]
        points = s.units[u].points
        cost = ab.cost * amount if ab.effect == "cure_wounds" else ab.cost
        on = "" if target == u else f" on {self.names[target]}"
        self._note(
            ev,
            lambda: Event(
                EventKind.ATTEMPT,
                f"{self.names[u]} uses {ab.name}{on} ({cost} of {plural(points, 'point')}).",
                s.active,
                (("power", ab.name), ("unit", self.names[u]), ("points", points)),
            ),
            ("attempt", u, ability, target, cost, points, s.active),
        )
        s = evolve(s, ability=ability, target=target, amount=amount, phase=_TEST)
        if points >= self.game.no_test_at:
            return self._tested(s, True, ev)  # no test: the phase is set again after it
        return s

    def _tested(self, s: State, works: bool, ev: Events) -> State:
        """The test's result (RT-2.3); the cost is deducted either way (RT-2.4)."""
        u = s.actor
        ab = self.abilities[s.ability]
        points = s.units[u].points - self._cost(s)
        units = put(s.units, u, points=points)
        if not works:
            self._note(
                ev,
                lambda: Event(
                    EventKind.FAILED,
                    f"{ab.name} fails ({plural(points, 'point')} left).",
                    s.active,
                    (("power", ab.name),),
                ),
                ("failed", s.ability, points, s.active),
            )
            s = evolve(s, units=units)
            if ab.effect == "cure_injury":  # RT-2.5: a failed Cure Injury wounds its target
                s = self._wound(s, s.target, 1, ev)
            return self._after_ability(s, ev)
        self._note(
            ev,
            lambda: Event(
                EventKind.PASSED,
                f"{ab.name} works ({plural(points, 'point')} left).",
                s.active,
                (("power", ab.name),),
            ),
            ("passed", s.ability, points, s.active),
        )
        if ab.psychic_save:
            return evolve(s, units=units, phase=_ATTACK_BID, attack_bid=0, save_bid=0)
        if ab.effect in ("mental", "missile", "steal_mind"):
            return evolve(s, units=units, phase=_RESOLVE, attack_bid=0, save_bid=0)
        return self._after_ability(self._take_effect(evolve(s, units=units), 1, ev), ev)

    def _after_ability(self, s: State, ev: Events) -> State:
        """The ability is done: the game may end (RT-6.1), else the psyker or the next acts."""
        units = s.units
        for p in (0, 1):
            for i in self.side_units[p]:
                us = units[i]
                if us.fighting:
                    break
            else:
                return self._game_over(s, ev, f"{self.side_names[p]} has no unit left in the fight")
        u = s.actor
        used = s.used + 1
        if used < self.game.abilities_per_turn and self._can_act(s, u):
            if any(self._usable(s, u, a) for a in s.units[u].abilities):
                return evolve(
                    s,
                    used=used,
                    ability=-1,
                    target=-1,
                    amount=0,
                    attack_bid=0,
                    save_bid=0,
                    phase=_CHOOSE,
                )
        return self._next_actor(s, u, ev)


__all__ = ["RTCasting"]
