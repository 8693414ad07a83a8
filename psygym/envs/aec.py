"""A PettingZoo AEC env over any edition's rules: two learning players, chance resolved inside.

# Psychic phase (AEC)

| Property | Value |
|---|---|
| Agents | ``player_0``, ``player_1`` (the scenario's two sides, in file order) |
| Action shape | ``Discrete(rules.num_actions)`` |
| Observation | ``Dict(observation=Box(rules.observation_size), action_mask=Box(0, 1, int8))`` |
| Import | ``from psygym.envs.aec import env; e = env("7th", "duel")`` |

## Description

The whole game of a scenario (or one phase for ``single-phase`` scenarios) between two agents.
After each decision the env resolves chance nodes (dice, cards) itself, drawing from
``rules.chance_outcomes`` with the generator seeded by ``reset(seed=...)``, until a player has a
decision or the game is over. Whose turn it is follows ``rules.current_player``: the phase
player's casting decisions, the other player's denies, both players' power generation, and so
on; turns do not strictly alternate. Rogue Trader's secret bids are asked one after the other;
each player's observation reveals only what ``rules.observe`` lets it see.

## Observation Space

``observation``: ``rules.observe(state, agent's player)`` (float32; layout in each edition's
``observe`` docstring). ``action_mask``: int8, 1 for each legal action of the agent on move,
derived from ``rules.legal_actions``; all zeros for the agent not on move and at the end.

## State

``env.state()`` (PettingZoo's global view, for centralized critics): both players'
observations side by side, float32 of length ``2 * rules.observation_size`` in
``env.state_space``. Where hands are hidden (2nd edition) it shows both hands, so never feed it
to one player's policy. The game's own state (``rules``' State object) is
``env.unwrapped.game_state``.

## Rewards

At each step every agent receives the change in its zero-sum score (``rules.returns``) caused by
that step and the chance events after it; an agent's total reward is its final score.

## Episode End

Both agents are terminated when the game is over. No truncation.

## Arguments

``env(edition="7th", scenario="default", render_mode=None, engine=None)``; ``raw_env`` has
the same arguments and skips PettingZoo's order-enforcing wrapper. An illegal action raises
``IllegalActionError`` naming the legal ones (the agent's pending reward and the last step's
events stay as they were); an action that is not an integer raises ``TypeError``.
``copy.deepcopy`` and ``pickle`` give an independent env at the same state and generator.

## Engine

Where the scenario has a compiled twin with an observation, the game is stepped in the C++ core
(:mod:`psygym.engine.position`) with the same draws from the same generator: the same
observations, masks, rewards, terminations and events (replayed on the reference when
``infos[agent]["events"]`` is read) as the reference. ``engine="python"`` (or
``PSYGYM_ENGINE=python``) keeps every step on the reference; ``env.engine`` says which runs.

## Version History

* v0: Initial version release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from psygym.core import CHANCE, TERMINAL, Event, RulesBase
from psygym.edition import default as default_edition
from psygym.editions import load
from psygym.engine.position import Position, core_rules
from psygym.envs.psychic import OBSERVATION_BOUND, check_render_mode, integer_action

_MAX_RESETS = 1000
AGENTS = ("player_0", "player_1")


class PsychicAECEnv(AECEnv):
    """The psychic phase of one edition as a two-agent AEC game (see the module docstring).

    Args:
        edition: edition id or alias (``psygym.edition.ids()``; None: the default edition).
        scenario: a shipped scenario name or a TOML path (``"default"``: the edition's).
        render_mode: ``"ansi"`` or None.
        rules: a ready ``Rules`` object (overrides ``edition``/``scenario``).
        engine: ``"python"`` keeps every step on the reference; ``None`` or ``"core"``: the
            compiled twin where the scenario has one (see the module docstring).
    """

    metadata = {"render_modes": ["ansi"], "name": "psygym_psychic_v0", "is_parallelizable": False}

    def __init__(
        self,
        edition: str | None = None,
        scenario: str = "default",
        render_mode: str | None = None,
        rules: RulesBase | None = None,
        engine: str | None = None,
    ):
        super().__init__()
        check_render_mode(render_mode)
        self.rules: RulesBase = (
            rules if rules is not None else load(edition or default_edition().id, scenario)
        )
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        n_obs, n_act = self.rules.observation_size, self.rules.num_actions
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(-np.inf, np.inf, (n_obs,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (n_act,), dtype=np.int8),
            })
            for a in self.possible_agents
        }  # fmt: skip
        self.action_spaces = {a: spaces.Discrete(n_act) for a in self.possible_agents}
        bound = float(getattr(self.rules, "observation_bound", OBSERVATION_BOUND))
        self.state_space = spaces.Box(-bound, bound, (2 * n_obs,), dtype=np.float32)
        self.np_random, _ = seeding.np_random(None)
        self._core = core_rules(self.rules, engine)
        self._pos: Position | None = None  # the game in the core (None: on the reference)
        self._state: Any = None
        self._legal_of: Any = object()  # the state _legal_cache describes
        self._legal_cache: tuple[int, np.ndarray | None] = (TERMINAL, None)
        self._scores = [0.0, 0.0]
        self._events: list[Event] = []

    @property
    def engine(self) -> str:
        """``"core"`` where the compiled core steps this env's games, else ``"python"``."""
        return "python" if self._core is None else "core"

    @property
    def game_state(self) -> Any:
        """The reference state of the game (decoded from the core's bytes when it holds it)."""
        return self._pos.state if self._pos is not None else self._state

    @game_state.setter
    def game_state(self, value: Any) -> None:
        # A state the twin cannot hold goes on in the reference until the next reset.
        core = self._core
        held = value is not None and core is not None and core.serves()
        self._pos = core.place(value) if held else None
        self._state = None if self._pos is not None else value

    # On this raw env ``state`` stays the game state, as callers set and read it; PettingZoo's
    # ``state()`` is the wrapped env's (:func:`env`), which calls :meth:`global_state`.
    state = game_state

    def global_state(self) -> np.ndarray:
        """Both players' observations side by side (PettingZoo's ``state()``, see the module).

        Raises:
            RuntimeError: before ``reset()``.
        """
        if self._pos is not None:
            observe, at = self._core.observe, self._pos
        elif self._state is not None:
            observe, at = self.rules.observe, self._state
        else:
            raise RuntimeError("call reset() before state()")
        return np.concatenate([observe(at, 0), observe(at, 1)]).astype(np.float32, copy=False)

    def __getstate__(self) -> dict[str, Any]:
        """The env's fields for pickling and deep copies: the game as its reference state.

        The core's objects do not pickle; :meth:`__setstate__` places the state in a new twin.
        """
        fields = self.__dict__.copy()
        fields["_state"] = self.game_state
        fields["_pos"] = None
        fields["_core"] = self._core is not None
        fields["_legal_of"], fields["_legal_cache"] = None, (TERMINAL, None)
        fields["_events"] = list(self._events)
        return fields

    def __setstate__(self, fields: dict[str, Any]) -> None:
        """Restore a pickled or copied env (in the core again where the original ran there)."""
        self.__dict__.update(fields)
        self._core = core_rules(self.rules) if fields["_core"] else None
        self._legal_of = object()
        self.game_state = fields["_state"]

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent`` (the same object every call)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent`` (the same object every call)."""
        return self.action_spaces[agent]

    def _advance(self, state: Any) -> Any:
        if self.rules.current_player(state) == CHANCE:
            state = self.rules.sample_chance_run(state, self.np_random, self._events)
        return state

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game (seeding the chance generator if ``seed`` is given)."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        core = self._core if self._core is not None and self._core.serves() else None
        for _ in range(_MAX_RESETS):
            if core is not None:
                start = core.initial_state()
                self._pos, path = core.walk(start, self.np_random)
                self._state, self._events = None, core.events(start, path)
                if core.current_player(self._pos) != TERMINAL:
                    break
                continue
            self._events = []
            self.state = self._advance(self.rules.initial_state())
            if not self.rules.is_terminal(self.state):
                break
        else:
            raise RuntimeError("no player ever gets a decision in this scenario")
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {"events": self._event_list()} for a in self.agents}
        self._scores = list(self._returns())
        self.agent_selection = AGENTS[self._legal()[0]]

    def player(self, agent: str) -> int:
        """The rules' player index of an agent name."""
        return AGENTS.index(agent)

    def _event_list(self) -> Any:
        """The last step's events for an info: a copy, or the core's lazy replay (immutable)."""
        return self._events if self._pos is not None else list(self._events)

    def _returns(self) -> tuple[float, float]:
        if self._pos is not None:
            return self._core.returns(self._pos)
        r0, r1 = self.rules.returns(self.state)
        return float(r0), float(r1)

    def _legal(self) -> tuple[int, np.ndarray | None]:
        """``(player to move, its int8 mask)`` at :attr:`state`, built once per state."""
        pos = self._pos
        state = pos if pos is not None else self._state
        if self._legal_of is not state:
            core = self._core
            if state is None:
                player = TERMINAL
            else:
                player = (core.current_player(pos) if pos is not None
                          else self.rules.current_player(state))  # fmt: skip
            mask = None
            if player >= 0:
                mask = np.zeros(self.rules.num_actions, dtype=np.int8)
                mask[core.legal_actions(pos) if pos is not None
                     else self.rules.legal_actions(state)] = 1  # fmt: skip
            self._legal_of, self._legal_cache = state, (player, mask)
        return self._legal_cache

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """What ``agent`` sees, with its action mask (zeros unless it is on move)."""
        p = self.player(agent)
        player, legal = self._legal()
        if player == p:
            mask = legal.copy()
        else:
            mask = np.zeros(self.rules.num_actions, dtype=np.int8)
        if self._pos is not None:
            return {"observation": self._core.observe(self._pos, p), "action_mask": mask}
        return {"observation": self.rules.observe(self.state, p), "action_mask": mask}

    def step(self, action: Any) -> None:
        """Apply the selected agent's action, then resolve chance until the next decision."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action = integer_action(action)
        player, legal = self._legal()
        # A legal action is known from the mask built for this state; anything else goes through
        # the rules' own check, which raises IllegalActionError naming the legal set (before
        # anything changes: the pending reward and the last step's events stay).
        known = legal is not None and 0 <= action < len(legal) and bool(legal[action])
        if self._pos is not None and not self._core.serves():
            self.state = self._pos.state  # a rules method was replaced: the reference goes on
        if self._pos is not None:
            core, start = self._core, self._pos
            self._pos, path = core.walk(core.apply(start, action, check=not known), self.np_random)
            self._events = core.events(start, [action, *path])
        else:
            events: list[Event] = []
            self.state = self.rules.apply_with_chance(
                self.state, action, self.np_random, events, check=not known
            )
            self._events = events
        self._cumulative_rewards[agent] = 0.0
        scores = list(self._returns())
        self.rewards = {a: scores[i] - self._scores[i] for i, a in enumerate(AGENTS)}
        self._scores = scores
        for a in self.agents:
            self.infos[a] = {"events": self._event_list()}
        player = self._legal()[0]
        if player == TERMINAL:
            self.terminations = {a: True for a in self.agents}
        else:
            self.agent_selection = AGENTS[player]
        self._accumulate_rewards()

    def render(self) -> str | None:
        """Text of the whole state with the events of the last step (``render_mode="ansi"``)."""
        if self.render_mode != "ansi" or self.state is None:
            return None
        lines = [self.rules.render(self.state, None)]
        lines += [f"  * {e.text}" for e in self._events]
        return "\n".join(lines)

    def close(self) -> None:
        """Nothing to release."""


def raw_env(
    edition: str | None = None,
    scenario: str = "default",
    render_mode: str | None = None,
    **kwargs: Any,
) -> PsychicAECEnv:
    """The AEC env without PettingZoo's wrappers."""
    return PsychicAECEnv(edition, scenario, render_mode=render_mode, **kwargs)


class PsychicOrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order-enforcing wrapper whose ``state()`` is the global state.

    ``state()`` returns :meth:`PsychicAECEnv.global_state` (after ``reset()``), as PettingZoo's
    ``state()`` and its converters (``aec_to_parallel``) expect.
    """

    def state(self) -> np.ndarray:
        """Both players' observations side by side (see :meth:`PsychicAECEnv.global_state`)."""
        if not self._has_reset:
            EnvLogger.error_state_before_reset()
        return self.env.unwrapped.global_state()


def env(
    edition: str | None = None,
    scenario: str = "default",
    render_mode: str | None = None,
    **kwargs: Any,
) -> AECEnv:
    """The AEC env wrapped in PettingZoo's order-enforcing wrapper (the usual entry point)."""
    return PsychicOrderEnforcingWrapper(raw_env(edition, scenario, render_mode, **kwargs))


__all__ = ["AGENTS", "PsychicAECEnv", "PsychicOrderEnforcingWrapper", "env", "raw_env"]
