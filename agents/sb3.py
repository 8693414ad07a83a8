"""Stable-baselines3 models as psygym policies: the adapter, the loaders and the shipped models.

``SB3Policy(model, rules)`` turns a trained MaskablePPO, PPO or DQN policy into a
:class:`~psygym.core.Policy`. It observes exactly what the env shows the agent,
``rules.observe(state, player)``, and only ever gives probability to legal actions: the policy's
logits (or DQN's Q-values) are restricted to ``rules.legal_actions(state)`` before the softmax or
the argmax. So a model trained in either seat can play any seat of the same edition and scenario
(observations are written from the observing player's point of view).

``make_sb3(rules, path)`` is the ``sb3`` agent of the registry: ``"sb3:runs/.../model.safetensors"``
(or the run folder, or the stem ``runs/.../model``), or ``"sb3"`` alone (the shipped pretrained
model of the rules' edition and scenario for one seat, see :func:`pretrained_path`: a shipped
model was trained in one seat only, and its JSON ``seat`` says which).

Security: models load by default from psygym's safe format (:mod:`psygym_agents.safe_model`:
safetensors weights plus JSON), which runs no code from the file. SB3's own ``.zip`` archives
hold cloudpickled Python objects, and unpickling an untrusted file can run arbitrary code, so a
``.zip`` loads only with an explicit opt-in: ``trust_pickle=True``, or the environment variable
``PSYGYM_TRUST_PICKLE=1`` (set by the CLI flag ``--trust-pickle``). Without it the loader refuses
before opening the archive, with a one-line :class:`UntrustedModelError` telling how to convert
the file once: ``psygym export --trust-pickle MODEL.zip`` writes the safe format beside it.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import numpy as np
from psygym_agents.policy_net import PolicyNet, load_net
from psygym_agents.safe_model import (
    DEFAULT_STEM,
    WEIGHTS_SUFFIX,
    check_seats,
    is_safe_model,
    load_safe,
)

ALGO_NAMES = ("maskable-ppo", "ppo", "dqn")
"""Algorithms ``psygym train`` knows, by their CLI names."""

PRETRAINED_DIR = Path(__file__).parent / "pretrained"
"""Folder of the small MaskablePPO models shipped with the package (safe format)."""

TRUST_ENV = "PSYGYM_TRUST_PICKLE"
"""Environment variable that, set to ``1``, allows loading pickled SB3 ``.zip`` models."""

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


class UntrustedModelError(ValueError):
    """A pickled SB3 ``.zip`` model was refused because pickle loading was not allowed."""


def trust_pickle_from_env() -> bool:
    """Whether ``PSYGYM_TRUST_PICKLE`` allows loading pickled models (``1``, ``true``, ``yes``)."""
    return os.environ.get(TRUST_ENV, "").strip().lower() in ("1", "true", "yes")


def _trusted(trust_pickle: bool | None) -> bool:
    return trust_pickle_from_env() if trust_pickle is None else bool(trust_pickle)


def refuse_zip(path: str | Path) -> UntrustedModelError:
    """The one-line error for a pickled ``.zip`` loaded without trust (returned, not raised)."""
    p = Path(path)
    safe = p.with_suffix(WEIGHTS_SUFFIX)
    hint = (
        f"a safe copy exists: use {safe}"
        if safe.is_file()
        else f"convert it once with `psygym export --trust-pickle {p}` (writes {safe.name} and "
        f"{p.with_suffix('.json').name} beside it) and use that"
    )
    return UntrustedModelError(
        f"refused to load {p}: stable-baselines3 .zip models contain pickles, which can run "
        f"arbitrary code when loaded; {hint}, or pass --trust-pickle ({TRUST_ENV}=1) if you "
        "trust this file"
    )


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

    Only the network is kept (``model.policy``, or a NumPy :class:`PolicyNet` when a model
    file is given: play needs no torch), so the adapter pickles cheaply (self-play
    sends it to subprocess envs) and a frozen copy can be made with ``copy.deepcopy``.
    Answers are memoised per (state, player) because states are hashable; build a new adapter
    when the weights change.

    Args:
        model: a loaded SB3 model, its ``policy`` network, a :class:`PolicyNet`, or a model
            path (:func:`playing_net`): a safe model (``.safetensors``, its stem or folder, see
            :mod:`psygym_agents.safe_model`) or, only when pickles are trusted, an SB3 ``.zip``.
        rules: the rules it will play (checked against the model's spaces).
        deterministic: play the best legal action instead of sampling.
        name: the agent's name (default ``"sb3"``).
        trust_pickle: allow a ``.zip`` path (default: the ``PSYGYM_TRUST_PICKLE`` variable).

    Raises:
        UntrustedModelError: a ``.zip`` path without trust.
    """

    def __init__(
        self, model: Any, rules: Any, deterministic: bool = True, name: str = "sb3", *,
        trust_pickle: bool | None = None,
    ):  # fmt: skip
        if isinstance(model, str | Path):
            model = playing_net(model, rules, trust_pickle=trust_pickle)
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
        self.is_q = net.is_q if isinstance(net, PolicyNet) else hasattr(net, "q_net")
        self.deterministic = deterministic
        self.name = name
        self._cache: dict[tuple[Hashable, int], dict[int, float]] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_cache"] = {}
        return state

    def scores(self, obs: np.ndarray) -> np.ndarray:
        """Raw action scores for one observation: logits, or Q-values for DQN."""
        if isinstance(self.net, PolicyNet):
            return self.net.scores(obs)
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
    """The model's JSON metadata (edition, scenario, algo, seat, steps, ...), or ``{}``.

    Raises:
        SafeModelError: the JSON records a seat other than 0, 1 or ``"both"``.
    """
    meta = metadata_path(model_path)
    if meta is None:
        return {}
    try:
        doc = json.loads(meta.read_text())
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(doc, dict):
        return {}
    check_seats(doc, meta)
    return doc


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


def load_model(
    path: str | Path, rules: Any = None, algo: str | None = None, *,
    trust_pickle: bool | None = None,
) -> Any:  # fmt: skip
    """Load an SB3 ``.zip`` model file (pickles: trusted files only) for inference on CPU.

    Refused unless ``trust_pickle`` (default: the ``PSYGYM_TRUST_PICKLE`` variable) is true;
    the archive is not even opened then. The algorithm comes from ``algo``, else the JSON
    metadata beside the file, else the policy class named in the archive. Pickled entries the
    loader knows (policy class, spaces, schedules, buffer classes) are replaced by local objects;
    others are unpickled by SB3's loader, as the trust allows.

    Raises:
        UntrustedModelError: pickles are not trusted.
        FileNotFoundError: no such file.
        ValueError: not an SB3 model, or an unknown algorithm.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no model file {p}")
    if not _trusted(trust_pickle):
        raise refuse_zip(p)
    _set_torch_threads()
    data = _zip_data(p)
    meta = read_metadata(p)
    if rules is not None:
        _check_spaces(p, data, rules)
    algo = algo or meta.get("algo") or _guess_algo(data)
    cls = algo_class(str(algo))
    safe = _safe_objects(str(algo), data, rules, meta) if rules is not None else None
    if safe is None:  # the caller trusts the file: SB3's ordinary loader unpickles the rest
        return cls.load(p, device="cpu")
    return cls.load(p, device="cpu", custom_objects=safe)


def _set_torch_threads() -> None:
    import torch

    # These networks are tiny: one torch thread per process answers a single observation much
    # faster than several contending threads (set PSYGYM_TORCH_THREADS to override).
    torch.set_num_threads(int(os.environ.get("PSYGYM_TORCH_THREADS", "1")))


def load_policy(path: str | Path, rules: Any = None, *, trust_pickle: bool | None = None) -> Any:
    """The policy network of a model file, for :class:`SB3Policy`.

    A safe model (``.safetensors``, its ``.json`` or stem, or a folder holding
    ``model.safetensors``) is rebuilt by :func:`psygym_agents.safe_model.load_safe` without
    unpickling; an SB3 ``.zip`` goes through :func:`load_model`, which needs ``trust_pickle``.

    Raises:
        UntrustedModelError: a ``.zip`` without trust.
        FileNotFoundError: no such model.
        ValueError: not a model, or one that does not fit ``rules``.
    """
    p = Path(path)
    if p.suffix == ".zip":
        return load_model(p, rules, trust_pickle=trust_pickle).policy
    if not is_safe_model(p):
        if p.with_suffix(".zip").is_file() and p.suffix in ("", WEIGHTS_SUFFIX):
            raise refuse_zip(p.with_suffix(".zip"))
        # A bare agent spec is a model only by its suffix (psygym.policies.resolve_policy), so
        # a stem or a run folder works only after "sb3:".
        raise FileNotFoundError(
            f"no model {p}: give a safe model's .safetensors file (or, after sb3:, its stem or "
            f"its run folder holding {DEFAULT_STEM}{WEIGHTS_SUFFIX}) or an SB3 .zip"
        )
    _set_torch_threads()
    return load_safe(p, rules)


def playing_net(path: str | Path, rules: Any = None, *,
                trust_pickle: bool | None = None) -> Any:  # fmt: skip
    """The network a model file plays with.

    A NumPy :class:`PolicyNet` for a safe model (no torch import), the torch policy of a
    trusted SB3 ``.zip`` (:func:`load_policy`).

    Raises:
        UntrustedModelError: a ``.zip`` without trust.
        FileNotFoundError: no such model.
        ValueError: not a model, or one that does not fit ``rules``.
    """
    p = Path(path)
    if p.suffix != ".zip" and is_safe_model(p):
        return load_net(p, rules)
    return load_policy(p, rules, trust_pickle=trust_pickle)


SAFE_NOTE = (
    "psygym safe model: weights in the .safetensors file beside this JSON, architecture and "
    "spaces here; loads without unpickling anything"
)
"""The ``note`` written into the JSON of a model exported to the safe format."""


def export_zip(
    path: str | Path, out_dir: str | Path | None = None, *, trust_pickle: bool | None = None
) -> Path:
    """Convert a trusted SB3 ``.zip`` model to psygym's safe format.

    Writes ``<out_dir>/<stem>.safetensors`` and ``<out_dir>/<stem>.json`` (``out_dir`` defaults
    to the zip's folder). The JSON keeps the metadata found beside the zip (``<stem>.json``),
    with its ``note`` updated and ``converted_from`` naming the zip.

    Args:
        path: the SB3 ``.zip``.
        out_dir: the folder to write to.
        trust_pickle: the caller trusts the file (default: the ``PSYGYM_TRUST_PICKLE``
            variable); loading it runs its pickles.

    Returns:
        The weights file written.

    Raises:
        FileNotFoundError: no such file.
        ValueError: not a zip, not an SB3 model, or not trusted (:class:`UntrustedModelError`).
    """
    from psygym_agents.safe_model import save_safe

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no model file {p}")
    if p.suffix != ".zip" or not zipfile.is_zipfile(p):
        raise ValueError(f"{p} is not a stable-baselines3 .zip model")
    if not _trusted(trust_pickle):
        raise UntrustedModelError(
            f"refused to export {p} without --trust-pickle: stable-baselines3 .zip models contain "
            "pickles, which can run arbitrary code when loaded; pass --trust-pickle only if you "
            "trust this file"
        )
    meta = read_metadata(p)
    model = load_model(p, None, trust_pickle=True)  # the real saved spaces, unpickled as trusted
    meta = {**meta, "algo": meta.get("algo") or algo_name(model), "note": SAFE_NOTE,
            "converted_from": p.name}  # fmt: skip
    dest = Path(out_dir) if out_dir is not None else p.parent
    return save_safe(model, dest / p.stem, meta)


def make_sb3(
    rules: Any, path: str | None = None, *, deterministic: bool = True,
    trust_pickle: bool | None = None, seat: int = 0,
) -> SB3Policy:  # fmt: skip
    """The ``sb3`` agent: a trained model, or the pretrained model for ``rules`` and ``seat``.

    Args:
        rules: the rules the agent will play.
        path: a safe model (``.safetensors``, its stem, or a run folder holding
            ``model.safetensors``), or an SB3 ``.zip`` when pickles are trusted; ``None`` or
            ``"pretrained"``: the shipped model of the rules' edition and scenario trained in
            ``seat`` (:func:`pretrained_path`).
        deterministic: play the most probable legal action (else sample).
        trust_pickle: allow a ``.zip`` (default: the ``PSYGYM_TRUST_PICKLE`` variable).
        seat: the seat whose shipped model to load when ``path`` names the pretrained one
            (ignored for a model file).

    Raises:
        UntrustedModelError: a ``.zip`` without trust (the message says how to convert it).
        ValueError: no pretrained model for these rules, a model for another edition, or a model
            whose spaces do not match the scenario.
        FileNotFoundError: no such file.
    """
    if path is None or path == "pretrained":
        found = pretrained_path(rules.edition, rules.scenario.name, seat)
        if found is None:
            shipped = sorted(PRETRAINED_DIR.glob(f"*-seat*{WEIGHTS_SUFFIX}"))
            have = ", ".join(p.stem for p in shipped) or "none"
            raise ValueError(
                f"no pretrained model for {rules.edition} {rules.scenario.name} seat {seat} "
                f"(shipped: {have}); give a model file: sb3:runs/.../model.safetensors"
            )
        path = str(found)
    if Path(path).suffix != ".zip" and is_safe_model(path):
        from psygym_agents.safe_model import safe_paths

        meta = read_metadata(safe_paths(path)[0])
    else:
        meta = read_metadata(path)
    if meta.get("edition") not in (None, rules.edition):
        raise ValueError(f"{path} was trained for edition {meta['edition']}, not {rules.edition}")
    net = playing_net(path, rules, trust_pickle=trust_pickle)
    return SB3Policy(net, rules, deterministic=deterministic, name=f"sb3:{path}")


def pretrained_path(edition: str, scenario: str, seat: int = 0) -> Path | None:
    """The shipped model trained in ``seat``, or None if there is none.

    The file is ``agents/pretrained/<edition>-<scenario>-seat<seat>.safetensors`` (its JSON
    records ``seat``): each shipped model was trained, and is scored, in one seat only.
    ``scenario`` may be ``"default"`` (the edition's default scenario).

    Raises:
        ValueError: ``seat`` is not 0 or 1.
    """
    from psygym.edition import get

    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 or 1, not {seat!r}")
    try:
        ed = get(edition)
    except ValueError:
        return None
    if scenario == "default":
        scenario = ed.default_scenario
    p = PRETRAINED_DIR / f"{ed.id}-{Path(str(scenario)).stem}-seat{seat}{WEIGHTS_SUFFIX}"
    return p if p.is_file() else None


__all__ = [
    "ALGO_NAMES", "SAFE_NOTE", "TRUST_ENV", "SB3Policy", "UntrustedModelError", "algo_class",
    "algo_name", "export_zip", "load_model", "load_policy", "make_sb3", "playing_net",
    "policy_kwargs_from_config", "pretrained_path", "read_metadata", "refuse_zip",
    "trust_pickle_from_env",
]  # fmt: skip
