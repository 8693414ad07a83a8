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

:class:`SecondRules` (this module) holds the public API, the chance tables and the transition
loop (:meth:`SecondRules._settle`: the reshuffle of the discard pile, 2E-2; the effects of powers
in play at the start of a phase, 2E-3.4; value effects, 2E-6); each rule section is a class of
its own module, mixed into it:

* 2E-1 psykers and power cards: ``spec.Psyker``, ``data.PowerSpec`` (fixed and variable Force
  costs; ``force_range`` with the setting ``variable_min_force``), the first state and set-up
  draws (stage ``SETUP``) in :mod:`.psykers`; 2E-1.2 is the setting ``ml_limits_power_level``.
* 2E-2 the persistent 36-card deck and 2E-3 warp flux and alternate dealing (stages ``FLUX`` and
  ``DEAL``): ``data/deck.toml`` and :mod:`.deck`.
* 2E-4 alternating play (turns, passes, end-of-phase discards, ``retain_specials``,
  ``public_discards``): :mod:`.turns`.
* 2E-5 casting (targets, payment, resolution): :mod:`.casting`; responses and their rolls
  (Nullify, Destroy Power, Reflection, Daemonic Attack): :mod:`.responses`.
* 2E-6 effects, 2E-7 Psychic Duel and 2E-8 wounds and the end of the game: :mod:`.effects`.
* 2E-8 the zero-sum score: :meth:`SecondRules.returns`; values for heuristics and the score
  bounds: :mod:`.values`.

The scenario's read-only facts (names, sizes, cards, powers) are :class:`~.facts.SecondFacts`,
which the views read instead of the rules; :mod:`.walks` holds the one-copy walks the envs run
between decisions.

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

from collections.abc import Callable, Hashable
from fractions import Fraction

import numpy as np

from psygym.core import (
    CHANCE,
    ActionView,
    Event,
    EventKind,
    Information,
    RulesBase,
)
from psygym.dice import distribution
from psygym.editions.second.actions import PASS
from psygym.editions.second.casting import SecondCasting
from psygym.editions.second.data import PowerSpec, ValueEffect
from psygym.editions.second.deck import NO_CARDS, SecondDeck
from psygym.editions.second.effects import SecondEffects
from psygym.editions.second.facts import MEMO_SIZE, SecondFacts
from psygym.editions.second.psykers import SecondPsykers
from psygym.editions.second.responses import (
    SecondResponses,
    nullify_chance,
    nullify_roll_needed,
)
from psygym.editions.second.spec import SecondScenario
from psygym.editions.second.state import (
    DEAL,
    FLUX,
    OVER,
    RESPONSE,
    ROLL,
    ROLL_DAEMONIC,
    ROLL_DUEL,
    SETUP,
    TURN,
    Effect,
    SecondState,
)
from psygym.editions.second.turns import SecondTurns
from psygym.editions.second.values import SecondValues
from psygym.editions.second.views import SecondView, SecondViews
from psygym.editions.second.walks import SecondWalks
from psygym.kernel import ChanceCache, ChanceTable, Memo, evolve

EDITION = "2nd"

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


class SecondRules(
    SecondPsykers,
    SecondDeck,
    SecondTurns,
    SecondCasting,
    SecondResponses,
    SecondEffects,
    SecondValues,
    SecondWalks,
    RulesBase,
):
    """The rules of one 2nd-edition scenario (see the module docstring for layouts and defaults).

    The rule sections live in the mixed-in classes (see "Where each rule lives" in the module
    docstring); this class holds the public API, the chance tables and the transition loop.

    Args:
        scenario: the validated scenario.
        powers: the power-card data (default: the shipped ``data/powers.toml``).
        deck: card counts of the warp deck in :class:`Card` order (default: ``data/deck.toml``).

    Attributes:
        scenario: the validated scenario.
        facts: the scenario's :class:`~.facts.SecondFacts`; each of its fields is also an
            attribute of the rules (``settings``, ``game``, ``power_data``, ``units``, ``ml``,
            ``actions``, ``cast_base``...), see there.
        views: the :class:`~.views.SecondViews` that ``view``, ``observe``, ``describe``,
            ``render`` and ``power_texts`` use.
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
        self.facts = facts = SecondFacts.build(scenario, powers, deck)
        # The facts' fields are the rules' attributes too: the hot paths read ``self.units``,
        # not ``self.facts.units``.
        self.__dict__.update(facts.fields())
        self._values = tuple(
            {
                f: (e.value if v is None else v) if isinstance(e, ValueEffect) else None
                for f, e in table.items()
            }
            for table, v in zip(self.effect_table, self.power_value)
        )
        """Per power: by Force paid, the score of a ``value`` effect or ``None`` (``_value_of``)."""
        self._targets, self._area = self._geometry()
        self.views = SecondViews(facts)
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
        self._event_memo = Memo(MEMO_SIZE)
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

    # One definition each, in the facts: the views ask the facts, the rules the same functions.
    current_player = SecondFacts.current_player
    active = SecondFacts.active
    battle_round = SecondFacts.battle_round
    effect_units = SecondFacts.effect_units

    # -----------------------------------------------------------------------------------------
    # Players, legal actions and chance

    def horizon(self, state: SecondState) -> tuple[int, int]:
        """``(battle round, phase within the round)``: one unit of lookahead per Psychic phase.

        Set-up (2E-1.1) is round 0. The pair changes when a phase ends (2E-4.3), at the warp
        flux roll of the next (2E-3.1), where no hand is dealt yet and the table is public.
        """
        if state.stage == SETUP:
            return (0, 0)
        return (state.phase // 2 + 1, state.phase % 2)

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

    # -----------------------------------------------------------------------------------------
    # Transitions
    #
    # Every transition copies its input state once (``evolve``) and builds the next state in
    # that copy, setting fields with ``s.__dict__.update``: the helpers (here and in the rule
    # sections' modules) take the transition's own copy, change it in place and return it, so a
    # transition costs one copy however many steps it chains (a cast, the response, the effects,
    # the passes, the end of the phase, the next deal). Nobody else has seen the copy yet (it is
    # neither hashed nor shared), so every state a caller receives stays immutable; a walk of
    # chance nodes (:meth:`_walk`) goes on in the same copy.

    def _apply(self, state: SecondState, action: int) -> tuple[SecondState, tuple[Event, ...]]:
        """The next state and the events of the transition (``RulesBase.apply_with_events``)."""
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

    def _apply_chance(self, s: SecondState, outcome: int, events: list[Event]) -> SecondState:
        """A chance outcome other than a deal: wounds, the flux, a set-up draw or a roll."""
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
                            deck=s.discard, discard=NO_CARDS, face_down=(NO_CARDS, NO_CARDS)
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

    def returns(self, state: SecondState) -> tuple[float, float]:
        """Zero-sum scores of players 0 and 1 (2E-8)."""
        return state.score, -state.score

    # -----------------------------------------------------------------------------------------
    # What a player may see (delegated to views.SecondViews)

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


__all__ = ["EDITION", "SecondRules", "nullify_chance", "nullify_roll_needed"]
