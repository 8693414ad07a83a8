"""The NumPy policy network (psygym_agents.policy_net): torch's scores, torch's checks, no torch.

A trained model plays through :class:`PolicyNet` (``make_sb3``, ``SB3Policy(path)``); these tests
hold it to the torch network that ``load_safe`` rebuilds from the same files.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch
from psygym_agents.policy_net import PolicyNet, expected_layers, load_net
from psygym_agents.safe_model import SafeModelError, load_safe, save_safe
from psygym_agents.sb3 import PRETRAINED_DIR, SB3Policy, make_sb3
from test_safe_models import rules, sample_states, spaces_of  # noqa: F401 - fixtures

from psygym.editions import load


def _torch_scores(net, obs):
    with torch.no_grad():
        x = torch.as_tensor(obs, dtype=torch.float32).reshape(1, -1)
        if hasattr(net, "q_net"):
            return net.q_net(x).numpy().reshape(-1)
        return net.get_distribution(x).distribution.logits.numpy().reshape(-1)


def _policy(rules, cls_name, net_arch, activation, seed):  # noqa: F811 - a parameter here
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.dqn.policies import DQNPolicy

    classes = {"maskable": MaskableActorCriticPolicy, "ppo": ActorCriticPolicy, "dqn": DQNPolicy}
    acts = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "elu": torch.nn.ELU,
            "leaky_relu": torch.nn.LeakyReLU}  # fmt: skip
    obs, act = spaces_of(rules)
    torch.manual_seed(seed)
    net = classes[cls_name](obs, act, lambda _: 1e-3, net_arch=net_arch,
                            activation_fn=acts[activation])  # fmt: skip
    with torch.no_grad():
        for t in net.parameters():
            t.copy_(torch.randn_like(t) * 0.5)
    return net


CASES = [
    ("maskable", [16, 8], "tanh"),
    ("maskable", [], "tanh"),
    ("ppo", {"pi": [12], "vf": [6, 6]}, "relu"),
    ("ppo", {"pi": [10, 4], "vf": []}, "elu"),
    ("dqn", [16], "leaky_relu"),
    ("dqn", [], "relu"),
]


@pytest.mark.parametrize(("kind", "arch", "activation"), CASES)
def test_scores_and_layout_are_torch_s(tmp_path, rules, kind, arch, activation):  # noqa: F811
    net = _policy(rules, kind, arch, activation, seed=len(str(arch)))
    save_safe(net, tmp_path / "model")
    mine = load_net(tmp_path / "model", rules)
    ref = load_safe(tmp_path / "model", rules)
    doc = json.loads((tmp_path / "model.json").read_text())
    heads = expected_layers(doc["policy"]["class"], doc["policy"], rules.observation_size,
                            rules.num_actions)  # fmt: skip
    names = {f"{n}.{p}" for head in heads.values() for n, _, _ in head for p in ("weight", "bias")}
    assert names == set(ref.state_dict())
    assert mine.is_q == (kind == "dqn")
    for s, p in sample_states(rules, 40):
        obs = rules.observe(s, p)
        got, want = mine.scores(obs), _torch_scores(ref, obs)
        if not mine.is_q:  # torch's logits are normalised (a log-softmax): compare shapes
            got, want = got - got.max(), want - want.max()
        assert np.abs(got - want).max() < 1e-4, (kind, arch)


@pytest.mark.parametrize("stem", sorted(p.stem for p in PRETRAINED_DIR.glob("*-seat*.safetensors")))
def test_shipped_models_play_the_torch_network_s_moves(stem):
    meta = json.loads((PRETRAINED_DIR / f"{stem}.json").read_text())
    rules = load(meta["edition"], meta["scenario"])  # noqa: F811 - the model's own, not the fixture
    fast = make_sb3(rules, seat=meta["seat"])
    assert isinstance(fast.net, PolicyNet)
    slow = SB3Policy(load_safe(PRETRAINED_DIR / stem, rules), rules)
    sampled_fast = SB3Policy(fast.net, rules, deterministic=False)
    sampled_slow = SB3Policy(slow.net, rules, deterministic=False)
    for s, p in sample_states(rules, 80, seed=3):
        assert fast.action_probabilities(rules, s, p) == slow.action_probabilities(rules, s, p)
        a = sampled_fast.action_probabilities(rules, s, p)
        b = sampled_slow.action_probabilities(rules, s, p)
        assert set(a) == set(b) and all(abs(a[k] - b[k]) < 1e-5 for k in a)


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda t: t.update({"extra.weight": t["action_net.weight"]}), "unexpected tensors"),
        (lambda t: t.pop("action_net.bias"), "missing tensors"),
        (lambda t: t.update({"action_net.bias": t["action_net.bias"][:-1]}), "tensor action_net"),
        (lambda t: t["action_net.bias"].__setitem__(0, np.nan), "NaN"),
        (lambda t: t.update({"action_net.bias": t["action_net.bias"].astype(np.float64)}),
         "float64"),
    ],
)  # fmt: skip
def test_bad_weights_are_refused_in_one_line(tmp_path, rules, edit, words):  # noqa: F811
    from psygym_agents.safe_model import file_sha256
    from safetensors.numpy import load_file, save_file

    save_safe(_policy(rules, "maskable", [8], "tanh", 0), tmp_path / "model")
    tensors = dict(load_file(str(tmp_path / "model.safetensors")))
    edit(tensors)
    save_file(tensors, str(tmp_path / "model.safetensors"))
    meta = tmp_path / "model.json"
    doc = json.loads(meta.read_text())
    doc["weights_sha256"] = file_sha256(tmp_path / "model.safetensors")
    meta.write_text(json.dumps(doc))
    for loader in (load_net, load_safe):
        with pytest.raises(SafeModelError) as info:
            loader(tmp_path / "model", rules)
        assert "\n" not in str(info.value) and words in str(info.value), (loader, info.value)


def test_a_shipped_model_plays_a_game_without_importing_torch():
    code = (
        "import sys, numpy as np\n"
        "from psygym.editions import load\n"
        "from psygym_agents.sb3 import make_sb3\n"
        "rules = load('7th', 'duel')\n"
        "agent = make_sb3(rules, seat=0)\n"
        "s, rng = rules.initial_state(), np.random.default_rng(0)\n"
        "while (p := rules.current_player(s)) != -2:\n"
        "    if p == -1:\n"
        "        s = rules.apply(s, rules.sample_chance(s, rng))\n"
        "    else:\n"
        "        probs = agent.action_probabilities(rules, s, p)\n"
        "        s = rules.apply(s, max(probs, key=probs.get))\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr
