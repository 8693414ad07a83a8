"""The one generic Gymnasium env that drives every edition's rules against an opponent policy."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from psygym.core import (
    CHANCE,
    TERMINAL,
    Event,
    IllegalActionError,
    RulesBase,
    Walk,
    restart_policies,
    sample_action,
)
from psygym.edition import default as default_edition
from psygym.editions import load
from psygym.engine import compiled_game
from psygym.engine.episode import CompiledEpisode, compiled_episode
from psygym.kernel import weighted_choice
from psygym.policies import resolve_policy

_MAX_RESETS = 1000
_IN_CORE = object()
"""``PsychicPhaseEnv._state`` while the compiled episode holds the state (decoded when read)."""
OBSERVATION_BOUND = 1000.0
"""Default bound of every observation entry (editions may set ``observation_bound``)."""


class RenderModeError(ValueError, TypeError):
    """A render mode the env does not have.

    Also a ``TypeError``: callers that try a mode and fall back without it on a ``TypeError``
    (SB3's ``make_vec_env`` asks for ``"rgb_array"`` first) then build the env without one.
    """


def check_render_mode(render_mode: Any) -> None:
    """Refuse any render mode but ``"ansi"`` and ``None`` (:class:`RenderModeError`)."""
    if render_mode not in (None, "ansi"):
        raise RenderModeError(f"render_mode must be 'ansi' or None, not {render_mode!r}")


def integer_action(action: Any) -> int:
    """``action`` as an int: a Python int, a numpy integer or a 0-d integer array.

    Raises:
        TypeError: anything else (a float, a string, a bool), in one line.
    """
    if type(action) is int:
        return action
    if isinstance(action, int | np.integer) and not isinstance(action, bool):
        return int(action)
    if isinstance(action, np.ndarray) and action.ndim == 0 and action.dtype.kind in "iu":
        return int(action)
    raise TypeError(f"an integer action is expected, not {action!r} ({type(action).__name__})")


def _checked_seat(seat: Any) -> int:
    """``seat`` as an int, if it is the integer 0 or 1 (not a bool or a float)."""
    if isinstance(seat, int | np.integer) and not isinstance(seat, bool) and seat in (0, 1):
        return int(seat)
    raise ValueError(f"seat must be 0 or 1 (an int), not {seat!r} ({type(seat).__name__})")


def _policy_label(policy: Any) -> str:
    """How an error names a policy: its ``name``, else its repr."""
    name = getattr(policy, "name", None)
    return repr(name) if isinstance(name, str) and name else repr(policy)


class LegalDiscrete(spaces.Discrete):
    """``Discrete`` whose ``sample()`` without a mask draws one of the current legal actions.

    Random agents and ``gymnasium.utils.env_checker.check_env`` call ``action_space.sample()``;
    with this space they get a legal action, while stepping an illegal one still raises (DESIGN:
    one source of legality). Each unmasked sample remembers the env's episode number, so the env
    can tell a sample drawn before a ``reset()`` (as Gymnasium's determinism check does) from a
    caller's illegal choice. Pickled or copied, it stays a ``LegalDiscrete`` (with its generator
    and last sample) but carries no env, so saved models do not hold one: copied with its env,
    the env's copy attaches itself; copied alone, it samples as a plain ``Discrete``.
    """

    def __init__(self, n: int, env: PsychicPhaseEnv | None, seed: int | None = None):
        super().__init__(n, seed=seed)
        self._env = env
        self.last_sample: tuple[int, int] | None = None

    def sample(self, mask: np.ndarray | None = None, probability: Any = None) -> np.int64:
        """A uniformly random legal action (or as ``mask``/``probability`` say)."""
        if mask is not None or probability is not None or self._env is None:
            return super().sample(mask=mask, probability=probability)
        action = super().sample(mask=self._env.action_masks().astype(np.int8))
        self.last_sample = (int(action), self._env.episode)
        return action

    def __getstate__(self) -> dict[str, Any]:
        fields = self.__dict__.copy()
        fields["_env"] = None
        return fields


class PsychicPhaseEnv(gym.Env):
    """The psychic phase of one Warhammer 40,000 edition, played against an opponent policy.

    ## Description

    One generic env drives any edition's ``Rules`` (``psygym.editions``): the agent sits in one
    seat; after each of its actions the env resolves chance nodes (dice, cards) by sampling their
    exact outcome lists and asks the opponent policy for its decisions, until it is the agent's
    turn again or the game is over. The game is the scenario's whole battle (all battle rounds,
    both players' Psychic phases), or one phase for ``single-phase`` scenarios.

    ## Action Space

    ``Discrete(rules.num_actions)``. What each index means depends on the edition and scenario
    (``env.unwrapped.rules.describe(state, a)`` gives a label, e.g. "Librarian casts Smite at
    Warboss with 3 dice"). Only legal actions may be taken: the mask is ``env.action_masks()``
    (the sb3-contrib convention) and ``info["action_mask"]``, both derived from
    ``rules.legal_actions``. An illegal action raises ``IllegalActionError`` naming the legal ones;
    an action that is not an integer (a float, a string, a bool) raises ``TypeError``.
    ``env.action_space.sample()`` without a mask draws a legal action; one drawn before a
    ``reset()`` and stepped after it (as Gymnasium's env checker does) is mapped to a legal one.

    ## Observation Space

    ``Box(-1000, 1000, (rules.observation_size,), float32)``: ``rules.observe(state, seat)``,
    what the agent may see. Its layout is documented in each edition's ``observe`` docstring
    (which kind of decision is asked, battle round, pools or cards or psi-points, every unit's
    wounds and psyker status, the pending casting roll when deciding a deny, ...). In editions
    with hidden information (2nd) the opponent's hand and the deck order are never part of it.

    ## Rewards

    The change in the agent's zero-sum score at each step: value of wounds and effects it
    inflicted minus what it suffered (``rules.returns``). The episode return is the agent's final
    score: anything scored before the agent's first decision is paid with its first reward.

    ## Starting State

    ``rules.initial_state()`` advanced by chance and opponent moves to the agent's first decision.
    Games in which the agent never gets a decision are skipped at reset.

    ## Episode End

    Termination: the game is over (last battle round played, or a side has no units left).
    Truncation: none here; use ``max_episode_steps`` in ``gym.make`` if wanted.

    ## Information

    ``info["action_mask"]`` (bool array), ``info["events"]`` (what happened since the last step,
    as ``Event`` records: a list on the reference, a read-only sequence replayed when read on the
    core; ``list(...)`` of either is the same list) and ``info["score"]`` (the agent's score so
    far).

    ## Copies

    ``copy.deepcopy(env)`` and ``pickle`` give an independent env at the same state, with the
    same generator state and opponent: it goes on as the original would.

    ## Arguments

    ```python
    import gymnasium as gym, psygym
    env = gym.make("psygym/Seventh-v0", scenario="duel", opponent="double-wc", seat=0)
    ```

    * ``edition``: set by the registered id (``Seventh-v0``: ``"7th"`` and so on).
    * ``scenario``: a shipped scenario name or a path to a TOML file (default: the edition's).
    * ``opponent``: a ``Policy`` object or a name/path resolved through the ``psygym.agents``
      entry points (``"random"``, ``"double-wc"``, ``"optimal"``, ``"runs/.../model.safetensors"``).
      Its ``restart()``, if it has one, is called at every reset; a move it draws that is not
      legal raises ``IllegalActionError`` naming it.
    * ``seat``: 0 or 1 (an integer), the agent's player.
    * ``render_mode``: ``"ansi"`` or ``None`` (another raises ``RenderModeError``, both a
      ``ValueError`` and a ``TypeError``).
    * ``rules``: a ready ``Rules`` object (overrides ``edition``/``scenario``).
    * ``engine``: ``"python"`` keeps every step on the reference (``None`` or ``"core"``: the
      core where it can play the game, see Engine).

    ## Engine

    Against an opponent that draws uniformly among the legal actions (``"random"``), on a
    scenario whose edition has a compiled twin with an observation, the game is stepped in the
    C++ core (:mod:`psygym.engine.episode`) with the same draws from ``np_random``: the same
    observations, rewards, masks, states and events as the reference, the events replayed on
    the reference only when ``info["events"]`` is read. ``PSYGYM_ENGINE=python`` keeps every
    step on the reference.

    ## Version History

    * v0: Initial version release.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        edition: str | None = None,
        scenario: str = "default",
        opponent: Any = "random",
        seat: int = 0,
        render_mode: str | None = None,
        rules: RulesBase | None = None,
        engine: str | None = None,
    ):
        seat = _checked_seat(seat)
        check_render_mode(render_mode)
        if engine not in (None, "core", "python"):
            raise ValueError(f"engine must be 'core', 'python' or None, not {engine!r}")
        self._core = None
        self.rules: RulesBase = (
            rules if rules is not None else load(edition or default_edition().id, scenario)
        )
        self.opponent = resolve_policy(opponent, self.rules)
        self.render_mode = render_mode
        self.action_space = LegalDiscrete(self.rules.num_actions, self)
        bound = float(getattr(self.rules, "observation_bound", OBSERVATION_BOUND))
        self.observation_space = spaces.Box(
            -bound, bound, (self.rules.observation_size,), dtype=np.float32
        )
        self._state: Any = None
        self._player = TERMINAL  # current_player(state), kept with the state
        self._mask: np.ndarray | None = None  # the agent's mask at ``state`` (None: not built)
        self._seat = seat
        # The compiled episode (None: every step on the reference), and whether it stands at
        # ``state`` (a state set from outside, or a step taken on the reference, moves it off).
        if engine != "python":
            self._core = compiled_episode(self.rules, self.opponent, seat)
        self._in_step = False
        self.episode = 0
        self._score = 0.0  # the agent's score now
        self._paid = 0.0  # what the rewards so far add up to
        self._events: list[Event] = []

    def __getstate__(self) -> dict[str, Any]:
        """The env's fields for pickling and deep copies, without the compiled episode.

        The core's objects do not pickle: the state it holds is decoded, its generator written
        back into ``np_random``, and :meth:`__setstate__` builds a new episode, placed at that
        state at the next step. The original goes on as before.
        """
        fields = self.__dict__.copy()
        core = self._core
        if core is not None:
            core.release(self._np_random)
            if self._state is _IN_CORE:
                fields["_state"] = self.state
            fields["_core"] = True
        fields["_mask"] = None  # rebuilt from the state when asked
        fields["_in_step"] = False
        fields["_events"] = list(self._events)  # replayed now: the copy holds no core path
        return fields

    def __setstate__(self, fields: dict[str, Any]) -> None:
        """Restore a pickled or copied env (the compiled episode rebuilt where one ran)."""
        self.__dict__.update(fields)
        self._core = None
        if fields["_core"] is not None:
            compiled = compiled_game(self.rules)  # None where this process runs the reference
            if compiled is not None and compiled.game.observation_size:
                self._core = CompiledEpisode(self.rules, compiled, self._seat)
        if isinstance(self.action_space, LegalDiscrete):
            self.action_space._env = self

    # The mask is derived from ``legal_actions`` once per state and shared by
    # ``info["action_mask"]`` and ``action_masks()``; setting ``state`` or ``seat`` (as tests and
    # ``AlternateSeats`` do) drops it, so it can never describe another state.
    @property
    def state(self) -> Any:
        """The current game state (at the agent's decision, or terminal)."""
        if self._state is _IN_CORE:
            self._state = self._core.state()
        return self._state

    @state.setter
    def state(self, value: Any) -> None:
        self._state = value
        self._player = TERMINAL if value is None else self.rules.current_player(value)
        self._mask = None
        self._in_step = False

    @property
    def np_random(self) -> np.random.Generator:
        """The env's generator (where the core has been drawing, its state is written back)."""
        core = self._core
        if core is not None and core.holds_generator:
            core.release(self._np_random)
        return gym.Env.np_random.fget(self)

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        if self._core is not None:
            self._core.holds_generator = False
        gym.Env.np_random.fset(self, value)

    @property
    def engine(self) -> str:
        """``"core"`` where the compiled core plays this env's games, else ``"python"``."""
        core = self._core
        return "core" if core is not None and core.serves(self.opponent) else "python"

    @property
    def seat(self) -> int:
        """The agent's player (0 or 1)."""
        return self._seat

    @seat.setter
    def seat(self, value: int) -> None:
        value = _checked_seat(value)
        self._seat = value
        self._mask = None
        if self._core is not None:
            self._core.seat = value

    def _advance(
        self, state: Any, rng: np.random.Generator, events: list[Event], walk: Walk
    ) -> int:
        """Resolve chance and opponent moves until the agent decides or the game ends.

        Each opponent decision and the chance nodes after it go through ``walk``, the rules'
        :meth:`~psygym.core.RulesBase.decision_walk` (``apply_with_chance`` without its checks),
        a run of chance nodes alone through ``rules.sample_chance_run`` (the editions' fast walks
        draw the same numbers as sampling node by node); their events go to ``events``. Sets
        :attr:`state` (and the player to move with it) and returns that player. The caller
        passes what it holds already (``rng`` is ``np_random``): this runs at every step.
        """
        rules, seat, opponent = self.rules, self._seat, self.opponent
        current_player, chance_run = rules.current_player, rules.sample_chance_run
        # A uniform policy draws among ``legal_actions`` itself; any other is checked.
        trusted = getattr(opponent, "uniform", False)
        while True:
            player = current_player(state)
            if player == TERMINAL or player == seat:
                self._state, self._player, self._mask = state, player, None
                self._in_step = False  # the core's episode is not at this state
                return player
            if player == CHANCE:
                state = chance_run(state, rng, events)
                continue
            if trusted:
                action = sample_action(opponent, rules, state, player, rng)
            else:
                action = self._opponent_action(state, player, rng)
            state = walk(state, action, rng, events)

    def _opponent_action(self, state: Any, player: int, rng: np.random.Generator) -> int:
        """The opponent's move, drawn as :func:`~psygym.core.sample_action` draws it, if legal.

        Raises:
            IllegalActionError: the policy gave an empty distribution or drew an action that is
                not legal; the message names the policy and lists the legal actions.
        """
        rules = self.rules
        probs = self.opponent.action_probabilities(rules, state, player)
        if not probs:
            raise self._opponent_error(None, state, player)
        action = weighted_choice(list(probs), probs.values(), rng)  # one item: no draw
        if action not in rules.legal_actions(state):
            raise self._opponent_error(action, state, player)
        return int(action)

    def _opponent_error(self, action: Any, state: Any, player: int) -> IllegalActionError:
        """The error for an opponent's illegal move (``action=None``: it chose nothing)."""
        rules = self.rules
        legal = rules.legal_actions(state)
        labels = [str(rules.describe(state, a)) for a in legal]
        who = f"the opponent {_policy_label(self.opponent)} (player {player})"
        error = IllegalActionError(action, legal, labels, f"for {who} here")
        if action is None:
            shown = ", ".join(f"{a} ({lbl})" for a, lbl in zip(legal, labels))
            error.args = (f"{who} gave an empty action distribution; legal actions: {shown}",)
        return error

    def _info(self) -> dict[str, Any]:
        # The step's events list is new at every step and reset: no copy needed.
        return {"action_mask": self.action_masks(), "events": self._events, "score": self._score}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new game and advance it to the agent's first decision."""
        super().reset(seed=seed)
        if seed is not None:
            self.action_space.seed(seed)
        restart_policies([self.opponent])
        self.episode += 1
        if self._core is not None and self._core.serves(self.opponent):
            return self._core_reset(seed is not None)
        rules, rng = self.rules, self.np_random
        for _ in range(_MAX_RESETS):
            events = self._events = []
            walk = rules.decision_walk()
            if self._advance(rules.initial_state(), rng, events, walk) == self._seat:
                break
        else:
            raise RuntimeError(
                f"the agent in seat {self.seat} never gets a decision in this scenario"
            )
        self._score = self.rules.returns(self._state)[self._seat]
        self._paid = 0.0
        return self.rules.observe(self._state, self._seat), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Apply the agent's action, then resolve chance and the opponent's moves."""
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        action = integer_action(action)
        if self.action_space.last_sample is not None:
            action = self._stale_sample(action)
        # A legal action is known from the mask already built for this state; anything else
        # goes through the rules' own check, which raises IllegalActionError naming the legal set.
        mask = self._mask if self._mask is not None else self.action_masks()
        rules, seat = self.rules, self._seat
        legal = self._player == seat and 0 <= action < rules.num_actions and mask[action]
        core = self._core
        if (
            legal
            and core is not None
            and core.serves(self.opponent)
            and (self._in_step or core.place(self.state))
        ):
            return self._core_step(action)
        state, rng = self.state, self.np_random
        events: list[Event] = []
        walk = rules.decision_walk()  # one test of the rules' fast walk for the whole step
        if legal:
            state = walk(state, action, rng, events)
        else:
            state = rules.apply_with_chance(state, action, rng, events, check=True)
        self._events = events  # only now: a refused action leaves the last step's for render()
        player = self._advance(state, rng, events, walk)
        state = self._state
        score = rules.returns(state)[seat]
        # What happened before the agent's first decision is paid with its first reward, so the
        # rewards of an episode always add up to the final score.
        reward = score - self._paid
        self._paid = self._score = score
        obs = rules.observe(state, seat)
        return obs, float(reward), player == TERMINAL, False, self._info()

    def _core_reset(self, seeded: bool) -> tuple[np.ndarray, dict[str, Any]]:
        """:meth:`reset` in the core (the generator handed over where it has to be)."""
        core = self._core
        if seeded or not core.holds_generator:
            core.adopt(gym.Env.np_random.fget(self))
        obs, mask, player = core.reset()
        self._core_view(player, mask)
        self._score = core.score()
        self._paid = 0.0
        return obs, self._info()

    def _core_step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """:meth:`step` of a legal action in the core."""
        core = self._core
        if not core.holds_generator:
            core.adopt(gym.Env.np_random.fget(self))
        obs, score, player, mask = core.step(action)
        self._core_view(player, mask)
        reward = score - self._paid
        self._paid = self._score = score
        return obs, float(reward), player == TERMINAL, False, self._info()

    def _core_view(self, player: int, mask: np.ndarray) -> None:
        """The env's fields after a reset or step in the core (the state decoded when read)."""
        self._state, self._player, self._in_step = _IN_CORE, player, True
        if player == self._seat:
            mask.setflags(write=False)
            self._mask = mask
        else:
            self._mask = None  # all true once the game is over (action_masks)
        self._events = self._core.events()

    def _stale_sample(self, action: int) -> int:
        """Map an ``action_space.sample()`` drawn before the last reset to a legal action.

        The mapping is deterministic (the ``action``-th legal action, cyclically), so a seeded
        reset followed by the same stale sample gives the same step.
        """
        last = self.action_space.last_sample
        if last is None or last != (action, last[1]) or last[1] == self.episode:
            return action
        legal = np.flatnonzero(self.action_masks())
        return action if action in legal else int(legal[action % len(legal)])

    def action_masks(self) -> np.ndarray:
        """Legal actions of the agent as a bool mask (all true once the game is over).

        Built once per state from ``rules.legal_actions`` and shared with ``info["action_mask"]``,
        so it is read-only: copy it (``mask.copy()``) to change it. Each state gets its own array
        (Gymnasium's checkers warn when two steps return the same memory).
        """
        mask = self._mask
        if mask is None:
            if self._state is None or self._player != self._seat:
                mask = np.ones(self.rules.num_actions, dtype=bool)  # its own, once a game
            else:
                mask = self.rules.legal_mask(self.state)
            mask.setflags(write=False)
            self._mask = mask
        return mask

    def render(self) -> str | None:
        """Text of the state as the agent sees it, with the events of the last step."""
        if self.render_mode != "ansi" or self.state is None:
            return None
        lines = [self.rules.render(self.state, self.seat)]
        lines += [f"  * {e.text}" for e in self._events]
        return "\n".join(lines)
