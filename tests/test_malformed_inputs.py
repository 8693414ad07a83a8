"""A corpus of malformed inputs: each exits 2 with one line naming the input, no traceback.

CLI numbers out of range or of the wrong type, unknown storage URLs, malformed scenario files,
tampered game logs (the hash chain: a changed roll, a removed, moved or cut-off line), advise
situations the dice cannot produce (7E-3.1, 7E-4.3, 7E-5.1) and bad state files, wrongly typed
training configs, a scenario where the learner never decides, and tuned parameters that are
not finite numbers.
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


# ----------------------------------------------------------------------------- advise situations
ADVISE = "advise --edition 7th --scenario single-phase --heuristics none".split()
SITUATIONS = {  # described situation -> a word the one error line must contain
    # The deny decision must follow a cast the dice allow (7E-3.1, 7E-4.3, 7E-5.1).
    "dice=5,power=Smite,successes=99": "successes",
    "dice=5,power=Smite,successes=3,cast_dice=2": "successes",
    "dice=6,power=Smite,successes=2": "successes",
    "dice=2,power=Psychic Maelstrom,successes=1": "successes",
    "power=Smite,successes=0": "successes",
    "power=Smite,successes=1,enemy_dice=0": "enemy_dice",
    "wc=0": "wc", "wc=5": "wc", "wc=x": "wc", "powers=Smite:7": "warp charge",
    "powers=Smite:x": "warp charge", "powers=Psychic Maelstrom:1": "warp charge",
    "dice=0": "dice", "dice=99": "dice", "enemy_dice=99": "enemy_dice", "dice=-1": "dice",
    "side=2": "side", "phase=99": "phase", "decision=maybe": "decision",
    "dicee=3": "dicee", "dice": "not key=value", "dice=many": "dice",
    "wounds=Librarian:99": "wounds", "wounds=Nobody:1": "Nobody", "wounds=Librarian": "wounds",
    "power=Bolt": "Bolt", "power=Smite,target=Nobody": "Nobody",
    "power=Smite,decision=deny": "successes", "decision=dice": "one power",
}  # fmt: skip


@pytest.mark.parametrize("text", sorted(SITUATIONS))
def test_bad_advise_situations(capsys, text):
    _check(capsys, [*ADVISE, "--situation", text], SITUATIONS[text])


def test_the_deny_options_must_fit_the_pool(capsys):
    line = _check(capsys, [*ADVISE, "--power", "Smite", "--successes", "99", "--dice", "5"])
    assert "successes" in line and "at most 7" in line and "<= 2" in line


STATE_FILES = {  # --state FILE contents -> a word the one error line must contain
    "situation-number": ({"situation": 5}, "situation"),
    "situation-list": ({"situation": ["dice=3"]}, "situation"),
    "situation-too-many-successes": (
        {"situation": {"dice": 5, "power": "Smite", "successes": 99}}, "successes"),
    "situation-bad-wc": ({"situation": "wc=9"}, "wc"),
    "actions-text": ({"actions": "abc"}, "actions"),
    "actions-fraction": ({"actions": [0.5]}, "actions"),
    "actions-illegal": ({"actions": [999]}, "999"),
    "not-an-object": ([1, 2], "object"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(STATE_FILES))
def test_bad_advise_state_files(tmp_path, capsys, name):
    doc, word = STATE_FILES[name]
    if isinstance(doc, dict):
        doc = {"scenario": "single-phase", **doc}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    _check(capsys, ["advise", "--state", str(path), "--heuristics", "none"], word)


# ----------------------------------------------------------------------------- train configs
CONFIGS = {  # --config YAML -> the key the one error line must name (and the type allowed)
    "learning_rate: fast": ("learning_rate", "number"),
    "learning_rate: lin_x": ("learning_rate", "lin_"),
    "learning_rate: [1, 2]": ("learning_rate", "number"),
    "n_steps: 1.5": ("n_steps", "whole number"),
    "n_steps: '64'": ("n_steps", "whole number"),
    "batch_size: true": ("batch_size", "whole number"),
    "gamma: .nan": ("gamma", "finite number"),
    "ent_coef: .inf": ("ent_coef", "finite number"),
    "normalize_advantage: 3": ("normalize_advantage", "true or false"),
    "policy_kwargs: 3": ("policy_kwargs", "mapping"),
    "n_envs: two": ("n_envs", "whole number"),
    "illegal_penalty: much": ("illegal_penalty", "number"),
    "no_such_key: 1": ("no_such_key", "allowed"),
    "[1, 2]": ("mapping", "mapping"),
    "a: [": ("YAML", "YAML"),
}  # fmt: skip


@pytest.mark.parametrize("text", sorted(CONFIGS))
def test_bad_train_configs(tmp_path, capsys, text):
    path = tmp_path / "config.yml"
    path.write_text(text + "\n")
    runs = tmp_path / "runs"
    line = _check(capsys, ["train", "--scenario", "single-phase", "--steps", "64", "--config",
                           str(path), "--runs-dir", str(runs), "--no-progress"])  # fmt: skip
    key, allowed = CONFIGS[text]
    assert key in line and allowed in line, line
    assert not runs.exists(), "a run folder was made for a config that cannot train"


NO_DECISIONS = """edition = "7th"
name = "no-psykers"
[game]
battle_rounds = 1
phase_limit = 1
generate_powers = false
[[sides]]
name = "Ultramarines"
[[sides.units]]
name = "Tactical Squad"
wounds = 10
toughness = 4
save = 3
leadership = 8
position = [0, 0]
[[sides]]
name = "Chaos"
[[sides.units]]
name = "Cultists"
wounds = 10
toughness = 3
save = 6
leadership = 7
position = [0, 12]
"""


@pytest.mark.parametrize("seat", ["0", "1", "both"])
def test_train_where_the_learner_never_decides(tmp_path, capsys, seat):
    path = tmp_path / "no-psykers.toml"
    path.write_text(NO_DECISIONS)
    runs = tmp_path / "runs"
    line = _check(capsys, ["train", "--scenario", str(path), "--steps", "64", "--seat", seat,
                           "--runs-dir", str(runs), "--no-progress"])  # fmt: skip
    assert "--seat" in line and "never gets a decision" in line
    assert not runs.exists()


# ----------------------------------------------------------------------------- tuned files
TUNED_PARAMS = {  # a change to good tuned parameters -> a word the one error line must contain
    "nan": ({"dice_a": float("nan")}, "finite"),
    "inf": ({"dice_a": float("inf")}, "finite"),
    "minus-inf": ({"deny_ratio": float("-inf")}, "finite"),
    "text": ({"dice_a": "fast"}, "number"),
    "list": ({"stop_pool": [1]}, "number"),
    "missing": ({"dice_a": None}, "takes"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(TUNED_PARAMS))
def test_bad_tuned_parameters(tmp_path, capsys, name):
    from psygym_agents.parametric import family_for

    rules = load("7th", "single-phase")
    fam = family_for(rules.edition)
    change, word = TUNED_PARAMS[name]
    params = {**fam.defaults(rules), **change}
    params = {k: v for k, v in params.items() if v is not None}
    path = tmp_path / "best.json"
    path.write_text(json.dumps({"edition": rules.edition, "scenario": "single-phase",
                                "family": fam.name, "params": params, "value": 0.0}))  # fmt: skip
    line = _check(capsys, ["simulate", "--scenario", "single-phase", "--agents",
                           f"tuned:{path},random", "--episodes", "2"])  # fmt: skip
    assert str(path) in line and word in line, line
    if name != "missing":
        assert next(iter(change)) in line  # names the parameter


def test_tuned_parameters_not_a_mapping(tmp_path, capsys):
    path = tmp_path / "best.json"
    path.write_text(json.dumps({"edition": "7th", "family": "seventh-threshold", "params": [1]}))
    line = _check(capsys, ["simulate", "--scenario", "single-phase", "--agents",
                           f"tuned:{path},random", "--episodes", "2"])  # fmt: skip
    assert "mapping" in line


def test_corpus_size(good_log):
    n = len(CLI_CASES) + len(SCENARIOS) + 2 + len(_variants(good_log.read_text().splitlines()))
    n += len(SITUATIONS) + 1 + len(STATE_FILES) + len(CONFIGS) + 3 + len(TUNED_PARAMS) + 1
    assert n >= 220, n
