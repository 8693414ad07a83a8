"""The command line as a new user meets it: Ctrl-C, agent names, help texts, cfr, train steps.

* Ctrl-C ends every command in one ``interrupted: ...`` line on stderr and exit status 130 (a
  command that explains its own interruption, such as ``evaluate``, prints only its own line);
* an unknown agent's error lists every name the command takes (``best-heuristic``, ``auto``);
* ``odds --max-dice``, ``cheatsheet`` and the ``--scenario`` of ``solve`` and ``advise`` say
  where they apply;
* ``cfr`` refuses an unknown agent before any counting or CFR, and suggests only a smaller
  scenario it counted and found to fit;
* ``train`` says how many steps it trains when SB3 rounds ``--steps`` up to a whole rollout, and
  ``train`` and ``tune`` take ``--n-envs`` from one place.
"""

from __future__ import annotations

import inspect
import os
import re
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
from cli_helpers import clean_error, ok, run

TINY_RT = ("rt", "random:2,psykers=1,rounds=1,mastery=1-1")
"""A generated scenario of a few thousand histories (CFR on it takes about a second)."""


def _flat(text: str) -> str:
    """Help text on one line: the box drawing and the wrapping removed."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


# ----------------------------------------------------------------------------- Ctrl-C
def test_sigint_ends_a_running_command_in_one_interrupted_line():
    child = (
        "import sys\n"
        "from psygym_experiments.cli import run\n"
        "print('loaded', flush=True)\n"
        "sys.exit(run(['simulate', '--edition', '7th', '--episodes', '100000']))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", child],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        # a child of a non-interactive shell may inherit SIGINT ignored: Ctrl-C as in a terminal
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout.readline().strip() == "loaded", proc.communicate()
        time.sleep(1.0)  # into the games (100,000 of them take far longer)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines == ["interrupted: psygym simulate stopped"], err


def test_an_interrupt_inside_any_command_is_one_line(monkeypatch):
    from psygym_experiments import simulate

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(simulate, "run_games", interrupted)
    result = run("simulate", "--edition", "7th", "--episodes", 5)
    assert result.exit_code == 130, (result.stdout, result.stderr)
    assert result.stderr.splitlines() == ["interrupted: psygym simulate stopped"]


def test_an_interrupted_evaluate_says_how_to_resume_in_its_one_line(monkeypatch, tmp_path):
    from psygym_experiments import evaluate

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluate, "evaluate", interrupted)
    result = run("evaluate", "--edition", "7th", "--agents", "random,double-wc", "--episodes", 2,
                 "--no-exact", "--runs-dir", tmp_path)  # fmt: skip
    assert result.exit_code == 130, (result.stdout, result.stderr)
    [run_dir] = tmp_path.iterdir()
    said = [ln for ln in result.stderr.splitlines() if ln.startswith("interrupted")]
    assert len(said) == 1, result.stderr  # its own line, and no second one from the CLI
    assert f"psygym evaluate --resume {run_dir}" in said[0]


# ----------------------------------------------------------------------------- agent names
def test_unknown_agent_lists_best_heuristic_where_it_is_accepted():
    for args in (
        ("simulate", "--edition", "7th", "--agents", "double-wc,nope"),
        ("evaluate", "--edition", "7th", "--agents", "nope,random"),
    ):
        line = clean_error(run(*args), "unknown agent 'nope'", "best-heuristic", "double-wc")
        assert "auto" not in line.split("known agents: ")[1].split(";")[0].split(", ")


def test_unknown_opponent_of_play_lists_auto_and_best_heuristic():
    line = clean_error(run("play", "--edition", "7th", "--opponent", "nope"), "unknown agent")
    known = line.split("known agents: ")[1].split(";")[0].split(", ")
    assert {"auto", "best-heuristic", "random"} <= set(known)
    assert known == sorted(known)


# ----------------------------------------------------------------------------- help texts
def test_odds_max_dice_help_names_the_tables_that_count_dice():
    from psygym.edition import editions, resolve

    text = _flat(ok("odds", "--help"))
    dice_tables = {
        e.id: [
            n
            for n, ref in e.odds.items()
            if "max_dice" in inspect.signature(resolve(ref)).parameters
        ]
        for e in editions()
    }
    listed = {eid: names for eid, names in dice_tables.items() if names}
    assert listed
    for eid, names in listed.items():
        assert f"({eid}: {', '.join(names)})" in text, text
    assert "the other tables ignore it" in text


def test_cheatsheet_help_names_its_editions():
    from psygym_experiments.report_answers import editions_with_tables

    from psygym.edition import ids

    text = _flat(ok("cheatsheet", "--help"))
    having = editions_with_tables(ids())
    assert having and len(having) < len(ids())
    for eid in ids():
        named = re.search(rf"(?<![\w-]){re.escape(eid)}(?![\w-])", text) is not None
        assert named == (eid in having), (eid, text)


def test_cheatsheet_of_another_edition_lists_the_allowed_ones():
    from psygym_experiments.report_answers import editions_with_tables

    from psygym.edition import ids

    other = next(e for e in ids() if e not in editions_with_tables(ids()))
    clean_error(
        run("cheatsheet", "--edition", other), f"allowed: {', '.join(editions_with_tables(ids()))}"
    )


@pytest.mark.parametrize("command", ["solve", "advise"])
def test_scenario_help_of_solve_and_advise_names_random_n(command):
    text = _flat(ok(command, "--help"))
    assert "Shipped scenario name, random:N" in text and "psygym scenario random --seed N" in text


# ----------------------------------------------------------------------------- cfr
def test_cfr_refuses_an_unknown_agent_before_counting(tmp_path, monkeypatch):
    pytest.importorskip("pyspiel")
    from psygym.interop import openspiel

    def counted(*_args, **_kwargs):
        raise AssertionError("the tree was counted")

    monkeypatch.setattr(openspiel, "count_histories", counted)
    edition, scenario = TINY_RT
    result = run("cfr", "--edition", edition, "--scenario", scenario, "--agent", "nope",
                 "--iterations", 1, "--out", tmp_path / "cfr")  # fmt: skip
    clean_error(result, "unknown agent 'nope'")
    assert not (tmp_path / "cfr").exists()


@pytest.mark.parametrize("edition", ["7th", "2nd", "rt"])
def test_cfr_suggests_only_a_smaller_scenario_it_counted_to_fit(tmp_path, edition):
    pytest.importorskip("pyspiel")
    from psygym.editions import load
    from psygym.interop.openspiel import count_histories, game_from_rules

    result = run("cfr", "--edition", edition, "--scenario", "duel", "--max-states", 1000,
                 "--iterations", 1, "--out", tmp_path / "cfr")  # fmt: skip
    line = clean_error(result, "more than --max-states 1,000", "a larger --max-states")
    found = re.search(r"e\.g\. --scenario (\S+) \(([\d,]+) histories\)", line)
    if found is None:  # a hint, promising nothing
        assert "vary with the seed" in line and "e.g." not in line, line
    else:
        size = count_histories(game_from_rules(load(edition, found[1])), 1000)
        assert size.complete and size.histories == int(found[2].replace(",", "")) <= 1000


# ----------------------------------------------------------------------------- train
def test_rollout_note_says_how_far_sb3_trains():
    from psygym_experiments.harness.train_config import rollout_note

    ppo = SimpleNamespace(n_envs=8, n_steps=128)
    assert rollout_note(ppo, 0, 1024) is None
    assert rollout_note(ppo, 0, 1).endswith("this run trains to step 1,024, not 1")
    assert "to step 2,048, not 1,500" in rollout_note(ppo, 1024, 1500)  # a resumed run
    assert rollout_note(ppo, 2048, 1500) is None  # nothing left to train
    step = SimpleNamespace(value="step")
    dqn = SimpleNamespace(n_envs=1, n_steps=1, train_freq=SimpleNamespace(frequency=4, unit=step))
    assert "train_freq 4 x 1 env)" in rollout_note(dqn, 0, 5)
    episodes = SimpleNamespace(frequency=1, unit=SimpleNamespace(value="episode"))
    assert rollout_note(SimpleNamespace(n_envs=1, train_freq=episodes), 0, 5) is None


def test_train_says_when_steps_round_up_to_a_whole_rollout(tmp_path):
    result = run("train", "--edition", "7th", "--scenario", "single-phase", "--steps", 1,
                 "--n-envs", 1, "--eval-episodes", 2, "--no-progress",
                 "--runs-dir", tmp_path)  # fmt: skip
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    notes = [ln for ln in result.stdout.splitlines() if ln.startswith("note: SB3 trains")]
    assert len(notes) == 1 and notes[0].endswith("not 1"), result.stdout
    trained = int(notes[0].split("trains to step ")[1].split(",")[0])
    assert f"done: {trained} steps" in result.stdout


def test_train_and_tune_take_n_envs_from_one_place():
    from psygym_experiments import common, train, tune

    for command in (train.train, tune.tune):
        option = inspect.signature(command).parameters["n_envs"].default
        assert option.callback is common.check_n_envs_option
        assert option.default == 0 and option.min == 0
