"""Any psygym edition and scenario as an OpenSpiel (``pyspiel``) Python game.

Importing this module registers the game ``python_psygym`` with the parameters ``edition``,
``scenario`` and ``sha256``, so OpenSpiel's algorithms (CFR, CFR+, ``exploitability.nash_conv``,
NFSP, IS-MCTS, ...) run on psygym's exact rules::

    import pyspiel
    import psygym.interop.openspiel  # registers python_psygym
    game = pyspiel.load_game("python_psygym", {"edition": "...", "scenario": "default"})

The adapter reads only the generic rules API (``initial_state``, ``current_player``,
``legal_actions``, ``chance_outcomes``, ``apply``, ``returns``, ``observe``, ``render``,
``information``, ``simultaneous_info``, ``game_info``); it names no edition.

Mapping:

* **Chance** is explicit and stochastic (``EXPLICIT_STOCHASTIC``): a chance node's OpenSpiel
  actions are the positions ``0..k-1`` of ``rules.chance_outcomes(state)`` (psygym outcomes may
  be negative or sparse, e.g. a Psychic Duel's ``-w``), with the same exact probabilities.
* **Decisions** keep psygym's action ids (``num_distinct_actions = rules.num_actions``).
* **Information**: perfect-information editions are ``PERFECT_INFORMATION``; editions with
  hidden state or secret simultaneous moves are ``IMPERFECT_INFORMATION``. Simultaneous secret
  moves (``rules.simultaneous_info``) are played as sequential moves with the first move hidden:
  the second mover's information state gets the same placeholder whatever the first move was.
* **Information state** (perfect recall): the string is the player's own history, every
  ``observe(state, player)`` vector seen since the start (as short digests) and every action
  that player took, so two states the player cannot tell apart (e.g. the other hand re-dealt)
  get the same string. The information-state *tensor* has a fixed size and is not
  perfect-recall: the current ``observe`` vector followed by how often the player took each
  action so far.
* **Observation**: the string is ``rules.render(state, player)`` and the tensor is
  ``rules.observe(state, player)``.
* **Engine**: where the scenario has a compiled twin with an observation, the states hold the
  core's bytes (:mod:`psygym.engine.position`) and the core answers whose move, the legal
  actions, the chance outcomes, the next state, the returns and the tensors, with the
  reference's values; the reference state is decoded only for text (strings, descriptions)
  and for ``psygym_state``. ``PSYGYM_ENGINE=python`` keeps every step on the reference.
* **Parameters** record the scenario as given (a shipped name, ``random:...``, a file's absolute
  path and its SHA-256), so ``pyspiel.load_game(str(game))``, pickling and
  ``deserialize_game_and_state`` rebuild the same game or refuse (:mod:`.game_source`).
* **Serialisation** (``state.serialize()``, ``pyspiel.serialize_game_and_state``, pickling):
  OpenSpiel writes a Python state's history and pickles its attributes; here those pickle as
  markers only, and the loading state replays the history on its own game. The text holds no
  engine handle, so it loads on either engine.
* **Utilities** (``TERMINAL`` reward model): ``rules.returns`` at terminal states.
  ``GameInfo``'s ``min_utility``/``max_utility``/``max_game_length``/``max_chance_outcomes`` are
  those of ``rules.game_info()`` where the edition declares them (its utilities bound player
  0's score, player 1's are their negation: OpenSpiel's one pair is the union of both, so
  symmetric, ``min(lo, -hi) .. max(hi, -lo)``); otherwise
  the large safe defaults :data:`UNDECLARED_UTILITY` and :data:`UNDECLARED_GAME_LENGTH` stand in.

:class:`OpenSpielPolicy` wraps a psygym policy as an OpenSpiel ``policy.Policy`` (for
``exploitability.nash_conv`` and the like); :func:`psygym_state` maps an OpenSpiel state back.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

from psygym import edition as registry
from psygym.core import CHANCE, TERMINAL, Information, Policy
from psygym.engine.position import Position, core_rules
from psygym.interop.game_source import SHA256, edition_id, load_source, source_of

GAME_NAME = "python_psygym"
"""Short name the game is registered under."""

UNDECLARED_UTILITY = 1.0e6
"""``|utility|`` bound used when an edition declares none (``rules.game_info()``)."""

UNDECLARED_GAME_LENGTH = 100_000
"""Decision bound used when an edition declares no ``max_game_length``."""

HIDDEN_MOVE = "?"
"""Information-state token of the other player's secret simultaneous move."""


def _game_type(information: pyspiel.GameType.Information) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="psygym psychic phase",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=information,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={
            "edition": registry.default().id,
            "scenario": "default",
            SHA256: "",
        },
    )


class PsygymGame(pyspiel.Game):
    """One psygym scenario as an OpenSpiel game.

    Args:
        params: OpenSpiel parameters ``edition`` (id or alias), ``scenario`` (a shipped name,
            ``random:...`` or a TOML path) and ``sha256`` (the file's, checked where given);
            ignored when ``rules`` is given.
        rules: an already built ``Rules`` object to wrap (e.g. a variant built in code); the
            parameters then name the first source that builds the same game again, else one
            that ``pyspiel.load_game`` refuses (:func:`~.game_source.source_of`).
        engine: ``"python"`` keeps every step on the reference (else the compiled twin).
    """

    def __init__(
        self, params: dict[str, Any] | None = None, *, rules: Any = None, engine: str | None = None
    ):
        if rules is None:
            params = dict(params or {})
            edition = str(params.get("edition", registry.default().id))
            scenario = str(params.get("scenario", "default"))
            rules, source = load_source(edition, scenario, str(params.get(SHA256) or ""))
        else:
            source = source_of(rules)
        self.rules = rules
        # What answers at every node: the compiled twin over positions, else the reference.
        self.answers: Any = core_rules(rules, engine) or rules
        info = rules.game_info()
        perfect = rules.information == Information.PERFECT
        self.hides_moves = rules.information == Information.SIMULTANEOUS
        kind = pyspiel.GameType.Information
        game_type = _game_type(kind.PERFECT_INFORMATION if perfect else kind.IMPERFECT_INFORMATION)
        lo = info.min_utility if math.isfinite(info.min_utility) else -UNDECLARED_UTILITY
        hi = info.max_utility if math.isfinite(info.max_utility) else UNDECLARED_UTILITY
        # psygym's bounds are player 0's; player 1's are their negation (zero-sum). OpenSpiel
        # has one pair for every player: the union of both intervals.
        lo, hi = min(lo, -hi), max(hi, -lo)
        game_info = pyspiel.GameInfo(
            num_distinct_actions=int(rules.num_actions),
            max_chance_outcomes=int(info.max_chance_outcomes or rules.num_actions),
            num_players=2,
            min_utility=float(lo),
            max_utility=float(hi),
            utility_sum=0.0,
            max_game_length=int(info.max_game_length or UNDECLARED_GAME_LENGTH),
        )
        super().__init__(game_type, game_info, source.params(edition_id(rules)))

    def __reduce__(self) -> tuple[Callable[[str], pyspiel.Game], tuple[str]]:
        # pyspiel pickles a game as its string, but unpickles a Python game without its
        # attributes (rules, answers): load the string again instead, a whole game (or a refusal).
        return _game_from_string, (str(self),)

    def __copy__(self) -> PsygymGame:
        return self  # immutable, as OpenSpiel's games are: copies share it

    def __deepcopy__(self, memo: dict) -> PsygymGame:
        return self

    def new_initial_state(self) -> PsygymState:
        """The state at the start of the game."""
        return PsygymState(self)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: Any = None
    ) -> PsygymObserver:
        """An observer: perfect recall gives the information state, else the observation."""
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        obs_type = iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False)
        return PsygymObserver(self.rules, perfect_recall=obs_type.perfect_recall,
                              answers=self.answers)  # fmt: skip


def _game_from_string(text: str) -> pyspiel.Game:
    """The game ``pyspiel.load_game`` builds from ``text`` (how a pickled game loads)."""
    return pyspiel.load_game(text)


def _digest(vector: np.ndarray) -> str:
    return hashlib.blake2b(np.ascontiguousarray(vector).tobytes(), digest_size=8).hexdigest()


class _Rebuild:
    """What a state's attribute unpickles to: :meth:`PsygymState.__setattr__` rebuilds it."""

    __slots__ = ()


class _Frozen:
    """Holds immutable values; ``copy.deepcopy`` (pyspiel's clone) shares it instead of copying.

    It pickles as a :class:`_Rebuild` marker, not its value: OpenSpiel serialises a Python state
    as its history and a pickle of its attributes, and these hold the engine's handles (which
    cannot be pickled) and nothing the history does not determine.
    """

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __deepcopy__(self, memo: dict) -> _Frozen:
        return self

    def __reduce__(self) -> tuple[type[_Rebuild], tuple[()]]:
        return _Rebuild, ()


_SET_ATTRIBUTE = pyspiel.State.__setattr__


class PsygymState(pyspiel.State):
    """An OpenSpiel state holding a psygym state and each player's history of observations.

    pyspiel clones a Python state with ``copy.deepcopy`` of its attributes, so everything here is
    immutable and shared through :class:`_Frozen` (the rules, the psygym state, the histories).
    OpenSpiel deserialises one (``game.deserialize_state``, ``deserialize_game_and_state``,
    unpickling) by restoring its history on a new initial state of the game and setting its
    attributes from their pickles, :class:`_Rebuild` markers: the state then replays the
    history on its own game (on its own engine), checking every action is legal there.

    Attributes:
        state: the psygym state (frozen, hashable).
        history_tokens: per player, the tokens of its information state: observation digests
            (``o<hex>``), its own actions (``a<id>``) and :data:`HIDDEN_MOVE`.
        action_counts: per player, how often it took each action (for the tensor).
    """

    def __init__(self, game: PsygymGame):
        super().__init__(game)
        answers = game.answers
        self._shared = _Frozen((game.rules, game.hides_moves, answers))
        self._start()

    def _start(self) -> None:
        answers = self._answers
        s = answers.initial_state()
        tokens = tuple((f"o{_digest(answers.observe(s, p))}",) for p in (0, 1))
        self._data = _Frozen((s, tokens, ((), ()), None))

    def __setattr__(self, name: str, value: Any) -> None:
        if value.__class__ is not _Rebuild:
            _SET_ATTRIBUTE(self, name, value)  # on every step and clone: no super() call
        elif name == "_data":  # deserialising: keep the game's rules, replay the history
            self._replay(self.history())

    def _replay(self, history: Sequence[int]) -> None:
        """Set the psygym side to the start followed by ``history`` (the C++ side holds it)."""
        self._start()
        answers = self._answers
        for i, action in enumerate(history):
            node = self.node
            player = answers.current_player(node)
            if player == TERMINAL:
                legal: Sequence[int] = ()
            elif player == CHANCE:
                legal = range(len(answers.chance_outcomes(node)))
            else:
                legal = answers.legal_actions(node)
            if action not in legal:
                raise ValueError(f"serialised history: action {action} at move {i} is not "
                                 f"legal there (legal: {list(legal)})")  # fmt: skip
            self._apply_action(int(action))

    @property
    def _rules(self) -> Any:
        return self._shared.value[0]

    @property
    def _answers(self) -> Any:
        """The compiled twin (over positions) or the reference rules (over states)."""
        return self._shared.value[2]

    @property
    def node(self) -> Any:
        """What the answers read: a :class:`~psygym.engine.position.Position` or the state."""
        return self._data.value[0]

    @property
    def state(self) -> Hashable:
        """The psygym state."""
        s = self._data.value[0]
        return s.state if type(s) is Position else s

    @property
    def history_tokens(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Per player, the tokens of its information state."""
        return self._data.value[1]

    @property
    def action_counts(self) -> list[np.ndarray]:
        """Per player, how often it took each action so far."""
        out = []
        for actions in self._data.value[2]:
            counts = np.zeros(self._rules.num_actions, np.float32)
            np.add.at(counts, list(actions), 1.0)
            out.append(counts)
        return out

    @property
    def _hidden_for(self) -> int | None:
        """The player whose decision follows the other's secret simultaneous move, if any."""
        return self._data.value[3]

    # ---------------------------------------------------------------- OpenSpiel API
    def current_player(self) -> int:
        """0 or 1, or pyspiel's CHANCE / TERMINAL ids."""
        p = self._answers.current_player(self.node)
        if p == TERMINAL:
            return int(pyspiel.PlayerId.TERMINAL)
        if p == CHANCE:
            return int(pyspiel.PlayerId.CHANCE)
        return int(p)

    def _legal_actions(self, player: int) -> list[int]:
        return list(self._answers.legal_actions(self.node))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """``(position, probability)`` of each psygym chance outcome, in the rules' order."""
        return [(i, float(p)) for i, (_, p) in enumerate(self._answers.chance_outcomes(self.node))]

    def _apply_action(self, action: int) -> None:
        rules, hides, answers = self._shared.value
        s, tokens, actions, hidden = self._data.value
        mover = answers.current_player(s)
        tokens, actions = list(tokens), list(actions)
        if mover == CHANCE:
            outcome = answers.chance_outcomes(s)[action][0]
            nxt = answers.apply(s, outcome, check=False)
            hidden_next = hidden
        else:
            hidden_next = None
            if hides and hidden is None:
                sim = rules.simultaneous_info(self.state)
                if sim is not None and sim.row_player == mover:
                    hidden_next = sim.col_player
            nxt = answers.apply(s, action)
            tokens[mover] = (*tokens[mover], f"a{action}")
            actions[mover] = (*actions[mover], int(action))
        for p in (0, 1):
            token = HIDDEN_MOVE if p == hidden_next else f"o{_digest(answers.observe(nxt, p))}"
            tokens[p] = (*tokens[p], token)
        self._data = _Frozen((nxt, tuple(tokens), tuple(actions), hidden_next))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == int(pyspiel.PlayerId.CHANCE):
            outcomes = self._rules.chance_outcomes(self.state)
            if 0 <= action < len(outcomes):
                return f"chance:{self._rules.describe(self.state, outcomes[action][0])}"
            return f"chance:{action}"
        return str(self._rules.describe(self.state, action))

    def is_terminal(self) -> bool:
        """Whether the game is over."""
        return self._answers.current_player(self.node) == TERMINAL

    def returns(self) -> list[float]:
        """The zero-sum scores at a terminal state (0, 0 before: terminal rewards)."""
        if not self.is_terminal():
            return [0.0, 0.0]
        r0, r1 = self._answers.returns(self.node)
        return [float(r0), float(r1)]

    def __str__(self) -> str:
        return self._rules.render(self.state, None)


class PsygymObserver:
    """OpenSpiel's ``PyObserver`` for psygym games.

    With ``perfect_recall`` it gives the information state (string: the player's history of
    observations and own actions; tensor: ``observe`` plus own action counts), else the
    observation (string: ``render(state, player)``; tensor: ``observe``).
    """

    def __init__(self, rules: Any, *, perfect_recall: bool, answers: Any = None):
        self.rules = rules
        self._answers = rules if answers is None else answers  # the twin where the game has one
        self.perfect_recall = perfect_recall
        n_obs = int(rules.observation_size)
        size = n_obs + (int(rules.num_actions) if perfect_recall else 0)
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor[:n_obs]}
        if perfect_recall:
            self.dict["own_actions"] = self.tensor[n_obs:]

    def set_from(self, state: PsygymState, player: int) -> None:
        """Fill ``tensor`` (and its views in ``dict``) for ``player`` in ``state``."""
        self.dict["observation"][:] = self._answers.observe(state.node, player)
        if self.perfect_recall:
            self.dict["own_actions"][:] = state.action_counts[player]

    def string_from(self, state: PsygymState, player: int) -> str:
        """The information-state string (perfect recall) or the rendered view of ``player``."""
        if self.perfect_recall:
            return f"p{player} " + " ".join(state.history_tokens[player])
        return self.rules.render(state.state, player)


def game_from_rules(rules: Any, engine: str | None = None) -> PsygymGame:
    """Wrap an already built ``Rules`` object (a variant built in code) as an OpenSpiel game.

    ``engine="python"`` keeps it on the reference (else the compiled twin where there is one).
    Its parameters name the shipped scenario, ``random:...`` or file that builds the same game
    again, where one does; else ``pyspiel.load_game(str(game))`` and unpickling refuse it
    (:func:`~.game_source.source_of`).
    """
    return PsygymGame(rules=rules, engine=engine)


def load_game(edition: str, scenario: str = "default") -> PsygymGame:
    """The OpenSpiel game of an edition's scenario (``pyspiel.load_game`` does the same)."""
    return pyspiel.load_game(GAME_NAME, {"edition": edition, "scenario": scenario})


def psygym_state(state: pyspiel.State) -> Hashable:
    """The psygym state inside an OpenSpiel state of this game."""
    return state.state


class OpenSpielPolicy(os_policy.Policy):
    """A psygym policy (heuristic, search, trained model) as an OpenSpiel ``policy.Policy``.

    Args:
        game: a :class:`PsygymGame`.
        policy: a psygym :class:`~psygym.core.Policy` (see ``psygym.policies.resolve_policy``).
        players: the players it plays for (default both).
        per_information_state: answer every state of one information state with the
            distribution computed at the first of them asked about, so the wrapped policy is a
            behaviour strategy even if it is randomised per state (a sampling search); exact
            for policies that read only what their player observes.
    """

    def __init__(
        self,
        game: PsygymGame,
        policy: Policy,
        players: Sequence[int] = (0, 1),
        *,
        per_information_state: bool = True,
    ):
        super().__init__(game, list(players))
        self.policy = policy
        self.rules = game.rules
        self.per_information_state = per_information_state
        self._memo: dict[str, dict[int, float]] = {}

    def action_probabilities(self, state: pyspiel.State, player_id: int | None = None) -> dict:
        """The psygym policy's distribution in the psygym state behind ``state``."""
        player = state.current_player() if player_id is None else player_id
        key = state.information_state_string(player) if self.per_information_state else None
        if key is not None and key in self._memo:
            return self._memo[key]
        probs = self.policy.action_probabilities(self.rules, psygym_state(state), player)
        out = {int(a): float(p) for a, p in probs.items()}
        if key is not None:
            self._memo[key] = out
        return out


@dataclass(frozen=True)
class TreeSize:
    """How large a game's tree is, as OpenSpiel's tabular algorithms (CFR, NashConv) unroll it.

    Attributes:
        histories: its histories (every node: decisions, chance nodes and ends); a lower bound
            unless ``complete``.
        complete: whether the whole tree was counted (else the count stopped past its limit).
        positions: the distinct psygym positions the count visited.
    """

    histories: int
    complete: bool
    positions: int


def count_histories(
    game: PsygymGame,
    limit: int,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    every: int = 10_000,
) -> TreeSize:
    """Count the histories of ``game``'s tree without building it, stopping past ``limit``.

    The tree below a history depends only on its psygym position, so the count is memoised over
    positions (the tree may be far larger than the positions it holds). It is a plain Python
    loop (Ctrl-C stops it at once) that holds at most ``limit`` positions: it stops as soon as
    it knows the tree has more than ``limit`` histories (a finished subtree that large, or more
    than ``limit`` distinct positions, each of them at least one history), and then
    ``histories`` is the largest such lower bound found.

    Args:
        game: a :class:`PsygymGame`.
        limit: the most histories of interest (``>= 1``).
        on_progress: called as ``on_progress(positions, largest)`` every ``every`` new positions
            (``largest``: the largest subtree counted so far, in histories).
        every: positions between two calls of ``on_progress``.
    """
    answers = game.answers
    memo: dict[Hashable, int] = {}
    seen = 0  # positions visited (memoised or on the stack)
    largest = 0
    root = answers.initial_state()
    stack: list[tuple[Any, list[Any] | None]] = [(root, None)]
    while stack:
        node, children = stack.pop()
        if children is None:  # first visit: list the children, count them first
            if node in memo:
                continue
            seen += 1
            if on_progress is not None and seen % every == 0:
                on_progress(seen, largest)
            if seen > limit:
                return TreeSize(max(largest, seen), False, seen)
            player = answers.current_player(node)
            if player == TERMINAL:
                memo[node] = 1
                continue
            if player == CHANCE:
                children = [answers.apply(node, o, check=False)
                            for o, _ in answers.chance_outcomes(node)]  # fmt: skip
            else:
                children = [answers.apply(node, a) for a in answers.legal_actions(node)]
            stack.append((node, children))
            stack.extend((c, None) for c in children if c not in memo)
            continue
        if node in memo:  # reached twice before it was finished (a transposition)
            continue
        size = 1 + sum(memo[c] for c in children)
        memo[node] = size
        largest = max(largest, size)
        if size > limit:
            return TreeSize(size, False, seen)
    return TreeSize(memo[root], True, seen)


def register() -> None:
    """Register :data:`GAME_NAME` with pyspiel (done on import; repeating it is harmless)."""
    if GAME_NAME not in pyspiel.registered_names():
        pyspiel.register_game(
            _game_type(pyspiel.GameType.Information.IMPERFECT_INFORMATION), PsygymGame
        )


register()

__all__ = [
    "GAME_NAME",
    "HIDDEN_MOVE",
    "OpenSpielPolicy",
    "PsygymGame",
    "PsygymObserver",
    "PsygymState",
    "TreeSize",
    "count_histories",
    "game_from_rules",
    "load_game",
    "psygym_state",
    "register",
]
