"""psygym's safe model format (safetensors + JSON) and the refusal of pickled SB3 ``.zip`` files.

Covers ``psygym_agents.safe_model`` (save/load round trips, no unpickling, tampered files),
the ``sb3`` agent's trust rule for ``.zip`` models (``PSYGYM_TRUST_PICKLE``), the shipped
pretrained models (one per seat; decisions pinned by ``tests/safe_models_fixture.json``, recorded
by an independent float64 numpy forward pass over each model's raw safetensors weights, not
through ``load_safe``), tuned RL files, and ``psygym export``.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
import typer
from psygym_agents.parametric import make_tuned
from psygym_agents.safe_model import FORMAT, SafeModelError, load_safe, safe_paths, save_safe
from psygym_agents.sb3 import (
    PRETRAINED_DIR,
    TRUST_ENV,
    SB3Policy,
    UntrustedModelError,
    load_model,
    make_sb3,
    pretrained_path,
)
from psygym_agents.value import BoardValue
from typer.testing import CliRunner

from psygym.core import CHANCE, TERMINAL
from psygym.edition import editions
from psygym.editions import load
from psygym.policies import resolve_policy

FIXTURE = Path(__file__).parent / "safe_models_fixture.json"


@pytest.fixture(autouse=True)
def _no_trust(monkeypatch):
    """Every test starts without pickle trust, whatever the caller's environment says."""
    monkeypatch.delenv(TRUST_ENV, raising=False)


@pytest.fixture(scope="module")
def rules():
    """The default scenario of the edition with the smallest observation (fast tiny models)."""
    return min((load(e.id) for e in editions()), key=lambda r: r.observation_size)


def sample_states(rules, n=200, seed=0):
    """``n`` decision points ``(state, player)`` from random play with sampled dice."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = rules.initial_state()
        while (p := rules.current_player(s)) != TERMINAL and len(out) < n:
            if p == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, rng))
                continue
            legal = rules.legal_actions(s)
            out.append((s, p))
            s = rules.apply(s, legal[int(rng.integers(len(legal)))])
    return out


def all_probabilities(policy, rules, states):
    return [policy.action_probabilities(rules, s, p) for s, p in states]


def spaces_of(rules):
    obs = gym.spaces.Box(-1000.0, 1000.0, (rules.observation_size,), dtype=np.float32)
    return obs, gym.spaces.Discrete(rules.num_actions)


def tiny_policy(rules, kind, seed=0):
    """A small policy network of ``kind`` with random (non-default) weights."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.dqn.policies import DQNPolicy

    obs, act = spaces_of(rules)
    torch.manual_seed(seed)
    if kind == "maskable":
        net = MaskableActorCriticPolicy(obs, act, lambda _: 1e-3, net_arch=[16, 8])
    elif kind == "ppo":
        net = ActorCriticPolicy(obs, act, lambda _: 1e-3, net_arch={"pi": [12], "vf": [6, 6]},
                                activation_fn=torch.nn.ReLU)  # fmt: skip
    else:
        net = DQNPolicy(obs, act, lambda _: 1e-3, net_arch=[16])
    with torch.no_grad():
        for t in net.parameters():
            t.copy_(torch.randn_like(t))  # sharp logits: a wrong weight would show
    return net


class TinyEnv(gym.Env):
    """Spaces of ``rules`` only: enough to build (not train) an SB3 algorithm."""

    def __init__(self, rules):
        self.observation_space, self.action_space = spaces_of(rules)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(self.observation_space.shape, np.float32), {}

    def step(self, action):
        return np.zeros(self.observation_space.shape, np.float32), 0.0, True, False, {}

    def action_masks(self):
        return np.ones(self.action_space.n, bool)


@pytest.fixture(scope="module")
def benign_zip(tmp_path_factory, rules):
    """A real (benign) MaskablePPO ``.zip`` with its metadata JSON, and the model object."""
    from sb3_contrib import MaskablePPO

    folder = tmp_path_factory.mktemp("benign")
    model = MaskablePPO("MlpPolicy", TinyEnv(rules), n_steps=16, batch_size=16, seed=3,
                        policy_kwargs={"net_arch": [8]}, device="cpu")  # fmt: skip
    with torch.no_grad():
        for t in model.policy.parameters():
            t.copy_(torch.randn_like(t))
    path = folder / "model.zip"
    model.save(path)
    meta = {"edition": rules.edition, "scenario": rules.scenario.name, "algo": "maskable-ppo",
            "seat": 0, "steps": 0, "note": "stable-baselines3 archive"}  # fmt: skip
    path.with_suffix(".json").write_text(json.dumps(meta))
    return path, model


class _Payload:
    """Unpickling this creates the folder ``marker`` (stands for arbitrary code)."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def evil_zip(benign: Path, dest: Path, marker: Path) -> Path:
    """A copy of a real SB3 zip whose ``data`` gains a cloudpickled entry that runs code."""
    with zipfile.ZipFile(benign) as z:
        entries = {name: z.read(name) for name in z.namelist()}
    data = json.loads(entries["data"])
    data["payload"] = {
        ":type:": "<class 'object'>",
        ":serialized:": base64.b64encode(pickle.dumps(_Payload(marker))).decode(),
    }
    entries["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(dest, "w") as z:
        for name, blob in entries.items():
            z.writestr(name, blob)
    return dest


# ----------------------------------------------------------------------------- round trip
@pytest.mark.parametrize("kind", ["maskable", "ppo", "dqn"])
def test_save_then_load_gives_identical_probabilities(tmp_path, rules, kind):
    net = tiny_policy(rules, kind)
    weights = save_safe(net, tmp_path / "model", {"edition": rules.edition, "seat": 1})
    assert weights == tmp_path / "model.safetensors"
    assert (tmp_path / "model.json").is_file()
    loaded = load_safe(tmp_path, rules)  # the folder form
    assert type(loaded) is type(net)
    states = sample_states(rules)
    assert sum(len(rules.legal_actions(s)) > 1 for s, _ in states) > 50  # real choices compared
    for deterministic in (False, True):
        a = all_probabilities(SB3Policy(net, rules, deterministic=deterministic), rules, states)
        b = all_probabilities(SB3Policy(loaded, rules, deterministic=deterministic), rules, states)
        assert a == b
    ref = {k: v for k, v in net.state_dict().items()}
    got = loaded.state_dict()
    assert ref.keys() == got.keys() and all(torch.equal(ref[k], got[k]) for k in ref)


def test_json_describes_architecture_spaces_and_metadata(tmp_path, rules, benign_zip):
    _, model = benign_zip
    save_safe(model, tmp_path / "m", {"edition": rules.edition, "scenario": "x", "seat": 0})
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["format"] == FORMAT and doc["algo"] == "maskable-ppo"
    assert doc["policy"] == {"class": "MaskableActorCriticPolicy", "net_arch": [8],
                             "activation_fn": "tanh", "normalize_images": True,
                             "ortho_init": True, "share_features_extractor": True}  # fmt: skip
    obs = {"type": "Box", "shape": [rules.observation_size], "dtype": "float32", "low": -1000.0,
           "high": 1000.0}  # fmt: skip
    assert doc["observation_space"] == obs
    assert doc["action_space"] == {"type": "Discrete", "n": rules.num_actions, "start": 0}
    assert doc["hyperparameters"]["n_steps"] == 16 and doc["hyperparameters"]["gamma"] == 0.99
    assert (doc["edition"], doc["scenario"], doc["seat"]) == (rules.edition, "x", 0)


@pytest.mark.parametrize("form", ["weights", "json", "stem", "folder"])
def test_every_path_form_names_the_same_model(tmp_path, rules, form):
    save_safe(tiny_policy(rules, "maskable"), tmp_path / "model")
    arg = {"weights": tmp_path / "model.safetensors", "json": tmp_path / "model.json",
           "stem": tmp_path / "model", "folder": tmp_path}[form]  # fmt: skip
    assert safe_paths(arg) == (tmp_path / "model.safetensors", tmp_path / "model.json")
    policy = make_sb3(rules, str(arg))
    assert isinstance(policy, SB3Policy) and SB3Policy(str(arg), rules).net is not None


# ----------------------------------------------------------------------------- no unpickling
def test_load_safe_never_unpickles(tmp_path, rules, monkeypatch):
    import cloudpickle

    save_safe(tiny_policy(rules, "ppo"), tmp_path / "model")
    calls = []

    def forbidden(*args, **kwargs):
        calls.append(args)
        raise AssertionError("unpickling during load_safe")

    for mod, name in [(pickle, "loads"), (pickle, "load"), (pickle, "Unpickler"),
                      (torch, "load"), (cloudpickle, "loads"), (cloudpickle, "load")]:  # fmt: skip
        monkeypatch.setattr(mod, name, forbidden)
    with pytest.raises(AssertionError):  # the patch is live: unpickling would be caught
        pickle.loads(pickle.dumps(1))
    calls.clear()
    net = load_safe(tmp_path / "model.safetensors", rules)
    policy = make_sb3(rules, str(tmp_path / "model.safetensors"), deterministic=False)
    assert calls == []
    assert net is not None and policy.action_probabilities(rules, *sample_states(rules, 1)[0])


# ----------------------------------------------------------------------------- pickled zips
def test_zip_with_a_pickled_payload_is_refused_and_runs_nothing(tmp_path, rules, benign_zip):
    marker = tmp_path / "pwned"
    bad = evil_zip(benign_zip[0], tmp_path / "model.zip", marker)
    loaders = [
        lambda: make_sb3(rules, str(bad)),
        lambda: resolve_policy(str(bad), rules),
        lambda: resolve_policy(f"sb3:{bad}", rules),
        lambda: SB3Policy(bad, rules),
        lambda: load_model(bad, rules),
        lambda: make_sb3(rules, str(tmp_path / "model")),  # the stem: only the zip is there
    ]
    for loader in loaders:
        with pytest.raises(UntrustedModelError) as info:
            loader()
        msg = str(info.value)
        assert "\n" not in msg and str(bad) in msg and "pickle" in msg
        assert f"psygym export --trust-pickle {bad}" in msg
        assert not marker.exists()
    # The payload is real: loading the file with trust does run it.
    load_model(bad, rules, trust_pickle=True)
    assert marker.is_dir()


def test_trust_variable_lets_a_benign_zip_load(rules, benign_zip, monkeypatch):
    path, model = benign_zip
    with pytest.raises(UntrustedModelError):
        make_sb3(rules, str(path))
    monkeypatch.setenv(TRUST_ENV, "1")
    policy = make_sb3(rules, str(path), deterministic=False)
    states = sample_states(rules, 100)
    expected = all_probabilities(SB3Policy(model, rules, deterministic=False), rules, states)
    assert all_probabilities(policy, rules, states) == expected
    monkeypatch.setenv(TRUST_ENV, "0")
    with pytest.raises(UntrustedModelError):
        make_sb3(rules, str(path))


def test_explicit_trust_argument_overrides_the_variable(rules, benign_zip, monkeypatch):
    path, _ = benign_zip
    monkeypatch.setenv(TRUST_ENV, "1")
    with pytest.raises(UntrustedModelError):
        make_sb3(rules, str(path), trust_pickle=False)
    monkeypatch.delenv(TRUST_ENV)
    assert isinstance(make_sb3(rules, str(path), trust_pickle=True), SB3Policy)


# ----------------------------------------------------------------------------- tampering
def _tamper(tmp_path, rules, edit):
    save_safe(tiny_policy(rules, "maskable"), tmp_path / "model")
    meta = tmp_path / "model.json"
    doc = json.loads(meta.read_text())
    edit(doc)
    meta.write_text(json.dumps(doc))
    return tmp_path / "model.safetensors"


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda d: d["observation_space"].update(shape=[d["observation_space"]["shape"][0] + 1]),
         "does not match"),
        (lambda d: d["action_space"].update(n=d["action_space"]["n"] - 1), "does not match"),
        (lambda d: d["policy"].update(net_arch=[16, 9]), "does not match"),
        (lambda d: d["policy"].update(net_arch=[16]), "does not match"),
        (lambda d: d["policy"].update(net_arch="big"), "net_arch"),
        (lambda d: d["policy"].update({"class": "os.system"}), "policy.class"),
        (lambda d: d["policy"].update(activation_fn="sigmoid"), "activation_fn"),
        (lambda d: d["observation_space"].update(shape=[10**9]), "at most 100000 entries"),
        (lambda d: d.update(weights_sha256="0" * 64), "SHA-256"),
        (lambda d: d.pop("format"), "format"),
    ],
)  # fmt: skip
def test_a_tampered_json_gives_a_one_line_error(tmp_path, rules, edit, words):
    weights = _tamper(tmp_path, rules, edit)
    with pytest.raises(SafeModelError) as info:
        load_safe(weights)
    msg = str(info.value)
    assert "\n" not in msg and words in msg, msg


def test_wrong_shapes_for_the_rules_are_refused(tmp_path, rules):
    other = max((load(e.id) for e in editions()), key=lambda r: r.observation_size)
    save_safe(tiny_policy(rules, "maskable"), tmp_path / "model")
    with pytest.raises(ValueError, match="use a model trained for this edition") as info:
        make_sb3(other, str(tmp_path / "model.safetensors"))
    assert "\n" not in str(info.value)


def test_changed_weights_are_refused(tmp_path, rules):
    save_safe(tiny_policy(rules, "maskable", seed=1), tmp_path / "a")
    save_safe(tiny_policy(rules, "maskable", seed=2), tmp_path / "b")
    os.replace(tmp_path / "b.safetensors", tmp_path / "a.safetensors")
    with pytest.raises(SafeModelError, match="SHA-256"):
        load_safe(tmp_path / "a")


# ----------------------------------------------------------------------------- pretrained
def _fixture_rules(entry):
    class FixtureRules:
        """Stub rules whose states are indices into the fixture rows."""

        edition = None
        observation_size = entry["observation_size"]
        num_actions = entry["num_actions"]

        def legal_actions(self, i):
            return entry["states"][i]["legal"]

        def observe(self, i, player):
            row = entry["states"][i]
            obs = np.zeros(self.observation_size, np.float32)
            obs[row["nonzero"]] = row["values"]
            return obs

    return FixtureRules()


def test_shipped_models_are_safe_format_only():
    assert not list(PRETRAINED_DIR.glob("*.zip"))
    shipped = sorted(PRETRAINED_DIR.glob("*-seat*.safetensors"))
    values = sorted(PRETRAINED_DIR.glob("value-*.safetensors"))
    assert set(PRETRAINED_DIR.glob("*.safetensors")) == {*shipped, *values}
    for path in values:  # board values: plain arrays and JSON, checked on load
        BoardValue.load(path)
        assert path.stat().st_size < 1_000_000, path
    fixture = json.loads(FIXTURE.read_text())
    assert {p.stem for p in shipped} == set(fixture)
    seats: dict[tuple[str, str], set[int]] = {}
    for path in shipped:
        assert path.stat().st_size < 1_000_000, path
        meta = json.loads(path.with_suffix(".json").read_text())
        for key in ("edition", "scenario", "algo", "steps", "opponent", "seat", "seed",
                    "mean_eval_score", "eval_ci95", "eval_episodes", "trained_with", "policy",
                    "observation_space", "action_space", "format"):  # fmt: skip
            assert key in meta, (path, key)
        assert "pickle" not in meta["note"].replace("unpickling", "")
        assert meta["seat"] in (0, 1) and path.stem.endswith(f"-seat{meta['seat']}"), path
        assert fixture[path.stem]["seat"] == meta["seat"]
        assert pretrained_path(meta["edition"], meta["scenario"], meta["seat"]) == path
        seats.setdefault((meta["edition"], meta["scenario"]), set()).add(meta["seat"])
    assert seats and all(s == {0, 1} for s in seats.values()), seats  # one model per seat


def test_pretrained_path_is_per_seat():
    meta = json.loads(sorted(PRETRAINED_DIR.glob("*-seat1.json"))[0].read_text())
    ed, scen = meta["edition"], meta["scenario"]
    p0, p1 = pretrained_path(ed, scen, 0), pretrained_path(ed, scen, 1)
    assert p0 is not None and p1 is not None and p0 != p1
    assert pretrained_path(ed, scen) == p0
    with pytest.raises(ValueError, match="seat"):
        pretrained_path(ed, scen, 2)
    rules = load(ed, scen)
    assert make_sb3(rules, seat=1).name == f"sb3:{p1}"
    assert make_sb3(rules).name == f"sb3:{p0}"


@pytest.mark.parametrize("stem", sorted(json.loads(FIXTURE.read_text())))
def test_shipped_models_make_the_recorded_decisions(stem):
    """Probabilities recorded by a numpy forward pass over the raw weights, on sampled states."""
    entry = json.loads(FIXTURE.read_text())[stem]
    assert len(entry["states"]) >= 10
    fake = _fixture_rules(entry)
    net = load_safe(PRETRAINED_DIR / f"{stem}.safetensors")
    sampled = SB3Policy(net, fake, deterministic=False)
    best = SB3Policy(net, fake, deterministic=True)
    for i, row in enumerate(entry["states"]):
        probs = sampled.action_probabilities(fake, i, entry["seat"])
        got = [probs.get(a, 0.0) for a in row["legal"]]
        assert got == pytest.approx(row["probabilities"], abs=1e-6), (stem, i)
        choice = row["legal"][int(np.argmax(row["probabilities"]))]
        assert best.action_probabilities(fake, i, entry["seat"]) == {choice: 1.0}


@pytest.mark.parametrize("stem", sorted(json.loads(FIXTURE.read_text())))
def test_pretrained_agent_plays_from_the_safe_files(stem):
    meta = json.loads((PRETRAINED_DIR / f"{stem}.json").read_text())
    rules = load(meta["edition"], meta["scenario"])
    # A shipped model must fit its scenario as the rules are today (else: retrain it).
    assert [rules.observation_size, rules.num_actions] == [
        meta["observation_space"]["shape"][0], meta["action_space"]["n"]
    ], stem  # fmt: skip
    policy = make_sb3(rules, seat=meta["seat"])
    assert policy.name.endswith(f"{stem}.safetensors")
    states = [(s, p) for s, p in sample_states(rules, 60) if p == meta["seat"]]
    assert states
    for s, p in states:
        probs = policy.action_probabilities(rules, s, p)
        assert set(probs) <= set(rules.legal_actions(s))
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-12)


# ----------------------------------------------------------------------------- tuned files
def _tuned(folder: Path, rules, model: str) -> Path:
    best = folder / "best.json"
    best.write_text(json.dumps({"edition": rules.edition, "scenario": rules.scenario.name,
                                "family": "maskable-ppo", "params": {}, "value": 0.0,
                                "model": model}))  # fmt: skip
    return best


def test_tuned_rl_file_loads_a_safe_model_in_its_folder(tmp_path, rules):
    save_safe(tiny_policy(rules, "maskable"), tmp_path / "trials" / "0" / "model")
    best = _tuned(tmp_path, rules, "trials/0/model.safetensors")
    policy = make_tuned(rules, str(best))
    assert isinstance(policy, SB3Policy) and policy.name == f"tuned:{best}"


@pytest.mark.parametrize("where", ["parent", "absolute"])
def test_tuned_rl_file_refuses_a_model_outside_its_folder(tmp_path, rules, where):
    save_safe(tiny_policy(rules, "maskable"), tmp_path / "model")
    (tmp_path / "tuned").mkdir()
    ref = "../model.safetensors" if where == "parent" else str(tmp_path / "model.safetensors")
    with pytest.raises(ValueError, match="outside its own folder") as info:
        make_tuned(rules, str(_tuned(tmp_path / "tuned", rules, ref)))
    assert "\n" not in str(info.value)


def test_tuned_rl_file_never_loads_a_zip_even_when_trusted(tmp_path, rules, benign_zip,
                                                          monkeypatch):  # fmt: skip
    marker = tmp_path / "pwned"
    evil_zip(benign_zip[0], tmp_path / "model.zip", marker)
    monkeypatch.setenv(TRUST_ENV, "1")
    for ref in ("model.zip", "model"):
        with pytest.raises(ValueError) as info:
            make_tuned(rules, str(_tuned(tmp_path, rules, ref)))
        assert "\n" not in str(info.value) and "safe-format" in str(info.value)
    assert not marker.exists()


# ----------------------------------------------------------------------------- psygym export
@pytest.fixture
def cli():
    from psygym_experiments import export

    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """psygym (test app)."""

    export.register(app)
    return app


def test_export_writes_the_safe_format_beside_the_zip(tmp_path, rules, benign_zip, cli):
    src, model = benign_zip
    zp = tmp_path / "model.zip"
    zp.write_bytes(src.read_bytes())
    (tmp_path / "model.json").write_text(src.with_suffix(".json").read_text())
    result = CliRunner().invoke(cli, ["export", str(zp), "--trust-pickle"])
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "model.json").read_text())
    assert doc["format"] == FORMAT and doc["edition"] == rules.edition
    assert doc["converted_from"] == "model.zip" and "unpickling" in doc["note"]
    states = sample_states(rules, 100)
    expected = all_probabilities(SB3Policy(model, rules, deterministic=False), rules, states)
    got = make_sb3(rules, str(tmp_path / "model.safetensors"), deterministic=False)
    # make_sb3 plays the NumPy twin of the network (psygym_agents.policy_net): the same
    # probabilities up to float32 rounding
    for a, b in zip(all_probabilities(got, rules, states), expected, strict=True):
        assert set(a) == set(b) and all(abs(a[k] - b[k]) < 1e-6 for k in a)


def test_export_out_folder(tmp_path, benign_zip, cli):
    result = CliRunner().invoke(
        cli, ["export", str(benign_zip[0]), "--trust-pickle", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "o" / "model.safetensors").is_file()
    assert load_safe(tmp_path / "o").action_space.n > 1


def test_export_errors_are_one_line(tmp_path, benign_zip, cli):
    marker = tmp_path / "pwned"
    bad = evil_zip(benign_zip[0], tmp_path / "bad.zip", marker)
    text = tmp_path / "notes.zip"
    text.write_text("not a zip")
    cases = [
        ([str(tmp_path / "missing.zip"), "--trust-pickle"], "no model file"),
        ([str(text), "--trust-pickle"], "is not a stable-baselines3 .zip"),
        ([str(tmp_path / "bad.json"), "--trust-pickle"], "is not a stable-baselines3 .zip"),
        ([str(bad)], "--trust-pickle"),
    ]
    (tmp_path / "bad.json").write_text("{}")
    for args, words in cases:
        result = CliRunner().invoke(cli, ["export", *args])
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], result.output
    assert not marker.exists() and not (tmp_path / "bad.safetensors").exists()


@pytest.mark.parametrize("edition", ["7th", "8th"])
def test_the_documented_self_play_bases_load_and_fine_tune(edition, tmp_path):
    """docs/strength.md starts its exploiters from these: they must fit the duel as it is now."""
    from psygym_experiments.harness.train_config import make_config

    path = Path(__file__).resolve().parent.parent / "docs/strength" / f"selfplay-{edition}-duel"
    rules = load(edition, "duel")
    policy = resolve_policy(str(path) + ".safetensors", rules)
    s, rng = rules.initial_state(), np.random.default_rng(0)
    while (p := rules.current_player(s)) == CHANCE:
        s = rules.apply(s, rules.sample_chance(s, rng))
    assert p != TERMINAL and set(policy.action_probabilities(rules, s, p)) <= set(
        rules.legal_actions(s)
    )
    meta = json.loads(path.with_suffix(".json").read_text())
    assert (meta["edition"], meta["scenario"], meta["opponent"]) == (edition, "duel", "self")
    cfg = make_config(edition, "duel", steps=64, opponent="random", seat=0,
                      init=str(path) + ".safetensors")  # fmt: skip
    assert cfg.init and cfg.hyperparams["policy_kwargs"]["net_arch"] == meta["policy"]["net_arch"]


def _documented_exploiter(edition: str) -> tuple[Path, dict, object]:
    """docs/strength, the recorded per-game scores of an edition's exploiter and its duel rules."""
    folder = Path(__file__).resolve().parent.parent / "docs/strength"
    scores = json.loads((folder / f"exploiter-{edition}-duel/scores.json").read_text())
    return folder, scores, load(edition, "duel")


def test_the_documented_exploiter_scores_replay():
    """docs/strength.md's game-by-game exploiter figures: the recorded games replay exactly."""
    from psygym_experiments.harness.games import play_games

    folder, scores, rules = _documented_exploiter("7th")
    wc = resolve_policy("double-wc", rules)
    base = resolve_policy(str(folder / "selfplay-7th-duel.safetensors"), rules)
    stats, _ = play_games(rules, [base, wc], 1_000_003, range(20))
    assert stats.scores == scores["against double-wc"]["base"][:20]
    exploiter_path = folder / "exploiter-7th-duel/search-exploiter.safetensors"
    exploiter = resolve_policy(str(exploiter_path), rules)
    search = resolve_policy("search:exact=no;phase=no", rules)  # the record's search: one cast
    stats, _ = play_games(rules, [exploiter, search], 1_000_003, range(2))
    assert stats.scores == scores["against search"]["fine-tuned"][:2]
    stats, _ = play_games(rules, [wc, wc], 1_000_003, range(20))
    assert stats.scores == scores["against double-wc"]["double-wc"][:20]


def test_the_documented_8th_exploiter_replays_and_its_gain_is_the_recorded_one():
    """docs/strength.md's 8th exploiter of best-power-first: games replay, the gain is +2.405."""
    from psygym_experiments.harness.games import play_games

    folder, scores, rules = _documented_exploiter("8th")
    bpf = resolve_policy("best-power-first", rules)
    exploiter = resolve_policy(str(folder / "exploiter-8th-duel/bpf-exploiter.safetensors"), rules)
    stats, _ = play_games(rules, [exploiter, bpf], 1_000_003, range(40))
    recorded = scores["against best-power-first"]
    assert stats.scores == recorded["end"][:40]
    gains = np.subtract(recorded["end"], recorded["start"])
    assert len(gains) == 200 and np.mean(gains) == pytest.approx(2.405)
    base = resolve_policy(str(folder / "selfplay-8th-duel.safetensors"), rules)
    # The record's search was the lookahead of one cast alone (before search solved whole every
    # rest of the game, or Psychic phase, that fits): replayed with that search.
    search = resolve_policy("search:exact=no;phase=no", rules)
    stats, _ = play_games(rules, [base, search], 1_000_003, range(1))
    assert stats.scores == scores["against search"]["base"][:1]
