"""Rules of Rogue Trader (1st edition) psionics, rules/rogue-trader.md RT-1 to RT-6.

There is no shared dice pool: every psyker spends its own psi-points, which carry over from turn
to turn, so the game is about budgeting energy over a whole battle and about secret bids.

Game flow
---------
1. Set-up (chance nodes, only when the scenario asks for random generation, RT-1): for each psyker
   in scenario order, its random psi-level (3D6 per mastery grade), then, for ``abilities =
   "random"``, its number of abilities (typical, or 1D6..4D6 capped at 10 and at intelligence)
   and one chance node per ability drawn. A repeated roll is re-rolled (RT-1.3): D(mastery) for
   the level then D10 on that chart, re-rolled when already held, is exactly a uniform draw among
   the abilities of level <= mastery not yet held, which is what each draw node lists.
2. Turns alternate (``game.turns`` player turns in all, default 6, so 3 each; ``first_player``
   starts; RT-6.1). At the start of a turn, psykers of the active player that rested during their
   previous turn regain 1 psi-point, never above their psi-level (RT-5); each confused unit of
   that player then makes a psychic save to recover (chance node).
3. The active player's psykers act one after the other in scenario order (RT-2.1). A psyker
   whose mind is stolen or that is still confused does nothing. Otherwise it chooses an ability
   (cost <= remaining points, RT-2.2) or rests; then the target (skipped when only one is legal)
   and, for Cure Wounds, the number of wounds to heal (10 points each).
4. With ``no_test_at`` (12) points or more the ability works; otherwise a 2D6 chance node: it
   works if the total <= remaining points (RT-2.3). The cost is deducted either way (RT-2.4).
   Cure Injury failing its test wounds its target instead (RT-2.5).
5. An ability allowing a psychic save (RT-3): the attacker bids ``k`` points of enhanced attack
   (0 up to all its remaining points), then the target, if it is a psyker, bids ``j`` points of
   augmented save (0 up to all its points) WITHOUT seeing ``k``. The books set no other limit;
   the optional house rule ``game.max_bid`` caps each bid. Both bids are deducted whatever
   happens. One chance node then resolves the save (2D6 <= WP - k + j) together with the
   effect (wounds, duration...).
   See :meth:`RogueTraderRules.simultaneous_info` for solving the pair as a matrix game.
6. The game ends after the last turn or as soon as a side has no unit left in the fight.
   Score (RT-6.2), from player 0's point of view: value of wounds inflicted (``value_per_wound``)
   minus suffered, plus abilities' ``value`` when they work, plus the remaining wounds of units
   put out of the fight; healing gives back the value of the wounds healed.

Decision nodes where the rules leave one choice (an ability with one legal target, a bid with
no points to spend, a psyker with no usable ability, which can only rest) are advanced
automatically, as are chance nodes with a single outcome (a test with 1 point left).

Action layout
-------------
``Discrete(num_actions)``, fixed per scenario: REST, END, one action per ability, one per target
unit, then the numbers (bids and Cure Wounds amounts). :mod:`.actions` defines it and encodes and
decodes actions (``rules.actions`` is the scenario's :class:`~.actions.ActionLayout`);
:mod:`.views` holds the observation, the action views and the text.

Chance outcomes: test 1 = works / 0 = fails; recovery 1 = recovered / 0 = still confused;
resolution 0 = psychic save made, then for attacks 1 = no wound, ``1 + w`` = ``w`` wounds, for
Steal Mind ``d`` = lost turns, for other effects 1 = takes hold; set-up: the psi-level, the
number of abilities or the ability id drawn.

Defaults chosen where the spec or the seed is silent
----------------------------------------------------
* ``turns`` counts player turns (6: three each).
* Doing nothing is resting: in a psychic-phase game a psyker that uses no ability is inactive.
  A psyker whose mind is stolen or confused does not rest. Spending points on an augmented save
  is psychic activity and cancels a rest (``augment_breaks_rest``, default true).
* Psi-points of every psyker are public; only the attacker's pending bid is secret.
* The ability's cost is deducted before bidding, so a bid comes from the points left after it.
* Bids have no cap: the books have none (RT-3.2, RT-3.3), so a psyker may bid every point it
  has. ``game.max_bid`` (default ``None``) is an optional house rule capping each bid.
* Steal Mind allows a psychic save (the seed: "any individual suffering from psychic attack may
  attempt a saving throw"); its D6 duration is rolled openly when it takes hold and counts the
  target's own turns; a mind already stolen cannot be stolen again. A stolen mind cannot augment
  its save; a confused psyker can.
* Cause Confusion: the unit does nothing until it passes a psychic save at the start of one of
  its turns (then acts normally that turn); it cannot be confused again while confused.
  Cause Fear: no effect in a psychic phase beyond its ``value``; not twice on the same unit.
* Rout and Change Allegiance put the target out of the fight; it scores its remaining wounds'
  value (``removal_scores_wounds``) plus the ability's value.
* Auras (RT-4.3): one at a time; a new aura replaces the old one, so only a higher level may be
  raised; they add +level to the armour save against telekinesis missiles (no armour: 7 - level;
  a natural 1 always fails) and do nothing against mental attacks. Destroy Aura needs a target
  bearing an aura of level 1-2; Transfer Aura moves the caster's aura onto another friendly
  character (single-model unit) within 2" bearing a lower one.
* Telekinesis missiles hit automatically; the armour save is not modified by strength.
* Wounds of one hit never spill over to the next model of a squad.
* Cure Injury and Cure Wounds reach "by touch": the caster or a friendly character within 1".
  Cure Injury may only be aimed at a character exactly 1 wound down.
* Strength of Mind raises will power only (the characteristic that matters here).
* Abilities with no fighting effect ("value" in the data) target nobody and score their
  ``value`` (default 0, overridable per scenario with ``game.ability_values``).
* Telepathy 2 is missing from the seed's text: it costs 3 points here.

Changes
-------
* Bids are no longer capped by default (rules-fidelity fix). Neither the seed nor RT-3.2/RT-3.3
  limits an enhanced-attack or augmented-save bid: a psyker may bid any of the psi-points it
  has. ``game.max_bid`` used to default to 4 (and the shipped duel set 3); it is now optional
  (``None``, no cap), kept as a house rule for groups that want one. The number actions cover
  the largest possible bid (:attr:`RogueTraderRules.bid_limit`, the most psi-points any psyker
  of the scenario can hold), so the action space of a scenario grows with its psi-levels (the
  duel: 48 -> 57 actions). The duel's exact value moved from -0.0883 (cap 3) to +0.1074.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from psygym.combat import capped, roll_chance, save_chance, to_wound_rt
from psygym.core import (
    CHANCE,
    TERMINAL,
    ActionView,
    Event,
    EventKind,
    GameInfo,
    Information,
    RulesBase,
    SimultaneousMove,
)
from psygym.dice import distribution
from psygym.editions.rogue_trader.abilities import AbilityData, AbilitySpec, load_data
from psygym.editions.rogue_trader.actions import ABILITY_BASE, END, REST, ActionLayout
from psygym.editions.rogue_trader.chances import (
    armour_needed,
    attack_outcomes,
    binary,
    psychic_save_chance,
    two_d6_at_most,
    works_chance,
)
from psygym.editions.rogue_trader.graph import MoveGraph
from psygym.editions.rogue_trader.spec import RTScenario
from psygym.editions.rogue_trader.state import DECISIONS, Phase, State, UnitState
from psygym.editions.rogue_trader.views import RTViews
from psygym.kernel import ChanceCache, ChanceTable, evolve
from psygym.scenario import distance
from psygym.text import plural

# Attribute access on an Enum class is slow; the hot paths compare against these aliases.
(
    _SETUP_LEVEL, _SETUP_COUNT, _SETUP_DRAW, _RECOVER, _CHOOSE, _TARGET, _AMOUNT, _TEST,
    _ATTACK_BID, _SAVE_BID, _RESOLVE, _OVER,
) = Phase  # fmt: skip
_RESET = {"used": 0, "ability": -1, "target": -1, "amount": 0, "attack_bid": 0, "save_bid": 0}
"""Fields cleared whenever a psyker starts choosing (no ability under way)."""
Events = list[Event] | None
"""Where a transition records its events; ``None`` in event-free search (:meth:`apply`)."""
_MAX_EVENTS = 50_000  # memoised events kept (each a few hundred bytes)
_MAX_LEGAL = 50_000  # memoised legal sets kept


# ----------------------------------------------------------------------------- rules
_FAST_HOOKS = ("_step", "_settle", "chance_table", "_decide_and_walk", "_walk", "_legal")
"""What the fast walks call or stand in for (``RulesBase._own_chance_walk``)."""


class RogueTraderRules(RulesBase):
    """Rogue Trader psionics over a validated scenario (see the module docstring).

    Besides the ``RulesBase`` API it offers ``is_response(state)`` (true at the target's save
    bid), ``targets(state, psyker, ability)``, ``will_power(state, unit)``,
    ``resolve_distribution(state)`` (exact ``Fraction`` outcomes of a resolution node),
    ``chance_table(state)`` / ``chance_distribution(state)`` (the one memoised table of a chance
    node, exact and float) and ``simultaneous_info(state)`` for the secret bids of RT-3.4:

    * the attacker's bid node (:attr:`Phase.ATTACK_BID`) and the target's bid node
      (:attr:`Phase.SAVE_BID`) follow each other; the state holds the attacker's pending bid
      (``State.attack_bid``) but ``observe(state, target_player)`` and
      ``render(state, target_player)`` never reveal it, and the points are only deducted once
      both bids are in;
    * ``simultaneous_info(state)`` returns ``None`` except at an attacker's bid node where both
      sides have a choice; there it returns ``SimultaneousMove(row_player, row_actions,
      col_player, col_actions, fn)`` with ``fn(row, col)`` the state after both bids, so a
      solver can treat the pair as one zero-sum matrix game (solve it with a linear program)
      instead of letting the target see the attacker's bid.

    Attributes:
        scenario: the validated :class:`~psygym.editions.rogue_trader.spec.RTScenario`.
        game: its ``[game]`` settings.
        names, owner, specs: per unit, in scenario order (side 0's units first).
        actions: the scenario's :class:`~.actions.ActionLayout` (encode and decode actions).
        max_psi_points: the most psi-points any psyker of the scenario can hold (its psi-level,
            or the highest random roll, RT-1.1).
        bid_limit: the largest bid of the scenario (RT-3.2, RT-3.3): ``max_psi_points``, or the
            optional house cap ``game.max_bid`` when lower.
        max_number: the largest number action (``bid_limit`` or the most wounds Cure Wounds
            can heal, whichever is larger).
        target_base, number_base: first target action and first number (bid/amount) action.
        views: the :class:`~.views.RTViews` that ``observe``, ``describe`` and ``render`` use.
    """

    edition = "rt"
    fast_walk_hooks = _FAST_HOOKS
    information = Information.SIMULTANEOUS  # RT-3.4: the two bids are secret and simultaneous

    def __init__(self, scenario: RTScenario, source: str = "<scenario>"):
        self.scenario = scenario
        self.source = source
        self.game = scenario.game
        self.data: AbilityData = load_data()
        data, game = self.data, self.game
        specs, owner = [], []
        for p, side in enumerate(scenario.sides):
            for unit in side.units:
                specs.append(unit)
                owner.append(p)
        self.specs = tuple(specs)
        self.owner = tuple(owner)
        self.n_units = n = len(specs)
        self.names = tuple(u.name for u in specs)
        self.side_names = tuple(side.name for side in scenario.sides)
        self.max_hp = tuple(u.wounds * u.models for u in specs)
        self.per_model = tuple(u.wounds for u in specs)
        self.single = tuple(u.models == 1 for u in specs)
        self.psyker = tuple(u.mastery > 0 for u in specs)
        self.vpw = tuple(float(u.value_per_wound) for u in specs)
        self.side_units = tuple(tuple(i for i in range(n) if owner[i] == p) for p in (0, 1))
        self.psykers_of = tuple(
            tuple(i for i in self.side_units[p] if self.psyker[i]) for p in (0, 1)
        )
        self.dist = tuple(tuple(distance(a.position, b.position) for b in specs) for a in specs)
        self.abilities = data.abilities
        self.value = tuple(float(game.ability_values.get(a.name, a.value)) for a in data.abilities)
        self.n_abilities = len(data.abilities)
        # Static geometry: who each psyker could target with each ability (RT-4 ranges).
        self._cands: dict[tuple[int, int], tuple[int, ...]] = {}
        for u in range(n):
            if not self.psyker[u]:
                continue
            for a, ab in enumerate(data.abilities):
                self._cands[(u, a)] = self._candidates(u, ab)
        # Random generation set-up (RT-1).
        self._random_level = tuple(
            u.mastery > 0 and u.psi_level is None and game.psi_level == "random" for u in specs
        )
        self._random_abilities = tuple(u.abilities == "random" for u in specs)
        self.max_psi_points = max(
            (self._most_points(i) for i in range(n) if self.psyker[i]), default=0
        )
        # RT-3.2/RT-3.3 set no cap: a bid is limited by the bidder's points (which never exceed
        # max_psi_points), or by the optional house cap ``game.max_bid``.
        self.bid_limit = (
            self.max_psi_points if game.max_bid is None else min(game.max_bid, self.max_psi_points)
        )
        cure_max = max((self.max_hp[i] for i in range(n) if self.single[i]), default=0)
        self.max_number = max(self.bid_limit, cure_max)
        self.actions = ActionLayout(self.n_abilities, n, self.max_number)
        self.target_base = self.actions.target_base
        self.number_base = self.actions.number_base
        self.num_actions = self.actions.num_actions
        nb = self.number_base
        self._bids = tuple(tuple(range(nb, nb + cap + 1)) for cap in range(self.bid_limit + 1))
        """The legal bids up to each cap (:meth:`_legal`)."""
        self._legal_state: State | None = None
        self._legal_last: tuple[int, ...] = ()
        self._legal_memo: dict[tuple, tuple[int, ...]] = {}
        """:meth:`_legal` by the fields it reads (about three asks in four repeat one)."""
        self._table_state: State | None = None
        self._table_last: ChanceTable | None = None
        """The chance node :meth:`_settle` last stopped at, and its table (the graph's next ask)."""
        self._chance = ChanceCache()
        self._initial: State | None = None
        self._event_memo: dict[tuple, Event] = {}
        self._graph = MoveGraph(self)
        """The fast walk's memoised transitions (:mod:`.graph`)."""
        self.views = RTViews(self)
        self._steps = {
            _CHOOSE: self._choose,
            _TARGET: self._on_target,
            _AMOUNT: self._on_amount,
            _ATTACK_BID: self._on_attack_bid,
            _SAVE_BID: self._on_save_bid,
            _TEST: self._on_test,
            _RESOLVE: self._resolve,
            _RECOVER: self._on_recover,
            _SETUP_LEVEL: self._set_level,
            _SETUP_COUNT: self._set_count,
            _SETUP_DRAW: self._draw,
        }
        self.observation_size = self.views.size

    def _candidates(self, u: int, ab: AbilitySpec) -> tuple[int, ...]:
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

    # ------------------------------------------------------------------ API: state and players
    def initial_state(self) -> State:
        """Start of the game: set-up chance nodes if anything is random, else the first turn.

        The state depends on the scenario only, so it is built once (states are immutable).
        A new game usually begins with the env's questions about it, so its node of the fast
        walk's graph becomes the graph's last node.
        """
        if self._initial is None:
            self._initial = self._build_initial_state()
        self._graph.start(self._initial)
        return self._initial

    def _build_initial_state(self) -> State:
        units = []
        for i, u in enumerate(self.specs):
            if not self.psyker[i]:
                units.append(_shared(UnitState(hp=self.max_hp[i])))
                continue
            level = u.psi_level
            if level is None:
                level = 0 if self._random_level[i] else self.data.mastery_row(u.mastery).psi_level
            points = level if u.psi_points is None else min(u.psi_points, level)
            held = (
                ()
                if u.abilities == "random"
                else tuple(sorted(self.data.index[a] for a in u.abilities or ()))
            )
            unit = UnitState(hp=self.max_hp[i], points=points, level=level, abilities=held)
            units.append(_shared(unit))
        s = State(units=_shared_units(tuple(units)))
        ev: list[Event] = []
        s = self._setup_from(s, 0, ev)
        return self._settle(s, ev)

    def current_player(self, state: State) -> int:
        """Player to decide, :data:`CHANCE` or :data:`TERMINAL`."""
        phase = state.phase
        if phase == _OVER:
            return TERMINAL
        if phase == _SAVE_BID:
            return self.owner[state.target]
        if phase in DECISIONS:
            return state.active
        return CHANCE

    def is_response(self, state: State) -> bool:
        """True when the target bids for its augmented save (answering the attacker, RT-3.3)."""
        return state.phase == _SAVE_BID

    def legal_actions(self, state: State) -> list[int]:
        """Sorted legal actions (see the module docstring's layout)."""
        graph = self._graph
        if state is graph.last_state:  # the state the fast walk just returned
            return list(graph.legal[graph.last])
        if state is self._legal_state:  # the same (immutable) state asked again
            return list(self._legal_last)
        legal = self._legal(state)
        self._legal_state, self._legal_last = state, legal
        return list(legal)

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

    def chance_outcomes(self, state: State) -> list[tuple[int, float]]:
        """Exact outcomes of the chance node (see the module docstring for their meaning)."""
        table = self.chance_table(state)
        return [] if table is None else list(table.outcomes)

    def chance_distribution(self, state: State) -> list[tuple[int, Fraction]]:
        """The outcomes of :meth:`chance_outcomes` with exact ``Fraction`` probabilities."""
        table = self.chance_table(state)
        return [] if table is None else list(table.exact)

    def sample_chance(self, state: State, rng: np.random.Generator) -> int:
        """Draw one chance outcome from the node's table (one uniform draw, none if certain)."""
        table = self.chance_table(state)
        if table is None:
            raise ValueError("sample_chance needs a chance node")
        if len(table.outcomes) == 1:
            return table.outcomes[0][0]
        return table.sample(rng)

    def sample_chance_run(
        self, state: State, rng: np.random.Generator, events: list[Event]
    ) -> State:
        """Walk chance nodes to the next decision, events going straight into ``events``.

        The same draws (:meth:`sample_chance`: none when a node is certain) and transitions as
        :meth:`apply_with_events` node by node, without a list and a tuple of events per node.
        """
        phase = state.phase
        if phase == _OVER or phase in DECISIONS:
            return state
        # Not while sample_chance or the transition code below is replaced (tests do).
        if not self._own_chance_walk():
            return super().sample_chance_run(state, rng, events)
        return self._walk(state, rng, events)

    def _decide_and_walk(
        self, state: State, action: int, rng: np.random.Generator, events: list[Event]
    ) -> State:
        """A decision and the chance nodes after it (as :meth:`sample_chance_run` walks them).

        Through the memoised graph of :mod:`.graph`: each ``(state, action)`` runs ``_step``
        and ``_settle`` once, with the same draws and events every time.
        """
        graph = self._graph
        return graph.walk(graph.enter(state), action, rng, events)

    def _walk(self, state: State, rng: np.random.Generator, events: list[Event]) -> State:
        """The chance nodes from ``state`` (one) to the next decision or the end."""
        graph = self._graph
        return graph.walk(graph.enter(state), None, rng, events)

    def horizon(self, state: State) -> tuple[int, int]:
        """``(battle round, player turn within it)``: one unit of ``search`` lookahead.

        ``search`` looks ahead one whole turn, its secret bids solved as matrix games (RT-2,
        RT-3.4).
        """
        return (state.turn // 2 + 1, state.turn % 2)

    def returns(self, state: State) -> tuple[float, float]:
        """Zero-sum scores (RT-6.2)."""
        return (state.score, -state.score)

    def legal_mask(self, state: State) -> np.ndarray:
        """Boolean mask over ``range(num_actions)`` of :meth:`legal_actions` (its own copy)."""
        graph = self._graph
        if state is not graph.last_state:
            return super().legal_mask(state)
        mask = graph.masks[graph.last]
        if mask is None:
            mask = graph.masks[graph.last] = super().legal_mask(state)
            mask.flags.writeable = False
        return mask.copy()

    # ------------------------------------------------------------------ views (see views.py)
    def observe(self, state: State, player: int) -> np.ndarray:
        """What ``player`` may see (layout: :meth:`.views.RTViews.observe`; hides bids, RT-3.4)."""
        return self.views.observe(state, player)

    def describe(self, state: State, action: int) -> ActionView:
        """Typed view of a decision or chance outcome in ``state`` (:mod:`.views`)."""
        return self.views.describe(state, action)

    def render(self, state: State, player: int | None = None) -> str:
        """Text picture of the state; the attacker's pending bid is hidden from anyone else."""
        return self.views.render(state, player)

    def power_texts(self, state: State, player: int | None = None) -> dict[str, str]:
        """One line of rules text per ability a living psyker holds (:mod:`.views`)."""
        return self.views.power_texts(state, player)

    # ------------------------------------------------------------------ static facts
    def game_info(self) -> GameInfo:
        """Sizes and bounds: the largest chance node and the score bounds (RT-6.2).

        A side's score can gain at most the value of every enemy wound (healing gives wounds'
        value back; a removal scores only the wounds left), plus the best ``value`` of its
        abilities once per possible use (``turns`` x psykers x ``abilities_per_turn``), minus
        the other side's most negative ``value`` likewise.
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

    def _possible(self, u: int) -> tuple[int, ...]:
        """Abilities psyker ``u`` may hold in some game (drawn at random or given, RT-1.3)."""
        spec = self.specs[u]
        if spec.abilities == "random":
            return self.data.by_level(spec.mastery)
        return tuple(sorted(self.data.index[a] for a in spec.abilities or ()))

    def _most_points(self, u: int) -> int:
        """The most psi-points psyker ``u`` can ever hold: its psi-level, or the highest roll.

        Points start at most at the psi-level and resting never raises them above it (RT-1.1,
        RT-5), so this bounds every bid ``u`` can make (RT-3.2, RT-3.3).
        """
        spec = self.specs[u]
        if spec.psi_level is not None:
            return spec.psi_level
        row = self.data.mastery_row(spec.mastery)
        if self._random_level[u]:
            return max(distribution(row.random_psi_level))
        return row.psi_level

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
            if self._random_level[u]:
                most = max(most, len(self._level_outcomes(u)))
            if self._random_abilities[u]:
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

    # ------------------------------------------------------------------ simultaneous bids
    def simultaneous_info(self, state: State) -> SimultaneousMove | None:
        """The two secret bids (RT-3.4) as a matrix game, at the attacker's bid node only.

        At an :attr:`Phase.ATTACK_BID` node where both the attacker and the target have a real
        choice, returns ``(row_player, row_actions, col_player, col_actions, fn)``: the attacker
        (rows) and the target (columns), their legal bid actions, and ``fn(row, col)``, the
        state after both bids (the attacker's then the target's). A solver should solve that
        matrix game (e.g. with a linear program) instead of treating the target's later
        :attr:`Phase.SAVE_BID` node as a decision made knowing the attacker's bid. Returns
        ``None`` everywhere else (including when only one side can bid: that is an ordinary
        decision, since psi-points are public).
        """
        if state.phase != _ATTACK_BID:
            return None
        rows = self.legal_actions(state)
        probe = evolve(state, attack_bid=0, phase=_SAVE_BID)
        cols = self.legal_actions(probe)
        if len(rows) < 2 or len(cols) < 2:
            return None

        def fn(row: int, col: int) -> State:
            return self.apply(self.apply(state, row), col)

        return SimultaneousMove(state.active, rows, self.owner[state.target], cols, fn)

    def private_to(self, state: State) -> int | None:
        """The attacker at a secret enhanced-attack bid, else ``None`` (RT-3.4).

        The bid stays secret until the target has made its own bid; the bids are then revealed
        together. Where the target has no choice (no point to bid) its bid is made at once and
        both are revealed in the same step, so the attacker's bid is secret exactly where
        :meth:`simultaneous_info` announces a pair. Psi-points are public, so the answer is too;
        everything else in Rogue Trader is public (abilities, rolls).
        """
        if state.phase == _ATTACK_BID and self.simultaneous_info(state) is not None:
            return state.active
        return None

    def simultaneous_parent(self, state: State) -> State | None:
        """RT-3.4: at the target's secret bid, the attacker's bid node the pair began at.

        The exact inverse of the attacker's bid (which only sets ``attack_bid`` and moves to
        the save bid), so a search values the target's bid without reading the attacker's.
        """
        if state.phase != _SAVE_BID:
            return None
        origin = evolve(state, attack_bid=0, phase=_ATTACK_BID)
        return origin if self.simultaneous_info(origin) is not None else None

    # ------------------------------------------------------------------ legality helpers
    def _usable(self, s: State, u: int, a: int) -> bool:
        """Whether psyker ``u`` may attempt ability ``a`` now (RT-2.2 and a legal target)."""
        if self.abilities[a].cost > s.units[u].points:
            return False
        return any(self._valid(s, u, a, t) for t in self._cands[(u, a)])

    def targets(self, s: State, u: int, a: int) -> list[int]:
        """Units psyker ``u`` may aim ability ``a`` at in ``s`` (range, effect conditions)."""
        return [t for t in self._cands[(u, a)] if self._valid(s, u, a, t)]

    def _valid(self, s: State, u: int, a: int, t: int) -> bool:
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
        cost = self.abilities[s.ability].cost
        by_points = s.units[s.actor].points // cost if cost else self.max_number
        return min(self.max_hp[t] - s.units[t].hp, by_points, self.max_number)

    def _can_augment(self, s: State, t: int) -> bool:
        ts = s.units[t]
        return self.psyker[t] and ts.fighting and ts.stolen == 0

    def _can_act(self, s: State, u: int) -> bool:
        us = s.units[u]
        return us.fighting and us.stolen == 0 and not us.confused

    def _cost(self, s: State) -> int:
        ab = self.abilities[s.ability]
        return ab.cost * s.amount if ab.effect == "cure_wounds" else ab.cost

    def will_power(self, s: State, t: int) -> int:
        """Current will power of unit ``t`` (with Strength of Mind)."""
        return self.specs[t].will_power + s.units[t].wp_bonus

    # ------------------------------------------------------------------ chance nodes
    def chance_table(self, s: State) -> ChanceTable | None:
        """The :class:`~psygym.kernel.ChanceTable` of the chance node ``s`` (``None`` elsewhere).

        One table per node key serves ``chance_outcomes``, ``chance_distribution`` and
        ``sample_chance``, so sampling and exact solving read the same numbers.
        """
        phase = s.phase
        if phase == _TEST:
            points = s.units[s.actor].points
            return self._chance.get(
                (phase, points), lambda: binary(works_chance(points, self.game.no_test_at))
            )
        if phase == _RESOLVE:
            ts = s.units[s.target]
            net = ts.wp_bonus - s.attack_bid + s.save_bid
            key = (phase, s.ability, s.target, net, ts.hp, ts.aura)
            return self._chance.get(key, lambda: self.resolve_distribution(s))
        if phase == _RECOVER:
            u = s.actor
            wp = self.will_power(s, u)
            return self._chance.get((phase, u, wp), lambda: binary(psychic_save_chance(wp)))
        if phase == _SETUP_LEVEL:
            return self._chance.get((phase, s.actor), lambda: self._level_outcomes(s.actor))
        if phase == _SETUP_COUNT:
            return self._chance.get((phase, s.actor), lambda: self._count_outcomes(s.actor))
        if phase == _SETUP_DRAW:
            u = s.actor
            pool = self._draw_pool(s, u)
            return self._chance.get(
                (phase, u, pool), lambda: [(a, Fraction(1, len(pool))) for a in pool]
            )
        return None

    def _level_outcomes(self, u: int) -> list[tuple[int, Fraction]]:
        """Psi-levels of psyker ``u`` rolled at random (RT-1.1)."""
        row = self.data.mastery_row(self.specs[u].mastery)
        return [(o, p) for o, p in sorted(distribution(row.random_psi_level).items()) if p > 0]

    def _count_outcomes(self, u: int) -> list[tuple[int, Fraction]]:
        """Random numbers of abilities of psyker ``u`` (RT-1.1, capped)."""
        dist = distribution(self.data.mastery_row(self.specs[u].mastery).random_abilities)
        return [(o, p) for o, p in sorted(capped(dist, self._count_cap(u)).items()) if p > 0]

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

    def _count_cap(self, u: int) -> int:
        spec = self.specs[u]
        return min(
            spec.intelligence, self.data.charts.max_abilities, len(self.data.by_level(spec.mastery))
        )

    def _draw_pool(self, s: State, u: int) -> tuple[int, ...]:
        held = set(s.units[u].abilities)
        return tuple(a for a in self.data.by_level(self.specs[u].mastery) if a not in held)

    # ------------------------------------------------------------------ transitions
    def _transition(self, state: State, action: int) -> State:
        """The next state through the same code as :meth:`_apply`, recording no events."""
        return self._settle(self._step(state, action, None), None)

    def _apply(self, state: State, action: int) -> tuple[State, tuple[Event, ...]]:
        ev: list[Event] = []
        s = self._step(state, action, ev)
        return self._settle(s, ev), tuple(ev)

    def _note(self, ev: Events, make: Callable[[], Event], key: tuple | None = None) -> None:
        """Record the event ``make()`` builds, unless ``ev`` is ``None`` (event-free search).

        Events are immutable, so with a ``key`` (everything the event depends on) one is built
        once and shared by every transition that records it.
        """
        if ev is None:
            return
        if key is None:
            ev.append(make())
            return
        event = self._event_memo.get(key)
        if event is None:
            if len(self._event_memo) >= _MAX_EVENTS:
                self._event_memo.clear()
            event = self._event_memo[key] = make()
        ev.append(event)

    def _settle(self, s: State, ev: Events) -> State:
        """Advance through nodes that offer a single action or outcome.

        The legal actions (decision) or chance table (chance node) of the state it stops at
        are remembered with it (``_legal_state``, ``_table_state``): the next question is
        usually about that state.
        """
        step = self._step
        while True:
            phase = s.phase
            if phase == _OVER:
                return s
            if phase in DECISIONS:
                legal = self._legal(s)
                if len(legal) != 1:
                    self._legal_state, self._legal_last = s, legal
                    return s
                s = step(s, legal[0], ev)
            else:
                table = self.chance_table(s)
                outcomes = table.outcomes
                if len(outcomes) != 1:
                    self._table_state, self._table_last = s, table
                    return s
                s = step(s, outcomes[0][0], ev)

    def _step(self, s: State, a: int, ev: Events) -> State:
        """One transition from ``s`` (no settling); dispatched on the phase."""
        return self._steps[s.phase](s, a, ev)

    def _on_target(self, s: State, a: int, ev: Events) -> State:
        return self._after_target(s, s.ability, a - self.target_base, s.amount, ev)

    def _on_amount(self, s: State, a: int, ev: Events) -> State:
        return self._attempt(s, ev, s.ability, s.target, a - self.number_base)

    def _on_attack_bid(self, s: State, a: int, ev: Events) -> State:
        return evolve(s, attack_bid=a - self.number_base, phase=_SAVE_BID)

    def _on_save_bid(self, s: State, a: int, ev: Events) -> State:
        return self._bids_in(s, a - self.number_base, ev)

    def _on_test(self, s: State, a: int, ev: Events) -> State:
        return self._tested(s, a == 1, ev)

    def _on_recover(self, s: State, a: int, ev: Events) -> State:
        return self._recovered(s, a == 1, ev)

    # set-up (RT-1) ------------------------------------------------------------------------
    def _setup_from(self, s: State, u: int, ev: Events, *, count_stage: bool = False) -> State:
        for i in range(u, self.n_units):
            if not count_stage and self._random_level[i]:
                return evolve(s, phase=_SETUP_LEVEL, actor=i)
            count_stage = False
            if self._random_abilities[i]:
                if self.game.ability_count == "random":
                    return evolve(s, phase=_SETUP_COUNT, actor=i)
                row = self.data.mastery_row(self.specs[i].mastery)
                k = min(row.abilities, self._count_cap(i))
                if k > 0:
                    return evolve(s, phase=_SETUP_DRAW, actor=i, left=k)
        return self._start_game(s, ev)

    def _set_level(self, s: State, level: int, ev: Events) -> State:
        u = s.actor
        spec = self.specs[u]
        points = level if spec.psi_points is None else min(spec.psi_points, level)
        units = _put(s.units, u, level=level, points=points)
        self._note(
            ev,
            lambda: Event(
                EventKind.SETUP,
                f"{self.names[u]}'s psi-level is {level}.",
                self.owner[u],
                (("unit", self.names[u]), ("psi_level", level)),
            ),
            ("level", u, level),
        )
        return self._setup_from(evolve(s, units=units), u, ev, count_stage=True)

    def _set_count(self, s: State, count: int, ev: Events) -> State:
        u = s.actor
        self._note(
            ev,
            lambda: Event(
                EventKind.SETUP,
                f"{self.names[u]} has {count} random abilities.",
                self.owner[u],
                (("unit", self.names[u]), ("abilities", count)),
            ),
            ("count", u, count),
        )
        if count > 0:
            return evolve(s, phase=_SETUP_DRAW, left=count)
        return self._setup_from(s, u + 1, ev)

    def _draw(self, s: State, a: int, ev: Events) -> State:
        u = s.actor
        held = tuple(sorted((*s.units[u].abilities, a)))
        self._note(
            ev,
            lambda: Event(
                EventKind.SETUP,
                f"{self.names[u]} knows {self.abilities[a].name}.",
                self.owner[u],
                (("unit", self.names[u]), ("ability", self.abilities[a].name)),
            ),
            ("draw", u, a),
        )
        s = evolve(s, units=_put(s.units, u, abilities=held), left=s.left - 1)
        if s.left > 0 and self._draw_pool(s, u):
            return s
        return self._setup_from(evolve(s, left=0), u + 1, ev)

    def _start_game(self, s: State, ev: Events) -> State:
        units = list(s.units)
        return self._begin_turn(s, units, False, 0, self.game.first_player, ev)

    # turns (RT-5, RT-6) -----------------------------------------------------------------------
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
                units[i] = _unit(us, {"points": us.points + gain, "resting": False})
                changed = True
                if gain:
                    self._regained(ev, i, p, us.points + gain)
        units_now = _shared_units(tuple(units)) if changed else s.units
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
        for i in self.side_units[s.active]:
            if i >= start and s.units[i].confused and s.units[i].fighting:
                return evolve(s, phase=_RECOVER, actor=i)
        return self._next_actor(s, -1, ev)

    def _recovered(self, s: State, ok: bool, ev: Events) -> State:
        u = s.actor
        if ok:
            s = evolve(s, units=_put(s.units, u, confused=False))
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
                units[i] = _unit(us, {"stolen": us.stolen - 1})
                changed = True
        turn = s.turn + 1
        if turn >= self.game.turns:
            units_now = _shared_units(tuple(units)) if changed else s.units
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

    # using an ability (RT-2) ------------------------------------------------------------------
    def _choose(self, s: State, a: int, ev: Events) -> State:
        u = s.actor
        if a == REST:
            self._note(
                ev,
                lambda: Event(
                    EventKind.REST, f"{self.names[u]} rests.", s.active, (("unit", self.names[u]),)
                ),
                ("rest", u, s.active),
            )
            return self._next_actor(s, u, ev, _put(s.units, u, resting=True))
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
        units = _put(s.units, u, points=points)
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

    def _bids_in(self, s: State, j: int, ev: Events) -> State:
        """Both secret bids are known: deduct them whatever happens (RT-3.4)."""
        u, t, k = s.actor, s.target, s.attack_bid
        units = _put(s.units, u, points=s.units[u].points - k)
        if j:
            rest = units[t].resting and not self.game.augment_breaks_rest
            units = _put(units, t, points=units[t].points - j, resting=rest)
        self._note(
            ev,
            lambda: Event(
                EventKind.BIDS,
                f"Bids revealed: {self.names[u]} enhances the attack by {k}, "
                f"{self.names[t]} augments its save by {j}.",
                None,
                (("enhanced", k), ("augmented", j)),
            ),
            ("bids", u, t, k, j),
        )
        return evolve(s, units=units, save_bid=j, phase=_RESOLVE)

    def _resolve(self, s: State, outcome: int, ev: Events) -> State:
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

    def _after_ability(self, s: State, ev: Events) -> State:
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

    # effects (RT-4) ---------------------------------------------------------------------------
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
            s = evolve(s, units=_put(s.units, t, stolen=outcome))
            text = f"{name}: {tname} does nothing for its next {outcome} turn(s)."
        elif effect == "remove":
            hp = s.units[t].hp
            s = evolve(s, units=_put(s.units, t, out=True))
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
            s = evolve(s, units=_put(s.units, t, confused=True))
            text = f"{tname} is confused."
        elif effect == "fear":
            s = evolve(s, units=_put(s.units, t, afraid=True))
            text = f"{tname} becomes subject to fear."
        elif effect == "aura":
            s = evolve(s, units=_put(s.units, t, aura=ab.aura))
            text = f"{tname} raises an {name} (+{ab.aura} save)."
        elif effect == "destroy_aura":
            s = evolve(s, units=_put(s.units, t, aura=0))
            text = f"{tname}'s aura is dispelled."
        elif effect == "transfer_aura":
            level = s.units[u].aura
            s = evolve(s, units=_put(_put(s.units, u, aura=0), t, aura=level))
            text = f"{self.names[u]} transfers its aura to {tname}."
        elif effect in ("cure_injury", "cure_wounds"):
            heal = 1 if effect == "cure_injury" else s.amount
            heal = min(heal, self.max_hp[t] - s.units[t].hp)
            s = evolve(s, units=_put(s.units, t, hp=s.units[t].hp + heal))
            s = self._credit(s, self.owner[t], heal * self.vpw[t])
            text = f"{name} heals {plural(heal, 'wound')} of {tname}."
        elif effect == "strength_of_mind":
            s = evolve(s, units=_put(s.units, t, wp_bonus=1))
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
        ts = s.units[t]
        wounds = min(wounds, ts.hp)
        loss = wounds * self.vpw[t]
        score = s.score + (loss if self.owner[t] == 1 else -loss)
        s = evolve(s, units=_put(s.units, t, hp=ts.hp - wounds), score=score)
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
        return evolve(s, score=s.score + (amount if side == 0 else -amount))


def _put(units: tuple[UnitState, ...], i: int, **changes: Any) -> tuple[UnitState, ...]:
    """``units`` with unit ``i`` changed (the unit and the tuple shared, :func:`_unit`)."""
    return _shared_units((*units[:i], _unit(units[i], changes), *units[i + 1 :]))


_UNIT_CHANGES: dict[tuple, UnitState] = {}
"""``(unit, changes) -> changed unit`` (:func:`_unit`)."""
_UNITS: dict[UnitState, UnitState] = {}
"""One shared object per unit value (:func:`_shared`)."""
_UNIT_TUPLES: dict[tuple[UnitState, ...], tuple[UnitState, ...]] = {}
"""One shared tuple per value of ``State.units`` (:func:`_shared_units`)."""
_MAX_UNITS = 100_000  # a game sees a few hundred unit values; bound anyway


def _shared_units(units: tuple[UnitState, ...]) -> tuple[UnitState, ...]:
    """The one shared tuple equal to ``units`` (``units`` itself the first time).

    States reached by different moves then hold the same tuple, which the memos holding
    states (and the garbage collector) see once.
    """
    if len(_UNIT_TUPLES) >= _MAX_UNITS:
        _UNIT_TUPLES.clear()
    return _UNIT_TUPLES.setdefault(units, units)


def _shared(unit: UnitState) -> UnitState:
    """The one shared object equal to ``unit`` (``unit`` itself the first time)."""
    if len(_UNITS) >= _MAX_UNITS:
        _UNITS.clear()
        _UNIT_CHANGES.clear()
    return _UNITS.setdefault(unit, unit)


def _unit(unit: UnitState, changes: dict[str, Any]) -> UnitState:
    """``evolve(unit, **changes)`` as one shared object per value, memoised.

    A game sees few distinct unit values (a few hundred in the duel) and makes the same change
    to the same unit again and again. Sharing one object per value keeps its hash computed
    once and lets every memo key holding units (legal actions, observation blocks, the fast
    walk's graph) compare them by identity instead of field by field. The values are the same
    (ints, bools and tuples, as the fields are declared), so the states are the same.
    """
    key = (unit, tuple(changes.items()))
    out = _UNIT_CHANGES.get(key)
    if out is None:
        out = _shared(evolve(unit, **changes))
        _UNIT_CHANGES[key] = out
    return out


# The one-copy decision and walk of RulesBase.apply_with_chance (see _decide_and_walk).


__all__ = [
    "ABILITY_BASE",
    "END",
    "REST",
    "RogueTraderRules",
    "armour_needed",
    "attack_outcomes",
    "psychic_save_chance",
    "two_d6_at_most",
    "works_chance",
]
