"""One-seat models in mistakes, play and simulate; ``play`` killed or hung up; mistakes' texts.

A model trained for one seat plays, and is scored, only in that seat (its JSON's ``seat``, read
by :mod:`psygym_experiments.harness.seats`). ``play`` ends a game killed with SIGTERM or SIGHUP
as on Ctrl-C, so its log has an end line and replays.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys

import pytest
from cli_helpers import clean_error, ok, run
from helpers import REPO

PRETRAINED = REPO / "agents" / "pretrained"
EIGHTH_SEAT1 = str(PRETRAINED / "8th-single-phase-seat1.safetensors")
SEVENTH_DUEL = str(PRETRAINED / "7th-duel-seat{seat}.safetensors")
EIGHTH = ["--edition", "8th", "--scenario", "single-phase", "--no-progress", "--top", "0"]


def _seats(*args: str) -> list[int]:
    doc = json.loads(ok("mistakes", *EIGHTH, *args, "--format", "json"))
    return [s["seat"] for s in doc["seats"]]


# ----------------------------------------------------------------------------- mistakes
def test_mistakes_reviews_a_one_seat_model_only_in_its_seat():
    assert _seats("--agent", EIGHTH_SEAT1, "--opponent", "smite-first") == [1]


def test_mistakes_refuses_the_other_side_for_a_one_seat_model():
    result = run("mistakes", *EIGHTH, "--agent", EIGHTH_SEAT1, "--opponent", "smite-first",
                 "--side", "0")  # fmt: skip
    clean_error(result, "--agent", "trained for seat 1 only", "--side 1")


def test_mistakes_plays_a_one_seat_opponent_only_in_its_seat():
    assert _seats("--agent", "smite-first", "--opponent", EIGHTH_SEAT1) == [0]
    result = run("mistakes", *EIGHTH, "--agent", "smite-first", "--opponent", EIGHTH_SEAT1,
                 "--side", "1")  # fmt: skip
    clean_error(result, "--opponent", "trained for seat 1 only", "--side 0")


def test_mistakes_side_both_is_the_default_and_allowed():
    assert _seats("--agent", "smite-first", "--opponent", "smite-first", "--side", "both") == [0, 1]
    result = run("mistakes", *EIGHTH, "--agent", "smite-first", "--side", "neither")
    clean_error(result, "--side", "0, 1, both")


def test_mistakes_names_search_when_optimal_cannot_solve_the_game_whole():
    text = ok("mistakes", "--edition", "rt", "--scenario", "random:7,rounds=1", "--agent",
              "rest-when-low", "--side", "0", "--top", "0", "--no-progress")  # fmt: skip
    assert "against search (optimal cannot solve this game whole)" in text
    assert "the best answer to search scores" in text
    assert "against optimal" not in text and "answer to optimal" not in text


# ----------------------------------------------------------------------------- play, simulate
def test_play_refuses_an_opponent_model_of_the_humans_seat(tmp_path):
    result = run("play", "--edition", "7th", "--scenario", "duel", "--seat", "0", "--opponent",
                 SEVENTH_DUEL.format(seat=0), "--runs-dir", tmp_path)  # fmt: skip
    line = clean_error(result, "--opponent", "trained for seat 0 only", "--seat 1")
    assert "7th-duel-seat1" in line  # the model to use for the AI's seat
    assert not (tmp_path / "games").exists()


def test_simulate_refuses_a_one_seat_model_in_the_other_seat():
    result = run("simulate", "--edition", "7th", "--scenario", "duel", "--episodes", "2",
                 "--agents", f"double-wc,{SEVENTH_DUEL.format(seat=0)}")  # fmt: skip
    clean_error(result, "--agents", "trained for seat 0 only", "not seat 1")


def test_evaluate_plays_a_one_seat_model_only_in_its_seat(tmp_path):
    out = ok("evaluate", "--edition", "8th", "--scenario", "single-phase", "--agents",
             f"smite-first,{EIGHTH_SEAT1}", "--episodes", "2", "--format", "json",
             "--runs-dir", str(tmp_path))  # fmt: skip
    seats = [(p["agent0"], p["agent1"]) for p in json.loads(out)["pairs"]]
    assert seats == [("smite-first", EIGHTH_SEAT1)], seats


def test_seat_in_a_spec_becomes_the_seat_played():
    doc = json.loads(ok("simulate", "--edition", "7th", "--scenario", "duel", "--episodes", "2",
                        "--agents", f"{SEVENTH_DUEL},{SEVENTH_DUEL}", "--json"))  # fmt: skip
    assert [r["agent"] for r in doc["results"]] == [SEVENTH_DUEL.format(seat=p) for p in (0, 1)]


def test_a_run_folders_model_has_the_seat_of_its_json(tmp_path):
    from psygym_experiments.harness.seats import model_seats

    for suffix in (".safetensors", ".json"):
        shutil.copy(EIGHTH_SEAT1.removesuffix(".safetensors") + suffix, tmp_path / f"model{suffix}")
    assert model_seats(f"sb3:{tmp_path}") == (1,)


# ----------------------------------------------------------------------------- signals
def _prompted(proc: subprocess.Popen) -> bytes:
    """Standard output of ``play`` up to its first prompt (empty-handed if it never comes)."""
    out = b""
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while b"Choose" not in out and sel.select(timeout=120):
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            out += chunk
    return out


@pytest.mark.skipif(os.name != "posix", reason="SIGTERM and SIGHUP as on a POSIX terminal")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_play_killed_at_a_prompt_logs_its_end(sig, tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "psygym_experiments.cli", "play", "--edition", "7th",
         "--scenario", "single-phase", "--opponent", "random", "--seed", "1",
         "--runs-dir", str(tmp_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert b"Choose" in _prompted(proc), "play never asked for a move"
        proc.send_signal(getattr(signal, sig))
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert b"You quit" in out
    (log,) = (tmp_path / "games").glob("*.jsonl")
    end = json.loads(log.read_text().splitlines()[-1])
    assert end["type"] == "end" and end["result"] == "quit"
    assert "(not finished)" in ok("replay", "--quiet", log)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP here")
def test_an_ignored_hangup_stays_ignored():
    from psygym_experiments.harness.lifecycle import hangup_interrupts

    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    try:
        with hangup_interrupts():
            os.kill(os.getpid(), signal.SIGHUP)
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, old)
