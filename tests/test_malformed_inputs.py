"""A corpus of malformed inputs: each exits 2 with one line naming the input, no traceback.

CLI numbers out of range or of the wrong type, unknown storage URLs, malformed scenario files and
tampered game logs (the hash chain: a changed roll, a removed, moved or cut-off line).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from psygym_experiments.cli import run
from psygym_experiments.harness.gamelog import GameLog

from psygym.core import CHANCE
from psygym.editions import load

NUMBERS = [  # (command, option, its bound) — every value below is outside what is allowed
    ("simulate", "--seed"), ("simulate", "--episodes"), ("evaluate", "--workers"),
    ("evaluate", "--episodes"), ("evaluate", "--seed"), ("train", "--steps"), ("train", "--seed"),
    ("train", "--eval-episodes"), ("train", "--n-envs"), ("train", "--eval-every"),
    ("tune", "--trials"), ("tune", "--seed"), ("tune", "--jobs"), ("tune", "--trial-steps"),
    ("odds", "--max-dice"), ("play", "--seat"), ("advise", "--successes"), ("advise", "--dice"),
]  # fmt: skip
BAD_VALUES = ["-1", "-100", "abc", "1.5", "nan", "inf", ""]
STORAGES = ["bogus://x", "ftp://host/db", "redis://localhost", "x", "file:///tmp/x", "http://a"]
CLI_CASES = [[c, o, v] for c, o in NUMBERS for v in BAD_VALUES] + [
    ["tune", "--storage", s, "--trials", "1"] for s in STORAGES
]


def _check(capsys, argv, expect: str | None = None) -> str:
    code = run(argv)
    err = capsys.readouterr().err
    assert code == 2, (argv, code, err)
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1, (argv, err)
    assert "Traceback" not in err and lines[0].startswith("error:"), (argv, err)
    if expect:
        assert expect in lines[0], (argv, lines[0])
    return lines[0]


@pytest.mark.parametrize("argv", CLI_CASES, ids=lambda a: " ".join(a) or "empty")
def test_bad_cli_values(capsys, argv):
    line = _check(capsys, argv)
    assert argv[1] in line  # names the option


SCENARIOS = {
    "not-toml": "this is [[ not toml",
    "binary": b"\xff\xfe\x00\x01",
    "empty": "",
    "deep": "a = " + "[" * 5000 + "]" * 5000,
    "inf-wound": "[game]\nvalue_per_wound = inf\n",
    "nan": "[game]\nvalue_per_wound = nan\n",
    "wrong-type": "[game]\nbattle_rounds = 'many'\n",
    "unknown-edition": 'edition = "no-such-edition"\n',
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_bad_scenario_files(tmp_path, capsys, name):
    path = tmp_path / f"{name}.toml"
    data = SCENARIOS[name]
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    _check(capsys, ["simulate", "--scenario", str(path), "--episodes", "2"])


def test_a_directory_as_scenario(tmp_path, capsys):
    _check(capsys, ["simulate", "--scenario", str(tmp_path), "--episodes", "2"])


def test_runs_dir_that_is_a_file(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    _check(capsys, ["train", "--steps", "8", "--runs-dir", str(f), "--no-progress"])


# ----------------------------------------------------------------------------- game logs
@pytest.fixture(scope="module")
def good_log(tmp_path_factory):
    """A complete chained log of one random game."""
    rules = load("7th", "duel")
    folder = tmp_path_factory.mktemp("logs")
    log = GameLog(folder / "good.jsonl", {"edition": rules.edition, "scenario": "duel",
                                          "seed": 3, "seat": 0, "opponent": "random"})  # fmt: skip
    rng = np.random.default_rng(3)
    s = rules.initial_state()
    while not rules.is_terminal(s):
        p = rules.current_player(s)
        legal = list(rules.legal_actions(s)) if p != CHANCE else []
        a = rules.sample_chance(s, rng) if p == CHANCE else legal[int(rng.integers(len(legal)))]
        log.step(p, a, rules.action_label(s, a))
        s = rules.apply(s, a)
    log.end(rules, s, "finished")
    return log.path


def _variants(lines: list[str]) -> dict[str, tuple[list[str], int]]:
    """Tampered copies of a log: name -> (lines, first bad line number)."""
    out: dict[str, tuple[list[str], int]] = {"cut-end": (lines[:-1], len(lines))}
    chance = [i for i, x in enumerate(lines) if json.loads(x).get("player") == "chance"]
    for k, i in enumerate(chance[:8]):
        obj = json.loads(lines[i])
        obj["action"] = obj["action"] + 1
        out[f"roll-{k}"] = ([*lines[:i], json.dumps(obj), *lines[i + 1 :]], i + 1)
        out[f"roll-{k}-cut"] = ([*lines[:i], json.dumps(obj), *lines[i + 1 : -1]], i + 1)
    for i in range(1, min(len(lines), 12)):
        out[f"removed-{i}"] = ([*lines[:i], *lines[i + 1 :]], i + 1)
        if i + 1 < len(lines):
            moved = [*lines[:i], lines[i + 1], lines[i], *lines[i + 2 :]]
            out[f"swapped-{i}"] = (moved, i + 1)
    unchained = [json.dumps({k: v for k, v in json.loads(x).items() if k != "hash"}) for x in lines]
    out["unchained"] = (unchained, 1)
    return out


def test_tampered_logs_are_rejected_naming_the_first_bad_line(good_log, tmp_path, capsys):
    lines = good_log.read_text().splitlines()
    assert run(["replay", str(good_log), "--quiet"]) == 0
    capsys.readouterr()
    variants = _variants(lines)
    assert len(variants) >= 25
    for name, (changed, bad) in variants.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(x + "\n" for x in changed))
        line = _check(capsys, ["replay", str(path), "--quiet"])
        assert f"line {bad}" in line, (name, line)
        if name == "unchained":
            assert "no hash chain" in line


def test_corpus_size(good_log):
    n = len(CLI_CASES) + len(SCENARIOS) + 2 + len(_variants(good_log.read_text().splitlines()))
    assert n >= 150, n
