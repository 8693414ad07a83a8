"""Bad scenario files: each raises ONE clear ScenarioError naming the file and the field.

The files are written into ``tmp_path`` and loaded with ``psygym.editions.load("7th", path)``
(and ``load_file``), as a user would. Messages read ``<file>: field <dotted.path>: <problem>
(allowed: ...)`` (DESIGN.md "Scenarios").
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import psyker7, scenario7, toml_dumps, unit7, write_toml

from psygym.editions import load, load_file
from psygym.scenario import ScenarioError


def valid() -> dict:
    return scenario7(
        [
            unit7("Marine", wounds=1, models=5),
            unit7("Librarian", (2, 0), wounds=2, psyker=psyker7(2, powers=["Smite"])),
        ],
        [
            unit7("Sorcerer", (0, 12), wounds=2, psyker=psyker7(1, disciplines=["Telepathy"])),
            unit7("Cultists", (3, 12), models=10),
        ],
    )


def unit(d: dict, side: int, index: int) -> dict:
    return d["sides"][side]["units"][index]


def setter(path: str, value) -> Callable[[dict], None]:
    """Mutation setting a dotted path (list indices as numbers) to ``value``."""

    def mutate(d: dict) -> None:
        *parents, last = path.split(".")
        node = d
        for p in parents:
            node = node[int(p)] if p.isdigit() else node[p]
        node[int(last) if last.isdigit() else last] = value

    return mutate


def deleter(path: str) -> Callable[[dict], None]:
    def mutate(d: dict) -> None:
        *parents, last = path.split(".")
        node = d
        for p in parents:
            node = node[int(p)] if p.isdigit() else node[p]
        del node[last]

    return mutate


def dup_name(d: dict) -> None:
    unit(d, 1, 1)["name"] = "Marine"


def one_side(d: dict) -> None:
    del d["sides"][1]


def bare_psyker(d: dict) -> None:
    unit(d, 0, 1)["psyker"] = {"mastery": 1}


CASES = [
    # id, mutation, dotted field, words the message must contain
    ("missing-field", deleter("sides.0.units.0.wounds"), "sides.0.units.0.wounds", "required"),
    ("missing-name", deleter("sides.1.units.1.name"), "sides.1.units.1.name", "required"),
    (
        "wrong-type",
        setter("sides.0.units.0.leadership", "ten"),
        "sides.0.units.0.leadership",
        "integer",
    ),
    ("wrong-type-psyker", setter("sides.0.units.1.psyker", 3), "sides.0.units.1.psyker", ""),
    ("ml-0", setter("sides.0.units.1.psyker.mastery", 0), "sides.0.units.1.psyker.mastery",
     "at least 1"),  # fmt: skip
    ("ml-5", setter("sides.0.units.1.psyker.mastery", 5), "sides.0.units.1.psyker.mastery",
     "at most 4"),  # fmt: skip
    (
        "unknown-power",
        setter("sides.0.units.1.psyker.powers", ["Smite", "Smiet"]),
        "sides.0.units.1.psyker.powers.1",
        "unknown power 'Smiet'",
    ),
    (
        "unknown-discipline",
        setter("sides.1.units.0.psyker.disciplines", ["Necromancy"]),
        "sides.1.units.0.psyker.disciplines.0",
        "unknown discipline 'Necromancy'",
    ),
    ("negative-wounds", setter("sides.1.units.1.wounds", -1), "sides.1.units.1.wounds",
     "at least 1"),  # fmt: skip
    ("zero-models", setter("sides.0.units.0.models", 0), "sides.0.units.0.models", "at least 1"),
    ("bad-save", setter("sides.0.units.0.save", 1), "sides.0.units.0.save", "at least 2"),
    ("duplicate-names", dup_name, "sides.1.units.1.name", "used twice"),
    (
        "position-triple",
        setter("sides.0.units.0.position", [1, 2, 3]),
        "sides.0.units.0.position",
        "at most 2 items",
    ),
    (
        "position-single",
        setter("sides.0.units.0.position", [1]),
        "sides.0.units.0.position.1",
        "required",
    ),
    ("position-number", setter("sides.0.units.0.position", 4), "sides.0.units.0.position", ""),
    (
        "position-text",
        setter("sides.0.units.0.position", ["a", "b"]),
        "sides.0.units.0.position.0",
        "",
    ),
    ("empty-side", setter("sides.1.units", []), "sides.1.units", "at least 1"),
    ("one-side", one_side, "sides", "at least 2"),
    (
        "unknown-unit-field",
        setter("sides.0.units.0.colour", "blue"),
        "sides.0.units.0.colour",
        "Extra inputs",
    ),
    ("unknown-game-field", setter("game.warp_flux", 2), "game.warp_flux", "Extra inputs"),
    ("unknown-top-field", setter("weather", "rain"), "weather", "Extra inputs"),
    (
        "unknown-psyker-flag",
        setter("sides.0.units.1.psyker.hood", True),
        "sides.0.units.1.psyker.hood",
        "Extra inputs",
    ),
    ("bad-battle-rounds", setter("game.battle_rounds", 0), "game.battle_rounds", "at least 1"),
    ("bad-first-player", setter("game.first_player", 2), "game.first_player", ""),
    ("negative-pool-bonus", setter("sides.0.pool_bonus", -1), "sides.0.pool_bonus", "at least 0"),
    ("psyker-without-powers", bare_psyker, "sides.0.units.1.psyker", "needs powers"),
    ("missing-edition", deleter("edition"), "edition", "missing"),
    ("unknown-edition", setter("edition", "9th"), "edition", "unknown edition '9th'"),
    ("other-edition", setter("edition", "8th"), "edition", "for edition '8th', not '7th'"),
]


def write_bad(tmp_path: Path, name: str, mutate: Callable[[dict], None]) -> Path:
    data = copy.deepcopy(valid())
    mutate(data)
    return write_toml(tmp_path / f"{name}.toml", data)


def assert_clear(err: ScenarioError, path: Path, field: str, words: str) -> None:
    msg = str(err)
    assert str(path) in msg, msg
    assert err.source == str(path)
    if field:
        assert err.field == field, msg
        assert f"field {field}:" in msg, msg
    assert words in msg, msg
    assert "\n" not in msg and "pydantic" not in msg.lower(), msg


def test_toml_writer_round_trips():
    import tomllib

    assert tomllib.loads(toml_dumps(valid())) == valid()


def test_the_valid_base_loads(tmp_path):
    path = write_toml(tmp_path / "ok.toml", valid())
    rules = load("7th", path)
    assert rules.names == ["Marine", "Librarian", "Sorcerer", "Cultists"]
    assert load_file(path).names == rules.names


@pytest.mark.parametrize("case,mutate,field,words", CASES, ids=[c[0] for c in CASES])
def test_bad_scenario_raises_one_clear_error(tmp_path, case, mutate, field, words):
    path = write_bad(tmp_path, case, mutate)
    with pytest.raises(ScenarioError) as err:
        load("7th", path)
    assert_clear(err.value, path, field, words)


@pytest.mark.parametrize(
    "case,mutate,field,words",
    [c for c in CASES if c[0] not in ("other-edition",)],
    ids=[c[0] for c in CASES if c[0] != "other-edition"],
)
def test_bad_scenario_through_load_file(tmp_path, case, mutate, field, words):
    path = write_bad(tmp_path, case, mutate)
    with pytest.raises(ScenarioError) as err:
        load_file(path)
    assert_clear(err.value, path, field, words)


def test_errors_name_the_allowed_values(tmp_path):
    path = write_bad(tmp_path, "p", setter("sides.0.units.1.psyker.powers", ["Smiet"]))
    with pytest.raises(ScenarioError) as err:
        load("7th", path)
    assert "Smite" in err.value.allowed and "Psychic Shriek" in err.value.allowed
    path = write_bad(tmp_path, "e", setter("edition", "9th"))
    with pytest.raises(ScenarioError) as err:
        load("7th", path)
    assert err.value.allowed == "rt, 2nd, 7th, 8th"


def test_toml_syntax_error(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text(toml_dumps(valid()).replace("[game]", "[game", 1))
    with pytest.raises(ScenarioError) as err:
        load("7th", path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: not valid TOML") and "line" in msg and "\n" not in msg
    with pytest.raises(ScenarioError, match="not valid TOML"):
        load_file(path)


def test_missing_file_and_unknown_shipped_name(tmp_path):
    missing = tmp_path / "nowhere.toml"
    with pytest.raises(ScenarioError) as err:
        load("7th", missing)
    assert str(missing) in str(err.value) and "no such file" in str(err.value)
    with pytest.raises(ScenarioError) as err:
        load("7th", "no-such-scenario")
    assert "no-such-scenario" in str(err.value)
    assert "duel" in str(err.value) and "single-phase" in str(err.value)


def test_unknown_edition_name_in_load():
    with pytest.raises(ValueError, match="unknown edition '9th'; known editions: rt, 2nd, 7th"):
        load("9th", "duel")


# ----------------------------------------------------------------------------- 7E-9 data files
CUSTOM_POWERS = """
[[power]]
name = "Mind Spike"
discipline = "Homebrew"
number = 0
warp_charge = 1
kind = "witchfire"
target = "enemy"
range = 24
effect = { mortal = "D3" }
"""


def test_custom_disciplines_file_loads(tmp_path):
    """7E-9: users may add their own disciplines (``powers_file``, relative to the scenario)."""
    (tmp_path / "homebrew.toml").write_text(CUSTOM_POWERS)
    data = valid()
    data["powers_file"] = "homebrew.toml"
    data["sides"][0]["units"][1]["psyker"] = psyker7(1, powers=["Mind Spike"])
    data["sides"][1]["units"][0]["psyker"] = psyker7(1, disciplines=["Homebrew"])
    rules = load("7th", write_toml(tmp_path / "custom.toml", data))
    assert [p.name for p in rules.powers] == ["Mind Spike"]


@pytest.mark.parametrize(
    "replace_from,replace_to,field,words",
    [
        ("warp_charge = 1", "warp_charge = 4", "power.0.warp_charge", "at most 3"),
        ('kind = "witchfire"', 'kind = "miracle"', "power.0.kind", "witchfire"),
        (
            'effect = { mortal = "D3" }',
            'effect = { mortal = "D3", value = 1 }',
            "power.0.effect",
            "exactly one",
        ),
        ('effect = { mortal = "D3" }', 'effect = { mortal = "3Q" }', "power.0.effect", "3Q"),
        ("number = 0", "number = 9", "power.0.number", "at most 6"),
    ],
)
def test_bad_disciplines_file_names_its_file_and_field(
    tmp_path, replace_from, replace_to, field, words
):
    bad = tmp_path / "homebrew.toml"
    bad.write_text(CUSTOM_POWERS.replace(replace_from, replace_to))
    data = valid()
    data["powers_file"] = str(bad)
    path = write_toml(tmp_path / "custom.toml", data)
    with pytest.raises(ScenarioError) as err:
        load("7th", path)
    assert str(bad) in str(err.value) and err.value.field == field
    assert words in str(err.value)


def test_missing_disciplines_file(tmp_path):
    data = valid()
    data["powers_file"] = "nope.toml"
    with pytest.raises(ScenarioError, match="no such file"):
        load("7th", write_toml(tmp_path / "custom.toml", data))


# ----------------------------------------------------------------------------- unreadable files
def _one_line(exc: ScenarioError, path: Path) -> str:
    text = str(exc)
    assert "\n" not in text and text.startswith(str(path))
    return text


@pytest.mark.parametrize(
    "mutate,problem",
    [
        (setter("sides.0.units.0.value_per_wound", float("inf")), "finite number"),
        (setter("sides.0.units.0.value_per_wound", float("nan")), "finite number"),
        (setter("sides.1.units.1.position", [float("-inf"), 0.0]), "finite number"),
    ],
    ids=["inf-value", "nan-value", "inf-position"],
)
def test_non_finite_floats_are_rejected(tmp_path, mutate, problem):
    data = valid()
    mutate(data)
    path = write_toml(tmp_path / "bad.toml", data)
    with pytest.raises(ScenarioError, match=problem) as err:
        load("7th", path)
    assert "allowed: a finite number" in _one_line(err.value, path)


def test_deeply_nested_toml_is_one_error(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text(toml_dumps(valid()) + "x = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ScenarioError, match="nested too deeply") as err:
        load("7th", path)
    assert "at most 16 levels" in _one_line(err.value, path)
    shallow = tmp_path / "shallow.toml"
    shallow.write_text("x = " + "[" * 20 + "]" * 20 + "\n")
    with pytest.raises(ScenarioError, match="nested too deeply"):
        load("7th", shallow)


def test_non_utf8_file_names_the_file_and_byte(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(toml_dumps(valid()).encode() + b"\n# caf\xe9\n")
    with pytest.raises(ScenarioError, match=r"not UTF-8 text \(byte \d+ is 0xe9\)") as err:
        load("7th", path)
    _one_line(err.value, path)


def test_a_directory_is_not_a_scenario(tmp_path):
    with pytest.raises(ScenarioError, match="is a directory, not a file") as err:
        load("7th", tmp_path)
    _one_line(err.value, tmp_path)


def test_oversized_file_is_refused_before_parsing(tmp_path):
    path = tmp_path / "huge.toml"
    path.write_text(toml_dumps(valid()) + "#" * (1 << 20) + "\n")
    with pytest.raises(ScenarioError, match=r"the file is \d+ bytes") as err:
        load("7th", path)
    _one_line(err.value, path)


# ----------------------------------------------------------------------------- bounds and types
BOUNDS = [
    # id, mutation, dotted field, words the message must contain
    ("huge-value", setter("sides.0.units.0.value_per_wound", 1e308),
     "sides.0.units.0.value_per_wound", "at most 1000"),
    ("negative-value", setter("sides.0.units.0.value_per_wound", -1.0),
     "sides.0.units.0.value_per_wound", "at least 0"),
    ("wounds-true", setter("sides.0.units.0.wounds", True), "sides.0.units.0.wounds",
     "a whole number (true and false are not numbers)"),
    ("models-false", setter("sides.0.units.0.models", False), "sides.0.units.0.models",
     "whole number"),
    ("value-true", setter("sides.0.units.0.value_per_wound", True),
     "sides.0.units.0.value_per_wound", "a number (true and false are not numbers)"),
    ("flag-one", setter("sides.0.units.1.psyker.adamantium_will", 1),
     "sides.0.units.1.psyker.adamantium_will", "true or false"),
    ("first-player-true", setter("game.first_player", True), "game.first_player",
     "true is not a player"),
    ("too-many-units", lambda d: d["sides"][1]["units"].extend(
        unit7(f"Squad {k}", (k, 20)) for k in range(29)), "sides.1.units", "at most 30 items"),
    ("long-name", setter("sides.0.units.0.name", "M" * 81), "sides.0.units.0.name", "80"),
    ("far-position", setter("sides.0.units.0.position", [1e9, 0.0]),
     "sides.0.units.0.position.0", "at most 1000"),
    ("far-advance", setter("sides.0.units.0.advance", 1e6), "sides.0.units.0.advance",
     "at most 1000"),
    ("phase-limit", setter("game.phase_limit", 10**6), "game.phase_limit", "at most 40"),
    ("battle-rounds", setter("game.battle_rounds", 21), "game.battle_rounds", "at most 20"),
    ("surge-value", setter("game.warp_surge_value", 1e300), "game.warp_surge_value",
     "at most 1000"),
    ("many-powers", setter("sides.0.units.1.psyker.powers", ["Smite"] * 101),
     "sides.0.units.1.psyker.powers", "at most 100 items"),
]  # fmt: skip


@pytest.mark.parametrize("case,mutate,field,words", BOUNDS, ids=[c[0] for c in BOUNDS])
def test_sizes_values_and_types_are_bounded(tmp_path, case, mutate, field, words):
    path = write_bad(tmp_path, case, mutate)
    with pytest.raises(ScenarioError) as err:
        load("7th", path)
    assert_clear(err.value, path, field, words)


ESCAPES = {  # how a name is written in the TOML file -> the control character it holds
    "esc": ("\\u001b[2J\\u001b[31mLibrarian", "U+001B"),
    "csi": ("\\u009b31mLibrarian", "U+009B"),
    "bell": ("Libra\\u0007rian", "U+0007"),
    "carriage-return": ("Librarian\\rCultists", "U+000D"),
    "newline": ("Libra\\nrian", "U+000A"),
}  # fmt: skip


@pytest.mark.parametrize("where", ["sides.0.units.1.name", "sides.1.name", "name"])
@pytest.mark.parametrize("kind", sorted(ESCAPES))
def test_control_characters_in_names_are_refused(tmp_path, kind, where):
    """Terminal escape codes never reach the terminal: a file naming a unit with one is refused."""
    written, code = ESCAPES[kind]
    path = write_bad(tmp_path, kind, setter(where, "PLACEHOLDER"))
    path.write_text(path.read_text().replace("PLACEHOLDER", written))
    with pytest.raises(ScenarioError) as err:
        load("7th", path)
    assert_clear(err.value, path, where, f"the control character {code}")
    assert "printable text" in str(err.value)
    assert not any(ch in str(err.value) for ch in "\x1b\x9b\x07\r")


def test_a_description_may_have_line_breaks_but_no_escape_codes(tmp_path):
    path = write_toml(tmp_path / "ok.toml", {**valid(), "description": "Line one.\n\tLine two."})
    assert load("7th", path).scenario.description == "Line one.\n\tLine two."
    path = write_bad(tmp_path, "d", setter("description", "PLACEHOLDER"))
    path.write_text(path.read_text().replace("PLACEHOLDER", "\\u001b]0;title\\u0007"))
    with pytest.raises(ScenarioError, match="control character U\\+001B"):
        load("7th", path)


@pytest.mark.parametrize(
    "expr,ok",
    [("12D6", True), ("20D20+20", True), ("21D6", False), ("D21", False), ("D6+21", False),
     ("1000000D1000000", False), ("9" * 5000, False), ("D" + "9" * 5000, False)],
)  # fmt: skip
def test_dice_expressions_are_bounded(tmp_path, expr, ok):
    (tmp_path / "homebrew.toml").write_text(
        CUSTOM_POWERS.replace('mortal = "D3"', f"mortal = {json.dumps(expr)}")
    )
    data = valid()
    data["powers_file"] = "homebrew.toml"
    data["sides"][0]["units"][1]["psyker"] = psyker7(1, powers=["Mind Spike"])
    data["sides"][1]["units"][0]["psyker"] = psyker7(1, disciplines=["Homebrew"])
    path = write_toml(tmp_path / "custom.toml", data)
    if ok:
        assert [p.name for p in load("7th", path).powers] == ["Mind Spike"]
        return
    with pytest.raises(ScenarioError) as err:
        load("7th", path)
    msg = str(err.value)
    assert "\n" not in msg and err.value.field == "power.0.effect", msg
    assert "at most 20 dice of at most 20 sides and a number of at most 20" in msg, msg


@pytest.mark.parametrize("name", ["../user/my.tmol", "runs/mine", "my.tmol"])
def test_a_mistyped_path_is_reported_as_a_missing_file(name):
    with pytest.raises(ScenarioError) as err:
        load("7th", name)
    msg = str(err.value)
    assert msg.startswith(f"{name}: no such file") and "shipped" not in msg.split("(")[0], msg
    assert ("ends in .toml, not .tmol" in msg) == name.endswith(".tmol"), msg
    assert "duel" in msg and "\n" not in msg


def _spec_classes() -> list[type]:
    """Every model of every scenario and data file format (the shipped editions' specs)."""
    import importlib

    from psygym.scenario import Spec

    for module in ("seventh.spec", "eighth.spec", "second.spec", "second.data",
                   "rogue_trader.spec", "rogue_trader.abilities"):  # fmt: skip
        importlib.import_module(f"psygym.editions.{module}")
    out, todo = [], [Spec]
    while todo:
        cls = todo.pop()
        if cls.__module__.startswith("psygym."):  # not a test's own model not yet collected
            out.append(cls)
        todo += cls.__subclasses__()
    return out


def _unbounded(annotation, metadata, where: str) -> list[str]:
    """Numbers without an upper bound and lists or tables without a most-items bound."""
    import types
    import typing

    from annotated_types import Le, Lt, MaxLen
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

    def flat(items):
        for m in items:
            yield from (flat(m.metadata) if isinstance(m, FieldInfo) else [m])

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _unbounded(args[0], [*metadata, *args[1:]], where)
    if origin in (typing.Union, types.UnionType):
        return [x for a in args for x in _unbounded(a, metadata, where)]
    found = list(flat(metadata))
    if annotation in (int, float):
        return [] if any(isinstance(m, Le | Lt) for m in found) else [where]
    if origin in (list, dict, tuple):
        keys = typing.get_origin(args[0]) is typing.Literal if origin is dict else False
        fixed = keys or (origin is tuple and Ellipsis not in args)
        own = [] if fixed or any(isinstance(m, MaxLen) for m in found) else [where]
        return own + [x for a in args for x in _unbounded(a, [], f"{where}[]")]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return []  # checked as a class of its own
    return []


def test_every_number_and_list_in_the_formats_has_a_stated_maximum():
    """Bounds before allocation: no field of any scenario or data file is unbounded."""
    from psygym.scenario import dice_field

    classes = _spec_classes()
    assert len(classes) > 30
    missing = []
    for cls in classes:
        dice = {f for d in cls.__pydantic_decorators__.field_validators.values()
                if d.func is dice_field for f in d.info.fields}  # fmt: skip
        for name, info in cls.model_fields.items():
            if name not in dice:  # dice expressions: bounded by dice_field
                where = f"{cls.__module__}.{cls.__name__}.{name}"
                missing += _unbounded(info.annotation, info.metadata, where)
    assert missing == []
