"""The one generic Gymnasium env that drives every edition's rules against an opponent policy."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from psygym.core import CHANCE, TERMINAL, Event, RulesBase, sample_action
from psygym.editions import load
from psygym.policies import resolve_policy

_MAX_RESETS = 1000


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
    ``rules.legal_actions``. An illegal action raises ``IllegalActionError`` naming the legal ones.

    ## Observation Space

    ``Box(-inf, inf, (rules.observation_size,), float32)``: ``rules.observe(state, seat)``, what the
    agent may see. Its layout is documented in each edition's ``observe`` docstring (which kind of
    decision is asked, battle round, pools or cards or psi-points, every unit's wounds and
    psyker status, the pending casting roll when deciding a deny, ...). In editions with hidden
    information (2nd) the opponent's hand and the deck order are never part of it.

    ## Rewards

    The change in the agent's zero-sum score at each step: value of wounds and effects it
    inflicted minus what it suffered (``rules.returns``). The episode return is the agent's score.

    ## Starting State

    ``rules.initial_state()`` advanced by chance and opponent moves to the agent's first decision.
    Games in which the agent never gets a decision are skipped at reset.

    ## Episode End

    Termination: the game is over (last battle round played, or a side has no units left).
    Truncation: none here; use ``max_episode_steps`` in ``gym.make`` if wanted.

    ## Information

    ``info["action_mask"]`` (bool array), ``info["events"]`` (what happened since the last step,
    as ``Event`` records) and ``info["score"]`` (the agent's score so far).

    ## Arguments

    ```python
    import gymnasium as gym, psygym
    env = gym.make("psygym/Seventh-v0", scenario="duel", opponent="double-wc", seat=0)
    ```

    * ``edition``: set by the registered id (``Seventh-v0``: ``"7th"`` and so on).
    * ``scenario``: a shipped scenario name or a path to a TOML file (default: the edition's).
    * ``opponent``: a ``Policy`` object or a name/path resolved through the ``psygym.agents``
      entry points (``"random"``, ``"double-wc"``, ``"optimal"``, ``"runs/.../model.zip"``).
    * ``seat``: 0 or 1, the agent's player.
    * ``render_mode``: ``"ansi"`` or ``None``.
    * ``rules``: a ready ``Rules`` object (overrides ``edition``/``scenario``).

    ## Version History

    * v0: Initial version release.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        edition: str = "7th",
        scenario: str = "default",
        opponent: Any = "random",
        seat: int = 0,
        render_mode: str | None = None,
        rules: RulesBase | None = None,
    ):
        if seat not in (0, 1):
            raise ValueError(f"seat must be 0 or 1, not {seat!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be 'ansi' or None, not {render_mode!r}")
        self.rules: RulesBase = rules if rules is not None else load(edition, scenario)
        self.opponent = resolve_policy(opponent, self.rules)
        self.seat = seat
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(self.rules.num_actions)
        self.observation_space = spaces.Box(
            -np.inf, np.inf, (self.rules.observation_size,), dtype=np.float32
        )
        self.state: Any = None
        self._score = 0.0
        self._events: list[Event] = []

    def _advance(self, state: Any) -> Any:
        """Resolve chance and opponent moves until the agent decides or the game ends."""
        rules, rng = self.rules, self.np_random
        while True:
            player = rules.current_player(state)
            if player == TERMINAL or player == self.seat:
                return state
            if player == CHANCE:
                action = rules.sample_chance(state, rng)
            else:
                action = sample_action(self.opponent, rules, state, player, rng)
            state, events = rules.apply_with_events(state, action, check=False)
            self._events.extend(events)

    def _info(self) -> dict[str, Any]:
        return {
            "action_mask": self.action_masks(),
            "events": list(self._events),
            "score": self._score,
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new game and advance it to the agent's first decision."""
        super().reset(seed=seed)
        reset_opponent = getattr(self.opponent, "reset", None)
        if callable(reset_opponent):
            reset_opponent()
        for _ in range(_MAX_RESETS):
            self._events = []
            self.state = self._advance(self.rules.initial_state())
            if self.rules.current_player(self.state) == self.seat:
                break
        else:
            raise RuntimeError(
                f"the agent in seat {self.seat} never gets a decision in this scenario"
            )
        self._score = self.rules.returns(self.state)[self.seat]
        return self.rules.observe(self.state, self.seat), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Apply the agent's action, then resolve chance and the opponent's moves."""
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        self._events = []
        state, events = self.rules.apply_with_events(self.state, int(action))
        self._events.extend(events)
        self.state = self._advance(state)
        score = self.rules.returns(self.state)[self.seat]
        reward, self._score = score - self._score, score
        terminated = self.rules.is_terminal(self.state)
        obs = self.rules.observe(self.state, self.seat)
        return obs, float(reward), terminated, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Legal actions of the agent as a bool mask (all true once the game is over)."""
        if self.state is None or self.rules.current_player(self.state) != self.seat:
            return np.ones(self.rules.num_actions, dtype=bool)
        return self.rules.legal_mask(self.state)

    def render(self) -> str | None:
        """Text of the state as the agent sees it, with the events of the last step."""
        if self.render_mode != "ansi" or self.state is None:
            return None
        lines = [self.rules.render(self.state, self.seat)]
        lines += [f"  * {e.text}" for e in self._events]
        return "\n".join(lines)
