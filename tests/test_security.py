"""Pickled payloads never run without --trust-pickle; names never leave the output folder.

Each payload, if unpickled, would create a marker file; the tests check that it does not exist.
"""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import pytest
from psygym_agents.sb3 import UntrustedModelError
from psygym_experiments.harness.runs import MAX_COMPONENT, inside, safe_component

from psygym.editions import load
from psygym.policies import resolve_policy


class _Payload:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "pwned"))


def _evil_zip(path: Path, marker: Path) -> Path:
    """An SB3-looking archive with one extra pickled entry that writes ``marker``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps({"policy_class": {":serialized:": "x"}}))
        z.writestr("pytorch_variables.pth", pickle.dumps(_Payload(marker)))
        z.writestr("policy.pth", pickle.dumps(_Payload(marker)))
    return path


@pytest.fixture
def marker(tmp_path, monkeypatch):
    monkeypatch.delenv("PSYGYM_TRUST_PICKLE", raising=False)
    return tmp_path / "MARKER"


def test_a_pickled_zip_agent_is_refused(tmp_path, marker):
    rules = load("7th", "single-phase")
    zip_path = _evil_zip(tmp_path / "evil.zip", marker)
    with pytest.raises(UntrustedModelError):
        resolve_policy(str(zip_path), rules)
    with pytest.raises(UntrustedModelError):
        resolve_policy(f"sb3:{zip_path}", rules)
    assert not marker.exists()


def test_a_tuned_json_naming_a_pickle_is_refused(tmp_path, marker):
    rules = load("7th", "single-phase")
    _evil_zip(tmp_path / "t" / "model.zip", marker)
    best = tmp_path / "t" / "best.json"
    best.write_text(
        json.dumps(
            {
                "edition": rules.edition,
                "scenario": rules.scenario.name,
                "family": "maskable-ppo",
                "params": {},
                "model": "model.zip",
            }
        )
    )
    with pytest.raises(ValueError):
        resolve_policy(f"tuned:{best}", rules)
    assert not marker.exists()


def test_compare_picks_up_only_safe_models_from_a_runs_folder(tmp_path, marker):
    from psygym_experiments.harness.model_files import final_model, trained_models

    run = tmp_path / "trained" / "x-duel" / "7th" / "duel" / "maskable-ppo_1"
    _evil_zip(run / "model.zip", marker)
    (run / "model.json").write_text("{}")
    assert trained_models(tmp_path / "trained") == []
    assert final_model(run) is None
    assert not marker.exists()


def test_a_pickled_resume_checkpoint_is_refused(tmp_path, marker):
    from psygym_experiments.harness.train_config import make_config
    from psygym_experiments.harness.training import resume_run
    from psygym_experiments.harness.training_files import write_config

    cfg = make_config("7th", "single-phase", steps=64, eval_every=32, eval_episodes=2)
    run = tmp_path / "run"
    run.mkdir()
    write_config(run, cfg)
    _evil_zip(run / "checkpoints" / "last.zip", marker)
    with pytest.raises(UntrustedModelError):
        resume_run(run)
    assert not marker.exists()


def test_a_checkpoint_naming_another_folder_is_refused(tmp_path):
    from psygym_experiments.harness.model_files import checkpoint_record

    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "last.json").write_text(
        json.dumps({"format": "psygym-checkpoint/1", "dir": "../../elsewhere", "steps": 1})
    )
    with pytest.raises(ValueError, match="step_<n>"):
        checkpoint_record(tmp_path)


ESCAPES = ["..", "../../../X", "/etc/passwd", "/tmp/abs", "a/b/c", "a\\b", "x\0y", ".hidden",
           "a" * 5000, "", " ", "~", "../" * 50, "con\n", "é/../.."]  # fmt: skip


@pytest.mark.parametrize("name", ESCAPES)
def test_every_path_escape_stays_inside_the_output_folder(tmp_path, name):
    part = safe_component(name)
    assert part and "/" not in part and "\\" not in part and "\0" not in part
    assert not part.startswith(".") and len(part) <= MAX_COMPONENT
    path = inside(tmp_path, "7th", name, f"tune_{name}")
    path.mkdir(parents=True)
    assert path.resolve().is_relative_to(tmp_path.resolve())


def test_different_names_never_share_a_folder():
    names = ["a/b", "a b", "a-b", "a\\b", "../a-b"]
    assert len({safe_component(n) for n in names}) == len(names)


def test_a_scenario_named_to_escape_trains_inside_runs(tmp_path):
    from psygym_experiments.harness.train_config import make_config
    from psygym_experiments.harness.training_files import start_run

    toml = Path(load("7th").scenario.path) if hasattr(load("7th").scenario, "path") else None
    src = toml if toml and toml.is_file() else None
    if src is None:
        from psygym.edition import get

        src = Path(get("7th").scenario_dir) / "single-phase.toml"
    text = src.read_text()
    evil = tmp_path / "evil.toml"
    import re

    evil.write_text(re.sub(r"(?m)^name\s*=.*$", 'name = "../../../ESCAPED"', text, count=1))
    cfg = make_config("7th", str(evil), steps=64, eval_every=32, eval_episodes=2)
    runs = tmp_path / "runs"
    run = start_run(cfg, runs)
    assert run.resolve().is_relative_to(runs.resolve())
    assert not list(tmp_path.parent.glob("ESCAPED*")) and not (tmp_path / "ESCAPED").exists()
