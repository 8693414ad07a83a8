"""A safe model's policy network evaluated with NumPy: a trained agent plays without torch.

The shipped and trained models are small MLPs (two layers of 64 or 128). Playing one through
torch costs the torch import (about two seconds a process on this machine) and tens of
microseconds of framework overhead per decision, several times the arithmetic itself. The
play-only copy here reads the same two files as :func:`psygym_agents.safe_model.load_safe`,
with the same checks (:func:`~psygym_agents.safe_model.checked_model`), and computes the scores
of SB3's networks from the saved layers:

- actor-critic policies (MaskablePPO, PPO): ``mlp_extractor.policy_net`` (linear layers, each
  followed by the activation), then ``action_net``; the scores are the action logits;
- DQN: ``q_net.q_net`` (linear layers with the activation between them); the scores are the
  Q-values (``q_net_target`` is read and checked, not used).

The features extractor is SB3's flatten (no weights), and Box observations are not scaled, so
the layers are all there is. The arithmetic runs in float64 on the float32 weights: the scores
agree with torch's float32 ones to about 1e-6 (``tests/test_policy_net.py``).

Training keeps the torch network (:func:`psygym_agents.sb3.load_policy`); this is for play.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from psygym_agents.mlp import dense_forward
from psygym_agents.safe_model import checked_model, mismatch, read_tensors

_ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
    "elu": lambda x: np.where(x > 0.0, x, np.expm1(np.minimum(x, 0.0))),
    "leaky_relu": lambda x: np.where(x > 0.0, x, 0.01 * x),
}
"""The format's activations (:data:`~psygym_agents.safe_model.ACTIVATIONS`) as NumPy functions,
with torch's defaults (ELU's alpha 1, LeakyReLU's slope 0.01)."""


def _mlp(prefix: str, widths: list[int], n_in: int, start: int = 0) -> list[tuple[str, int, int]]:
    """``(name, rows, cols)`` of each linear layer of an SB3 MLP ``prefix.<index>``."""
    layers, prev = [], n_in
    for i, w in enumerate(widths):
        layers.append((f"{prefix}.{start + 2 * i}", w, prev))
        prev = w
    return layers


def expected_layers(cls_name: str, kwargs: dict[str, Any], obs_size: int,
                    n: int) -> dict[str, list[tuple[str, int, int]]]:  # fmt: skip
    """The linear layers of the described SB3 network, by head, in order.

    Heads: ``"scores"`` (what is played: the actor with its action layer, or the Q-network),
    and what is stored beside it (``"value"``, or ``"target"`` for DQN).
    """
    arch = kwargs["net_arch"]
    if cls_name == "DQNPolicy":
        hidden = _mlp("q_net.q_net", list(arch), obs_size)
        last = hidden[-1][1] if hidden else obs_size
        q = [*hidden, (f"q_net.q_net.{2 * len(hidden)}", n, last)]
        return {"scores": q, "target": [(name.replace("q_net.", "q_net_target.", 1), r, c)
                                        for name, r, c in q]}  # fmt: skip
    pi, vf = (arch["pi"], arch["vf"]) if isinstance(arch, dict) else (arch, arch)
    actor = _mlp("mlp_extractor.policy_net", list(pi), obs_size)
    critic = _mlp("mlp_extractor.value_net", list(vf), obs_size)
    return {
        "scores": [*actor, ("action_net", n, actor[-1][1] if actor else obs_size)],
        "value": [*critic, ("value_net", 1, critic[-1][1] if critic else obs_size)],
    }


class PolicyNet:
    """A safe model's scores in NumPy: ``scores(obs)`` are SB3's logits (or DQN's Q-values).

    Attributes:
        layers: ``[(W, b), ...]``, each ``W`` with one row per input (:func:`dense_forward`).
        observation_space: the model's gymnasium Box.
        action_space: its Discrete.
        is_q: a DQN (scores are Q-values).
        psygym_metadata: the model's JSON.
    """

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str,
                 observation_space: Any, action_space: Any, is_q: bool,
                 metadata: dict[str, Any]):  # fmt: skip
        self.layers = layers
        self.activation = activation
        self.observation_space = observation_space
        self.action_space = action_space
        self.is_q = is_q
        self.psygym_metadata = metadata

    def scores(self, obs: np.ndarray) -> np.ndarray:
        """The raw action scores for one observation (float64, one per action)."""
        x = np.asarray(obs, dtype=np.float64).reshape(-1)
        return dense_forward(x, self.layers, _ACTIVATIONS[self.activation])


def load_net(path: str | Path, rules: Any = None) -> PolicyNet:
    """A safe model as a :class:`PolicyNet` (no torch), checked as :func:`load_safe` checks it.

    Args:
        path: the ``.safetensors`` file, its ``.json``, the stem, or a folder holding
            ``model.safetensors``.
        rules: if given, the model's spaces must fit them.

    Raises:
        FileNotFoundError: no weights file or JSON.
        SafeModelError: the JSON is not a safe model's, does not describe the weights (names,
            shapes, float32, finite), or the model does not fit ``rules``.
    """
    weights, meta_path, doc, obs_space, act_space, cls_name, kwargs = checked_model(path, rules)
    obs_size = int(np.prod(obs_space.shape))
    heads = expected_layers(cls_name, kwargs, obs_size, int(act_space.n))
    expected = {}
    for head in heads.values():
        for name, rows, cols in head:
            expected[f"{name}.weight"] = ((rows, cols), "float32")
            expected[f"{name}.bias"] = ((rows,), "float32")
    tensors = read_tensors(weights, device=None)
    mismatch(weights, meta_path, tensors, expected)
    # torch stores a layer's weight as (outputs, inputs); dense_forward wants one row per input
    layers = [
        (
            np.ascontiguousarray(tensors[f"{name}.weight"].T, dtype=np.float64),
            tensors[f"{name}.bias"].astype(np.float64),
        )
        for name, _, _ in heads["scores"]
    ]
    return PolicyNet(layers, kwargs["activation_fn"], obs_space, act_space,
                     cls_name == "DQNPolicy", doc)  # fmt: skip


__all__ = ["PolicyNet", "expected_layers", "load_net"]
