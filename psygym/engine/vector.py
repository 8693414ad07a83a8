"""The batched env: N games of one scenario stepped in one call into the compiled core.

:class:`CompiledVectorEnv` is a :class:`gymnasium.vector.VectorEnv` over the core's
``BatchEnv``: each game is :class:`~psygym.envs.psychic.PsychicPhaseEnv` with
``opponent="random"`` in its seat, played in C++ with the same draws, so a game whose generator
starts where an env's ``np_random`` starts reaches the same observations, rewards, terminations
and masks (``tests/test_engine_vector.py`` holds them step by step against the reference envs).

Seeding: ``reset(seed=s)`` spawns one stream per game with ``np.random.SeedSequence(s).spawn(N)``
and game ``i`` draws from ``np.random.Generator(np.random.PCG64(child_i))``, as the reference env
``i`` would with ``env.np_random`` set to that generator. The core never seeds itself.

Autoreset is Gymnasium's same-step mode (``metadata["autoreset_mode"]``): a game that ends in a
step is reset in that step, its generator running on, as calling the reference env's ``reset()``
(without a seed) after its last step does. That step returns the ended game's reward and
``terminated``, and the new game's first observation and mask; the ended game's last
observation is in ``infos["final_obs"]`` (an object array, ``None`` for the games that go on,
with the bool array ``infos["_final_obs"]``), as Gymnasium's own vector envs give it. Nothing is
ever truncated. ``infos["action_mask"]`` is one ``[N, num_actions]`` bool array, also returned
by :meth:`CompiledVectorEnv.action_masks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from psygym.engine import compiled_game
from psygym.engine.compiled import core_generator

OPPONENTS = ("random",)
"""Opponents the batch plays in C++ (the reference env's ``opponent`` names)."""


def spawn_generators(seed: int | None, n: int) -> list[np.random.Generator]:
    """The ``n`` generators of a batch seeded with ``seed`` (``None``: fresh entropy).

    Game ``i`` gets ``np.random.Generator(np.random.PCG64(child_i))`` of
    ``np.random.SeedSequence(seed).spawn(n)``: what a reference env needs as ``np_random`` to
    draw what game ``i`` of the batch draws.
    """
    children = np.random.SeedSequence(seed).spawn(n)
    return [np.random.Generator(np.random.PCG64(child)) for child in children]


def sampler_generator(seed: int | None, n: int) -> np.random.Generator:
    """The generator of :meth:`CompiledVectorEnv.sample_legal` in a batch of ``n`` games.

    The child after the games' own: ``SeedSequence(seed).spawn(n + 1)[n]``, so seeding it
    leaves every game's stream as :func:`spawn_generators` makes it.
    """
    child = np.random.SeedSequence(seed).spawn(n + 1)[n]
    return np.random.Generator(np.random.PCG64(child))


class CompiledVectorEnv(VectorEnv):
    """``num_envs`` psychic-phase games against a uniformly random opponent, stepped in C++.

    Args:
        num_envs: games in the batch (N).
        edition: edition id or alias (default: the default edition), unless ``rules`` is given.
        scenario: a shipped scenario name or a TOML path.
        seat: the learner's player, 0 or 1, for every game, or one seat per game.
        opponent: ``"random"`` (the only opponent the batch plays in C++).
        rules: a ready rules object (overrides ``edition`` and ``scenario``).

    Raises:
        ValueError: a bad argument, or a scenario without a compiled twin with an observation
            (``PSYGYM_ENGINE=python``, no core built, an edition without a twin): in one line
            saying what to use instead.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        num_envs: int,
        edition: str | None = None,
        scenario: str = "default",
        seat: int | Sequence[int] = 0,
        opponent: str = "random",
        rules: Any = None,
    ):
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs must be a whole number of at least 1, not {num_envs!r}")
        if opponent not in OPPONENTS:
            raise ValueError(f"opponent {opponent!r}: the batched env plays "
                             f"{', '.join(OPPONENTS)} only")  # fmt: skip
        seats = [seat] * num_envs if isinstance(seat, int) else list(seat)
        if len(seats) != num_envs or any(s not in (0, 1) or isinstance(s, bool) for s in seats):
            raise ValueError(f"seat must be 0 or 1, or {num_envs} of them, not {seat!r}")
        if rules is None:
            from psygym.edition import default
            from psygym.editions import load

            rules = load(edition or default().id, scenario)
        compiled = compiled_game(rules)
        where = f"edition {rules.edition} scenario {rules.scenario.name!r}"
        if compiled is None:
            raise ValueError(f"{where} has no compiled twin here (PSYGYM_ENGINE=python, no core "
                             "built, or no twin for it): use gymnasium.vector.SyncVectorEnv "
                             "over PsychicPhaseEnv")  # fmt: skip
        if compiled.game.observation_size == 0:
            raise ValueError(f"{where}: its compiled twin has no observation yet: use "
                             "gymnasium.vector.SyncVectorEnv over PsychicPhaseEnv")  # fmt: skip
        self.rules = rules
        self.num_envs = num_envs
        self.seats = tuple(seats)
        self._core = compiled.core
        self._batch = compiled.core.BatchEnv(
            compiled.game, rules.num_actions, seats,
            [core_generator(compiled.core, g) for g in spawn_generators(None, num_envs)],
        )  # fmt: skip
        bound = float(getattr(rules, "observation_bound", 1000.0))
        self.single_observation_space = spaces.Box(
            -bound, bound, (compiled.game.observation_size,), dtype=np.float32
        )
        self.single_action_space = spaces.Discrete(rules.num_actions)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._masks: np.ndarray | None = None
        self._batch.set_sampler(core_generator(compiled.core, sampler_generator(None, num_envs)))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start every game; with ``seed``, each from its spawned stream (see the module).

        Without a seed, a first reset draws fresh entropy and a later one lets every game's
        generator run on.
        """
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise ValueError(f"seed must be a whole number or None, not {seed!r}")
        super().reset(seed=seed)
        if seed is not None:
            generators = spawn_generators(seed, self.num_envs)
            self._batch.set_generators([core_generator(self._core, g) for g in generators])
            self._batch.set_sampler(
                core_generator(self._core, sampler_generator(seed, self.num_envs)))
        obs, masks = self._batch.reset()
        self._masks = masks
        return obs, {"action_mask": masks}

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every game with its action (``[N]`` legal actions, else one ``ValueError``)."""
        obs, rewards, terminated, truncated, masks, final = self._batch.step(np.asarray(actions))
        self._masks = masks
        infos: dict[str, Any] = {"action_mask": masks}
        if len(final):  # the games that ended (nothing is truncated): their rows only
            final_obs = np.empty(self.num_envs, dtype=object)  # None where a game goes on
            for i, row in zip(np.flatnonzero(terminated).tolist(), final):
                final_obs[i] = row
            infos["final_obs"] = final_obs
            infos["_final_obs"] = terminated.copy()
        return obs, rewards, terminated, truncated, infos

    def sample_legal(self) -> np.ndarray:
        """A uniformly random legal action of every game, ``[N]`` int64.

        The batch's counterpart of ``action_space.sample(mask=...)``, drawn in the core from the
        env's own sampler generator (:func:`sampler_generator`, seeded by ``reset(seed=)``; the
        games' generators are not touched): game ``i``'s action is
        ``psygym.kernel.uniform_choice`` over its legal actions, games in order.

        Raises:
            ValueError: before the first :meth:`reset`.
        """
        return self._batch.sample_legal()

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions now, ``[N, num_actions]`` bool (the sb3 convention).

        Raises:
            RuntimeError: before the first :meth:`reset`.
        """
        if self._masks is None:
            raise RuntimeError("call reset() before action_masks()")
        return self._masks


__all__ = ["OPPONENTS", "CompiledVectorEnv", "sampler_generator", "spawn_generators"]
