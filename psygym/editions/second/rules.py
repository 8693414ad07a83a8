"""2nd-edition psychic phase: warp cards, hidden hands and alternating play (rules/second.md).

Flow of one game (2E-8): optional set-up draws of power cards (2E-1.1), then for each battle
round the Psychic phase of the first player and then the other's. A phase (2E-3, 2E-4): the warp
flux roll (chance), cards dealt one at a time alternately starting with the active player (chance
per card: outcomes are card kinds with probability count/deck size, 2E-2), then the effects of
powers that remain in play (2E-6), then alternating turns until two passes in a row, nobody can
act, or Energy Drain. When a power is cast the opponent may answer it (2E-5.2). At the end of the
phase the hands are discarded (2E-4.3).

Hidden information: the deck is a multiset of card kinds (its order is never in the state), each
hand is a multiset; :meth:`SecondRules.view` / :meth:`SecondRules.observe` give a player their own
hand, the other hand's size, the deck's size, the face-up discard pile, its own face-down discards
and the number of the other's, and the public table, and never the other hand. Legal actions
depend only on the mover's view, and so does which steps happen: the response step follows every
answerable cast, and only a player with an empty hand passes a turn by itself (a decision with
PASS as its only action is asked whenever the hand holds cards, so skipping it tells nothing).
:meth:`SecondRules.sample_hidden` deals again everything a player has not seen.

## Where each rule lives

* 2E-1 psykers and power cards: ``spec.Psyker``, ``data.PowerSpec`` (fixed and variable Force
  costs; ``force_range`` with the setting ``variable_min_force``), set-up draws (stage ``SETUP``,
  :meth:`SecondRules.next_draw`); 2E-1.2 is the setting ``ml_limits_power_level``.
* 2E-2 the persistent 36-card deck: ``data/deck.toml``, the ``DEAL`` chance node, the reshuffle
  of the discard pile in :meth:`SecondRules._settle`.
* 2E-3 warp flux (:meth:`SecondRules.flux_dice`, stage ``FLUX``), alternate dealing, then the
  effects of powers in play (upkeep, in :meth:`SecondRules._settle`).
* 2E-4 alternating play: :meth:`SecondRules._turn_actions`, :meth:`SecondRules._pass`,
  :meth:`SecondRules._end_phase` (end-of-phase discards, ``retain_specials``,
  ``public_discards``).
* 2E-5 casting and responses: :meth:`SecondRules._cast`, :meth:`SecondRules._response_actions`,
  :meth:`SecondRules._apply_response`, :meth:`SecondRules.nullify_need`,
  :meth:`SecondRules._finish_pending`.
* 2E-6 effects: :meth:`SecondRules.effect_distribution` (``to_wound_rt``, Strength save
  modifiers), :meth:`SecondRules._effects`, value effects in :meth:`SecondRules._settle`.
* 2E-7 Psychic Duel: :meth:`SecondRules.duel_distribution`.
* 2E-8 battle rounds and the zero-sum score: :meth:`SecondRules._end_phase`,
  :meth:`SecondRules._wound`, :meth:`SecondRules.returns`.

## Actions, views

The action layout (``PASS``, response cards, Psychic Duel, ending or nullifying powers in play,
casts with their payment) is public in :mod:`psygym.editions.second.actions`
(:class:`~psygym.editions.second.actions.ActionLayout`, ``rules.actions``); psykers and units are
numbered in scenario order over both sides. Decisions where the only legal action is PASS are
taken automatically only when they follow from public information (a turn with an empty hand,
no response step when ``responses_per_power`` is used up); see above. The player's view, the
observation layout, action views and text are in :mod:`psygym.editions.second.views`.

## Defaults chosen where rules/second.md and the source are silent

Rule settings (``[rules]`` of a scenario, :class:`~psygym.editions.second.spec.RuleSettings`;
every one may be changed): ``ml_limits_power_level = false`` (2E-1.2), ``variable_min_force = 1``
(2E-1.1), ``warp_flux_dice = 2`` (2E-3.1), ``flux_cap = "both-sides"`` (2E-3.2), ``deal_first =
"active"`` (2E-3.3), ``retain_specials = false`` and ``public_discards = false`` (2E-4.3),
``responses_per_power = 1``, ``nullify_target = 4``, ``nullify_ml_step = 1``, ``nullify_best =
2``, ``nullify_worst = 6``, ``destroy_power = "lose-card"``, ``reflection = "caster"``,
``daemonic_attack_below = 4`` (2E-5.2), ``psychic_duel_dice = "2D6"``, ``psychic_duel_add_ml =
true`` (2E-7).

* ``variable_min_force = 1``: a variable-cost power (``0-3`` / ``1-3``, 2E-1.1) is cast with at
  least one Force card. The only variable card we have, Warp Blast (``0-3``), gives effects for
  Force 1 to 3 and none for 0 (rules/disciplines.md), so a Force-0 cast has no card text behind
  it; ``0`` restores the cards' printed lower bounds (Warp Blast's Force-0 bolt, S4 damage 1, is
  in ``data/powers.toml`` for that setting).
* ``public_discards = false``: hands discarded at the end of a phase go face down; only the player
  who discarded them knows them, the other sees how many. The source says discarded hands go to
  the discard pile but not that they are shown, and shown hands would let card counting pin down
  the other hand (hands are secret, 2E-1/2E-3.3). Cards played (Force paid, response cards,
  Psychic Duel, Energy Drain) lie face up. A reshuffle (2E-2) makes every card unseen again.
* A remain-in-play power paid with Ultimate Force cannot be nullified while it stays in play
  either (2E-5.1 "impossible to nullify"); it may still be ended by its caster.
* Power cards drawn at set-up are public; each psyker draws without replacement from its own
  copy of its disciplines' cards. The disciplines grouping of the shipped powers is ours.
* Psykers are single models; a slain psyker's remain-in-play powers end (source text).
* Ending your own remain-in-play power uses that psyker's action for the phase (the source says it
  is picked up "instead of playing a new Psychic Power"); a power nullified while in play goes
  back to its psyker and may be cast again once that psyker has not cast this phase.
* A remain-in-play power takes effect when cast and again at the start of every later phase of
  either player.
* Cards paid for a power lie on the table (``paid``) until it resolves or is stopped, then go to
  the discard pile. If the deck and the discard pile are both empty, dealing stops.
* Every non-Force card counts as special for ``retain_specials``.
* Nullify with no psyker of your own alive: your best ML counts as 0. A psychic hood helps when
  its wearer is alive; the re-roll is taken automatically on a failed roll.
* Ultimate Force on a variable power pays its highest Force.
* Psychic Duel needs a living psyker on each side, has no range, cannot be answered and does not
  count as a psyker's power for the phase. Energy Drain is played on your turn only.
* Reflection: an attack (or mortal wounds) hits the caster's unit once (an 'every enemy in range'
  power too); a duel power is fought the other way round; a ``value`` effect is scored for the
  reflecting side instead and does not stay in play.
* Attacks: damage per unsaved wound is capped at the target's wounds per model; wounds at the
  unit's remaining wounds. Invulnerable saves are not modified by Strength.
* The game ends after the last battle round, when a side has no unit left, or when no psyker can
  use powers any more.

## Change notes

* Variable-cost powers need at least ``variable_min_force`` (default 1) Force: Warp Blast is no
  longer cast for 0 Force (it was a free S4 shot for every psyker holding it, every phase).
* A remain-in-play power paid with Ultimate Force is not offered to Nullify while in play
  (``InPlay.ultimate``; an observation flag per power slot).
* The response step is a decision of the responder after every answerable cast, even with no
  response card in hand (PASS, "plays no response card", is then its only action); turns are
  passed automatically only with an empty hand. Before, these steps were skipped exactly when
  the hand held nothing playable, which told the other player what it held.
* End-of-phase discards are face down (``public_discards``, default false; ``face_down`` in the
  state; the observation grew by the own face-down discards and the other's count).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Hashable
from fractions import Fraction
from functools import cache
from itertools import accumulate
from operator import add, sub

import numpy as np

from psygym.combat import (
    capped,
    roll_chance,
    save_chance,
    strength_save_modifier,
    to_wound_rt,
    wound_distribution,
)
from psygym.core import (
    CHANCE,
    TERMINAL,
    ActionView,
    Event,
    EventKind,
    GameInfo,
    Information,
    RulesBase,
)
from psygym.dice import Dist, distribution
from psygym.editions.second.actions import (
    DESTROY_POWER,
    ENERGY_DRAIN,
    NULLIFY,
    PASS,
    PAY_OPTIONS,
    PAY_ULTIMATE,
    REFLECTION,
    RESPONSE_CARDS,
    ActionLayout,
    CastAction,
)
from psygym.editions.second.data import (
    CARD_LABELS,
    NUM_CARDS,
    AttackEffect,
    Card,
    DuelEffect,
    MortalEffect,
    PowerSpec,
    ValueEffect,
    load_deck,
    load_powers,
)
from psygym.editions.second.spec import RuleSettings, SecondScenario, draw_pool
from psygym.editions.second.state import (
    DEAL,
    FLUX,
    OVER,
    RESPONSE,
    ROLL,
    ROLL_DAEMONIC,
    ROLL_DUEL,
    ROLL_NULLIFY,
    ROLL_NULLIFY_IN_PLAY,
    SETUP,
    TURN,
    Effect,
    InPlay,
    Pending,
    Roll,
    SecondState,
)
from psygym.editions.second.views import (
    SecondView,
    SecondViews,
)
from psygym.kernel import ChanceCache, ChanceTable, Memo, evolve
from psygym.scenario import distance
from psygym.text import plural

EDITION = "2nd"

_NO_CARDS = (0,) * NUM_CARDS
_FORCE, _NULLIFY, _PSYCHIC_DUEL = int(Card.FORCE), int(Card.NULLIFY), int(Card.PSYCHIC_DUEL)
_ULTIMATE_FORCE, _ENERGY_DRAIN = int(Card.ULTIMATE_FORCE), int(Card.ENERGY_DRAIN)
_RESPONSES = tuple((action, int(card)) for action, card in RESPONSE_CARDS.items())
"""Response actions and the card each plays, in action order (``RESPONSE_CARDS``)."""
_MEMO_SIZE = 200_000
"""Entries a memo of this module keeps before it is cleared (long runs stay bounded)."""


def _plus(counts: tuple[int, ...], card: int, n: int = 1) -> tuple[int, ...]:
    out = list(counts)
    out[card] += n
    return tuple(out)


def _sum(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(map(add, a, b))


def _draw(
    pool: tuple[int, ...], n: int, rng: np.random.Generator
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(drawn, left)``: ``n`` cards drawn uniformly without replacement from a multiset."""
    if not n:
        return _NO_CARDS, pool
    cards = np.repeat(np.arange(len(pool)), pool)
    drawn = np.bincount(cards[rng.choice(len(cards), size=n, replace=False)], minlength=len(pool))
    return tuple(int(x) for x in drawn), tuple(int(a - b) for a, b in zip(pool, drawn))


@cache
def _difference(dice: str, plus_a: int, plus_b: int) -> Dist:
    """Distribution of (dice + plus_a) - (dice + plus_b) for two independent rolls."""
    a = distribution(dice)
    out: Dist = {}
    for x, p in a.items():
        for y, q in a.items():
            d = x + plus_a - y - plus_b
            out[d] = out.get(d, Fraction(0)) + p * q
    return out


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


_FAST_HOOKS = (
    "_apply_chance",
    "_apply_deal",
    "_flux",
    "_apply_response",
    "_apply_turn",
    "_deal_run",
    "_dispatch",
    "_pass",
    "_settle",
    "_walk",
    "_decide_and_walk",
    "chance_table",
)
"""What the one-copy walks call or stand in for (``RulesBase._own_chance_walk``)."""


class SecondRules(RulesBase):
    """The rules of one 2nd-edition scenario (see the module docstring for layouts and defaults).

    Args:
        scenario: the validated scenario.
        powers: the power-card data (default: the shipped ``data/powers.toml``).
        deck: card counts of the warp deck in :class:`Card` order (default: ``data/deck.toml``).
    """

    edition = EDITION
    fast_walk_hooks = _FAST_HOOKS
    information = Information.HIDDEN  # 2E: hands are secret; solvers must search, not solve

    def __init__(
        self,
        scenario: SecondScenario,
        powers: tuple[PowerSpec, ...] | None = None,
        deck: tuple[int, ...] | None = None,
    ):
        self.scenario = scenario
        self.settings = scenario.rules
        self.game = scenario.game
        self.power_data = powers if powers is not None else load_powers()
        self.deck_counts = tuple(deck if deck is not None else load_deck())
        self.power_index = {p.name: i for i, p in enumerate(self.power_data)}
        floor = self.settings.variable_min_force
        self.force_range = tuple(
            (min(max(p.min_force, floor), p.max_force) if p.variable else p.min_force, p.max_force)
            for p in self.power_data
        )
        """Per power: lowest and highest Force that may be paid (2E-1.1, ``variable_min_force``)."""
        self.power_value = tuple(scenario.power_values.get(p.name) for p in self.power_data)
        self._effect_table = tuple({e.force: e for e in p.effects} for p in self.power_data)
        """Per power: its effect by Force paid (``PowerSpec.effect``; one per Force, checked)."""
        self._values = tuple(
            {
                f: (e.value if v is None else v) if isinstance(e, ValueEffect) else None
                for f, e in table.items()
            }
            for table, v in zip(self._effect_table, self.power_value)
        )
        """Per power: by Force paid, the score of a ``value`` effect or ``None`` (``_value_of``)."""

        units, owner = [], []
        for side_idx, side in enumerate(scenario.sides):
            for unit in side.units:
                units.append(unit)
                owner.append(side_idx)
        self.units = tuple(units)
        self.owner = tuple(owner)
        self.side_names = tuple(side.name for side in scenario.sides)
        self.num_units = len(units)
        self.side_units = tuple(
            tuple(u for u in range(len(units)) if owner[u] == s) for s in (0, 1)
        )
        self.max_wounds = tuple(u.models * u.wounds for u in units)
        self.psyker_unit = tuple(i for i, u in enumerate(units) if u.psyker is not None)
        self.unit_psyker = tuple(
            self.psyker_unit.index(i) if u.psyker is not None else -1 for i, u in enumerate(units)
        )
        self.num_psykers = len(self.psyker_unit)
        profiles = [units[u].psyker for u in self.psyker_unit]
        self.ml = tuple(p.mastery for p in profiles)
        self.psyker_side = tuple(owner[u] for u in self.psyker_unit)
        self.side_psykers = tuple(
            tuple(i for i in range(self.num_psykers) if self.psyker_side[i] == s) for s in (0, 1)
        )
        self.hood = tuple(p.psychic_hood for p in profiles)
        ml_limits = self.settings.ml_limits_power_level
        self.draw_pools: tuple[tuple[int, ...] | None, ...] = tuple(
            draw_pool(p, self.power_data, ml_limits) if p.disciplines else None for p in profiles
        )
        fixed = [p.powers or [] for p in profiles]
        self.num_slots = max([len(f) or p.mastery for f, p in zip(fixed, profiles)] or [1])
        self.initial_powers = tuple(
            tuple(self.power_index[n] for n in f) + (-1,) * (self.num_slots - len(f)) for f in fixed
        )
        self._targets, self._area = self._geometry()

        self.psyker_names = tuple(units[u].name for u in self.psyker_unit)
        """Per psyker: the name of its unit."""

        self.actions = ActionLayout(self.num_psykers, self.num_slots, self.num_units)
        """The public action layout of this scenario (:mod:`psygym.editions.second.actions`)."""
        self.end_base = self.actions.end_base
        self.nullify_base = self.actions.nullify_base
        self.cast_base = self.actions.cast_base
        self.num_actions = self.actions.num_actions
        self.views = SecondViews(self)
        """Player views, observations, action views and text of this scenario."""
        self.observation_size = self.views.observation_size
        self._chance = ChanceCache()
        """Chance tables by :meth:`_chance_key`: ``chance_outcomes`` and ``sample_chance``."""
        self._chance_tables = self._chance._tables
        self._deals = ChanceCache()
        """Chance tables of deals by the deck's card counts (2E-2)."""
        self._mean_cache: dict[tuple[int, ...], float] = {}
        """Expected wounds of an effect by (power, force, attacker, victim, wounds left)."""
        self._duel_cache: dict[tuple[int, ...], float] = {}
        """Expected value of a Psychic Duel by (psyker, enemy, their wounds left)."""
        self._unused = (False,) * self.num_psykers
        """``used`` at the start of a phase: no psyker has cast yet (2E-4.2)."""
        self._specs = tuple(
            tuple(
                tuple(self._cast_spec(i, j, k) for k in range(len(self.power_data)))
                for j in range(self.num_slots)
            )
            for i in range(self.num_psykers)
        )
        """:meth:`_cast_spec` by psyker, slot and power."""
        self._side_psyker_units = tuple(
            tuple((i, self.psyker_unit[i]) for i in self.side_psykers[side]) for side in (0, 1)
        )
        """Per side: ``(psyker, its unit)`` in psyker order."""
        self._deal_events = tuple(
            Event(EventKind.DEAL, f"{self.side_names[p]} is dealt a warp card.", p) for p in (0, 1)
        )
        self._deal_event_tuples = tuple((e,) for e in self._deal_events)
        self._deal_event_runs: dict[tuple[int, int], tuple[Event, ...]] = {}
        """The events of a deal of ``n`` cards starting with player ``p``, by ``(p, n)``."""
        self._pass_events = tuple(
            Event(EventKind.PASS, f"{self.side_names[p]} passes.", p) for p in (0, 1)
        )
        self._phase_end_events = tuple(
            Event(EventKind.PHASE_END, "The Psychic phase ends; hands are discarded.", p)
            for p in (0, 1)
        )
        self._event_memo = Memo(_MEMO_SIZE)
        """Events by everything they depend on (:meth:`_shared_event`); events are immutable."""
        self._event_values = self._event_memo._values
        """The memo's dictionary: its hits without a call (the key as :meth:`_shared_event`'s)."""
        self._single_effects: dict[tuple, tuple[Effect]] = {}
        """:meth:`_effects` of a power aimed at one unit, by everything they hold."""
        self._usable: dict[tuple, int] = {}
        """Psykers that can use powers (2E-3.2), by ``(wounds, powers)``."""
        self._draws: dict[tuple[tuple[int, ...], ...], int] = {}
        """:meth:`next_draw` by the power cards held."""
        self._cast_codes = tuple(
            self.actions.decode_cast(a) for a in range(self.cast_base, self.num_actions)
        )
        """``(psyker, slot, target, pay)`` of every cast action, from ``cast_base`` on."""
        self._cast_plans: dict[tuple[int, int, int], tuple] = {}
        """:meth:`_cast_plan` by ``(action, power, player)``."""
        self._deal_nodes: dict[tuple[int, ...], list] = {}
        """:meth:`_deal_node` by the deck's card counts."""
        self._flux_plans: dict[tuple[int, int, int], tuple[int, Event, Event]] = {}
        """:meth:`_flux_plan` by ``(phase, dice, cards)``."""
        self._setup_nodes: dict[tuple[int, tuple[int, ...]], list] = {}
        """:meth:`_setup_node` by psyker and the power cards it holds."""
        self._initial: SecondState | None = None
        """The state :meth:`initial_state` returns (built once: states are immutable)."""
        """:meth:`legal_mask` by the legal actions."""

    # -----------------------------------------------------------------------------------------
    # Set-up and geometry

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

    def initial_state(self) -> SecondState:
        """The state before set-up draws and the first Psychic phase's warp flux."""
        if self._initial is None:
            self._initial = self._first_state()
        return self._initial

    def _first_state(self) -> SecondState:
        """The state :meth:`initial_state` returns, built."""
        s = SecondState(
            stage=SETUP,
            phase=0,
            to_move=self.game.first_player,
            passes=0,
            wounds=self.max_wounds,
            powers=self.initial_powers,
            used=(False,) * self.num_psykers,
            in_play=(),
            deck=self.deck_counts,
            discard=_NO_CARDS,
            hands=(_NO_CARDS, _NO_CARDS),
            paid=_NO_CARDS,
            to_deal=0,
            deal_to=0,
            pending=None,
            roll=None,
            effects=(),
            score=0.0,
        )
        return self._settle(s, [])

    def next_draw(self, state: SecondState) -> int:
        """The psyker that draws a power card next at set-up, or -1 when set-up is done."""
        powers = state.powers
        found = self._draws.get(powers)
        if found is None:
            found = -1
            for i, pool in enumerate(self.draw_pools):
                if pool is not None and powers[i].count(-1) > self.num_slots - self.ml[i]:
                    found = i
                    break
            if len(self._draws) >= _MEMO_SIZE:
                self._draws.clear()
            self._draws[powers] = found
        return found

    # -----------------------------------------------------------------------------------------
    # Small queries

    def active(self, state: SecondState) -> int:
        """The player whose Psychic phase it is."""
        return (self.game.first_player + state.phase) % 2

    def battle_round(self, state: SecondState) -> int:
        """Battle round of the state, from 1."""
        return min(state.phase // 2 + 1, self.game.battle_rounds)

    def horizon(self, state: SecondState) -> tuple[int, int]:
        """``(battle round, phase within the round)``: one unit of lookahead per Psychic phase.

        Set-up (2E-1.1) is round 0. The pair changes when a phase ends (2E-4.3), at the warp
        flux roll of the next (2E-3.1), where no hand is dealt yet and the table is public.
        """
        if state.stage == SETUP:
            return (0, 0)
        return (state.phase // 2 + 1, state.phase % 2)

    def alive(self, state: SecondState, psyker: int) -> bool:
        """Whether a psyker is on the table."""
        return state.wounds[self.psyker_unit[psyker]] > 0

    def can_use_powers(self, state: SecondState, psyker: int) -> bool:
        """A living psyker with at least one power card left (2E-3.2)."""
        return self.alive(state, psyker) and any(p >= 0 for p in state.powers[psyker])

    def usable_psykers(self, state: SecondState) -> int:
        """How many psykers can use powers (2E-3.2); memoised by wounds and power cards."""
        key = (state.wounds, state.powers)
        n = self._usable.get(key)
        if n is None:
            if len(self._usable) >= _MEMO_SIZE:
                self._usable.clear()
            n = self._usable[key] = sum(
                self.can_use_powers(state, i) for i in range(self.num_psykers)
            )
        return n

    def flux_dice(self, state: SecondState) -> int:
        """Dice of warp flux this phase: ``warp_flux_dice`` capped by usable psykers (2E-3.2)."""
        n = self.settings.warp_flux_dice
        if self.settings.flux_cap == "both-sides":
            n = min(n, self.usable_psykers(state))
        return n

    def card_total(self, state: SecondState) -> int:
        """Deck + discard pile + both hands + paid cards: always the deck size (conservation)."""
        return sum(state.deck) + sum(state.discard) + sum(map(sum, state.hands)) + sum(state.paid)

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

    # -----------------------------------------------------------------------------------------
    # Actions

    def cast_action(self, psyker: int, slot: int, target: int, pay: int) -> int:
        """Index of a cast action (:meth:`ActionLayout.encode_cast`)."""
        return self.actions.encode_cast(psyker, slot, target, pay)

    def decode_cast(self, action: int) -> CastAction:
        """``(psyker, slot, target, pay)`` of a cast action (:meth:`ActionLayout.decode_cast`)."""
        return self.actions.decode_cast(action)

    def current_player(self, state: SecondState) -> int:
        """0 or 1 at a decision, else CHANCE or TERMINAL."""
        stage = state.stage
        if stage == OVER:
            return TERMINAL
        if state.effects:
            return CHANCE
        if stage == TURN:
            return state.to_move
        if stage == RESPONSE:
            return 1 - self.psyker_side[state.pending.psyker]  # the responder (2E-5.2)
        return CHANCE  # SETUP, FLUX, DEAL, ROLL

    def legal_actions(self, state: SecondState) -> list[int]:
        """Sorted legal actions of the player to move (computed from that player's view only)."""
        stage = state.stage
        if state.effects:  # the tests of current_player: a chance node
            return []
        if stage == TURN:
            return self._turn_actions(state)
        if stage == RESPONSE:
            return self._response_actions(state)
        return []  # a chance node or the end

    def _response_actions(self, state: SecondState) -> list[int]:
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

    # -----------------------------------------------------------------------------------------
    # Chance

    def chance_outcomes(self, state: SecondState) -> list[tuple[int, float]]:
        """Outcomes of the chance node as floats: :meth:`chance_distribution` converted.

        ``[]`` when ``state`` is not a chance node.
        """
        if self.current_player(state) != CHANCE:
            return []
        return list(self.chance_table(state).outcomes)

    def chance_table(self, state: SecondState) -> ChanceTable:
        """The chance node's table (memoised by :meth:`_chance_key`; deals by the deck)."""
        if state.stage == DEAL and not state.effects:
            # 2E-2: a card kind with probability count / deck size; the deck is all it depends on.
            deck = state.deck
            return self._deals.get(deck, lambda: self._deal_outcomes(deck))
        key = self._chance_key(state)
        table = self._chance_tables.get(key)  # ChanceCache.get's hit, without its call
        if table is None:
            table = self._chance.get(key, lambda: self.chance_distribution(state))
        return table

    @staticmethod
    def _deal_outcomes(deck: tuple[int, ...]) -> list[tuple[int, float]]:
        """``(card, count / deck size)``: the float conversion of the exact law (2E-2).

        ``k / n`` is correctly rounded, so it equals ``float(Fraction(k, n))`` of
        :meth:`chance_distribution`; floats spare the Fractions of thousands of decks.
        """
        n = sum(deck)
        return [(c, k / n) for c, k in enumerate(deck) if k]

    def _chance_key(self, state: SecondState) -> tuple[int, ...]:
        """Everything the chance node's law depends on (the cache key of its outcomes)."""
        if state.effects:
            eff = state.effects[0]
            attacker, victim = self.effect_units(eff)
            return (0, eff.power, eff.force, attacker, victim, state.wounds[victim])
        if state.stage == FLUX:
            return (1, self.flux_dice(state))
        if state.stage == SETUP:
            i = self.next_draw(state)
            return (2, i, *state.powers[i])
        roll = state.roll
        assert roll is not None
        if roll.kind == ROLL_DUEL:
            wounds = state.wounds
            left = (wounds[self.psyker_unit[roll.a]], wounds[self.psyker_unit[roll.b]])
            return (3, roll.a, roll.b, *left)
        return (4, roll.kind, roll.a, roll.need, roll.reroll)

    def chance_distribution(self, state: SecondState) -> tuple[tuple[int, Fraction], ...]:
        """Exact ``(outcome, probability)`` pairs of the chance node, as Fractions.

        Outcomes: a dealt card kind (count / deck size, 2E-2); a warp flux total (2E-3.1); a
        power card drawn at set-up; Nullify or Daemonic Attack success (1) or failure (0)
        (2E-5.2); a Psychic Duel result (+w: the enemy psyker loses w wounds, -w: yours, 2E-7);
        the wounds an effect inflicts (2E-6).
        """
        if state.effects:
            eff = state.effects[0]
            attacker, victim = self.effect_units(eff)
            dist = self.effect_distribution(
                eff.power, eff.force, attacker, victim, state.wounds[victim]
            )
        elif state.stage == DEAL:
            n = sum(state.deck)
            dist = {c: Fraction(k, n) for c, k in enumerate(state.deck)}
        elif state.stage == FLUX:
            dist = distribution(f"{self.flux_dice(state)}D6")
        elif state.stage == SETUP:
            i = self.next_draw(state)
            return self._setup_distribution(i, state.powers[i])
        elif state.stage == ROLL and state.roll is not None:
            roll = state.roll
            if roll.kind == ROLL_DUEL:
                dist = self.duel_distribution(state, roll.a, roll.b)
            else:
                p = (
                    self.daemonic_chance(roll.a)
                    if roll.kind == ROLL_DAEMONIC
                    else nullify_chance(roll.need, roll.reroll)
                )
                dist = {0: 1 - p, 1: p}
        else:
            return ()
        return tuple(sorted((k, p) for k, p in dist.items() if p))

    def sample_chance(self, state: SecondState, rng: np.random.Generator) -> int:
        """Draw one chance outcome with ``rng`` (one uniform draw) from :meth:`chance_table`."""
        return self.chance_table(state).sample(rng)

    def _shared_event(self, key: tuple, build: Callable[[], Event]) -> Event:
        """The event ``build()`` makes, built once per ``key`` (everything it depends on)."""
        return self._event_memo.get(key, build)

    def sample_chance_run(
        self, state: SecondState, rng: np.random.Generator, events: list[Event]
    ) -> SecondState:
        """Walk chance nodes to the next decision in one copy of the state (see :meth:`_walk`).

        The same draws (one uniform number per node, from :meth:`chance_table`), the same
        transition code and the same events as :meth:`sample_chance` and :meth:`_apply` node by
        node; each deal of cards (2E-3.3) is drawn in one pass. Other chance nodes go through
        the transition code of :meth:`_apply`, in the walk's own copy of the state.
        """
        stage = state.stage
        if stage == OVER or (not state.effects and (stage == TURN or stage == RESPONSE)):
            return state  # not a chance node (the tests of current_player)
        # Not while sample_chance or the transition code below is replaced (tests do).
        if not self._own_chance_walk():
            return super().sample_chance_run(state, rng, events)
        return self._walk(evolve(state), rng, events)

    def _decide_and_walk(
        self, state: SecondState, action: int, rng: np.random.Generator, events: list[Event]
    ) -> SecondState:
        """A decision and the chance nodes after it, in one copy of the state.

        The same transition code, draws and events as :meth:`apply_with_events` and then
        :meth:`sample_chance_run`; nobody sees the state between them, so one copy serves both.
        """
        stage = state.stage
        if not state.effects:
            if stage == TURN and action == PASS:
                # The commonest decision, as _apply_turn, _pass and _settle take it (2E-4.3).
                p = state.to_move
                events.append(self._pass_events[p])
                if state.passes + 1 >= 2:
                    s = self._end_phase(evolve(state), events)
                    return self._walk(self._settle(s, events), rng, events)
                s = evolve(state, passes=state.passes + 1, to_move=1 - p)
                if any(s.hands[1 - p]):  # a turn with cards in hand is a decision (_settle)
                    return s
                return self._walk(self._settle(s, events), rng, events)
            if stage == TURN and action >= self.cast_base:
                # A cast (_apply_turn): it waits for the response step (_settle) when one is
                # allowed; the chance nodes come only after the answer.
                s = self._cast(evolve(state), action, events)
                if self.settings.responses_per_power > 0:
                    return s
                return self._walk(self._settle(s, events), rng, events)
            if stage == RESPONSE and action == PASS:  # no response card (_apply_response)
                s = self._finish_pending(evolve(state), events, reflected=False, stopped=False)
                return self._walk(self._settle(s, events), rng, events)
            if stage == DEAL:  # a card, not a decision: as _apply does
                s, step_events = self._apply_deal(state, action)
                events.extend(step_events)
                return self._walk(evolve(s), rng, events)
        s = self._dispatch(evolve(state), action, events)
        return self._walk(self._settle(s, events), rng, events)

    def _walk(self, s: SecondState, rng: np.random.Generator, events: list[Event]) -> SecondState:
        """Chance nodes from ``s`` (a transition's own copy) to the next decision or the end.

        One draw per node from :meth:`chance_table` and the node's transition code of
        :meth:`_apply`, in place; a deal under way is dealt by :meth:`_deal_run`.
        """
        while True:
            stage = s.stage
            if stage == OVER:  # the same tests as current_player
                return s
            if not s.effects:
                if stage == TURN or stage == RESPONSE:
                    return s
                if stage == FLUX:  # _apply_chance's flux, with the dice found once
                    dice = self.flux_dice(s)
                    table = self._chance_tables.get((1, dice))  # chance_table's key
                    if table is None:
                        table = self.chance_table(s)
                    s = self._settle(self._flux(s, dice, table.sample(rng), events), events)
                    continue
                if stage == SETUP:
                    s = self._setup_run(s, rng, events)
                    continue
                if stage == DEAL:
                    if s.to_deal > 0 and any(s.deck):
                        s = self._deal_run(s, rng, events)
                    else:  # never left so by _settle; one node at a time, as _apply does
                        s, step_events = self._apply_deal(s, self.chance_table(s).sample(rng))
                        events.extend(step_events)
                        s = evolve(s)
                    continue
            s = self._apply_chance(s, self.chance_table(s).sample(rng), events)
            s = self._settle(s, events)

    def _setup_run(
        self, s: SecondState, rng: np.random.Generator, events: list[Event]
    ) -> SecondState:
        """Every set-up draw of power cards (2E-1.1) into ``s`` (a transition's own copy).

        The same tables (:meth:`chance_table`), the same one uniform number per draw, the same
        changes and events as :meth:`sample_chance` and :meth:`_apply_chance` node by node;
        :meth:`_settle` between two draws only finds the next draw, so it runs once, after the
        last one.
        """
        # next_draw finds the first psyker still drawing, and a draw changes only its own
        # slots: so the draws are each psyker's in turn, in psyker order.
        powers = list(s.powers)
        random, nodes, spare = rng.random, self._setup_nodes, self.num_slots
        for i, pool in enumerate(self.draw_pools):
            if pool is None:
                continue
            slots = powers[i]
            while slots.count(-1) > spare - self.ml[i]:  # next_draw's test
                node = nodes.get((i, slots))
                if node is None:
                    node = self._setup_node(i, slots)
                cumulative, outcomes, last, kids = node
                idx = bisect_right(cumulative, random() * cumulative[-1])  # ChanceTable.sample
                outcome = outcomes[idx if idx < last else last]
                after = kids.get(outcome)
                if after is None:
                    after = kids[outcome] = self._setup_after(i, slots, outcome)
                slots = after[0]
                events.append(after[1])
            powers[i] = slots
        s.__dict__.update(powers=tuple(powers))
        return self._settle(s, events)

    def _setup_node(self, i: int, slots: tuple[int, ...]) -> list:
        """Psyker ``i``'s set-up draw with ``slots`` held, as :meth:`_setup_run` walks it.

        ``[cumulative, outcomes, last index, next]``: the running sums and outcomes of the
        node's chance table (:meth:`chance_table`'s, 2E-1.1) and, per outcome drawn, the slots
        after it and the draw's event. Memoised by ``(i, slots)`` (bounded).
        """
        table = self._chance.get((2, i, *slots), lambda: self._setup_distribution(i, slots))
        cumulative = table.cumulative
        node = [cumulative, [o for o, _ in table.outcomes], len(cumulative) - 1, {}]
        if len(self._setup_nodes) >= _MEMO_SIZE:
            self._setup_nodes.clear()
        self._setup_nodes[(i, slots)] = node
        return node

    def _setup_after(
        self, i: int, slots: tuple[int, ...], outcome: int
    ) -> tuple[tuple[int, ...], Event]:
        """The slots of psyker ``i`` once it draws ``outcome``, and the event (2E-1.1)."""
        after = list(slots)
        after[after.index(-1)] = outcome
        return tuple(after), self._draw_event(i, outcome)

    def _setup_distribution(
        self, i: int, slots: tuple[int, ...]
    ) -> tuple[tuple[int, Fraction], ...]:
        """Psyker ``i`` draws one power card it does not hold from its pool, uniformly (2E-1.1)."""
        pool = [k for k in self.draw_pools[i] or () if k not in slots]
        return tuple(sorted((k, Fraction(1, len(pool))) for k in pool))

    def _draw_event(self, i: int, outcome: int) -> Event:
        """The event of psyker ``i`` drawing power card ``outcome`` at set-up (2E-1.1)."""
        return self._shared_event(
            ("draw", i, outcome),
            lambda: Event(
                EventKind.DRAW_POWER,
                f"{self.units[self.psyker_unit[i]].name} draws {self.power_data[outcome].name}.",
                self.psyker_side[i],
            ),
        )

    def _deal_run(
        self, s: SecondState, rng: np.random.Generator, events: list[Event]
    ) -> SecondState:
        """Deal every card of the deal under way (2E-3.3) into ``s`` (a transition's own copy).

        The same table, the same one uniform number per card and the same events as
        :meth:`sample_chance` and :meth:`_apply_deal` one card at a time: the deal stops when it
        is done or the deck is empty, so it takes exactly ``min(to_deal, cards in the deck)``
        numbers, drawn at once (``rng.random(n)`` gives the numbers of ``n`` calls of
        ``rng.random()``). Then settles as :meth:`_apply_deal`.
        """
        p = s.deal_to
        hands = [list(s.hands[0]), list(s.hands[1])]
        deck = s.deck
        to_deal = s.to_deal
        n = min(to_deal, sum(deck))  # counts are never negative
        draws = (rng.random(),) if n == 1 else rng.random(n).tolist()
        deal_events = self._deal_event_runs.get((p, n))  # one per card, alternately
        if deal_events is None:
            deal_events = self._deal_event_runs[(p, n)] = tuple(
                self._deal_events[(p + k) % 2] for k in range(n)
            )
        events.extend(deal_events)
        node = self._deal_nodes.get(deck)
        if node is None:
            node = self._deal_node(deck)
        for u in draws:
            _, cumulative, cards, last, kids = node
            idx = bisect_right(cumulative, u * cumulative[-1])  # ChanceTable.sample, inline
            card = cards[idx if idx < last else last]
            hands[p][card] += 1
            p = 1 - p
            after = kids[card]
            if after is None:
                after = kids[card] = self._deal_node(_plus(node[0], card, -1))
            node = after
        s.__dict__.update(
            deck=node[0],
            hands=(tuple(hands[0]), tuple(hands[1])),
            to_deal=to_deal - n,
            deal_to=p,
        )
        return self._settle(s, events)

    def _deal_node(self, deck: tuple[int, ...]) -> list:
        """The deal of one card from ``deck`` as ``_deal_run`` walks it (memoised, bounded).

        ``[deck, cumulative, cards, last index, next]``: the deck's chance table (2E-2; the one
        :meth:`chance_table` gives) as its running sums and card kinds, and per card kind the
        node of the deck left once it is dealt (``None`` until a deal takes it). An empty deck
        has no outcomes (no card is dealt from it).
        """
        nodes = self._deal_nodes
        node = nodes.get(deck)
        if node is None:
            # The running sums of ChanceTable(_deal_outcomes(deck)), without building the table:
            # the same floats added in the same order.
            n = sum(deck)
            cards = [c for c, k in enumerate(deck) if k]
            cumulative = list(accumulate([deck[c] / n for c in cards]))
            node = [deck, cumulative, cards, len(cumulative) - 1, [None] * len(deck)]
            if len(nodes) >= _MEMO_SIZE:
                nodes.clear()
            nodes[deck] = node
        return node

    def daemonic_chance(self, psyker: int) -> Fraction:
        """Chance that Daemonic Attack slays ``psyker``: D6 + ML below the setting (2E-5.2)."""
        below = self.settings.daemonic_attack_below
        return Fraction(sum(1 for d in range(1, 7) if d + self.ml[psyker] < below), 6)

    def duel_distribution(self, state: SecondState, mine: int, enemy: int) -> Dist:
        """Psychic Duel (2E-7) outcome: +w the enemy loses w wounds, -w your psyker loses w."""
        st = self.settings
        add = st.psychic_duel_add_ml
        diff = _difference(
            st.psychic_duel_dice, self.ml[mine] if add else 0, self.ml[enemy] if add else 0
        )
        left_mine = state.wounds[self.psyker_unit[mine]]
        left_enemy = state.wounds[self.psyker_unit[enemy]]
        out: Dist = {}
        for d, p in diff.items():
            k = min(d, left_enemy) if d > 0 else -min(-d, left_mine)
            out[k] = out.get(k, Fraction(0)) + p
        return out

    def effect_units(self, eff: Effect) -> tuple[int, int]:
        """``(attacker unit, victim unit)`` of an effect, Reflection included."""
        caster = self.psyker_unit[eff.psyker]
        if not eff.reflected:
            return caster, eff.target
        if isinstance(self._effect_table[eff.power][eff.force], DuelEffect):
            return eff.target, caster
        return caster, caster

    def effect_distribution(
        self, power: int, force: int, attacker: int, victim: int, left: int
    ) -> Dist:
        """Exact distribution of wounds an effect inflicts on ``victim`` with ``left`` wounds.

        2E-6: attacks wound by the 2nd-edition chart (``to_wound_rt``) and armour saves are
        worsened by Strength (``strength_save_modifier``); invulnerable saves are not.
        """
        spec = self.power_data[power].effect(force)
        target = self.units[victim]
        if isinstance(spec, AttackEffect):
            shooter = self.units[attacker]
            p_hit = (
                Fraction(1)
                if spec.to_hit == "auto"
                else roll_chance(max(2, 7 - shooter.ballistic_skill))
            )
            p_wound = roll_chance(to_wound_rt(spec.strength, target.toughness))
            unsaved = Fraction(1)
            if spec.saves:
                armour = target.save + strength_save_modifier(spec.strength)
                unsaved = 1 - save_chance(armour if target.save < 7 else None, target.invulnerable)
            damage = capped(distribution(spec.damage), target.wounds)
            return wound_distribution(spec.hits, p_hit * p_wound * unsaved, damage, cap=left)
        if isinstance(spec, MortalEffect):
            return capped(distribution(spec.wounds), left)
        if isinstance(spec, DuelEffect):
            a = self.ml[self.unit_psyker[attacker]]
            b = self.ml[self.unit_psyker[victim]]
            out: Dist = {}
            for d, p in _difference(spec.dice, a, b).items():
                k = min(max(d, 0), left)
                out[k] = out.get(k, Fraction(0)) + p
            return out
        return {0: Fraction(1)}

    def _rolls_dice(self, state: SecondState, eff: Effect) -> bool:
        """Whether an effect is a chance node (not a value, and its victim still stands)."""
        if self._values[eff.power][eff.force] is not None:  # a value effect
            return False
        victim = self.effect_units(eff)[1] if eff.reflected else eff.target
        return state.wounds[victim] > 0

    # -----------------------------------------------------------------------------------------
    # Transitions
    #
    # Every transition copies its input state once (``evolve``) and builds the next state in
    # that copy, setting fields with ``s.__dict__.update``: the helpers below take the
    # transition's own copy, change it in place and return it, so a transition costs one copy
    # however many steps it chains (a cast, the response, the effects, the passes, the end of
    # the phase, the next deal). Nobody else has seen the copy yet (it is neither hashed nor
    # shared), so every state a caller receives stays immutable; a walk of chance nodes
    # (:meth:`_walk`) goes on in the same copy.

    def _apply(self, state: SecondState, action: int) -> tuple[SecondState, tuple[Event, ...]]:
        if state.stage == DEAL and not state.effects:
            return self._apply_deal(state, action)
        events: list[Event] = []
        s = self._dispatch(evolve(state), action, events)
        return self._settle(s, events), tuple(events)

    def _dispatch(self, s: SecondState, action: int, events: list[Event]) -> SecondState:
        """Apply a decision or a chance outcome (not a deal) to ``s``, a transition's own copy."""
        if self.current_player(s) == CHANCE:
            return self._apply_chance(s, action, events)
        if s.stage == RESPONSE:
            return self._apply_response(s, action, events)
        return self._apply_turn(s, action, events)

    def _apply_deal(self, s: SecondState, card: int) -> tuple[SecondState, tuple[Event, ...]]:
        """Deal one card (2E-3.3): the most frequent transition, so it has its own path."""
        p = s.deal_to
        hand = list(s.hands[p])
        hand[card] += 1
        deck = list(s.deck)
        deck[card] -= 1
        hands = (tuple(hand), s.hands[1]) if p == 0 else (s.hands[0], tuple(hand))
        s = evolve(s, deck=tuple(deck), hands=hands, to_deal=s.to_deal - 1, deal_to=1 - p)
        # The event never names the card: hands are secret.
        if s.to_deal > 0 and any(deck):  # the next card is dealt next (what _settle would find)
            return s, self._deal_event_tuples[p]
        events = [self._deal_events[p]]
        return self._settle(s, events), tuple(events)

    def _apply_chance(self, s: SecondState, outcome: int, events: list[Event]) -> SecondState:
        if s.effects:
            eff, rest = s.effects[0], s.effects[1:]
            _, victim = self.effect_units(eff)
            power = self.power_data[eff.power].name
            if outcome == 0:
                event = self._event_values.get(("no effect", power, victim))
                events.append(self._no_effect_event(power, victim) if event is None else event)
                s.__dict__.update(effects=rest)
                return s
            return self._wound(s, victim, outcome, events, power, effects=rest)
        stage = s.stage
        if stage == FLUX:
            return self._flux(s, self.flux_dice(s), outcome, events)
        if stage == SETUP:
            i = self.next_draw(s)
            powers = list(s.powers)
            slots = list(powers[i])
            slots[slots.index(-1)] = outcome
            powers[i] = tuple(slots)
            events.append(self._draw_event(i, outcome))
            s.__dict__.update(powers=tuple(powers))
            return s
        return self._apply_roll(s, outcome, events)

    def _flux(self, s: SecondState, dice: int, outcome: int, events: list[Event]) -> SecondState:
        """The warp flux roll of ``dice`` dice came up ``outcome``: deal that many (2E-3.1)."""
        phase = s.phase
        plan = self._flux_plans.get((phase, dice, outcome))
        if plan is None:
            plan = self._flux_plan(s, dice, outcome)
        first, phase_event, flux_event = plan
        events.append(phase_event)
        events.append(flux_event)
        s.__dict__.update(stage=DEAL, to_deal=outcome, deal_to=first)
        return s

    def _no_effect_event(self, power: str, victim: int) -> Event:
        """The event of an effect of ``power`` that wounds nothing on ``victim`` (2E-6)."""
        name = self.units[victim].name
        return self._shared_event(
            ("no effect", power, victim),
            lambda: Event(
                EventKind.NO_EFFECT,
                f"{power} causes no wounds on {name}.",
                self.owner[victim],
                (("power", power), ("unit", name)),
            ),
        )

    def _flux_plan(self, s: SecondState, dice: int, outcome: int) -> tuple[int, Event, Event]:
        """The warp flux roll of ``s``'s phase (2E-3.1): who is dealt first (2E-3.3), its events.

        The active player and battle round depend on the phase alone, so everything the plan
        depends on is in the key ``(phase, dice, outcome)`` (memoised, bounded).
        """
        active = self.active(s)
        first = active if self.settings.deal_first == "active" else 1 - active
        rnd = self.battle_round(s)
        phase_event = self._shared_event(
            ("phase", rnd, active),
            lambda: Event(
                EventKind.PHASE,
                f"Battle round {rnd}: Psychic phase of {self.side_names[active]}.",
                active,
                (("round", rnd),),
            ),
        )
        flux_event = self._shared_event(
            ("flux", dice, outcome, active),
            lambda: Event(
                EventKind.FLUX,
                f"Warp flux {dice}D6 = {outcome}: {plural(outcome, 'card')} "
                f"{'is' if outcome == 1 else 'are'} dealt.",
                active,
                (("dice", dice), ("cards", outcome)),
            ),
        )
        plan = (first, phase_event, flux_event)
        if len(self._flux_plans) >= _MEMO_SIZE:
            self._flux_plans.clear()
        self._flux_plans[(s.phase, dice, outcome)] = plan
        return plan

    def _apply_roll(self, s: SecondState, outcome: int, events: list[Event]) -> SecondState:
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

    def _apply_turn(self, s: SecondState, action: int, events: list[Event]) -> SecondState:
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
        plan = (pending, card, n, _plus(_NO_CARDS, card, n), attempt, passed)
        if len(self._cast_plans) >= _MEMO_SIZE:
            self._cast_plans.clear()
        self._cast_plans[(action, k, p)] = plan
        return plan

    def _apply_response(self, s: SecondState, action: int, events: list[Event]) -> SecondState:
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
            discard=_sum(s.discard, s.paid),
            paid=_NO_CARDS,
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

    def _effects(
        self, s: SecondState, psyker: int, power: int, force: int, target: int, reflected: bool
    ) -> tuple[Effect, ...]:
        """The effects a power resolves (one per unit for 'every enemy unit in range')."""
        if target < self.num_units:  # one unit: the same effect whatever the state
            key = (power, force, psyker, target, reflected)
            effects = self._single_effects.get(key)
            if effects is None:
                if len(self._single_effects) >= _MEMO_SIZE:
                    self._single_effects.clear()
                effects = self._single_effects[key] = (
                    Effect(power, force, psyker, target, reflected),
                )
            return effects
        if target == self.num_units:
            if reflected:
                return (Effect(power, force, psyker, self.psyker_unit[psyker], True),)
            return tuple(
                Effect(power, force, psyker, u)
                for u in self._area[(psyker, power)]
                if s.wounds[u] > 0
            )
        return (Effect(power, force, psyker, target, reflected),)

    def _value_of(self, power: int, force: int) -> float | None:
        """The score of a ``value`` effect (the scenario's ``power_values`` first), else None."""
        return self._values[power][force]

    def _played(self, s: SecondState, player: int, card: int) -> dict[str, tuple]:
        """The ``hands`` and ``discard`` after ``player`` plays one ``card`` from hand."""
        hands = list(s.hands)
        hands[player] = _plus(hands[player], card, -1)
        return {"hands": (hands[0], hands[1]), "discard": _plus(s.discard, card)}

    def _play_card(self, s: SecondState, player: int, card: int) -> SecondState:
        """Move one card from ``player``'s hand to the discard pile (in ``s``, returned)."""
        s.__dict__.update(**self._played(s, player, card))
        return s

    def _wound(
        self,
        s: SecondState,
        unit: int,
        amount: int,
        events: list[Event],
        source: str,
        **changes,
    ) -> SecondState:
        """Take ``amount`` wounds from ``unit``; score them; remove it when slain.

        ``s`` is a transition's own copy (changed in place and returned). ``changes``: other
        fields the same transition sets (never ``wounds`` or ``score``); they are applied first
        (a slain psyker's powers end from the ``in_play`` and ``effects`` they give).
        """
        if changes:
            s.__dict__.update(**changes)
        amount = min(amount, s.wounds[unit])
        if amount <= 0:
            return s
        spec = self.units[unit]
        owner = self.owner[unit]
        wounds = list(s.wounds)
        wounds[unit] -= amount
        value = amount * spec.value_per_wound
        s.__dict__.update(wounds=tuple(wounds), score=s.score + (value if owner == 1 else -value))
        event = self._event_values.get(("wounds", unit, amount, source))
        events.append(self._wounds_event(unit, amount, source) if event is None else event)
        if wounds[unit] == 0:
            events.append(
                self._shared_event(
                    ("slain", unit),
                    lambda: Event(
                        EventKind.SLAIN, f"{spec.name} is slain.", owner, (("unit", spec.name),)
                    ),
                )
            )
            psyker = self.unit_psyker[unit]
            if psyker >= 0:
                in_play, effects = s.in_play, s.effects
                ended = [ip for ip in in_play if ip.psyker == psyker]
                for ip in ended:
                    events.append(
                        Event(
                            EventKind.END_POWER,
                            f"{self.power_data[ip.power].name} ends with {spec.name}.",
                            owner,
                        )
                    )
                # Its powers end, and so do their effects still waiting this phase.
                s.__dict__.update(
                    in_play=tuple(ip for ip in in_play if ip.psyker != psyker),
                    effects=tuple(e for e in effects if e.psyker != psyker),
                )
            if all(wounds[u] <= 0 for u in self.side_units[owner]):
                events.append(
                    Event(
                        EventKind.GAME_OVER,
                        f"{self.side_names[owner]} has no unit left: the game ends.",
                        owner,
                    )
                )
                s.__dict__.update(stage=OVER, pending=None, roll=None)
        return s

    def _wounds_event(self, unit: int, amount: int, source: str) -> Event:
        """The event of ``unit`` losing ``amount`` wounds to ``source`` (2E-6, 2E-8)."""
        spec = self.units[unit]
        return self._shared_event(
            ("wounds", unit, amount, source),
            lambda: Event(
                EventKind.WOUNDS,
                f"{spec.name} loses {plural(amount, 'wound')} to {source}.",
                self.owner[unit],
                (("unit", spec.name), ("amount", amount), ("source", source)),
            ),
        )

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
                _plus(hand, Card.FORCE, -hand[Card.FORCE])
                if self.settings.retain_specials
                else _NO_CARDS
            )
            thrown = hand if keep is _NO_CARDS else tuple(map(sub, hand, keep))
            if any(thrown):  # adding no cards changes nothing
                discard = _sum(discard, thrown)
                if not self.settings.public_discards:  # face down: only its owner has seen them
                    face_down[p] = _sum(face_down[p], thrown)
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

    def _settle(self, s: SecondState, events: list[Event]) -> SecondState:
        """Take every step that needs no decision and no dice, up to the next node.

        ``s`` is a transition's own copy (changed in place and returned).
        """
        while True:
            stage = s.stage
            if stage == OVER:
                return s
            if s.effects:
                eff = s.effects[0]
                if self._rolls_dice(s, eff):
                    return s
                value = self._value_of(eff.power, eff.force)
                if value is None:  # an attack on a unit already slain: nothing happens
                    s.__dict__.update(effects=s.effects[1:])
                else:
                    side = self.psyker_side[eff.psyker]
                    if eff.reflected:
                        side = 1 - side
                    score = s.score + (value if side == 0 else -value)
                    s.__dict__.update(effects=s.effects[1:], score=score)
                    events.append(
                        self._shared_event(
                            ("value", eff.power, value, side),
                            lambda eff=eff, value=value, side=side: Event(
                                EventKind.VALUE,
                                f"{self.power_data[eff.power].name} scores "
                                f"{value:g} for {self.side_names[side]}.",
                                side,
                                (("power", self.power_data[eff.power].name), ("value", value)),
                            ),
                        )
                    )
                continue
            if stage == SETUP:
                if self.next_draw(s) >= 0:
                    return s
                s.__dict__.update(stage=FLUX)
            elif stage == FLUX:
                if not self.usable_psykers(s):
                    events.append(
                        Event(EventKind.GAME_OVER, "No psyker can use powers: the game ends.")
                    )
                    s.__dict__.update(stage=OVER)
                return s
            elif stage == DEAL:
                if s.to_deal > 0:
                    if sum(s.deck):
                        return s
                    if sum(s.discard):
                        events.append(
                            Event(
                                EventKind.RESHUFFLE,
                                "The discard pile is shuffled into a new warp deck.",
                                None,
                                (("cards", sum(s.discard)),),
                            )
                        )
                        s.__dict__.update(
                            deck=s.discard, discard=_NO_CARDS, face_down=(_NO_CARDS, _NO_CARDS)
                        )
                    else:
                        events.append(Event(EventKind.EXHAUSTED, "No warp cards are left to deal."))
                        s.__dict__.update(to_deal=0)
                    continue
                # 2E-3.4: powers that remain in play take effect again before any new power.
                upkeep = tuple(
                    eff
                    for ip in s.in_play
                    for eff in self._effects(s, ip.psyker, ip.power, ip.force, ip.target, False)
                )
                s.__dict__.update(stage=TURN, to_move=self.active(s), passes=0, effects=upkeep)
            elif stage == TURN:
                # Only a player with an empty hand passes by itself: then its legal actions
                # follow from the public table alone. With cards in hand the turn is a decision
                # even when PASS is all it may do, so the other player cannot tell (hidden hands).
                if any(s.hands[s.to_move]) or self._turn_actions(s) != [PASS]:
                    return s
                events.append(self._pass_events[s.to_move])
                s = self._pass(s, events)
            elif stage == RESPONSE:
                # 2E-5.2: the response step follows every cast that may still be answered, even
                # when the responder holds no response card (its one action is then PASS): a
                # step skipped only for such hands would tell the caster what the hand holds.
                if (
                    s.pending is not None
                    and s.pending.responses < self.settings.responses_per_power
                ):
                    return s
                s = self._finish_pending(s, events, reflected=False, stopped=False)
            else:  # ROLL
                return s

    def game_info(self) -> GameInfo:
        """Static facts of this scenario, with bounds on chance outcomes and utilities.

        ``max_chance_outcomes``: the largest of the card kinds (a deal, 2E-2), ``5F + 1`` warp
        flux totals of F dice (2E-3.1), a discipline pool (2E-1.1), two (Nullify, Daemonic
        Attack), a Psychic Duel's differences (2E-7) and 0..W wounds of the sturdiest unit
        (2E-6). Utilities (2E-8): every enemy wound's value, plus at most one ``value`` effect
        per unit for each power cast (one per psyker and phase) or in play (one per slot).
        """
        st = self.settings
        add = st.psychic_duel_add_ml
        duel = max(
            (
                len(_difference(st.psychic_duel_dice, a if add else 0, b if add else 0))
                for a in self.ml
                for b in self.ml
            ),
            default=0,
        )
        pools = max((len(p) for p in self.draw_pools if p is not None), default=0)
        most = max(NUM_CARDS, 5 * st.warp_flux_dice + 1, pools, 2, duel, max(self.max_wounds) + 1)
        wound_value = max(
            sum(self.max_wounds[u] * self.units[u].value_per_wound for u in self.side_units[s])
            for s in (0, 1)
        )
        values = [
            abs(v)
            for k in range(len(self.power_data))
            for f in range(self.force_range[k][0], self.force_range[k][1] + 1)
            if (v := self._value_of(k, f)) is not None
        ]
        P = self.num_psykers
        per_phase = (P + P * self.num_slots) * self.num_units * max(values, default=0.0)
        bound = float(wound_value + 2 * self.game.battle_rounds * per_phase)
        return evolve(
            super().game_info(),
            max_chance_outcomes=most,
            min_utility=-bound,
            max_utility=bound,
        )

    def returns(self, state: SecondState) -> tuple[float, float]:
        """Zero-sum scores of players 0 and 1 (2E-8)."""
        return state.score, -state.score

    # -----------------------------------------------------------------------------------------
    # Values (for heuristics and advice; from public information only)

    def effect_value(
        self, wounds: tuple[int, ...], psyker: int, power: int, force: int, target: int
    ) -> float:
        """Expected score the caster's side gains when a power resolves now (public info only)."""
        value = self._value_of(power, force)
        if value is not None:
            return value
        side = self.psyker_side[psyker]
        victims = self._area[(psyker, power)] if target == self.num_units else (target,)
        total = 0.0
        attacker = self.psyker_unit[psyker]
        for victim in victims:
            left = wounds[victim]
            if left <= 0:
                continue
            key = (power, force, attacker, victim, left)
            mean = self._mean_cache.get(key)
            if mean is None:
                dist = self.effect_distribution(power, force, attacker, victim, left)
                mean = self._mean_cache[key] = float(sum(w * p for w, p in dist.items()))
            sign = 1.0 if self.owner[victim] != side else -1.0
            total += sign * mean * self.units[victim].value_per_wound
        return total

    def cast_value(self, view: SecondView, action: int) -> float:
        """Expected value of a cast action for the caster's side, from a player's view."""
        i, j, target, pay = self.decode_cast(action)
        k = view.powers[i][j]
        force = self.power_data[k].max_force if pay == PAY_ULTIMATE else pay
        return self.effect_value(view.wounds, i, k, force, target)

    def pending_value(self, view: SecondView) -> float:
        """Expected value, for its caster, of the power waiting for a response."""
        p = view.pending
        if p is None:
            return 0.0
        return self.effect_value(view.wounds, p.psyker, p.power, p.force, p.target)

    def duel_value(self, view: SecondView, action: int) -> float:
        """Expected wound value of a Psychic Duel action for the player who plays it (2E-7).

        Exact (Fractions) once per (psyker, enemy, wounds left of both), then memoised.
        """
        i, k = self.actions.decode_duel(action)
        mine, theirs = self.psyker_unit[i], self.psyker_unit[k]
        key = (i, k, view.wounds[mine], view.wounds[theirs])
        value = self._duel_cache.get(key)
        if value is None:
            value = self._duel_cache[key] = self._duel_value(i, k, key[2], key[3])
        return value

    def _duel_value(self, i: int, k: int, left_mine: int, left_theirs: int) -> float:
        mine, theirs = self.psyker_unit[i], self.psyker_unit[k]
        st = self.settings
        add = st.psychic_duel_add_ml
        diff = _difference(st.psychic_duel_dice, self.ml[i] if add else 0, self.ml[k] if add else 0)
        total = Fraction(0)
        for d, p in diff.items():
            if d > 0:
                total += p * min(d, left_theirs) * Fraction(self.units[theirs].value_per_wound)
            elif d < 0:
                total -= p * min(-d, left_mine) * Fraction(self.units[mine].value_per_wound)
        return float(total)

    # -----------------------------------------------------------------------------------------
    # What a player may see (delegated to views.SecondViews)

    def sample_hidden(
        self, state: SecondState, player: int, rng: np.random.Generator
    ) -> SecondState:
        """A full state drawn from those ``player`` cannot tell apart from ``state``.

        Everything ``player`` has not seen is dealt again: the other hand (same size) and then
        the other player's face-down discards (same number, 2E-4.3) are drawn without
        replacement from the deck, that hand and those discards together; the rest is the deck.
        ``player``'s own hand and face-down discards, the face-up discards and the table stay.
        Used by search (the ``sample_hidden`` hook of ``psygym_agents.solvers.ismcts``) and by
        the leak tests. With no face-down discards it draws exactly as the generic hook does
        (one ``rng.choice`` over the unseen cards in kind order).
        """
        other = 1 - player
        down = state.face_down[other]
        pool = _sum(_sum(state.deck, state.hands[other]), down)
        hand, left = _draw(pool, sum(state.hands[other]), rng)
        new_down = down
        if any(down):
            new_down, left = _draw(left, sum(down), rng)
        hands = (hand, state.hands[1]) if other == 0 else (state.hands[0], hand)
        face_down = (new_down, state.face_down[1]) if other == 0 else (state.face_down[0], new_down)
        discard = tuple(d - a + b for d, a, b in zip(state.discard, down, new_down))
        return evolve(state, hands=hands, deck=left, face_down=face_down, discard=discard)

    def private_to(self, state: Hashable) -> int | None:
        """The player a warp card is dealt to at a deal, else ``None`` (2E-2, 2E-3.3).

        Which card it is stays in that player's secret hand; the other player sees only that a
        card was dealt. Stage and receiver are public, so the answer tells nothing. Every other
        step is public: cards played lie face up, flux, rolls and set-up draws are seen by both.
        """
        assert isinstance(state, SecondState)
        if state.stage == DEAL and not state.effects:
            return state.deal_to
        return None

    def view(self, state: SecondState, player: int) -> SecondView:
        """The part of ``state`` that ``player`` may see: own hand, public table, card counts."""
        return self.views.view(state, player)

    def observe(self, state: SecondState, player: int) -> np.ndarray:
        """What ``player`` may see as a flat float32 vector (layout: ``SecondViews.observe``)."""
        return self.views.observe(state, player)

    def describe(self, state: SecondState, action: int) -> ActionView:
        """Typed view of an action (or of a chance outcome at chance nodes)."""
        return self.views.describe(state, action)

    def render(self, state: Hashable, player: int | None = None) -> str:
        """The table as ``player`` sees it: only that player's hand (``None``: both hands)."""
        assert isinstance(state, SecondState)
        return self.views.render(state, player)

    def power_texts(self, state: Hashable, player: int | None = None) -> dict[str, str]:
        """One line per power card ``player`` may see; never the other hand (``SecondViews``)."""
        assert isinstance(state, SecondState)
        return self.views.power_texts(state, player)


# The one-copy decision and walk of RulesBase.apply_with_chance (see _decide_and_walk).
