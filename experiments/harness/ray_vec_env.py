"""The training envs of an RL run on a Ray cluster (``psygym train --ray``).

An exploiter (``train --opponent search``, say) spends nearly all its time inside its envs, where
the opponent thinks; :class:`RayVecEnv` runs each env in a Ray actor of one CPU on the cluster
instead of this machine's processes. It is a stable-baselines3 ``VecEnv`` with the semantics of
``SubprocVecEnv`` (and of ``DummyVecEnv``, whose arrays it returns, so that a seed trains the
same model on either backend): ``step_async`` sends every env its action, ``step_wait`` gathers
the results (an env whose episode ended is reset there, its last observation in the info's
``terminal_observation``), ``reset`` uses the seeds and options set by ``seed`` and
``set_options`` once, and ``get_attr``, ``set_attr``, ``env_method`` (MaskablePPO's
``action_masks``), ``has_attr`` and ``env_is_wrapped`` reach the envs themselves. Each actor
builds its env from the same factory as the local envs
(:func:`psygym_experiments.harness.training.make_vec_env`), from the driver's folder where that
folder exists on its node (as :mod:`.pools` runs its tasks).

An env lives mid-episode in its actor, so an actor lost with its node (or its process) cannot be
retried the way a pool task is: :class:`EnvWorkerLost` ends the run, and ``train --resume``
continues it from its last checkpoint.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from psygym_experiments.harness.pools import RayPool, _call
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

START_SECONDS = 300.0
"""Longest wait for every env's actor to start (a node starts a worker process and imports the
project for each)."""
CLOSE_SECONDS = 10.0
"""Longest wait for the envs to close before their actors are killed."""


class EnvWorkerLost(RuntimeError):
    """An env's Ray actor died (its node or process was lost): the run cannot go on."""


def check_cluster_fits(n_envs: int, pool: RayPool) -> None:
    """Refuse more envs than the cluster of ``pool`` has CPUs (each env's actor takes one).

    Raises:
        ValueError: too many envs (one line).
    """
    if n_envs > pool.workers:
        raise ValueError(
            f"--n-envs {n_envs} needs {n_envs} CPUs of the Ray cluster at {pool.address} (one "
            f"an env); it has {pool.workers}: lower --n-envs or add nodes"
        )


class _EnvHost:
    """A Ray actor's body: one env, driven by :class:`RayVecEnv` as a ``SubprocVecEnv`` worker.

    Args:
        cwd: the driver's folder (entered when it exists on this node).
        make: the env factory.
    """

    def __init__(self, cwd: str, make: Callable[[], Any]):
        from stable_baselines3.common.vec_env.patch_gym import _patch_env

        ok, value = _call(cwd, make, ())
        self.env = _patch_env(value) if ok else None
        self.error = None if ok else value  # raised by the first call, as the env's own error

    def call(self, method: str, *args: Any) -> tuple[bool, Any]:
        """The actor's one entry: ``method(*args)`` of this host; ``(ok, result or error)``.

        An error is returned, not raised, so the driver raises the env's own exception (one line)
        rather than Ray's wrapper of the actor's traceback; one that cannot be pickled is
        returned as a :class:`RuntimeError` naming it.
        """
        import pickle

        try:
            return True, getattr(self, method)(*args)
        except Exception as exc:  # handed to the driver, which raises it
            try:
                pickle.loads(pickle.dumps(exc))
            except Exception:
                exc = RuntimeError(f"{type(exc).__name__}: {exc}")
            return False, exc

    def spaces(self) -> tuple[Any, Any]:
        """The env's observation and action spaces (the first call: raises a failed build)."""
        if self.error is not None:
            raise self.error
        return self.env.observation_space, self.env.action_space

    def step(self, action: Any) -> tuple[Any, float, bool, dict, dict]:
        """One step; an ended episode is reset here (as in ``SubprocVecEnv``)."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        done = terminated or truncated
        info["TimeLimit.truncated"] = truncated and not terminated
        reset_info: dict = {}
        if done:
            info["terminal_observation"] = observation
            observation, reset_info = self.env.reset()
        return observation, reward, done, info, reset_info

    def reset(self, seed: int | None, options: dict | None) -> tuple[Any, dict]:
        """Start an episode (``seed`` and ``options`` as the vec env set them)."""
        return self.env.reset(seed=seed, **({"options": options} if options else {}))

    def env_method(self, name: str, args: tuple, kwargs: dict) -> Any:
        """Call the env's (or a wrapper's) method ``name``."""
        return self.env.get_wrapper_attr(name)(*args, **kwargs)

    def get_attr(self, name: str) -> Any:
        """The env's (or a wrapper's) attribute ``name``."""
        return self.env.get_wrapper_attr(name)

    def has_attr(self, name: str) -> bool:
        """Whether the env or a wrapper has ``name``."""
        try:
            self.env.get_wrapper_attr(name)
        except AttributeError:
            return False
        return True

    def set_attr(self, name: str, value: Any) -> None:
        """Set ``name`` on the outer wrapper (as ``SubprocVecEnv`` does)."""
        setattr(self.env, name, value)

    def is_wrapped(self, wrapper: type) -> bool:
        """Whether the env is wrapped in ``wrapper``."""
        from stable_baselines3.common.env_util import is_wrapped

        return is_wrapped(self.env, wrapper)

    def render(self) -> Any:
        """The env's rendering."""
        return self.env.render()

    def close(self) -> None:
        """Close the env."""
        if self.env is not None:
            self.env.close()


class RayVecEnv(VecEnv):
    """Vectorised envs, each in a Ray actor of one CPU on a running cluster.

    Args:
        env_fns: the env factories (importable on every node, or closures over such code).
        address: ``auto`` or the head's ``host:port`` (as ``--ray``).

    Raises:
        ValueError: no cluster there, Ray missing, more envs than the cluster has CPUs, or the
            actors did not start within :data:`START_SECONDS` (one line each).
    """

    def __init__(self, env_fns: Sequence[Callable[[], Any]], address: str):
        import ray

        self._pool = RayPool(address)  # joins the cluster (and leaves it on close)
        self.address, self.closed, self.waiting = address, False, False
        self._actors: list[Any] = []
        self._refs: list[Any] = []
        try:
            n, cpus = len(env_fns), self._pool.workers
            check_cluster_fits(n, self._pool)
            host = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(_EnvHost)
            cwd = os.getcwd()
            self._actors = [host.remote(cwd, make) for make in env_fns]
            refs = [a.call.remote("spaces") for a in self._actors]
            ready, _ = ray.wait(refs, num_returns=n, timeout=START_SECONDS)
            if len(ready) < n:
                raise ValueError(
                    f"--ray {address}: {len(ready)} of {n} envs started within "
                    f"{START_SECONDS:.0f} s (each takes a free CPU of the cluster, which has "
                    f"{cpus}): free some, or lower --n-envs"
                )
            observation_space, action_space = self._get(refs[:1])[0]
            self._get(refs[1:])
            super().__init__(n, observation_space, action_space)
        except BaseException:
            self.close()
            raise

    # -- the calls to the actors
    def _get(self, refs: Sequence[Any], indices: Sequence[int] | None = None) -> list[Any]:
        """The results of one call per env, in order (every call awaited, then the first error).

        Raises:
            EnvWorkerLost: an env's actor died (its node or process lost).
            Exception: an env's own error, as it raised it.
        """
        import ray
        from ray.exceptions import ObjectLostError, RayActorError

        out, error = [], None
        for i, ref in zip(indices if indices is not None else range(len(refs)), refs):
            try:
                ok, value = ray.get(ref)
            except (RayActorError, ObjectLostError) as exc:
                ok, value = False, EnvWorkerLost(
                    f"env {i} on the Ray cluster at {self.address} was lost with its worker or "
                    f"node ({type(exc).__name__})"
                )  # fmt: skip
            out.append(value)
            if not ok and error is None:
                error = value
        if error is not None:
            self.waiting = False
            raise error
        return out

    def _each(self, indices: VecEnvIndices, method: str, *args: Any) -> list[Any]:
        """``method(*args)`` on the actors of ``indices``, all sent before any is awaited."""
        chosen = list(self._get_indices(indices))
        refs = [self._actors[i].call.remote(method, *args) for i in chosen]
        return self._get(refs, chosen)

    # -- VecEnv
    def step_async(self, actions: np.ndarray) -> None:
        """Send every env its action."""
        self._refs = [a.call.remote("step", act) for a, act in zip(self._actors, actions)]
        self.waiting = True

    def step_wait(self) -> VecEnvStepReturn:
        """Gather the steps sent by :meth:`step_async` (arrays of ``DummyVecEnv``'s types)."""
        results = self._get(self._refs)
        self._refs, self.waiting = [], False
        obs, rewards, dones, infos, self.reset_infos = (list(x) for x in zip(*results))
        return (
            self._stack(obs), np.array(rewards, dtype=np.float32), np.array(dones, dtype=bool),
            infos,
        )  # fmt: skip

    def reset(self) -> VecEnvObs:
        """Start every env's episode with the seeds and options set since the last reset."""
        refs = [a.call.remote("reset", self._seeds[i], self._options[i])
                for i, a in enumerate(self._actors)]  # fmt: skip
        obs, self.reset_infos = (list(x) for x in zip(*self._get(refs)))
        self._reset_seeds()
        self._reset_options()
        return self._stack(obs)

    def _stack(self, obs: list[Any]) -> VecEnvObs:
        """The envs' observations stacked, in the dtypes of the space (as ``DummyVecEnv``)."""
        from gymnasium import spaces

        space = self.observation_space
        if isinstance(space, spaces.Dict):
            return {k: np.stack([o[k] for o in obs]).astype(s.dtype, copy=False)
                    for k, s in space.spaces.items()}  # fmt: skip
        if isinstance(space, spaces.Tuple):
            return tuple(np.stack([o[i] for o in obs]).astype(s.dtype, copy=False)
                         for i, s in enumerate(space.spaces))  # fmt: skip
        return np.stack(obs).astype(space.dtype, copy=False)

    def close(self) -> None:
        """Close the envs, end their actors and leave the cluster if joined here (idempotent)."""
        if self.closed:
            return
        self.closed = True
        import ray

        try:
            if ray.is_initialized() and self._actors:
                ray.wait([a.call.remote("close") for a in self._actors],
                         num_returns=len(self._actors), timeout=CLOSE_SECONDS)  # fmt: skip
                for actor in self._actors:
                    ray.kill(actor)
        finally:
            self._actors, self._refs = [], []
            self._pool.shutdown(cancel_futures=True)

    def get_images(self) -> Sequence[np.ndarray | None]:
        """Each env's picture (``rgb_array`` render mode only)."""
        if self.render_mode != "rgb_array":
            return [None] * self.num_envs
        return self._each(None, "render")

    def has_attr(self, attr_name: str) -> bool:
        """Whether every env has ``attr_name``."""
        return all(self._each(None, "has_attr", attr_name))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute ``attr_name`` of the envs of ``indices``."""
        return self._each(indices, "get_attr", attr_name)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set ``attr_name`` on the envs of ``indices``."""
        self._each(indices, "set_attr", attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:  # fmt: skip
        """Call ``method_name`` on the envs of ``indices`` (e.g. ``action_masks``)."""
        return self._each(indices, "env_method", method_name, method_args, method_kwargs)

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """Whether the envs of ``indices`` are wrapped in ``wrapper_class``."""
        return self._each(indices, "is_wrapped", wrapper_class)


__all__ = ["CLOSE_SECONDS", "START_SECONDS", "EnvWorkerLost", "RayVecEnv", "check_cluster_fits"]
