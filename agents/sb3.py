"""Stable-baselines3 models as psygym policies: the adapter, the loader and the shipped models.

``SB3Policy(model, rules)`` turns a trained MaskablePPO, PPO or DQN model into a
:class:`~psygym.core.Policy`. It observes exactly what the env shows the agent,
``rules.observe(state, player)``, and only ever gives probability to legal actions: the policy's
logits (or DQN's Q-values) are restricted to ``rules.legal_actions(state)`` before the softmax or
the argmax. So a model trained in either seat can play any seat of the same edition and scenario
(observations are written from the observing player's point of view).

``make_sb3(rules, path)`` is the ``sb3`` agent of the registry: ``"sb3:runs/.../model.zip"``, a
bare ``"runs/.../model.zip"`` or ``"sb3"`` alone (the shipped pretrained model of the rules'
edition and scenario, see :func:`pretrained_path`).

Security: SB3 model files are zip archives whose ``data`` entry may hold cloudpickled Python
objects (the policy class, spaces, schedules); unpickling an untrusted file can run arbitrary
code. Only load models from sources you trust. The loader here replaces every pickled entry it
knows (policy class, spaces, schedules, buffer classes) with objects built locally, so files
written by ``psygym train`` load without unpickling anything (weights are read with
``torch.load(weights_only=True)`` by SB3); a file with other pickled entries falls back to SB3's
ordinary loader, with a warning. Our own metadata (``model.json`` beside the model) is JSON.
"""

from __future__ import annotations

import json
import os
import warnings
import zipfile
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import numpy as np

ALGO_NAMES = ("maskable-ppo", "ppo", "dqn")
"""Algorithms ``psygym train`` knows, by their CLI names."""

PRETRAINED_DIR = Path(__file__).parent / "pretrained"
"""Folder of the small MaskablePPO models shipped with the package."""

_CACHE_LIMIT = 200_000


def algo_class(algo: str) -> Any:
    """The SB3 class of an algorithm name (``maskable-ppo``, ``ppo``, ``dqn``).

    Raises:
        ValueError: unknown name; the message lists the known ones.
    """
    if algo == "maskable-ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    if algo == "ppo":
        from stable_baselines3 import PPO

        return PPO
    if algo == "dqn":
        from stable_baselines3 import DQN

        return DQN
    raise ValueError(f"unknown algorithm {algo!r}; known: {', '.join(ALGO_NAMES)}")


def algo_name(model: Any) -> str:
    """CLI name of a loaded model's algorithm."""
    cls = type(model).__name__
    return {"MaskablePPO": "maskable-ppo", "PPO": "ppo", "DQN": "dqn"}.get(cls, cls.lower())


class SB3Policy:
    """A trained SB3 model (MaskablePPO, PPO or DQN) as a :class:`~psygym.core.Policy`.

    The model sees ``rules.observe(state, player)``. Probabilities are a softmax of the policy's
    logits over the legal actions only (illegal actions get probability 0); with
    ``deterministic=True`` the most probable legal action gets probability 1 (ties: the lowest
    action). DQN models always play the legal action with the highest Q-value.

    Only the torch network (``model.policy``) is kept, so the adapter pickles cheaply (self-play
    sends it to subprocess envs) and a frozen copy can be made with ``copy.deepcopy``.
    Answers are memoised per (state, player) because states are hashable; build a new adapter
    when the weights change.

    Security: the model object must come from a trusted file (see the module docstring).

    Args:
        model: a loaded SB3 model, or its ``policy`` network.
        rules: the rules it will play (checked against the model's spaces).
        deterministic: play the best legal action instead of sampling.
        name: the agent's name (default ``"sb3"``).
    """

    def __init__(self, model: Any, rules: Any, deterministic: bool = True, name: str = "sb3"):
        net = getattr(model, "policy", model)
        obs_space = net.observation_space
        act_space = net.action_space
        if tuple(obs_space.shape) != (rules.observation_size,) or int(act_space.n) != int(
            rules.num_actions
        ):
            raise ValueError(
                f"the model was trained on observations of size {obs_space.shape[0]} with "
                f"{act_space.n} actions, but {rules.edition} {rules.scenario.name} has "
                f"{rules.observation_size} and {rules.num_actions}: use a model trained for this "
                "edition and scenario"
            )
        self.net = net
        self.is_q = hasattr(net, "q_net")
        self.deterministic = deterministic
        self.name = name
        self._cache: dict[tuple[Hashable, int], dict[int, float]] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_cache"] = {}
        return state

    def scores(self, obs: np.ndarray) -> np.ndarray:
        """Raw action scores for one observation: logits, or Q-values for DQN."""
        import torch

        with torch.no_grad():
            x = torch.as_tensor(obs, dtype=torch.float32, device=self.net.device).reshape(1, -1)
            if self.is_q:
                out = self.net.q_net(x)
            else:
                out = self.net.get_distribution(x).distribution.logits
        return out.cpu().numpy().reshape(-1).astype(np.float64)

    def action_probabilities(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """Distribution over the legal actions of ``player`` (see the class docstring)."""
        key = (state, player)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        legal = rules.legal_actions(state)
        if len(legal) == 1:
            out = {legal[0]: 1.0}
        else:
            z = self.scores(rules.observe(state, player))[legal]
            if self.deterministic or self.is_q:
                out = {legal[int(np.argmax(z))]: 1.0}
            else:
                p = np.exp(z - z.max())
                p /= p.sum()
                out = {a: float(q) for a, q in zip(legal, p) if q > 0.0}
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = out
        return out

    def __repr__(self) -> str:
        return f"<policy {self.name}>"


def metadata_path(model_path: str | Path) -> Path | None:
    """The JSON metadata of a model: ``<stem>.json`` beside it, else ``model.json`` there."""
    p = Path(model_path)
    for cand in (p.with_suffix(".json"), p.parent / "model.json"):
        if cand.is_file():
            return cand
    return None


def read_metadata(model_path: str | Path) -> dict[str, Any]:
    """The model's JSON metadata (edition, scenario, algo, seat, steps, ...), or ``{}``."""
    meta = metadata_path(model_path)
    if meta is None:
        return {}
    try:
        return dict(json.loads(meta.read_text()))
    except (OSError, ValueError):
        return {}


def _zip_data(path: Path) -> dict[str, Any]:
    """The JSON ``data`` entry of an SB3 zip (read as JSON, nothing unpickled)."""
    try:
        with zipfile.ZipFile(path) as z:
            return dict(json.loads(z.read("data")))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path} is not a stable-baselines3 model file ({exc})") from None


def _guess_algo(data: dict[str, Any]) -> str:
    module = str(data.get("policy_class", {}).get("__module__", ""))
    if "maskable" in module:
        return "maskable-ppo"
    if "dqn" in module:
        return "dqn"
    return "ppo"


def policy_kwargs_from_config(kwargs: dict[str, Any] | None) -> dict[str, Any]:
    """Turn JSON/YAML policy kwargs into SB3 ones (``activation_fn: "tanh"`` -> ``nn.Tanh``).

    Raises:
        ValueError: an unknown activation name.
    """
    out = dict(kwargs or {})
    act = out.get("activation_fn")
    if isinstance(act, str):
        from torch import nn

        table = {"tanh": nn.Tanh, "relu": nn.ReLU, "elu": nn.ELU, "leaky_relu": nn.LeakyReLU}
        if act.lower() not in table:
            raise ValueError(f"activation_fn {act!r} is not one of: {', '.join(table)}")
        out["activation_fn"] = table[act.lower()]
    return out


def _safe_objects(
    algo: str, data: dict[str, Any], rules: Any, meta: dict[str, Any]
) -> dict[str, Any] | None:
    """Local replacements for every pickled entry of ``data``, or None if one is unknown."""
    from gymnasium import spaces

    def const(_: float) -> float:
        return 0.0

    objects: dict[str, Any] = {}
    if algo == "maskable-ppo":
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

        objects["policy_class"] = MaskableActorCriticPolicy
    elif algo == "ppo":
        from stable_baselines3.common.policies import ActorCriticPolicy

        objects["policy_class"] = ActorCriticPolicy
    else:
        from stable_baselines3.dqn.policies import DQNPolicy

        objects["policy_class"] = DQNPolicy
    if rules is not None:
        objects["observation_space"] = spaces.Box(
            -np.inf, np.inf, (rules.observation_size,), dtype=np.float32
        )
        objects["action_space"] = spaces.Discrete(rules.num_actions)
    objects.update(
        rollout_buffer_class=None, replay_buffer_class=None, lr_schedule=const,
        clip_range=const, clip_range_vf=None, exploration_schedule=const, learning_rate=0.0,
        # training-time state, useless for playing
        _last_obs=None, _last_episode_starts=None, _last_original_obs=None,
        ep_info_buffer=None, ep_success_buffer=None,
    )  # fmt: skip
    if "train_freq" in data:
        from stable_baselines3.common.type_aliases import TrainFreq, TrainFrequencyUnit

        objects["train_freq"] = TrainFreq(1, TrainFrequencyUnit.STEP)
    pk = data.get("policy_kwargs")
    if isinstance(pk, dict) and ":serialized:" in pk:
        if "policy_kwargs" not in meta:
            return None
        objects["policy_kwargs"] = policy_kwargs_from_config(meta["policy_kwargs"])
    pickled = {k for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v}
    if pickled - set(objects):
        return None
    return {k: v for k, v in objects.items() if k in data}


def _check_spaces(path: Path, data: dict[str, Any], rules: Any) -> None:
    """Refuse a model whose recorded spaces do not fit ``rules`` (read from the JSON fields)."""
    shape = data.get("observation_space", {}).get("_shape")
    n = data.get("action_space", {}).get("n")
    if shape is None or n is None:
        return
    if list(shape) != [rules.observation_size] or int(n) != int(rules.num_actions):
        raise ValueError(
            f"{path} was trained on observations of size {shape[0]} with {n} actions, but "
            f"{rules.edition} {rules.scenario.name} has {rules.observation_size} and "
            f"{rules.num_actions}: use a model trained for this edition and scenario"
        )


def load_model(path: str | Path, rules: Any = None, algo: str | None = None) -> Any:
    """Load an SB3 model file for inference on CPU.

    The algorithm comes from ``algo``, else the JSON metadata beside the file, else the policy
    class named in the archive. Trusted files only (see the module docstring).

    Raises:
        FileNotFoundError: no such file.
        ValueError: not an SB3 model, or an unknown algorithm.
    """
    import torch

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no model file {p}")
    # These networks are tiny: one torch thread per process answers a single observation much
    # faster than several contending threads (set PSYGYM_TORCH_THREADS to override).
    torch.set_num_threads(int(os.environ.get("PSYGYM_TORCH_THREADS", "1")))
    data = _zip_data(p)
    meta = read_metadata(p)
    if rules is not None:
        _check_spaces(p, data, rules)
    algo = algo or meta.get("algo") or _guess_algo(data)
    cls = algo_class(str(algo))
    safe = _safe_objects(str(algo), data, rules, meta) if rules is not None else None
    if safe is None:
        warnings.warn(
            f"{p} holds pickled Python objects this loader cannot replace; loading it with SB3's "
            "ordinary loader, which runs pickled code: only do this for files you trust",
            stacklevel=2,
        )
        return cls.load(p, device="cpu")
    return cls.load(p, device="cpu", custom_objects=safe)


def make_sb3(rules: Any, path: str | None = None, *, deterministic: bool = True) -> SB3Policy:
    """The ``sb3`` agent: a trained model file, or the pretrained model for ``rules``.

    Args:
        rules: the rules the agent will play.
        path: a model ``.zip`` (``None`` or ``"pretrained"``: the shipped model of the rules'
            edition and scenario).
        deterministic: play the most probable legal action (else sample).

    Raises:
        ValueError: no pretrained model for these rules, a model for another edition, or a model
            whose spaces do not match the scenario.
        FileNotFoundError: no such file.
    """
    if path is None or path == "pretrained":
        found = pretrained_path(rules.edition, rules.scenario.name)
        if found is None:
            have = ", ".join(p.stem for p in sorted(PRETRAINED_DIR.glob("*.zip"))) or "none"
            raise ValueError(
                f"no pretrained model for {rules.edition} {rules.scenario.name} (shipped: {have}); "
                "give a model file: sb3:runs/.../model.zip"
            )
        path = str(found)
    meta = read_metadata(path)
    if meta.get("edition") not in (None, rules.edition):
        raise ValueError(f"{path} was trained for edition {meta['edition']}, not {rules.edition}")
    model = load_model(path, rules)
    return SB3Policy(model, rules, deterministic=deterministic, name=f"sb3:{path}")


def pretrained_path(edition: str, scenario: str) -> Path | None:
    """The shipped model ``agents/pretrained/<edition>-<scenario>.zip``, or None.

    ``scenario`` may be ``"default"`` (the edition's default scenario).
    """
    from psygym.edition import get

    try:
        ed = get(edition)
    except ValueError:
        return None
    if scenario == "default":
        scenario = ed.default_scenario
    p = PRETRAINED_DIR / f"{ed.id}-{Path(str(scenario)).stem}.zip"
    return p if p.is_file() else None


__all__ = [
    "ALGO_NAMES", "SB3Policy", "algo_class", "algo_name", "load_model", "make_sb3",
    "policy_kwargs_from_config", "pretrained_path", "read_metadata",
]  # fmt: skip
