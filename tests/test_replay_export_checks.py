"""Fields ``psygym replay`` checks, folders ``value-check`` refuses, and ``psygym export``'s lines.

Each game log here is written by the one writer (:class:`~.harness.gamelog.GameLog`) with the
header ``psygym play`` writes (:func:`~psygym_experiments.play_session.scenario_info`), then
edited and hash-chained again, so only replay's own checks can catch the edit.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from cli_helpers import clean_error, ok, run
from psygym_experiments.harness.gamelog import GENESIS, GameLog, chained_line
from psygym_experiments.play_session import scenario_info

from psygym.core import CHANCE
from psygym.edition import get
from psygym.editions import load

EDITION = "7th"


def _played(folder: Path, scenario: str = "single-phase", stop: int | None = None) -> Path:
    """A log of a random game on ``scenario`` (quit after ``stop`` steps if given)."""
    rules = load(EDITION, scenario)
    header = {"edition": rules.edition, **scenario_info(rules, EDITION, scenario), "seed": 3,
              "seat": 0, "opponent": "random"}  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    log = GameLog(folder / "game.jsonl", header)
    rng = np.random.default_rng(3)
    s = rules.initial_state()
    while not rules.is_terminal(s) and (stop is None or log.steps < stop):
        p = rules.current_player(s)
        # Not the lowest action (ending the phase at once) where there is another: a longer game.
        legal = rules.legal_actions(s)[1:] or rules.legal_actions(s) if p != CHANCE else []
        a = rules.sample_chance(s, rng) if p == CHANCE else legal[int(rng.integers(len(legal)))]
        log.step(p, a, rules.action_label(s, a))
        s = rules.apply(s, a)
    log.end(rules, s, "finished" if rules.is_terminal(s) else "quit")
    return log.path


def _edited(log: Path, change, name: str = "edited.jsonl") -> Path:
    """A copy of ``log`` changed by ``change(lines)`` and hash-chained again."""
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    change(lines)
    previous, out = GENESIS, []
    for obj in lines:
        text, previous = chained_line(previous, obj)
        out.append(text)
    path = log.with_name(name)
    path.write_text("".join(out))
    return path


def _setting(index: int, key: str, value):
    def change(lines):
        if value is KeyError:
            del lines[index][key]
        else:
            lines[index][key] = value

    return change


# ----------------------------------------------------------------------------- replay
def test_replay_refuses_an_end_result_the_game_contradicts(tmp_path):
    log = _played(tmp_path)
    end = len(log.read_text().splitlines())
    for result in ("quit", "error"):
        bad = _edited(log, _setting(-1, "result", result))
        clean_error(
            run("replay", bad, "--quiet"),
            f"{bad}: line {end} (the end line)",
            f'ended by "{result}"',
            'allowed: "finished"',
        )
    quit_log = _played(tmp_path / "quit", stop=3)  # a game stopped early says "quit"
    assert "(not finished)" in ok("replay", quit_log, "--quiet")


def test_replay_refuses_a_format_it_does_not_write(tmp_path):
    log = _played(tmp_path)
    for value, shown in ((99, "99"), ("2", '"2"'), (2.0, "2.0"), (KeyError, "missing")):
        bad = _edited(log, _setting(0, "format", value))
        clean_error(
            run("replay", bad), f"{bad}: line 1: the header's format is {shown}", "allowed: 2"
        )
        clean_error(
            run("advise", "--from-log", bad, "--at", 1), "the header's format is", "allowed: 2"
        )


def test_replay_checks_the_step_count_n(tmp_path):
    log = _played(tmp_path)
    for index, value, shown in ((3, 77, "77"), (1, True, "true"), (2, "2", '"2"'),
                                (3, KeyError, "missing")):  # fmt: skip
        bad = _edited(log, _setting(index, "n", value))
        clean_error(
            run("replay", bad, "--quiet"),
            f'{bad}: line {index + 1}: "n" is {shown}',
            f"allowed: {index}",
        )


def test_replay_refuses_a_seed_or_edition_of_another_kind(tmp_path):
    log = _played(tmp_path)
    for value, shown in ((-1, "-1"), ("3", '"3"'), (True, "true"), (KeyError, "missing")):
        bad = _edited(log, _setting(0, "seed", value))
        clean_error(run("replay", bad, "--quiet"), f"{bad}: line 1: the header's seed is {shown}",
                    "allowed: a whole number 0 or more")  # fmt: skip
    bad = _edited(log, _setting(0, "edition", 7))
    clean_error(run("replay", bad, "--quiet"), "the header's edition is 7", "(a string)")


def test_replay_never_reads_scenario_path_and_refuses_one_that_disagrees(tmp_path):
    # A shipped scenario is replayed by name: a path elsewhere is ignored, with a warning.
    log = _played(tmp_path / "shipped")
    shipped = Path(get(EDITION).scenario_dir) / "single-phase.toml"
    other = tmp_path / "other.toml"
    other.write_text("not the scenario\n")
    res = run("replay", _edited(log, _setting(0, "scenario_path", str(other))), "--quiet")
    assert res.exit_code == 0 and "matches the log" in res.stdout, (res.stdout, res.stderr)
    assert "ignored" in res.stderr and str(shipped.resolve()) in res.stderr, res.stderr
    assert "changed since" not in res.stderr, res.stderr
    # A scenario file of one's own: scenario_path is the file scenario_arg names, or refused.
    mine = tmp_path / "mine.toml"
    mine.write_text(shipped.read_text())
    twin = tmp_path / "twin.toml"
    twin.write_text(shipped.read_text())  # same bytes, same hash: only the path differs
    own = _played(tmp_path / "own", str(mine))
    assert ok("replay", own, "--quiet")
    clean_error(
        run("replay", _edited(own, _setting(0, "scenario_path", str(twin.resolve())))),
        "line 1: the header's scenario_path is",
        f"allowed: {mine.resolve()}",
    )
    # A random battle has no file.
    battle = _played(tmp_path / "random", "random:3", stop=4)
    assert ok("replay", battle, "--quiet")
    clean_error(
        run("replay", _edited(battle, _setting(0, "scenario_path", str(mine)))),
        "the header's scenario_path is",
        "a random battle (random:3) has no file; allowed: null",
    )
    # The hash is still compared, with the shipped file's; a hash that is not one is refused.
    res = run("replay", _edited(log, _setting(0, "scenario_sha256", "0" * 64)), "--quiet")
    assert res.exit_code == 0 and "shipped scenario single-phase" in res.stderr, res.stderr
    clean_error(
        run("replay", _edited(log, _setting(0, "scenario_sha256", "xyz"))),
        "scenario_sha256 is",
        "allowed: a SHA-256 in hex",
    )


def test_advise_from_log_says_a_folder_is_a_folder_as_replay_does(tmp_path):
    folder = tmp_path / "adir.jsonl"
    folder.mkdir()
    said = clean_error(run("advise", "--from-log", folder, "--at", 1), "--from-log: ")
    same = clean_error(run("replay", folder), f"{folder} is a folder, not a game log")
    assert said.removeprefix("error: --from-log: ") == same.removeprefix("error: ")


# ----------------------------------------------------------------------------- value-check
def test_value_check_refuses_a_folder_that_is_not_its_run(tmp_path):
    args = ["value-check", "--edition", "rt", "--scenario", "duel", "--boards", 1,
            "--continuations", 3, "--agent", "bid-all", "--out"]  # fmt: skip
    notrun = tmp_path / "notrun"
    notrun.mkdir()
    (notrun / "summary.md").write_text("my notes\n")
    clean_error(
        run(*args, notrun),
        f"{notrun} is not a value-check run folder",
        "holds summary.md and no config.json",
        "allowed: a new or empty folder, or a value-check run folder to resume",
    )
    assert sorted(p.name for p in notrun.iterdir()) == ["summary.md"]
    assert (notrun / "summary.md").read_text() == "my notes\n"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "wrote" in ok(*args, empty)
    assert "wrote" in ok("value-check", "--out", empty)  # its own run: resumed


# ----------------------------------------------------------------------------- help texts
def test_help_names_every_form_the_option_takes():
    import typer
    from psygym_experiments.cli import app

    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]

    def help_of(command: str, option: str) -> str:
        return next(p.help for p in commands[command].params if p.name == option)

    assert "random:N" in help_of("value-check", "scenario")
    assert ".safetensors" in help_of("play", "opponent")


# ----------------------------------------------------------------------------- export
class _Spaces(gym.Env):
    """Spaces only: enough to build (not train) an SB3 algorithm."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (4,), dtype=np.float32)
    action_space = gym.spaces.Discrete(3)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(4, np.float32), {}

    def step(self, action):
        return np.zeros(4, np.float32), 0.0, True, False, {}

    def action_masks(self):
        return np.ones(3, bool)


@pytest.fixture(scope="module")
def sb3_zip(tmp_path_factory) -> bytes:
    """The bytes of a real (tiny, untrained) MaskablePPO ``.zip``."""
    from sb3_contrib import MaskablePPO

    path = tmp_path_factory.mktemp("sb3") / "tiny.zip"
    MaskablePPO("MlpPolicy", _Spaces(), n_steps=16, batch_size=16, seed=3,
                policy_kwargs={"net_arch": [8]}, device="cpu").save(path)  # fmt: skip
    return path.read_bytes()


def test_export_says_what_is_wrong_with_the_model_it_is_given(tmp_path, sb3_zip):
    upper, bare = tmp_path / "tiny.ZIP", tmp_path / "tiny"
    for path in (upper, bare):
        path.write_bytes(sb3_zip)
    clean_error(
        run("export", "--trust-pickle", upper), "its name must end in .zip", "rename it to tiny.zip"
    )
    clean_error(run("export", "--trust-pickle", bare), "its name must end in .zip")
    clean_error(run("export", "--trust-pickle", tmp_path), f"{tmp_path} is a folder")
    assert not list(tmp_path.glob("*.safetensors"))


def test_export_prints_a_pastable_name_and_never_writes_over_files(tmp_path, sb3_zip):
    folder = tmp_path / "we ird;"
    folder.mkdir()
    model = folder / "name.zip"
    model.write_bytes(sb3_zip)
    out = ok("export", "--trust-pickle", model)
    weights = folder / "name.safetensors"
    assert out.rstrip().endswith(f"use {shlex.quote(f'sb3:{weights}')}"), out
    assert shlex.split(out.rstrip().rsplit(" use ", 1)[1]) == [f"sb3:{weights}"]
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    clean_error(run("export", "--trust-pickle", model), f"{weights} exists already", "--out")
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    other = tmp_path / "other"
    assert "wrote" in ok("export", "--trust-pickle", model, "--out", other)
    clean_error(run("export", "--trust-pickle", model, "--out", other), "exists already")
    # Beside the zip, its <stem>.json is its metadata (carried on); anything else is refused.
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "name.zip").write_bytes(sb3_zip)
    (notes / "name.json").write_text("my notes\n")
    clean_error(run("export", "--trust-pickle", notes / "name.zip"), "is not the zip's metadata")
    assert (notes / "name.json").read_text() == "my notes\n"
    assert not (notes / "name.safetensors").exists()
