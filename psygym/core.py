"""The game API shared by every edition (OpenSpiel-style); its checker is :mod:`psygym.conformance`.

A ``Rules`` object is built from a scenario. States are frozen, hashable values; ``apply`` is pure
and returns the next state. Dice are never rolled inside ``apply``: a state whose
``current_player`` is :data:`CHANCE` lists its exact outcomes with ``chance_outcomes`` and the
caller (an env, a sampler or a solver) picks or sums over them. One rules engine therefore serves
sampling, exact odds and exact solving.

``apply_with_events`` also reports :class:`Event` records (cast, perils, denied, wounds, slain, ...)
for rendering, replays and statistics; events are not part of the state.
"""

from __future__ import annotations

import enum
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple, Protocol, runtime_checkable

import numpy as np

from psygym.kernel import guard_observe, uniform_choice, weighted_choice

CHANCE = -1
"""``current_player`` value of a chance node."""
TERMINAL = -2
"""``current_player`` value of a finished game."""
_MASK_MEMO_SIZE = 4096
_OWN_WALK: dict[type, bool] = {}
"""Per rules class: whether its fast walk's owner's methods are its own (no subclass override)."""
_WALK_HOOKS = (
    "sample_chance",
    "apply_with_events",
    "_apply",
    "chance_outcomes",
    "current_player",
    "sample_chance_run",
    "apply_with_chance",
)
"""What every fast chance walk stands in for (:meth:`RulesBase._own_chance_walk`); the envs call
it in place of ``apply_with_chance`` (:meth:`RulesBase.decision_walk`)."""


class Information(enum.StrEnum):
    """What the players of an edition see of each other's choices (OpenSpiel's ``Information``).

    ``PERFECT``: everything (7th, 8th). ``HIDDEN``: some state is private (2nd edition's hands).
    ``SIMULTANEOUS``: the state is public but some moves are made in secret at the same time
    (Rogue Trader's bids); :meth:`RulesBase.simultaneous_info` names those nodes.
    """

    PERFECT = "perfect"
    HIDDEN = "hidden"
    SIMULTANEOUS = "simultaneous"


class EventKind(enum.StrEnum):
    """Every kind of :class:`Event` the shipped editions report.

    A ``StrEnum``: ``EventKind.PERILS == "perils"``, so logs stay plain strings. Upper layers
    compare against these members, never against bare strings.
    """

    SETUP = "setup"
    GENERATE = "generate"
    PHASE = "phase"
    PHASE_END = "phase_end"
    END_PHASE = "end_phase"
    TURN = "turn"
    SELECT = "select"
    POOLS = "pools"
    FLUX = "flux"
    DEAL = "deal"
    RESHUFFLE = "reshuffle"
    DRAW_POWER = "draw_power"
    ATTEMPT = "attempt"
    MANIFEST = "manifest"
    PASSED = "passed"
    FAILED = "failed"
    PASS = "pass"
    PERILS = "perils"
    PERILS_ROLL = "perils_roll"
    LD_TEST = "ld_test"
    DENY_ATTEMPT = "deny_attempt"
    DENIED = "denied"
    DENY_FAILED = "deny_failed"
    NULLIFIED = "nullified"
    NULLIFY_FAILED = "nullify_failed"
    REFLECTED = "reflected"
    DUEL = "duel"
    DUEL_TIE = "duel_tie"
    DRAIN = "drain"
    ENERGY_DRAIN = "energy_drain"
    EXHAUSTED = "exhausted"
    BIDS = "bids"
    REST = "rest"
    RECOVERED = "recovered"
    REGAIN = "regain"
    CONFUSED = "confused"
    DAEMONIC_ATTACK = "daemonic_attack"
    POWER = "power"
    END_POWER = "end_power"
    POWER_DESTROYED = "power_destroyed"
    PURGE = "purge"
    SURGE = "surge"
    HEAL = "heal"
    WOUNDS = "wounds"
    SAVED = "saved"
    NO_DAMAGE = "no_damage"
    NO_EFFECT = "no_effect"
    SLAIN = "slain"
    UNIT = "unit"
    VALUE = "value"
    IDLE = "idle"
    END = "end"
    GAME_OVER = "game_over"


@dataclass(frozen=True)
class Event:
    """Something that happened in one transition, for rendering and statistics.

    Attributes:
        kind: an :class:`EventKind` (``PERILS``, ``DENIED``, ``WOUNDS``, ``SLAIN``, ...); a
            third-party edition may use its own strings.
        text: one line a player can read.
        player: the player the event concerns, if any.
        data: extra key/value pairs (sorted tuple so events stay hashable).
    """

    kind: EventKind | str
    text: str
    player: int | None = None
    data: tuple[tuple[str, Any], ...] = ()

    def get(self, key: str, default: Any = None) -> Any:
        """Value of one ``data`` entry."""
        return dict(self.data).get(key, default)


Walk = Callable[[Hashable, int, np.random.Generator, list[Event]], Hashable]
"""``walk(state, action, rng, events) -> state``: a legal decision and the chance run after it."""


@dataclass(frozen=True)
class ActionView:
    """A typed, readable view of one action (``Rules.describe``); ``str()`` gives its label."""

    label: str = field(default="", compare=False)

    def __str__(self) -> str:
        return self.label


class IllegalActionError(ValueError):
    """An action that is not legal in the given state; the message lists the legal ones."""

    def __init__(self, action: int, legal: Sequence[int], labels: Sequence[str], where: str):
        self.action = action
        self.legal = list(legal)
        shown = ", ".join(f"{a} ({lbl})" for a, lbl in zip(legal, labels))
        super().__init__(f"action {action} is not legal {where}; legal actions: {shown}")


class SimultaneousMove(NamedTuple):
    """Two secret moves made at once, as a matrix game (see :meth:`RulesBase.simultaneous_info`).

    ``row_player`` chooses among ``row_actions`` and ``col_player`` among ``col_actions``
    without seeing each other's choice; ``fn(row, col)`` is the state after both.
    """

    row_player: int
    row_actions: list[int]
    col_player: int
    col_actions: list[int]
    fn: Callable[[int, int], Hashable]


@dataclass(frozen=True)
class GameInfo:
    """Static facts of one scenario's game, as OpenSpiel's ``GameInfo`` holds them.

    Attributes:
        num_players: always 2 in psygym.
        num_actions: size of the action space (``Discrete(num_actions)``).
        observation_size: length of ``observe``'s vector.
        information: what the players see (:class:`Information`).
        max_chance_outcomes: the most outcomes one chance node may list (0: not declared).
        max_game_length: the most decisions one game may take (0: not declared).
        min_utility: lowest score player 0 can end with (``-inf``: not declared).
        max_utility: highest score player 0 can end with (``inf``: not declared). Zero-sum:
            player 1's lie in ``[-max_utility, -min_utility]`` (bounds may be asymmetric).
    """

    num_players: int
    num_actions: int
    observation_size: int
    information: Information
    max_chance_outcomes: int = 0
    max_game_length: int = 0
    min_utility: float = -math.inf
    max_utility: float = math.inf


@runtime_checkable
class Policy(Protocol):
    """Anything that chooses actions: heuristics, solvers, trained models.

    ``action_probabilities`` returns a distribution over legal actions of ``player`` in ``state``
    (a deterministic policy returns one action with probability 1). A policy that remembers
    what it learnt during a game may also have ``restart()``, which :func:`play_game` calls as
    each game starts (as OpenSpiel's bots have ``restart``), so its moves do not depend on the
    games played before.
    """

    name: str

    def action_probabilities(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """Distribution over the legal actions of ``player`` in ``state``."""
        ...


class RulesBase(ABC):
    """Base class of every edition's rules: the shared invariants live here once.

    Subclasses implement the game hooks (``initial_state``, ``current_player``, ``legal_actions``,
    ``chance_outcomes``, ``_apply``, ``returns``, ``observe``, ``describe``). The optional parts
    of the contract have defaults here: ``is_response`` (False), ``simultaneous_info`` (None),
    ``private_to`` (None), ``information`` (perfect), ``rest_bounds`` (unbounded) and
    ``game_info``. This class provides legality checking with a clear error,
    ``apply``/``apply_with_events``, masks and chance sampling.

    At a terminal state ``chance_outcomes`` returns ``[]`` and ``legal_actions`` returns ``[]``
    in every edition (:func:`check_rules` checks both).
    """

    edition: str = ""
    num_players: int = 2
    num_actions: int = 0
    observation_size: int = 0
    scenario: Any = None
    information: Information = Information.PERFECT
    """What the players see; editions with secrets override it."""

    @abstractmethod
    def initial_state(self) -> Hashable:
        """The state at the start of the game (possibly a chance node)."""

    @abstractmethod
    def current_player(self, state: Hashable) -> int:
        """0 or 1 at a decision node, else :data:`CHANCE` or :data:`TERMINAL`."""

    @abstractmethod
    def legal_actions(self, state: Hashable) -> list[int]:
        """Sorted legal actions of the player to move (empty at chance and terminal nodes)."""

    @abstractmethod
    def chance_outcomes(self, state: Hashable) -> list[tuple[int, float]]:
        """Exact ``(outcome, probability)`` pairs at a chance node; probabilities sum to 1."""

    @abstractmethod
    def _apply(self, state: Hashable, action: int) -> tuple[Hashable, tuple[Event, ...]]:
        """Next state and events; ``action`` is already known to be legal."""

    @abstractmethod
    def returns(self, state: Hashable) -> tuple[float, float]:
        """Scores of players 0 and 1 so far (zero-sum: they add up to 0)."""

    @abstractmethod
    def observe(self, state: Hashable, player: int) -> np.ndarray:
        """Flat float32 vector (``observation_size``) of what ``player`` (0 or 1, checked) sees."""

    @abstractmethod
    def describe(self, state: Hashable, action: int) -> ActionView:
        """Typed view of ``action`` in ``state`` (a chance outcome at chance nodes)."""

    def render(self, state: Hashable, player: int | None = None) -> str:
        """Text picture of the state, as ``player`` may see it (``None``: everything)."""
        return repr(state)

    def power_texts(self, state: Hashable, player: int | None = None) -> dict[str, str]:
        """One line of rules text for each power ``player`` may see in ``state``, by name.

        What a player sees: in editions with hidden hands, never the other hand's cards.
        """
        return {}

    def is_response(self, state: Hashable) -> bool:
        """Whether the decision at ``state`` answers the other player's move.

        Denies, nullifies and save bids are responses; ``caster+denier`` agents split here.
        """
        return False

    def simultaneous_info(self, state: Hashable) -> SimultaneousMove | None:
        """The secret simultaneous move that starts at ``state``, if any (else ``None``).

        Editions of :attr:`Information.SIMULTANEOUS` return a :class:`SimultaneousMove` at the
        first of the two secret decisions; a solver must solve it as a matrix game, and a
        search must never let the second mover see the first move.
        """
        return None

    def private_to(self, state: Hashable) -> int | None:
        """The one player who learns what is chosen at ``state``, or ``None`` if everyone does.

        At a chance node: the player a private outcome goes to (a card dealt into a secret
        hand). At a decision node: the mover, when the choice stays secret from the other
        player until that player has made its own next decision (a secret bid); both are then
        known. Every other player sees such a step only in its public form: its events, never
        its label (``describe``). So an edition's events never name what a private step keeps
        secret ("Chaos is dealt a warp card."), and the answer must follow from what every
        player sees of ``state`` (never from a hidden hand), or the question itself would tell.

        Every edition whose players see different things (``information`` other than
        perfect) answers it; what a player is shown of a game is computed from it alone.
        """
        return None

    def simultaneous_parent(self, state: Hashable) -> Hashable | None:
        """At the second of two secret decisions, the state where the pair began, else ``None``.

        That is the state where :meth:`simultaneous_info` announced the pair. A search at the
        second decision values it from there, so it never reads the first, secret move.
        """
        return None

    def horizon(self, state: Hashable) -> tuple[int, int]:
        """Where ``state`` stands in the game: ``(battle round, step within the round)``.

        The pair never decreases along play and changes exactly where one unit of lookahead
        ends: the ``search`` agent solves exactly up to the first state whose horizon differs
        from the one it started at, and values that state with a learned board value. Editions
        choose the unit (one cast, one turn); round 0 is anything before the first battle
        round (such as power generation). The default makes the whole game one unit.
        """
        return (0, 0)

    def phase_horizon(self, state: Hashable) -> tuple[int, int]:
        """The Psychic phase ``state`` is in: ``(battle round, phase within the round)``.

        Like :meth:`horizon`, but the unit is a whole Psychic phase (every cast and deny of
        both sides up to the phase's end): ``search`` solves a phase exactly when it fits a
        budget. Editions whose unit of :meth:`horizon` is a cast override it; the default is
        :meth:`horizon` (its unit is already a phase, such as a Rogue Trader turn).
        """
        return self.horizon(state)

    def rest_bounds(self, state: Hashable) -> tuple[float, float]:
        """Bounds on what the rest of the game from ``state`` adds to player 0's score.

        A board value is clamped to them at a leaf (``BoardValue``, and the compiled twin's
        ``rest_bounds``). Editions that can prove a side of them (no ability left can raise, or
        lower, the score) override it; the default is unbounded.
        """
        return (-math.inf, math.inf)

    def game_info(self) -> GameInfo:
        """Static facts of this scenario's game (editions may add bounds)."""
        return GameInfo(
            num_players=self.num_players,
            num_actions=self.num_actions,
            observation_size=self.observation_size,
            information=self.information,
        )

    def apply(self, state: Hashable, action: int, *, check: bool = True) -> Hashable:
        """Pure transition: the state after ``action`` (a decision or a chance outcome).

        Raises:
            IllegalActionError: ``action`` is not legal here (only when ``check`` is true).
        """
        if check:
            self.check_action(state, action)
        return self._transition(state, int(action))

    def _transition(self, state: Hashable, action: int) -> Hashable:
        """The next state alone, for :meth:`apply` (searches never read events).

        Editions may override it to run their transition code without building events; it must
        reach the same state as :meth:`_apply`.
        """
        return self._apply(state, action)[0]

    def apply_with_events(
        self, state: Hashable, action: int, *, check: bool = True
    ) -> tuple[Hashable, tuple[Event, ...]]:
        """Like :meth:`apply`, also returning what happened."""
        if check:
            self.check_action(state, action)
        return self._apply(state, int(action))

    def check_action(self, state: Hashable, action: int) -> None:
        """Raise :class:`IllegalActionError` unless ``action`` is legal in ``state``."""
        player = self.current_player(state)
        if player == TERMINAL:
            raise IllegalActionError(action, [], [], "in a finished game")
        if player == CHANCE:
            legal = [o for o, _ in self.chance_outcomes(state)]
            where = "as a chance outcome here"
        else:
            legal = self.legal_actions(state)
            where = f"for player {player} here"
        if action not in legal:
            labels = [str(self.describe(state, a)) for a in legal]
            raise IllegalActionError(action, legal, labels, where)

    def is_terminal(self, state: Hashable) -> bool:
        """Whether the game is over."""
        return self.current_player(state) == TERMINAL

    def legal_mask(self, state: Hashable) -> np.ndarray:
        """Boolean mask over ``range(num_actions)`` derived from :meth:`legal_actions`.

        Masks are memoised per legal set (a game has few); each call returns its own copy.
        """
        legal = tuple(self.legal_actions(state))
        memo = self.__dict__.setdefault("_mask_memo", {})
        mask = memo.get(legal)
        if mask is None:
            if len(memo) >= _MASK_MEMO_SIZE:
                memo.clear()
            mask = memo[legal] = np.zeros(self.num_actions, dtype=bool)
            mask[list(legal)] = True
        return mask.copy()

    def sample_chance(self, state: Hashable, rng: np.random.Generator) -> int:
        """Draw one chance outcome with ``rng`` (editions may override with a faster path)."""
        outcomes = self.chance_outcomes(state)
        return weighted_choice([o for o, _ in outcomes], [p for _, p in outcomes], rng)

    def _own_chance_walk(self) -> bool:
        """Whether the edition's fast walk (:attr:`fast_walk_hooks`) may serve this object.

        A fast walk stands in for ``sample_chance`` and ``apply_with_events`` node by node, so
        it is valid only while neither they nor the transition code it calls (the hooks, the
        edition's own method names) are replaced: not on the instance (a test replaying chance
        sets ``rules.sample_chance``), not in a subclass of the class that declared the hooks.
        Editions' overrides fall back to the generic walk otherwise.
        """
        cls = type(self)
        own = _OWN_WALK.get(cls)
        if own is None:
            owner, names = cls._fast_walk_owner, cls._fast_walk_guard
            own = owner is not None and (
                cls is owner
                or all(getattr(cls, name, None) is getattr(owner, name, None) for name in names)
            )
            _OWN_WALK[cls] = own
        return own and self.__dict__.keys().isdisjoint(cls._fast_walk_guard)

    def sample_chance_run(
        self, state: Hashable, rng: np.random.Generator, events: list[Event]
    ) -> Hashable:
        """Walk the run of chance nodes from ``state`` to the next decision or the end.

        Each chance node is sampled with :meth:`sample_chance` and applied with
        :meth:`apply_with_events`; the events of every transition are appended to ``events``.
        Editions may override it with a faster walk (such as a whole deal of cards) that draws
        the same random numbers in the same order and reaches the same state with the same
        events; the chance nodes themselves stay in the game for solvers.
        """
        current_player, sample = self.current_player, self.sample_chance
        apply = self.apply_with_events
        while current_player(state) == CHANCE:
            state, step_events = apply(state, sample(state, rng), check=False)
            events.extend(step_events)
        return state

    def apply_with_chance(
        self,
        state: Hashable,
        action: int,
        rng: np.random.Generator,
        events: list[Event],
        *,
        check: bool = True,
    ) -> Hashable:
        """Apply a decision, then walk the chance nodes after it (:meth:`sample_chance_run`).

        The events of every transition are appended to ``events``. What the envs call after
        each decision. An edition that declares :attr:`fast_walk_hooks` makes the decision and
        the walk in one go (:meth:`_decide_and_walk`), with the same result, events and draws.

        Raises:
            IllegalActionError: ``action`` is not legal here (only when ``check`` is true).
        """
        if check:
            self.check_action(state, action)
        if self._own_chance_walk():
            return self._decide_and_walk(state, int(action), rng, events)
        return self._generic_decide_and_walk(state, int(action), rng, events)

    def decision_walk(self) -> Walk:
        """The function :meth:`apply_with_chance` runs after a legal decision, asked once.

        ``walk(state, action, rng, events)`` equals ``apply_with_chance(state, action, rng,
        events, check=False)`` for an ``int`` action. It exists for callers that apply several
        decisions in a row (an env step: the agent's action and the opponent's replies): they
        test once, not at every decision, whether the edition's fast walk may serve
        (:meth:`_own_chance_walk`). Without it, the walk is ``apply_with_chance`` itself, so an
        override or a replacement of that method still serves. Ask again after replacing a
        rules method.
        """
        if self._own_chance_walk():
            return self._decide_and_walk
        return self._unchecked_apply_with_chance

    def _unchecked_apply_with_chance(
        self, state: Hashable, action: int, rng: np.random.Generator, events: list[Event]
    ) -> Hashable:
        """:meth:`apply_with_chance` unchecked: :meth:`decision_walk` without a fast walk."""
        return self.apply_with_chance(state, action, rng, events, check=False)

    def _generic_decide_and_walk(
        self, state: Hashable, action: int, rng: np.random.Generator, events: list[Event]
    ) -> Hashable:
        """A legal decision by :meth:`apply_with_events`, then :meth:`sample_chance_run`."""
        state, step_events = self.apply_with_events(state, action, check=False)
        events.extend(step_events)
        return self.sample_chance_run(state, rng, events)

    fast_walk_hooks: ClassVar[tuple[str, ...] | None] = None
    """An edition with a fast walk (:meth:`_decide_and_walk`, and its own
    :meth:`sample_chance_run`) names here, in its class body, its own methods that walk calls or
    stands in for; :meth:`_own_chance_walk` then guards them (with ``sample_chance``,
    ``apply_with_events`` and the other generic steps a walk replaces)."""
    _fast_walk_owner: ClassVar[type | None] = None
    _fast_walk_guard: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        guard_observe(cls)  # every observe refuses a player that is not 0 or 1
        hooks = cls.__dict__.get("fast_walk_hooks")
        if hooks is not None:
            cls._fast_walk_owner = cls
            cls._fast_walk_guard = frozenset(_WALK_HOOKS + tuple(hooks))

    def _decide_and_walk(
        self, state: Hashable, action: int, rng: np.random.Generator, events: list[Event]
    ) -> Hashable:
        """A legal decision and the chance nodes after it in one go (editions with a fast walk).

        Must equal :meth:`apply_with_events` followed by :meth:`sample_chance_run`.
        """
        raise NotImplementedError

    def action_label(self, state: Hashable, action: int) -> str:
        """Readable label of an action (``str(describe(...))``)."""
        return str(self.describe(state, action))


def sample_action(
    policy: Policy, rules: RulesBase, state: Hashable, player: int, rng: np.random.Generator
) -> int:
    """Draw an action from ``policy`` in ``state`` with ``rng``.

    A policy with the class attribute ``uniform = True`` promises that its
    ``action_probabilities`` is exactly ``{a: 1.0 / len(legal) for a in legal}`` with ``legal =
    rules.legal_actions(state)`` (the random policy). Its draw skips building that dictionary and
    its cumulative sums, the env's opponent sampling cost: the same action from the same one
    random number (:func:`~psygym.kernel.uniform_choice`).
    """
    if getattr(policy, "uniform", False):
        return int(uniform_choice(rules.legal_actions(state), rng))
    probs = policy.action_probabilities(rules, state, player)
    if len(probs) == 1:
        return int(next(iter(probs)))
    return int(weighted_choice(list(probs), probs.values(), rng))


def restart_policies(policies: Sequence[Any]) -> None:
    """Call ``restart()`` of every policy that has one, once each (a new game starts)."""
    for i, policy in enumerate(policies):
        restart = getattr(policy, "restart", None)
        if callable(restart) and all(policy is not p for p in policies[:i]):
            restart()


def play_game(
    rules: RulesBase,
    policies: Sequence[Policy],
    rng: np.random.Generator,
    *,
    state: Hashable | None = None,
    on_step: Any = None,
) -> Hashable:
    """Play one game to the end, sampling chance with ``rng``; returns the terminal state.

    ``on_step(state, action, events)`` is called after every transition if given.
    """
    s = rules.initial_state() if state is None else state
    restart_policies(policies)
    while True:
        player = rules.current_player(s)
        if player == TERMINAL:
            return s
        if player == CHANCE:
            a = rules.sample_chance(s, rng)
        else:
            a = sample_action(policies[player], rules, s, player, rng)
        s2, events = rules.apply_with_events(s, a, check=False)
        if on_step is not None:
            on_step(s, a, events)
        s = s2
