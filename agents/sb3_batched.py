"""The batched env as a stable-baselines3 ``VecEnv``: SB3 and MaskablePPO train on N games in C++.

:class:`BatchedVecEnv` wraps :class:`psygym.engine.vector.CompiledVectorEnv` (N games of one
scenario against a uniformly random opponent, stepped in one call into the compiled core) in
SB3's ``VecEnv`` conventions, so ``MaskablePPO(policy, BatchedVecEnv(...))`` trains as it does on
a ``DummyVecEnv`` of :class:`~psygym.envs.psychic.PsychicPhaseEnv` (``psygym train`` picks it
by default where it plays the run, see :mod:`psygym_experiments.harness.training`):

- ``reset()`` returns the ``[N, obs]`` observations; ``step_wait()`` returns observations,
  ``float32`` rewards, ``dones`` and ``infos``, a list of one dict per game with
  ``TimeLimit.truncated`` (always ``False``: nothing is truncated) and, for a game that ended in
  that step (and was reset in it), its last observation in ``terminal_observation`` and
  ``episode`` (``r``, ``l``, ``t``: what SB3's ``Monitor`` writes, so the rollout's episode
  statistics are logged as on the per-game envs).
- Masks are the batch's own ``[N, num_actions]`` array: :meth:`BatchedVecEnv.action_masks`
  returns it, and ``env_method("action_masks")`` (what MaskablePPO's ``get_action_masks``
  calls) returns its rows, views without a copy.
- ``seed(s)`` seeds the next ``reset()`` as ``CompiledVectorEnv.reset(seed=s)`` does: game ``i``
  draws from child ``i`` of ``np.random.SeedSequence(s)`` (not ``s + i`` as ``DummyVecEnv``;
  the games' streams are independent either way).
- ``get_attr`` answers per game: ``seat`` (each game's learner), ``rules``, ``render_mode``
  (``None``), ``observation_space`` and ``action_space`` (one game's), ``action_masks`` (the
  method), and anything set by ``set_attr``; ``set_attr`` refuses those names (the batch fixes
  them when it is built). ``env_is_wrapped`` is ``False`` for every wrapper: no game is a
  Gymnasium env.

MaskablePPO's ``get_action_masks`` stacks those rows again (``np.stack``): a copy sb3-contrib
makes, negligible at 8 games and about the cost of one batch step at 256.

Measured (MaskablePPO, the project's hyperparameters: 8 envs, ``n_steps`` 128, 10 epochs, net
[64, 64]; 40,960 steps of ``model.learn`` built as ``psygym train`` builds it; a 2-core machine
shared with other jobs, so CPU time is the steadier figure), env steps per CPU second before
(per-game reference envs, ``--vec-env gym``) and after (this env):

- 7th duel: 903-950 before, 1,022-1,038 after (1.1x); with 64 envs and ``n_steps`` 16,
  927 and 1,105. ``psygym train --edition 7th --scenario duel --steps 40960 --eval-every 40960
  --eval-episodes 10``: 48.7 CPU s (121 s wall) before, 43.8 CPU s (111 s wall) after. The
  7th duel's 1,323 actions make the network the cost (backward pass and the masked
  categorical's ``logsumexp`` take most of it); the env was about a tenth.
- 8th duel (63 actions): 3,147-3,174 before, 4,389-4,643 after (1.4-1.5x); with 64 envs and
  ``n_steps`` 16, 3,685 and 6,254 (1.7x).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from psygym.engine.vector import CompiledVectorEnv

FIXED_ATTRIBUTES = ("seat", "rules", "render_mode", "observation_space", "action_space",
                    "action_masks")  # fmt: skip
"""Per-game attributes the batch answers itself (``set_attr`` refuses them)."""


def batched_refusal(rules: Any) -> str | None:
    """Why the batched env cannot play ``rules`` here (one line), or ``None`` when it can.

    It needs the compiled core (built, and not replaced by ``PSYGYM_ENGINE=python``) with a twin
    of the rules that has an observation.
    """
    from psygym.engine import compiled_game, core_module, requested_engine

    where = f"edition {rules.edition} scenario {rules.scenario.name!r}"
    if requested_engine() == "python":
        return f"PSYGYM_ENGINE=python plays {where} on the Python reference"
    if core_module() is None:
        return "the compiled core is not built here (pip install builds it with a C++17 compiler)"
    compiled = compiled_game(rules)
    if compiled is None:
        return f"{where} has no compiled twin"
    if compiled.game.observation_size == 0:
        return f"{where}: its compiled twin has no observation yet"
    return None


class BatchedVecEnv(VecEnv):
    """An SB3 ``VecEnv`` over a :class:`~psygym.engine.vector.CompiledVectorEnv` (see the module).

    Args:
        batch: the batched env; its ``num_envs`` games are this env's envs.
    """

    def __init__(self, batch: CompiledVectorEnv):
        if not isinstance(batch, CompiledVectorEnv):
            raise TypeError(f"BatchedVecEnv wraps a CompiledVectorEnv, not {type(batch).__name__}")
        self.batch = batch
        self._extra: list[dict[str, Any]] = [{} for _ in range(batch.num_envs)]
        super().__init__(batch.num_envs, batch.single_observation_space,
                         batch.single_action_space)  # fmt: skip
        self._seed: int | None = None
        self._actions: np.ndarray | None = None
        self._returns = np.zeros(self.num_envs)
        self._lengths = np.zeros(self.num_envs, dtype=np.int64)
        self._start = time.time()

    @classmethod
    def build(cls, num_envs: int, rules: Any, seat: int | Sequence[int] = 0) -> BatchedVecEnv:
        """``num_envs`` games of ``rules`` with the learner in ``seat`` (one, or one per game).

        Raises:
            ValueError: no compiled twin with an observation for ``rules`` here, or a bad
                argument (one line, from :class:`~psygym.engine.vector.CompiledVectorEnv`).
        """
        return cls(CompiledVectorEnv(num_envs, rules=rules, seat=seat))

    # -- stepping
    def reset(self) -> VecEnvObs:
        """Start every game (from the streams of the last :meth:`seed`, used once)."""
        obs, _ = self.batch.reset(seed=self._seed)
        self._seed = None
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._returns[:] = 0.0
        self._lengths[:] = 0
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Keep ``actions`` (``[N]`` legal actions) for :meth:`step_wait`."""
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        """Step every game; ended games are reset in the same step (see the module)."""
        if self._actions is None:
            raise RuntimeError("call step_async(actions) before step_wait()")
        actions, self._actions = self._actions, None
        obs, rewards, terminated, truncated, info = self.batch.step(actions)
        dones = terminated | truncated
        self._returns += rewards
        self._lengths += 1
        infos: list[dict[str, Any]] = [{"TimeLimit.truncated": False} for _ in range(self.num_envs)]
        if "final_obs" in info:
            final, now = info["final_obs"], round(time.time() - self._start, 6)
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = final[i]
                infos[i]["episode"] = {"r": round(float(self._returns[i]), 6),
                                       "l": int(self._lengths[i]), "t": now}  # fmt: skip
            self._returns[dones] = 0.0
            self._lengths[dones] = 0
        return obs, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions now, ``[N, num_actions]`` bool: the batch's own array."""
        return self.batch.action_masks()

    def close(self) -> None:
        """Close the batch."""
        self.batch.close()

    # -- seeding and options
    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next :meth:`reset` (``None``: a fresh random seed); one seed per game.

        Game ``i`` then draws from child ``i`` of ``np.random.SeedSequence(seed)``.
        """
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
        self._seed = int(seed)
        return [self._seed] * self.num_envs

    def set_options(self, options: list[dict] | dict | None = None) -> None:
        """Reset options: the games take none.

        Raises:
            ValueError: non-empty options.
        """
        given = [options] if isinstance(options, dict) else list(options or [])
        if any(given):
            raise ValueError("the batched env's games take no reset options")

    # -- per-game access
    def _indices(self, indices: VecEnvIndices) -> list[int]:
        out = list(self._get_indices(indices))
        bad = [i for i in out if not (isinstance(i, int | np.integer) and 0 <= i < self.num_envs)]
        if bad:
            raise IndexError(f"no game {bad[0]!r} in a batch of {self.num_envs}")
        return [int(i) for i in out]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """Each game's ``attr_name`` (the names the module lists, or one set by :meth:`set_attr`).

        Raises:
            AttributeError: a name the games do not have.
        """
        games = self._indices(indices)
        fixed = {
            "rules": self.batch.rules, "render_mode": None,
            "observation_space": self.batch.single_observation_space,
            "action_space": self.batch.single_action_space, "action_masks": self.action_masks,
        }  # fmt: skip
        if attr_name == "seat":
            return [self.batch.seats[i] for i in games]
        if attr_name in fixed:
            return [fixed[attr_name]] * len(games)
        missing = [i for i in games if attr_name not in self._extra[i]]
        if missing:
            raise AttributeError(
                f"game {missing[0]} of the batched env has no attribute {attr_name!r} (it has: "
                f"{', '.join(FIXED_ATTRIBUTES)}, and what set_attr gave it)"
            )
        return [self._extra[i][attr_name] for i in games]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Give the games an attribute (kept for :meth:`get_attr`; the games do not read it).

        Raises:
            AttributeError: one of :data:`FIXED_ATTRIBUTES`, fixed when the batch is built.
        """
        if attr_name in FIXED_ATTRIBUTES:
            raise AttributeError(
                f"{attr_name!r} of the batched env's games is fixed when the batch is built: "
                "build another BatchedVecEnv"
            )
        for i in self._indices(indices):
            self._extra[i][attr_name] = value

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:  # fmt: skip
        """Each game's ``method_name(...)``: ``action_masks`` only (rows of the batch's masks).

        Raises:
            AttributeError: another method.
            TypeError: arguments given to ``action_masks``.
        """
        if method_name != "action_masks":
            raise AttributeError(
                f"the batched env's games have no method {method_name!r} (they have: action_masks)"
            )
        if method_args or method_kwargs:
            raise TypeError("action_masks() takes no arguments")
        masks = self.batch.action_masks()
        return list(masks) if indices is None else [masks[i] for i in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """``False`` for every game: no game is a Gymnasium env with wrappers."""
        return [False] * len(self._indices(indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        """No images: the games do not render."""
        return [None] * self.num_envs


__all__ = ["FIXED_ATTRIBUTES", "BatchedVecEnv", "batched_refusal"]
