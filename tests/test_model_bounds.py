"""Bounds before allocation and byte-deterministic saves, for safe models and board values.

A tampered model JSON asking for a huge network is refused before anything big is built (with
the memory traced), NaN or infinite weights are refused naming the file and tensor, a seat must
be 0, 1 or "both", board values check their layer count, shapes and numbers, and two saves of
the same tensors are byte-identical (safetensors writes its metadata in hash-map order).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from psygym_agents.safe_model import SafeModelError, load_safe, save_safe
from psygym_agents.sb3 import make_sb3
from psygym_agents.value import BoardValue, ValueModelError
from test_safe_models import _tamper, tiny_policy

from psygym.edition import editions
from psygym.editions import load


@pytest.fixture(scope="module")
def rules():
    """The default scenario with the smallest observation (as in ``test_safe_models``)."""
    return min((load(e.id) for e in editions()), key=lambda r: r.observation_size)


# ----------------------------------------------------------------------------- bounds
@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda d: d["observation_space"].update(shape=[10**9], low=0.0, high=1.0),
         "at most 100000 entries"),
        (lambda d: d["observation_space"].update(shape=[2**32, 2**32]), "at most 100000 entries"),
        (lambda d: d["observation_space"].update(shape=[1, 1, 1, 1, 1]), "at most 4 dimensions"),
        (lambda d: d["action_space"].update(n=10**9), "n is 1 to 100000"),
        (lambda d: d["policy"].update(net_arch=[10**6]), "at most 16 layers of at most 4096"),
        (lambda d: d["policy"].update(net_arch=[8] * 17), "at most 16 layers"),
        (lambda d: d["policy"].update(net_arch=[4096] * 16), "at most 10000000"),
        (lambda d: d.update(seat=5), "seat is 5; a model's seat is 0, 1 or \"both\""),
        (lambda d: d.update(seat=True), "seat is True"),
        (lambda d: d.update(seats=[0, 2]), "seats is [0, 2]"),
        (lambda d: d["observation_space"].update(low=float("nan")), "expected numbers"),
    ],
    ids=["shape", "shape-overflow", "dims", "actions", "width", "depth", "weights", "seat-5",
         "seat-true", "seats", "nan-bound"],
)  # fmt: skip
def test_sizes_are_checked_before_anything_is_built(tmp_path, rules, edit, words):
    """A tampered JSON asking for a huge network is refused while almost nothing is allocated."""
    import tracemalloc

    weights = _tamper(tmp_path, rules, edit)
    tracemalloc.start()
    try:
        with pytest.raises(SafeModelError) as info:
            load_safe(weights)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    msg = str(info.value)
    assert "\n" not in msg and words in msg and str(tmp_path / "model.json") in msg, msg
    assert peak < 20_000_000, peak  # the shape [10**9] alone would be a 4 GB Box bound


def test_both_is_a_seat_and_the_metadata_reader_checks_it_too(tmp_path, rules):
    from psygym_agents.sb3 import read_metadata

    _tamper(tmp_path, rules, lambda d: d.update(seat="both"))
    assert load_safe(tmp_path / "model").psygym_metadata["seat"] == "both"
    assert read_metadata(tmp_path / "model.safetensors")["seat"] == "both"
    _tamper(tmp_path, rules, lambda d: d.update(seat=5))
    with pytest.raises(SafeModelError, match="seat is 5"):
        read_metadata(tmp_path / "model.safetensors")


def _retensor(weights: Path, change, tensors_as: str = "torch") -> None:
    """Rewrite a model's weights with ``change(tensors)`` applied, its JSON's SHA-256 updated.

    ``tensors_as`` is the safetensors flavour the model's tensors are read as: ``"torch"`` for
    a policy, ``"numpy"`` for a board value.
    """
    import importlib

    from psygym_agents.safe_model import file_sha256

    flavour = importlib.import_module(f"safetensors.{tensors_as}")
    tensors = flavour.load_file(str(weights))
    change(tensors)
    flavour.save_file(tensors, str(weights))
    meta = weights.with_suffix(".json")
    doc = json.loads(meta.read_text())
    doc["weights_sha256"] = file_sha256(weights)
    meta.write_text(json.dumps(doc))


@pytest.mark.parametrize("bad", [float("nan"), float("inf")], ids=["nan", "inf"])
def test_non_finite_weights_are_refused_naming_file_and_tensor(tmp_path, rules, bad):
    save_safe(tiny_policy(rules, "maskable"), tmp_path / "model")
    weights = tmp_path / "model.safetensors"
    name = sorted(load_safe(weights).state_dict())[3]

    def poison(tensors):
        tensors[name].view(-1)[0] = bad

    _retensor(weights, poison)
    with pytest.raises(SafeModelError) as info:
        make_sb3(rules, str(weights))
    msg = str(info.value)
    what = "NaN" if bad != bad else "infinite"
    assert msg == (f"{weights}: tensor {name} holds {what} values; a model's weights are finite "
                   "numbers (train or export the model again)")  # fmt: skip


@pytest.mark.parametrize("kind", ["maskable", "ppo", "dqn"])
def test_two_saves_of_the_same_model_are_byte_identical(tmp_path, rules, kind):
    """safetensors writes its metadata in hash-map order; the saved files must not depend on it."""
    net = tiny_policy(rules, kind)
    meta = {"edition": rules.edition, "scenario": "x", "seat": 1, "steps": 5}
    blobs = set()
    for i in range(12):  # one save's metadata order is a coin flip: 12 agreeing saves are a test
        save_safe(net, tmp_path / f"m{i}", meta)
        blobs.add(((tmp_path / f"m{i}.safetensors").read_bytes(),
                   (tmp_path / f"m{i}.json").read_bytes()))  # fmt: skip
    assert len(blobs) == 1
    assert load_safe(tmp_path / "m0").state_dict().keys() == net.state_dict().keys()


def test_board_values_and_optimizer_states_save_byte_identical(tmp_path):
    from psygym_experiments.harness.model_files import load_optimizer, save_optimizer

    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(5, 4)), rng.normal(size=4)),
              (rng.normal(size=(4, 1)), rng.normal(size=1))]  # fmt: skip
    value = BoardValue(layers, rng.normal(size=5), np.full(5, 2.0), {"edition": "7th", "b": 1})
    blobs = {(value.save(tmp_path / f"v{i}").read_bytes(),
              (tmp_path / f"v{i}.json").read_bytes()) for i in range(6)}  # fmt: skip
    assert len(blobs) == 1
    assert BoardValue.load(tmp_path / "v0").predict(np.ones(5)) == pytest.approx(
        value.predict(np.ones(5)), abs=1e-5
    )
    net = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(net.parameters())
    net(torch.ones(1, 3)).sum().backward()
    opt.step()
    digests = {save_optimizer(opt, tmp_path / f"o{i}.safetensors") for i in range(6)}
    assert len(digests) == 1
    load_optimizer(torch.optim.Adam(net.parameters()), tmp_path / "o0.safetensors", *digests)


def _value_files(tmp_path) -> Path:
    rng = np.random.default_rng(1)
    BoardValue([(rng.normal(size=(4, 3)), rng.normal(size=3)),
                (rng.normal(size=(3, 1)), rng.normal(size=1))],
               np.zeros(4), np.ones(4)).save(tmp_path / "v")  # fmt: skip
    return tmp_path / "v.safetensors"


def _value_meta(weights: Path, change) -> None:
    meta = weights.with_suffix(".json")
    doc = json.loads(meta.read_text())
    change(doc)
    meta.write_text(json.dumps(doc))


VALUE_TAMPERING = {  # a change to a board value's files -> words of the one error line
    "nan": (lambda t: t["w1"].__setitem__((0, 0), np.nan), None, "tensor w1 holds NaN"),
    "inf-mean": (lambda t: t["mean"].__setitem__(0, np.inf), None, "tensor mean holds NaN or inf"),
    "zero-scale": (lambda t: t["scale"].__setitem__(1, 0.0), None, "tensor scale holds 0"),
    "wrong-shape": (lambda t: t.__setitem__("b0", np.zeros(5, np.float32)), None,
                    "tensor b0 is (5,), the layers need (3,)"),
    "extra": (lambda t: t.__setitem__("w9", np.zeros(1, np.float32)), None, "unexpected tensor w9"),
    "layers-huge": (None, lambda d: d.update(layers=10**9), "layers is 1000000000; 1 to 17"),
    "layers-text": (None, lambda d: d.update(layers="3"), "layers is '3'"),
    "input-huge": (None, lambda d: d.update(input_size=10**9), "input_size is 1000000000"),
    "input-other": (None, lambda d: d.update(input_size=5), "tensor mean is (4,)"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(VALUE_TAMPERING))
def test_board_value_sizes_and_weights_are_checked(tmp_path, name):
    weights = _value_files(tmp_path)
    tensors, meta, words = VALUE_TAMPERING[name]
    if tensors is not None:
        _retensor(weights, tensors, tensors_as="numpy")
    if meta is not None:
        _value_meta(weights, meta)
    with pytest.raises(ValueModelError) as info:
        BoardValue.load(weights)
    msg = str(info.value)
    assert "\n" not in msg and words in msg and str(tmp_path) in msg, msg
