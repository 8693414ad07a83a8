"""A corpus of malformed inputs: each must end in one clear line naming the input.

CLI numbers out of range or of the wrong type, unknown storage URLs, too many workers, a port
outside 1-65535, a runs folder that is a file, malformed scenario files (not TOML, nested 5,000
deep, infinite or huge values, ``true`` as a number, terminal escape codes in names, a mistyped
path), tampered game logs (the hash chain: a changed roll, a removed, moved or cut-off line),
tampered resume records (``tasks.jsonl``: a garbage line, changed scores), tampered or poisoned
models (sizes that would allocate gigabytes, NaN weights, seat 5), advise situations the dice
cannot produce (7E-3.1, 7E-4.3, 7E-5.1) and bad state files, wrongly typed training configs, a
scenario where the learner never decides, tuned parameters that are not finite numbers, and
requests to ``psygym serve`` (JSON nested 100,000 deep, TOML nested 5,000 deep, bodies of the
wrong type, an upload naming a file on the server).

Every case is classified by its outcome: ``one clear line`` (exit 2 ending in one ``error:``
line, or an HTTP 4xx whose JSON error is one line, that names what the case expects: the field,
option, file or line), ``traceback``, ``silent
acceptance`` (exit 0 or HTTP 2xx), ``crash`` (an internal error: exit 1, HTTP 5xx or an
exception out of the command) or ``unclear`` (several lines, the wrong words, or raw control
characters). Each test asserts ``one clear line``; the counts by outcome of the cases run are
printed at the end of the module (``malformed-input corpus: ...``), the figures quoted for the
issue.
"""

from __future__ import annotations

import json
import traceback
import unicodedata
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from helpers import psyker7, scenario7, toml_dumps, unit7
from psygym_experiments.cli import run
from psygym_experiments.harness.gamelog import GameLog

from psygym.core import CHANCE
from psygym.editions import load

ONE_LINE, TRACEBACK, SILENT, CRASH, UNCLEAR = (
    "one clear line", "traceback", "silent acceptance", "crash", "unclear",
)  # fmt: skip
OUTCOMES_ORDER = {ONE_LINE: ONE_LINE, TRACEBACK: "tracebacks", SILENT: "silent acceptances",
                  CRASH: "crashes", UNCLEAR: UNCLEAR}  # fmt: skip
OUTCOMES: dict[str, str] = {}
"""Case -> outcome, of every case run in this session."""


@pytest.fixture(scope="module", autouse=True)
def _outcome_counts(request):
    """Print the counts by outcome once the module's cases have run."""
    yield
    counts = Counter(OUTCOMES.values())
    text = ", ".join(f"{counts.get(o, 0)} {label}" for o, label in OUTCOMES_ORDER.items())
    line = f"malformed-input corpus: {len(OUTCOMES)} cases: {text}"
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():  # else the line is captured, never shown
            reporter.write_line("")
            reporter.write_line(line)


def _raw_control(text: str) -> bool:
    return any(unicodedata.category(ch) == "Cc" for ch in text.replace("\n", ""))


def classify(code: int, err: str, expect: tuple[str, ...] = ()) -> str:
    """The outcome of a command that exited ``code`` writing ``err``."""
    lines = [x for x in err.splitlines() if x.strip()]
    if "Traceback (most recent call last)" in err:
        return TRACEBACK
    if code == 0:
        return SILENT
    if code != 2 or "internal error" in err:
        return CRASH
    errors = [x for x in lines if x.startswith("error:")]
    # Progress lines may come first ("run folder: ..."); the error is one line, the last.
    if errors and lines[-1] == errors[0] and len(errors) == 1 and not _raw_control(errors[0]):
        return ONE_LINE if all(w in errors[0] for w in expect) else UNCLEAR
    return UNCLEAR


def classify_http(response, expect: tuple[str, ...] = ()) -> str:
    """The outcome of a request to ``psygym serve``."""
    if "Traceback" in response.text:
        return TRACEBACK
    if response.status_code < 400:
        return SILENT
    if response.status_code >= 500:
        return CRASH
    try:
        error = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        return UNCLEAR
    if isinstance(error, str) and "\n" not in error and not _raw_control(error):
        return ONE_LINE if all(w in error for w in expect) else UNCLEAR
    return UNCLEAR


def _check(capsys, argv, expect: str | tuple[str, ...] | None = None, case: str = "") -> str:
    """Run ``psygym argv``, record its outcome and assert one clear line; returns the line."""
    words = (expect,) if isinstance(expect, str) else tuple(expect or ())
    try:
        code = run(argv)
        err = capsys.readouterr().err
    except BaseException:  # noqa: BLE001 - anything out of the command is a traceback
        code, err = -1, capsys.readouterr().err + traceback.format_exc()
    outcome = classify(code, err, words)
    OUTCOMES[case or " ".join(argv)] = outcome
    assert outcome == ONE_LINE, (argv, code, err, words)
    return err.strip().splitlines()[-1]


NUMBERS = [  # (command, option) — every value below is outside what is allowed
    ("simulate", "--seed"), ("simulate", "--episodes"), ("evaluate", "--workers"),
    ("evaluate", "--episodes"), ("evaluate", "--seed"), ("train", "--steps"), ("train", "--seed"),
    ("train", "--eval-episodes"), ("train", "--n-envs"), ("train", "--eval-every"),
    ("tune", "--trials"), ("tune", "--seed"), ("tune", "--jobs"), ("tune", "--trial-steps"),
    ("odds", "--max-dice"), ("play", "--seat"), ("advise", "--successes"), ("advise", "--dice"),
]  # fmt: skip
BAD_VALUES = ["-1", "-100", "abc", "1.5", "nan", "inf", ""]
STORAGES = ["bogus://x", "ftp://host/db", "redis://localhost", "x", "file:///tmp/x", "http://a"]
TOO_MANY_WORKERS = [  # 1000 processes for 4 tasks: at most 4 per CPU core, and no more than tasks
    ["evaluate", "--workers", "1000"], ["compare", "--workers", "1000"],
    ["value-check", "--workers", "1000"], ["evaluate", "--workers", "100000000"],
]  # fmt: skip
PORTS = [["serve", "--port", p] for p in ("99999", "-1", "0", "65536", "abc")]
CLI_CASES = (
    [[c, o, v] for c, o in NUMBERS for v in BAD_VALUES]
    + [["tune", "--storage", s, "--trials", "1"] for s in STORAGES]
    + TOO_MANY_WORKERS
    + PORTS
)


@pytest.mark.parametrize("argv", CLI_CASES, ids=lambda a: " ".join(a) or "empty")
def test_bad_cli_values(capsys, argv):
    words = (argv[1], "at most") if argv in TOO_MANY_WORKERS else (argv[1],)  # names the option
    _check(capsys, argv, words)


def _scenario(**changes) -> dict:
    """A small valid 7th-edition scenario with ``changes`` (dotted paths) applied."""
    data = scenario7(
        [unit7("Librarian", wounds=2, psyker=psyker7(1, powers=["Smite"]))],
        [unit7("Cultists", (0, 12), models=10)],
    )
    for path, value in changes.items():
        *parents, last = path.split("__")
        node = data
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value
    return data


def _text(**changes) -> str:
    return toml_dumps(_scenario(**changes))


def _named(where: str, written: str) -> str:
    """A scenario whose name at ``where`` is ``written`` as is in the TOML (escapes kept)."""
    return _text(**{where: "PLACEHOLDER"}).replace("PLACEHOLDER", written)


DEEP_TOML = _text() + "x = " + "[" * 5000 + "]" * 5000 + "\n"
SCENARIOS = {  # file contents -> words the one error line must contain
    "not-toml": ("this is [[ not toml", ("not valid TOML",)),
    "binary": (b"\xff\xfe\x00\x01", ("not UTF-8",)),
    "empty": ("", ("edition",)),
    "deep": ("a = " + "[" * 5000 + "]" * 5000, ("nested too deeply", "at most 16 levels")),
    "deep-scenario": (DEEP_TOML, ("nested too deeply",)),
    "inf-wound": (_text().replace("position = [0, 0]", "position = [0, 0]\nvalue_per_wound = inf"),
                  ("value_per_wound", "finite")),
    "nan": (_text().replace("position = [0, 0]", "position = [0, 0]\nvalue_per_wound = nan"),
            ("value_per_wound", "finite")),
    "huge-value": (_text(sides__0__units__0__value_per_wound=1e308),
                   ("sides.0.units.0.value_per_wound", "at most 1000")),
    "wounds-true": (_text(sides__0__units__0__wounds=True),
                    ("sides.0.units.0.wounds", "whole number")),
    "models-true": (_text(sides__1__units__0__models=True), ("sides.1.units.0.models",)),
    "escape-in-name": (_named("sides__0__units__0__name", "\\u001b[2J\\u001b[31mLib"),
                       ("sides.0.units.0.name", "control character U+001B")),
    "csi-in-side-name": (_named("sides__1__name", "\\u009b31mChaos"),
                         ("sides.1.name", "control character U+009B")),
    "return-in-name": (_named("sides__1__units__0__name", "Cult\\rists"),
                       ("sides.1.units.0.name", "control character U+000D")),
    "too-many-units": (_text(sides__1__units=[unit7(f"Squad {k}", (k, 12)) for k in range(31)]),
                       ("sides.1.units", "at most 30")),
    "huge-dice": (_text(sides__0__pool_bonus=10**6), ("sides.0.pool_bonus", "at most 10")),
    "far-away": (_text(sides__1__units__0__position=[0, 1e300]), ("position.1", "at most 1000")),
    "wrong-type": (_text(game__battle_rounds="many"), ("game.battle_rounds", "whole number")),
    "unknown-edition": ('edition = "no-such-edition"\n', ("edition", "no-such-edition")),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_bad_scenario_files(tmp_path, capsys, name):
    path = tmp_path / f"{name}.toml"
    data, words = SCENARIOS[name]
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    _check(capsys, ["simulate", "--scenario", str(path), "--episodes", "2"], (str(path), *words))


SCENARIO_COMMANDS = {  # commands that load a --scenario file, with what else they need
    "simulate": ["simulate", "--episodes", "2"],
    "play": ["play", "--edition", "7th", "--runs-dir", "runs"],
    "advise": ["advise", "--edition", "7th", "--heuristics", "none", "--runs-dir", "runs"],
    "evaluate": ["evaluate", "--edition", "7th", "--episodes", "2", "--agents", "random,random",
                 "--runs-dir", "runs"],
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(SCENARIO_COMMANDS))
@pytest.mark.parametrize("kind", ["deep", "mistyped", "escape"])
def test_every_command_that_loads_a_scenario(tmp_path, capsys, monkeypatch, command, kind):
    """A TOML nested 5,000 deep, a mistyped path (``../user/my.tmol``), an escape code in a name."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "user").mkdir()
    if kind == "deep":
        arg, words = "deep.toml", ("deep.toml", "nested too deeply", "at most 16 levels")
        (tmp_path / arg).write_text(DEEP_TOML)
    elif kind == "escape":
        arg, words = "esc.toml", ("esc.toml", "sides.0.units.0.name", "U+001B")
        (tmp_path / arg).write_text(SCENARIOS["escape-in-name"][0])
    else:
        arg, words = "../user/my.tmol", ("../user/my.tmol", "no such file", "ends in .toml")
        (tmp_path / "user" / "my.toml").write_text(_text())
    argv = [*SCENARIO_COMMANDS[command], "--scenario", arg]
    _check(capsys, argv, words, case=f"{command} --scenario {kind}")
    assert not (tmp_path / "runs").exists()


def test_a_directory_as_scenario(tmp_path, capsys):
    _check(capsys, ["simulate", "--scenario", str(tmp_path), "--episodes", "2"], "directory")


RUNS_DIR_COMMANDS = {  # commands that write a run folder under --runs-dir
    "evaluate": ["evaluate", "--scenario", "single-phase", "--episodes", "2", "--agents",
                 "random,random", "--no-exact"],
    "train": ["train", "--scenario", "single-phase", "--steps", "8", "--no-progress"],
    "tune": ["tune", "--scenario", "single-phase", "--trials", "1"],
    "advise-table": ["advise", "--table"],
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(RUNS_DIR_COMMANDS))
@pytest.mark.parametrize("under", [False, True], ids=["file", "under-a-file"])
def test_runs_dir_that_is_a_file(tmp_path, capsys, command, under):
    f = tmp_path / "file"
    f.write_text("x")
    runs = f / "sub" if under else f
    argv = [*RUNS_DIR_COMMANDS[command], "--runs-dir", str(runs)]
    words = (str(f), "is a file, not a folder")
    line = _check(capsys, argv, words, case=f"{command} --runs-dir {runs.name}")
    assert "Errno" not in line
    assert f.read_text() == "x"


def test_workers_never_outnumber_the_tasks(tmp_path, capsys, monkeypatch):
    """``--workers 8`` for two game batches starts two processes, not eight."""
    import concurrent.futures

    made = []

    class Recorded(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, max_workers=None, **kwargs):
            made.append(max_workers)
            super().__init__(max_workers=max_workers, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Recorded)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    code = run(["evaluate", "--scenario", "single-phase", "--episodes", "1", "--agents",
                "random,random", "--no-exact", "--workers", "8", "--runs-dir",
                str(tmp_path)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert made == [2]


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
        line = _check(capsys, ["replay", str(path), "--quiet"], f"line {bad}", f"replay {name}")
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


# ----------------------------------------------------------------------------- models
@pytest.fixture(scope="module")
def good_model(tmp_path_factory):
    """A small safe-format model of the 7th single-phase scenario, and its rules."""
    import gymnasium as gym
    import torch
    from psygym_agents.safe_model import save_safe
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    rules = load("7th", "single-phase")
    obs = gym.spaces.Box(-1000.0, 1000.0, (rules.observation_size,), dtype=np.float32)
    act = gym.spaces.Discrete(rules.num_actions)
    torch.manual_seed(0)
    net = MaskableActorCriticPolicy(obs, act, lambda _: 0.0, net_arch=[8])
    folder = tmp_path_factory.mktemp("model")
    save_safe(net, folder / "model", {"edition": "7th", "scenario": "single-phase", "seat": 0})
    return folder


def _poison(weights: Path) -> str:
    """Set one weight of a model to NaN (keeping its JSON's SHA-256 right); returns the tensor."""
    from psygym_agents.safe_model import file_sha256
    from safetensors.torch import load_file, save_file

    tensors = load_file(str(weights))
    name = sorted(tensors)[-1]
    tensors[name].view(-1)[0] = float("nan")
    save_file(tensors, str(weights))
    meta = weights.with_suffix(".json")
    doc = json.loads(meta.read_text())
    doc["weights_sha256"] = file_sha256(weights)
    meta.write_text(json.dumps(doc))
    return name


MODELS = {  # a change to a good model's JSON (or weights) -> words of the one error line
    "shape-1e9": (lambda d: d["observation_space"].update(shape=[10**9]), ("at most 100000",)),
    "actions-1e9": (lambda d: d["action_space"].update(n=10**9), ("action_space", "100000")),
    "width-1e6": (lambda d: d["policy"].update(net_arch=[10**6]), ("net_arch", "at most 4096")),
    "layers-1000": (lambda d: d["policy"].update(net_arch=[8] * 1000), ("at most 16 layers",)),
    "seat-5": (lambda d: d.update(seat=5), ("seat is 5", "0, 1 or")),
    "seat-true": (lambda d: d.update(seat=True), ("seat is True",)),
    "nan-weights": (None, ("holds NaN values",)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MODELS))
def test_tampered_and_poisoned_models(good_model, tmp_path, capsys, name):
    """Refused at load naming the file; before anything big is allocated or a game is played."""
    import shutil

    for f in good_model.iterdir():
        shutil.copy(f, tmp_path / f.name)
    weights = tmp_path / "model.safetensors"
    edit, words = MODELS[name]
    if edit is None:
        words = (*words, _poison(weights))
    else:
        meta = tmp_path / "model.json"
        doc = json.loads(meta.read_text())
        edit(doc)
        meta.write_text(json.dumps(doc))
    argv = ["evaluate", "--scenario", "single-phase", "--agents", f"sb3:{weights},random",
            "--episodes", "2", "--no-exact", "--runs-dir", str(tmp_path / "runs")]  # fmt: skip
    _check(capsys, argv, (str(tmp_path / "model"), *words), case=f"model {name}")


# ----------------------------------------------------------------------------- resume records
EVALUATE = ["evaluate", "--scenario", "single-phase", "--agents", "random,random", "--episodes",
            "8", "--no-exact"]  # fmt: skip


@pytest.fixture(scope="module")
def finished_evaluation(tmp_path_factory):
    """A finished ``evaluate`` run folder (its ``tasks.jsonl`` holds several lines)."""
    runs = tmp_path_factory.mktemp("evaluate")
    assert run([*EVALUATE, "--runs-dir", str(runs)]) == 0
    (folder,) = runs.iterdir()
    assert len((folder / "tasks.jsonl").read_text().splitlines()) >= 2
    return folder


def _scores_100(line: str) -> str:
    row = json.loads(line)
    stats = row["result"]["stats"]
    stats["scores"] = [100.0] * len(stats["scores"])
    return json.dumps(row)


RESUME = {  # a change to tasks.jsonl (lines -> lines) -> the line number the error must name
    "garbage-line": (lambda lines: [lines[0], '{"garbage": true}', *lines[2:]], 2),
    "scores-100": (lambda lines: [_scores_100(lines[0]), *lines[1:]], 1),
    "not-json": (lambda lines: [lines[0], "{not json", *lines[2:]], 2),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(RESUME))
def test_tampered_resume_records(finished_evaluation, tmp_path, capsys, name):
    """``tasks.jsonl`` is checked on resume: one line naming the file and the changed line."""
    import shutil

    folder = tmp_path / finished_evaluation.name
    shutil.copytree(finished_evaluation, folder)
    tasks = folder / "tasks.jsonl"
    change, bad = RESUME[name]
    tasks.write_text("".join(x + "\n" for x in change(tasks.read_text().splitlines())))
    before = {f.name: f.read_bytes() for f in folder.iterdir()}
    argv = [*EVALUATE, "--runs-dir", str(tmp_path), "--resume", str(folder)]
    _check(capsys, argv, ("tasks.jsonl", f"line {bad}"), case=f"evaluate --resume {name}")
    assert {f.name: f.read_bytes() for f in folder.iterdir()} == before  # nothing rewritten


# ----------------------------------------------------------------------------- serve requests
@pytest.fixture
def serve(tmp_path):
    """A client of ``psygym serve``'s app; server errors come back as responses (500)."""
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient
    from psygym_experiments.serve.app import create_app
    from psygym_experiments.serve.store import GameStore

    with TestClient(create_app(GameStore(tmp_path / "runs")), raise_server_exceptions=False) as c:
        yield c


def _upload_with_powers_file() -> str:
    return 'powers_file = "/etc/passwd"\n' + _text()


JSON_HEADERS = {"content-type": "application/json"}
TOML_HEADERS = {"content-type": "application/toml"}
REQUESTS = {  # name -> (method, path, body, headers, words of the one-line JSON error)
    "json-100000-deep": ("post", "/api/games", b"[" * 100_000 + b"]" * 100_000, JSON_HEADERS,
                         ("deep",)),
    "toml-5000-deep": ("post", "/api/scenarios", DEEP_TOML.encode(), TOML_HEADERS, ("deep",)),
    "json-as-text-plain": ("post", "/api/games", b'{"edition": "7th"}',
                           {"content-type": "text/plain"}, ()),
    "upload-as-form": ("post", "/api/scenarios", _text().encode(),
                       {"content-type": "application/x-www-form-urlencoded"}, ()),
    "upload-powers-file": ("post", "/api/scenarios", _upload_with_powers_file().encode(),
                           TOML_HEADERS, ("powers_file",)),
    "upload-escape-name": ("post", "/api/scenarios",
                           SCENARIOS["escape-in-name"][0].encode(), TOML_HEADERS,
                           ("sides.0.units.0.name", "U+001B")),
    "upload-huge-value": ("post", "/api/scenarios", SCENARIOS["huge-value"][0].encode(),
                          TOML_HEADERS, ("value_per_wound", "at most 1000")),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_bad_requests_to_serve(serve, name):
    method, path, body, headers, words = REQUESTS[name]
    response = getattr(serve, method)(path, content=body, headers=headers)
    outcome = classify_http(response, words)
    OUTCOMES[f"serve {name}"] = outcome
    assert outcome == ONE_LINE, (response.status_code, response.text[:300], words)


# ----------------------------------------------------------------------------- coverage
ISSUE_CASES = {  # each bad input the issue lists -> where the corpus has it
    "serve --port 99999 and -1": [c for c in PORTS if c[2] in ("99999", "-1")],
    "--workers 1000": [c for c in TOO_MANY_WORKERS if c[2] == "1000"],
    "value_per_wound = 1e308": ["huge-value"],
    "wounds = true": ["wounds-true"],
    "terminal escape codes in unit names": ["escape-in-name", "upload-escape-name"],
    "--runs-dir pointing at a file": list(RUNS_DIR_COMMANDS),
    "NaN weights in a safe model": ["nan-weights"],
    "seat = 5 in a model's JSON": ["seat-5"],
    "a tampered model JSON's sizes": ["shape-1e9", "actions-1e9", "width-1e6", "layers-1000"],
    "tasks.jsonl: a garbage line": ["garbage-line"],
    "tasks.jsonl: tampered scores": ["scores-100"],
    "a JSON body nested 100,000 deep": ["json-100000-deep"],
    "a TOML file nested 5,000 deep": ["toml-5000-deep", "deep-scenario"],
    "a mistyped path (../user/my.tmol)": ["mistyped"],
    "a JSON body sent as text/plain": ["json-as-text-plain"],
    "an upload naming powers_file": ["upload-powers-file"],
}
"""The bad inputs named in the issue, each with the corpus entries that feed it."""


def test_the_corpus_holds_every_case_the_issue_lists():
    groups = [CLI_CASES, SCENARIOS, RUNS_DIR_COMMANDS, MODELS, RESUME, REQUESTS,
              ["deep", "mistyped", "escape"]]  # fmt: skip
    for what, entries in ISSUE_CASES.items():
        assert entries, what
        for entry in entries:
            assert any(entry in group for group in groups), (what, entry)


def test_corpus_size(good_log):
    n = len(CLI_CASES) + len(SCENARIOS) + 1 + 2 * len(RUNS_DIR_COMMANDS)
    n += 3 * len(SCENARIO_COMMANDS) + len(_variants(good_log.read_text().splitlines()))
    n += len(SITUATIONS) + 1 + len(STATE_FILES) + len(CONFIGS) + 3 + len(TUNED_PARAMS) + 1
    n += len(MODELS) + len(RESUME) + len(REQUESTS)
    assert n >= 280, n
