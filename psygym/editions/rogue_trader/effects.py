"""Effects of Rogue Trader abilities: saves, wounds, auras, minds and cures (RT-3.1, RT-4).

:class:`RTEffects` is the part of :class:`~.rules.RogueTraderRules` that resolves an ability
that works: the exact outcomes of its resolution node (:meth:`RTEffects.resolve_distribution`:
the psychic save 2D6 <= WP - k + j, RT-3.1, then wounds by the RT chart, armour and aura saves
against missiles, or the duration of Steal Mind), and the effect itself on the target, with
the score it brings (RT-4, RT-6.2).
"""

from __future__ import annotations

from fractions import Fraction

from psygym.combat import roll_chance, save_chance, to_wound_rt
from psygym.core import Event, EventKind
from psygym.dice import distribution
from psygym.editions.rogue_trader.chances import armour_needed, attack_outcomes, psychic_save_chance
from psygym.editions.rogue_trader.state import Events, State
from psygym.editions.rogue_trader.units import put
from psygym.kernel import evolve
from psygym.text import plural


class RTEffects:
    """Resolution and effects (RT-3.1, RT-4), mixed into :class:`~.rules.RogueTraderRules`.

    Reads the scenario's facts (:class:`~.facts.RTFacts` fields, held by the rules as
    attributes); after an effect the turn goes on in :class:`~.casting.RTCasting`.
    """

    def _resolve(self, s: State, outcome: int, ev: Events) -> State:
        """The resolution node came up ``outcome``: 0 the save is made, else the effect."""
        ab = self.abilities[s.ability]
        t = s.target
        if outcome == 0:
            self._note(
                ev,
                lambda: Event(
                    EventKind.SAVED,
                    f"{self.names[t]} resists {ab.name}.",
                    self.owner[t],
                    (("power", ab.name),),
                ),
                ("saved", t, s.ability),
            )
        else:
            s = self._take_effect(s, outcome, ev)
        return self._after_ability(s, ev)

    def resolve_distribution(self, s: State) -> tuple[tuple[int, Fraction], ...]:
        """Exact outcomes of the :attr:`Phase.RESOLVE` node of ``s`` (saves and effect, RT-3/4)."""
        ab = self.abilities[s.ability]
        t = s.target
        ts = s.units[t]
        p_save = Fraction(0)
        if ab.psychic_save:
            p_save = psychic_save_chance(self.will_power(s, t), s.attack_bid, s.save_bid)
        effect = ab.effect
        if effect in ("mental", "missile"):
            spec = self.specs[t]
            p = roll_chance(to_wound_rt(ab.strength, spec.toughness))
            if effect == "missile":
                p *= 1 - save_chance(armour_needed(spec.save, ts.aura))
            cap = (ts.hp - 1) % self.per_model[t] + 1
            return attack_outcomes(p_save, p, ab.damage, cap)
        if effect == "steal_mind":
            dur = distribution(ab.duration)
            out = [(0, p_save)] + [(d, (1 - p_save) * q) for d, q in sorted(dur.items()) if d > 0]
            lost = sum((q for d, q in dur.items() if d <= 0), Fraction(0))
            out[0] = (0, p_save + (1 - p_save) * lost)
            return tuple((o, q) for o, q in out if q > 0)
        return tuple((o, q) for o, q in ((0, p_save), (1, 1 - p_save)) if q > 0)

    def _take_effect(self, s: State, outcome: int, ev: Events) -> State:
        """Apply the effect of ``s.ability`` on ``s.target`` (``outcome`` from RESOLVE)."""
        a, u, t = s.ability, s.actor, s.target
        ab = self.abilities[a]
        caster = self.owner[u]
        before = s.score
        effect = ab.effect
        name, tname = ab.name, self.names[t]
        text = f"{name} takes effect on {tname}."
        if effect in ("mental", "missile"):
            wounds = outcome - 1
            if wounds == 0:
                self._note(
                    ev,
                    lambda: Event(
                        EventKind.NO_DAMAGE,
                        f"{name} fails to wound {tname}.",
                        caster,
                        (("power", name),),
                    ),
                    ("no_damage", a, t, caster),
                )
                return s
            s = self._wound(s, t, wounds, ev)
            text = f"{name} hits {tname} for {plural(wounds, 'wound')}."
        elif effect == "steal_mind":
            s = evolve(s, units=put(s.units, t, stolen=outcome))
            text = f"{name}: {tname} does nothing for its next {outcome} turn(s)."
        elif effect == "remove":
            hp = s.units[t].hp
            s = evolve(s, units=put(s.units, t, out=True))
            if self.game.removal_scores_wounds:
                s = self._credit(s, caster, hp * self.vpw[t])
            self._note(
                ev,
                lambda: Event(
                    EventKind.SLAIN,
                    f"{tname} is out of the fight ({name}).",
                    self.owner[t],
                    (("unit", tname), ("reason", name)),
                ),
                ("removed", t, a),
            )
            text = f"{name} puts {tname} out of the fight."
        elif effect == "confuse":
            s = evolve(s, units=put(s.units, t, confused=True))
            text = f"{tname} is confused."
        elif effect == "fear":
            s = evolve(s, units=put(s.units, t, afraid=True))
            text = f"{tname} becomes subject to fear."
        elif effect == "aura":
            s = evolve(s, units=put(s.units, t, aura=ab.aura))
            text = f"{tname} raises an {name} (+{ab.aura} save)."
        elif effect == "destroy_aura":
            s = evolve(s, units=put(s.units, t, aura=0))
            text = f"{tname}'s aura is dispelled."
        elif effect == "transfer_aura":
            level = s.units[u].aura
            s = evolve(s, units=put(put(s.units, u, aura=0), t, aura=level))
            text = f"{self.names[u]} transfers its aura to {tname}."
        elif effect in ("cure_injury", "cure_wounds"):
            heal = 1 if effect == "cure_injury" else s.amount
            heal = min(heal, self.max_hp[t] - s.units[t].hp)
            s = evolve(s, units=put(s.units, t, hp=s.units[t].hp + heal))
            s = self._credit(s, self.owner[t], heal * self.vpw[t])
            text = f"{name} heals {plural(heal, 'wound')} of {tname}."
        elif effect == "strength_of_mind":
            s = evolve(s, units=put(s.units, t, wp_bonus=1))
            text = f"{tname}'s will power rises to {self.will_power(s, t)}."
        elif effect == "value":
            text = f"{name} works."
        if self.value[a]:
            s = self._credit(s, caster, self.value[a])
        gained = (s.score - before) * (1 if caster == 0 else -1)
        self._note(
            ev,
            lambda: Event(EventKind.MANIFEST, text, caster, (("power", name), ("value", gained))),
            ("manifest", text, caster, a, gained),
        )
        return s

    def _wound(self, s: State, t: int, wounds: int, ev: Events) -> State:
        """Unit ``t`` loses ``wounds`` (at most what it has left), scored (RT-6.2)."""
        ts = s.units[t]
        wounds = min(wounds, ts.hp)
        loss = wounds * self.vpw[t]
        score = s.score + (loss if self.owner[t] == 1 else -loss)
        s = evolve(s, units=put(s.units, t, hp=ts.hp - wounds), score=score)
        self._note(
            ev,
            lambda: Event(
                EventKind.WOUNDS,
                f"{self.names[t]} loses {wounds} wound(s).",
                self.owner[t],
                (("unit", self.names[t]), ("amount", wounds)),
            ),
            ("wounds", t, wounds),
        )
        if ts.hp - wounds == 0:
            self._note(
                ev,
                lambda: Event(
                    EventKind.SLAIN,
                    f"{self.names[t]} is slain.",
                    self.owner[t],
                    (("unit", self.names[t]),),
                ),
                ("slain", t),
            )
        return s

    @staticmethod
    def _credit(s: State, side: int, amount: float) -> State:
        """``s`` with ``amount`` scored for ``side`` (zero-sum, from player 0's view)."""
        return evolve(s, score=s.score + (amount if side == 0 else -amount))


__all__ = ["RTEffects"]
