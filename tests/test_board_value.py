"""The board value's file format: weights and JSON, loaded without unpickling, checked on load."""

from __future__ import annotations

import json

import numpy as np
import pytest
from psygym_agents.value import BoardValue, ValueModelError

import psygym


def _model(n_in: int, seed: int = 0) -> BoardValue:
    rng = np.random.default_rng(seed)
    weights = [
        (rng.normal(size=(n_in, 8)), rng.normal(size=8)),
        (rng.normal(size=(8, 1)), rng.normal(size=1)),
    ]
    return BoardValue(weights, rng.normal(size=n_in), np.full(n_in, 2.0), {"edition": "8th"})


def test_predict_is_the_mlp_by_hand():
    model = _model(3)
    x = np.array([[0.5, -1.0, 2.0]])
    (w0, b0), (w1, b1) = model.weights
    by_hand = np.tanh(((x - model.mean) / model.scale) @ w0 + b0) @ w1 + b1
    assert model.predict(x)[0] == pytest.approx(by_hand[0, 0])


def test_save_load_round_trip_keeps_predictions(tmp_path):
    rules = psygym.load("8th", "duel")
    model = _model(rules.observation_size)
    model.save(tmp_path / "v")
    again = BoardValue.load(tmp_path / "v.safetensors")
    state = rules.initial_state()
    assert again(rules, state) == pytest.approx(model(rules, state), abs=1e-4)
    assert again.meta["edition"] == "8th"


def test_a_changed_weights_file_is_refused(tmp_path):
    model = _model(4)
    path = model.save(tmp_path / "v")
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ValueModelError, match="changed since"):
        BoardValue.load(path)


def test_a_foreign_format_is_refused(tmp_path):
    _model(4).save(tmp_path / "v")
    meta = json.loads((tmp_path / "v.json").read_text())
    meta["format"] = "pickle"
    (tmp_path / "v.json").write_text(json.dumps(meta))
    with pytest.raises(ValueModelError, match="format"):
        BoardValue.load(tmp_path / "v")


def test_a_model_of_another_shape_or_edition_is_refused():
    rules = psygym.load("7th", "duel")
    with pytest.raises(ValueModelError, match="edition 8th"):
        _model(rules.observation_size).check_rules(rules)
    other = _model(rules.observation_size + 1)
    other.meta["edition"] = "7th"
    with pytest.raises(ValueModelError, match="observation entries"):
        other.check_rules(rules)


def _summary(finished: int, total: int) -> dict:
    rounds = [
        {"round": 1, "boards": 2, "rmse": 2.4, "bias": -2.1, "mean_se": 0.8},
        {"round": 2, "boards": 2, "rmse": 0.6, "bias": 0.1, "mean_se": 0.6},
        {"round": "all", "boards": 4, "rmse": 1.2, "bias": -1.0, "mean_se": 0.7},
    ]
    return {"finished": finished, "total": total, "rounds": rounds}


def test_the_error_note_quotes_a_finished_check_before_the_bellman_rmse(tmp_path):
    from psygym_agents.value.model import checked_block

    model = _model(4)
    model.meta["rmse"] = 0.5
    assert model.error_note == "its error about 0.50 points"
    model.meta["checked"] = checked_block(_summary(4, 4), "psygym value-check ...")
    model.save(tmp_path / "v")
    again = BoardValue.load(tmp_path / "v")
    assert again.meta["checked"]["rounds"][0] == {"round": 1, "boards": 2, "rmse": 2.4,
                                                   "mean_se": 0.8}  # fmt: skip
    assert again.error_note == (
        "its error about 1.20 points against games played out, 2.40 in round 1"
    )
    again.meta["checked"]["rounds"][0]["rmse"] = 1.4  # not well above the whole figure
    assert again.error_note == "its error about 1.20 points against games played out"


def test_an_unfinished_check_or_a_malformed_block_is_refused(tmp_path):
    from psygym_agents.value.model import checked_block

    with pytest.raises(ValueModelError, match="3 of 4 boards finished"):
        checked_block(_summary(3, 4), "psygym value-check ...")
    _model(4).save(tmp_path / "v")
    meta = json.loads((tmp_path / "v.json").read_text())
    meta["checked"] = {"by": "x", "rmse": 1.0, "rounds": [{"round": "1", "rmse": 1.0}]}
    (tmp_path / "v.json").write_text(json.dumps(meta))
    with pytest.raises(
        ValueModelError, match=r"checked\.rounds\.0\.round: Input should be a valid"
    ):
        BoardValue.load(tmp_path / "v")


def test_search_quotes_the_values_error_note():
    from psygym_agents.solvers.search import LookaheadPolicy

    rules = psygym.load("8th", "duel")
    model = _model(rules.observation_size)
    model.meta.update(edition="8th", rmse=0.75)
    assert LookaheadPolicy(rules, model).note.endswith("estimated (its error about 0.75 points)")
    model.meta["checked"] = {"by": "x", "rmse": 1.5, "rounds": []}
    note = LookaheadPolicy(rules, model).note
    assert note.endswith("estimated (its error about 1.50 points against games played out)")
