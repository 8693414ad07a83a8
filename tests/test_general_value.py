"""One board value per edition: composing it with a scenario's features, the shipped fallback,
lambda-returns, and ``psygym train --algo value --scenario random`` on a tiny budget."""

from __future__ import annotations

import json

import numpy as np
import pytest
from psygym_agents.solvers.search import NO_VALUE, LookaheadPolicy, make_search
from psygym_agents.value import BoardValue, ValueModelError, general, load_value, shipped_value
from psygym_agents.value.features import board_features
from psygym_agents.value.general import READS, compose
from psygym_experiments.cli import app
from psygym_experiments.harness.best_heuristic import best_heuristic
from psygym_experiments.harness.general_value import (
    EVAL_FROM,
    TRAIN_FROM,
    GeneralConfig,
    accepted,
    is_general_scenario,
    lambda_returns,
)
from typer.testing import CliRunner

from psygym.core import CHANCE, TERMINAL
from psygym.editions import load

runner = CliRunner()


def random_general(rules, seed=0, hidden=(8,)):
    """A general value with random weights over ``rules``' edition's board features."""
    names = board_features(rules).names
    rng = np.random.default_rng(seed)
    sizes = [len(names), *hidden, 1]
    weights = [(rng.normal(size=(a, b)), rng.normal(size=b)) for a, b in zip(sizes, sizes[1:])]
    meta = {"edition": rules.edition, "scenario": "", "reads": READS, "features": list(names)}
    return BoardValue(weights, rng.normal(size=len(names)), rng.uniform(0.5, 2, len(names)), meta)


def states_of(rules, n=40, seed=0):
    """Up to ``n`` states of one random game (chance by its odds, moves uniform)."""
    rng = np.random.default_rng(seed)
    s, out = rules.initial_state(), []
    while len(out) < n and rules.current_player(s) != TERMINAL:
        out.append(s)
        if rules.current_player(s) == CHANCE:
            outcomes = rules.chance_outcomes(s)
            a = outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0]
        else:
            legal = rules.legal_actions(s)
            a = legal[rng.integers(len(legal))]
        s = rules.apply(s, a)
    return out


@pytest.mark.parametrize("edition,scenario", [("7th", "random:3"), ("7th", "duel"),
                                              ("8th", "random:5,psykers=3")])  # fmt: skip
def test_composed_value_equals_the_general_value_of_the_features(edition, scenario):
    rules = load(edition, scenario)
    model = random_general(rules)
    features = board_features(rules)
    composed = compose(model, features, scenario)
    for s in states_of(rules):
        obs = rules.observe(s, 0)
        want = model.predict(features(obs))[0]
        assert composed.predict(obs)[0] == pytest.approx(want, abs=1e-9)
    assert composed.input_size == rules.observation_size
    assert composed.meta["general"] is True


def test_a_general_value_of_other_features_is_refused():
    rules = load("7th", "random:3")
    model = random_general(rules)
    model.meta["features"] = ["own_points", *model.meta["features"][1:][::-1]]
    with pytest.raises(ValueModelError, match=r"reads 47 features.*part at feature 1: "):
        compose(model, board_features(rules))


def test_shipped_value_falls_back_to_the_general_one(tmp_path, monkeypatch):
    rules = load("7th", "random:21")
    random_general(rules).save(tmp_path / "value-7th")
    model = BoardValue.load(tmp_path / "value-7th.safetensors")  # float32, as shipped
    monkeypatch.setattr(
        general, "general_value_path", lambda e: tmp_path / f"value-{e}.safetensors"
    )
    value = shipped_value(rules)
    s = states_of(rules, 5)[-1]
    assert value(rules, s) == pytest.approx(
        model.predict(board_features(rules)(rules.observe(s, 0)))[0], abs=1e-9
    )
    duel = load("7th", "duel")
    assert not shipped_value(duel).meta.get("general")  # the duel keeps its own value
    agent = LookaheadPolicy(rules)
    assert "value for any army list" in agent.note
    assert LookaheadPolicy(rules, NO_VALUE).value is None


def test_load_value_composes_a_general_file_and_checks_its_edition(tmp_path):
    rules = load("7th", "random:4")
    random_general(rules).save(tmp_path / "g7")
    value = load_value(rules, tmp_path / "g7.safetensors")
    assert value.input_size == rules.observation_size
    assert make_search(rules, f"value={tmp_path / 'g7.safetensors'}").value is not None
    with pytest.raises(ValueModelError, match="edition 7th, not 8th"):
        load_value(load("8th", "random:4"), tmp_path / "g7.safetensors")


def test_a_value_asks_for_the_phase_search_in_its_json_and_an_option_overrides_it(tmp_path):
    eighth, seventh = load("8th", "random:4"), load("7th", "random:4")
    assert make_search(eighth).phase and "whole Psychic phase" in make_search(eighth).note
    assert not make_search(eighth, "phase=no").phase
    assert not make_search(seventh).phase and make_search(seventh, "phase=fit").phase
    value = random_general(seventh)
    value.meta["search_phase"] = "fit"
    value.save(tmp_path / "g7")
    assert make_search(seventh, f"value={tmp_path / 'g7.safetensors'}").phase


def test_lambda_returns_by_hand():
    data = {
        "score": np.array([0.0, 1.0, 3.0, 0.0, -2.0]),
        "final": np.array([4.0, 4.0, 4.0, -1.0, -1.0]),
        "game": np.array([0, 0, 0, 1, 1]),
    }
    v = np.array([9.0, 2.0, 5.0, 9.0, 3.0])
    mc = lambda_returns(data, v, 1.0)
    assert mc.tolist() == [4.0, 3.0, 1.0, -1.0, 1.0]
    td0 = lambda_returns(data, v, 0.0)
    assert td0.tolist() == [1.0 + 2.0, 2.0 + 5.0, 1.0, -2.0 + 3.0, 1.0]
    half = lambda_returns(data, v, 0.5)
    g2 = 1.0
    g1 = 2.0 + 0.5 * 5.0 + 0.5 * g2
    g0 = 1.0 + 0.5 * 2.0 + 0.5 * g1
    assert half.tolist() == pytest.approx([g0, g1, g2, -2.0 + 0.5 * 3.0 + 0.5 * 1.0, 1.0])


def test_training_and_held_out_seeds_never_meet():
    cfg = GeneralConfig(edition="7th", eval_lists=20)
    held_out = {cfg.list_seed(999, g) for g in range(100)}
    assert held_out == set(range(EVAL_FROM, EVAL_FROM + 20))
    train = {cfg.list_seed(k, g) for k in range(5) for g in range(0, 100_000, 997)}
    assert min(train) >= TRAIN_FROM and not train & held_out and max(held_out) < TRAIN_FROM
    assert is_general_scenario("random") and is_general_scenario("random,psykers=2")
    assert not is_general_scenario("random:3")


TINY = """\
iterations: 1
games: 4
eval_lists: 1
eval_games: 1
max_epochs: 3
patience: 2
workers: 1
"""


def test_train_general_value_tiny_run_and_resume(tmp_path):
    config = tmp_path / "tiny.yml"
    config.write_text(TINY)
    args = ["train", "--algo", "value", "--edition", "8th", "--scenario", "random,rounds=1",
            "--steps", "30", "--runs-dir", str(tmp_path / "runs"),
            "--config", str(config)]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    run = tmp_path / "runs" / "8th" / "random" / "value_1"
    metrics = json.loads((run / "metrics.json").read_text())
    assert [m["iteration"] for m in metrics] == [0, 1]
    assert all(m["heldout_boards"] > 0 and np.isfinite(m["heldout_rmse"]) for m in metrics)
    assert "iteration 1: held-out error" in result.output
    # Measured against the held-out list's best heuristic, chosen once for the run.
    best = best_heuristic(load("8th", f"random:{EVAL_FROM},rounds=1"))
    assert all(m["best_heuristics"] == [best] and np.isfinite(m["vs_best"]) for m in metrics)
    assert "vs best heuristic" in result.output
    assert (run / "metrics.csv").read_text().splitlines()[0].endswith("vs_best,vs_best_ci")
    assert (run / "learning_curve.png").stat().st_size > 1000
    final = BoardValue.load(run / "value.safetensors")
    assert final.meta["reads"] == READS and final.meta["edition"] == "8th"
    # Forget the last iteration and resume: the same games and fit come back.
    before = (run / "checkpoints" / "iteration_1.safetensors").read_bytes()
    progress = json.loads((run / "progress.json").read_text())
    progress["stages"], progress["metrics"] = [0], progress["metrics"][:1]
    (run / "progress.json").write_text(json.dumps(progress))
    result = runner.invoke(app, ["train", "--resume", str(run)])
    assert result.exit_code == 0, result.output
    assert (run / "checkpoints" / "iteration_1.safetensors").read_bytes() == before
    assert json.loads((run / "metrics.json").read_text()) == metrics


def test_train_general_value_refuses_bad_settings(tmp_path):
    config = tmp_path / "bad.yml"
    config.write_text("td_lambda: 2\n")
    result = runner.invoke(app, ["train", "--algo", "value", "--edition", "7th", "--scenario",
                                 "random", "--config", str(config), "--runs-dir",
                                 str(tmp_path)])  # fmt: skip
    assert result.exit_code != 0
    assert "td_lambda must be a number from 0 to 1" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "7th").exists()


def test_a_refit_that_kept_its_start_ends_the_run(tmp_path):
    from psygym_experiments.harness.general_value import _Run

    run = _Run(GeneralConfig(edition="8th"), tmp_path, show_progress=False)
    run.model_stem(0).parent.mkdir()
    rules = load("8th", "random:3")
    random_general(rules, seed=1).save(run.model_stem(0))
    random_general(rules, seed=2).save(run.model_stem(1))
    assert not run.kept_start(1, 0)
    random_general(rules, seed=2).save(run.model_stem(2))
    assert run.kept_start(2, 1)  # the same weights: the returns reached the value's fixed point
    row = {"iteration": 2, "vs_previous": -0.5, "vs_previous_ci": 0.4}
    assert not accepted(row) and accepted({**row, "vs_previous_ci": 0.6})
    assert accepted({"iteration": 0, "vs_previous": -9.0, "vs_previous_ci": 0.1})


@pytest.mark.parametrize("edition", ["rt", "2nd", "7th", "8th"])
def test_every_edition_ships_a_value_for_any_list(edition):
    """A list no one trained on gets the edition's value, composed for its observation."""
    path = general.general_value_path(edition)
    model = BoardValue.load(path)
    assert model.meta["reads"] == READS and model.meta["edition"] == edition
    rules = load(edition, "random:499")
    value = shipped_value(rules)
    assert value.meta["general"] and value.input_size == rules.observation_size
    assert np.isfinite(value(rules, rules.initial_state()))


class _InlinePool:
    """Plays submitted chunks at once; a chunk from ``stop_at`` on raises, as a stopped run."""

    def __init__(self, stop_at=None):
        self.starts, self.stop_at = [], stop_at

    def submit(self, fn, *args):
        from concurrent.futures import Future

        games, done = args[2], Future()
        self.starts.append(games.start)
        if self.stop_at is not None and games.start >= self.stop_at:
            done.set_exception(KeyboardInterrupt())
        else:
            done.set_result(fn(*args))
        return done


def test_a_stopped_stage_keeps_its_finished_chunks_and_plays_only_the_rest(tmp_path):
    from psygym_experiments.harness.general_value import _Run

    cfg = GeneralConfig(edition="8th", scenario="random,rounds=1", steps=120, workers=1)
    stopped = _Run(cfg, tmp_path / "a", show_progress=False)
    with pytest.raises(KeyboardInterrupt):
        stopped.play(_InlinePool(stop_at=100), 0, 120, None)
    assert sorted(p.name for p in stopped.parts_dir(0).iterdir()) == [
        "games_0_50.npz", "games_50_100.npz",
    ]  # fmt: skip
    resumed = _InlinePool()
    data = stopped.play(resumed, 0, 120, None)
    assert resumed.starts == [100]  # the finished chunks are not played again
    whole = _Run(cfg, tmp_path / "b", show_progress=False).play(_InlinePool(), 0, 120, None)
    assert data.keys() == whole.keys()
    assert all(np.array_equal(data[k], whole[k]) for k in data)
    assert sorted(set(data["game"].tolist())) == sorted(set(whole["game"].tolist()))
    assert len(data["seeds"]) == 120


def test_a_stage_refuses_a_chunk_folder_that_links_out_of_the_run(tmp_path):
    from psygym_experiments.harness.general_value import _Run
    from psygym_experiments.harness.output import UnsafeOutputError

    outside = tmp_path / "outside"
    outside.mkdir()
    run = _Run(GeneralConfig(edition="8th", scenario="random,rounds=1"), tmp_path / "run", False)
    run.parts_dir(0).parent.mkdir(parents=True)
    run.parts_dir(0).symlink_to(outside)
    with pytest.raises(UnsafeOutputError, match="outside the output folder"):
        run.play(_InlinePool(), 0, 10, None)
    assert list(outside.iterdir()) == []


def test_rogue_trader_value_keeps_a_point_a_power_would_waste():
    """``random:2``: Blue's Inquisitor knows nothing that scores (Telekinesis, Telepathy and
    Teleport are worth 0 in a psychic-phase game, RT-4.8), so resting (RT-5) beats spending a
    psi-point on any of them. The value fitted without its monotone directions spent one."""
    from psygym.core import CHANCE

    rules = load("rt", "random:2")
    s, rng = rules.initial_state(), np.random.default_rng(0)
    while rules.current_player(s) == CHANCE:
        s = rules.apply(s, rules.sample_chance(s, rng))
    dist = make_search(rules).action_probabilities(rules, s, 0)
    assert [rules.action_label(s, a) for a in dist] == ["Inquisitor rests"]
