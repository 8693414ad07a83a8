"""Army lists a new user gets wrong, each refused in one clear line by loader and command alike.

Each edition's generated scenario ``random:3`` is written to a file with one mistake: a name with
nothing visible in it, two sides of one name, a negative constant Perils damage, a discipline or
power listed twice, a position or a list of sides of the wrong length. The loader raises one
:class:`~psygym.scenario.ScenarioError` naming file, field and what is allowed; ``psygym advise``
exits 2 with one ``error:`` line, in process and as a subprocess.
"""

from __future__ import annotations

import copy
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import clean_error, run
from pydantic import Field

from psygym.editions import load
from psygym.editions.seventh.spec import DATA_DIR as SEVENTH_DATA
from psygym.editions.seventh.spec import load_perils
from psygym.generator import generate
from psygym.scenario import ScenarioError, Spec, toml_text, validate

EDITIONS = ["rt", "2nd", "7th", "8th"]

BLANK_NAMES = {
    "spaces": "  ",
    "zero-width-space": "\u200b",
    "right-to-left-override": "\u202e",
    "hangul-filler": "\u3164",
    "mixed-blanks": " \u200b\u00a0",
    "combining-mark": "\u0301",
}
"""Names with no character a screen draws (none holds a control character)."""


def scenario_file(tmp_path: Path, edition: str, mutate: Callable[[dict], Any]) -> Path:
    """``random:3`` of ``edition`` with ``mutate`` applied, written as TOML."""
    data = copy.deepcopy(generate(edition, 3))
    mutate(data)
    path = tmp_path / f"{edition}.toml"
    path.write_text(toml_text(data), encoding="utf-8")
    return path


def setter(dotted: str, value: Any) -> Callable[[dict], None]:
    """A mutation setting the field at ``dotted`` (``sides.0.units.1.name``) to ``value``."""

    def mutate(data: dict) -> None:
        *parents, last = [int(p) if p.isdigit() else p for p in dotted.split(".")]
        node: Any = data
        for p in parents:
            node = node[p]
        node[last] = value

    return mutate


def refused(path: Path, edition: str, field: str, *words: str) -> str:
    """Assert loader and ``psygym advise`` both refuse ``path`` at ``field`` with ``words``."""
    with pytest.raises(ScenarioError) as err:
        load(edition, path)
    msg = str(err.value)
    assert err.value.field == field, msg
    assert msg.startswith(f"{path}: field {field}: "), msg
    assert "\n" not in msg, msg
    for w in words:
        assert w in msg, (w, msg)
    line = clean_error(run("advise", "--edition", edition, "--scenario", path), field, *words)
    assert str(path) in line
    return msg


# ----------------------------------------------------------------------------- 1. names
@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("where", ["sides.0.units.0.name", "sides.1.name", "name"])
@pytest.mark.parametrize("kind", sorted(BLANK_NAMES))
def test_a_name_without_a_visible_character_is_refused(tmp_path, edition, where, kind):
    name = BLANK_NAMES[kind]
    path = scenario_file(tmp_path, edition, setter(where, name))
    codes = " ".join(f"U+{ord(ch):04X}" for ch in name)
    msg = refused(path, edition, where, "no visible character", codes, "at least one letter")
    assert name.strip() == "" or name not in msg  # shown as code points, never raw


VALUE_TABLES = {"rt": "game.ability_values", "2nd": "power_values", "8th": "game.power_values"}
"""Tables keyed by power (or ability) names; the 7th edition's scenarios have none."""


@pytest.mark.parametrize("edition", sorted(VALUE_TABLES))
def test_a_power_name_key_is_checked_and_shown_escaped(tmp_path, edition):
    table = VALUE_TABLES[edition]
    path = scenario_file(tmp_path, edition, setter(table, {"\u200b": 1.0}))
    with pytest.raises(ScenarioError) as err:
        load(edition, path)
    msg = str(err.value)
    assert "no visible character" in msg and "U+200B" in msg and "\u200b" not in msg, msg
    # A key with a visible character but a right-to-left override is an unknown name; the
    # path naming it must not reach a terminal raw.
    path = scenario_file(tmp_path, edition, setter(table, {"\u202eSmite": 1.0}))
    with pytest.raises(ScenarioError) as err:
        load(edition, path)
    msg = str(err.value)
    assert f"field {table}.\\u202eSmite: unknown" in msg and "\u202e" not in msg, msg


@pytest.mark.parametrize("edition", EDITIONS)
def test_two_sides_of_one_name_are_refused(tmp_path, edition):
    # Texts name a side ("Blue's Psychic phase"); unit names are already unique per scenario.
    path = scenario_file(tmp_path, edition, setter("sides.1.name", "Blue"))
    refused(path, edition, "sides.1.name", "both sides are named 'Blue'", "the other side")


def test_names_with_visible_characters_still_load(tmp_path):
    path = scenario_file(tmp_path, "7th", setter("sides.0.units.0.name", " \u00e9l\u00e8ve 🐉"))
    assert load("7th", path).names[0] == " \u00e9l\u00e8ve 🐉"
    path = scenario_file(tmp_path, "7th", setter("sides.1.name", "\u200b"))
    with pytest.raises(ScenarioError, match="no visible character"):
        load("7th", path)


# ----------------------------------------------------------------------------- 2. Perils damage
@pytest.mark.parametrize("field", ["game.perils_mortal_wounds", "game.perils_blast_mortal_wounds"])
@pytest.mark.parametrize("value", ["-3", -3, "-1", "D3-4"])
def test_a_negative_perils_damage_is_refused(tmp_path, field, value):
    """8E-6.1 and 8E-6.2: Perils inflicts mortal wounds; a total always below 0 counted as 0."""
    path = scenario_file(tmp_path, "8th", setter(field, value))
    what = "always negative" if "D" in str(value) else "a negative number"
    refused(path, "8th", field, f"{value!r} is {what}", "never below 0")
    # An expression that only may go below 0 is a rule's "minimum 0", and still loads.
    path = scenario_file(tmp_path, "8th", setter(field, "D3-2"))
    assert getattr(load("8th", path).scenario.game, field.split(".")[1]) == "D3-2"


def test_a_negative_perils_hits_constant_in_the_7th_data_is_refused(tmp_path):
    """7E-6.1: a psyker Dragged into the Warp leaves its unit D6 hits; '-3' hits is a mistake."""
    data = tomllib.loads((SEVENTH_DATA / "perils.toml").read_text(encoding="utf-8"))
    data["removed_hits"] = {"hits": "-3"}
    path = tmp_path / "perils.toml"
    path.write_text(toml_text(data), encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        load_perils(str(path))
    assert err.value.field == "removed_hits.hits"
    assert "'-3' is a negative number" in str(err.value)


# ----------------------------------------------------------------------------- 3. repeats
def _fixed_powers(powers: list[str]) -> Callable[[dict], None]:
    def mutate(data: dict) -> None:
        data["game"]["generate_powers"] = False
        for side in data["sides"]:
            for unit in side["units"]:
                if "psyker" in unit:
                    unit["psyker"].pop("disciplines", None)
                    unit["psyker"]["powers"] = ["Smite"]
        data["sides"][0]["units"][0]["psyker"]["powers"] = powers

    return mutate


REPEATS = [
    # edition, mutation, field, words
    ("7th", setter("sides.0.units.0.psyker.disciplines", ["Telekinesis", "Telekinesis"]),
     "sides.0.units.0.psyker.disciplines.1", "discipline 'Telekinesis' is listed twice"),
    ("7th", setter("sides.0.units.1.psyker.disciplines", ["Sanctic", "Telekinesis", "Sanctic"]),
     "sides.0.units.1.psyker.disciplines.2", "discipline 'Sanctic' is listed twice"),
    ("7th", _fixed_powers(["Smite", "Assail", "Smite"]),
     "sides.0.units.0.psyker.powers.2", "power 'Smite' is listed twice"),
    ("2nd", setter("sides.0.units.0.psyker.disciplines", ["Eldar", "Eldar"]),
     "sides.0.units.0.psyker.disciplines.1", "discipline 'Eldar' is listed twice"),
]  # fmt: skip


@pytest.mark.parametrize("edition,mutate,field,words", REPEATS)
def test_a_discipline_or_power_listed_twice_is_refused(tmp_path, edition, mutate, field, words):
    path = scenario_file(tmp_path, edition, mutate)
    kind = "discipline" if "discipline" in words else "power"
    refused(path, edition, field, words, f"each {kind} once")


# ----------------------------------------------------------------------------- 4. lengths
LENGTHS = [
    # mutation, field, the allowed words
    (setter("sides.0.units.0.position", [-2.0, 0.0, 1.0]), "sides.0.units.0.position",
     "(allowed: exactly 2 numbers, x and y)"),
    (setter("sides.0.units.0.position", [-2.0]), "sides.0.units.0.position.1",
     "(allowed: exactly 2 numbers, x and y)"),
    (setter("sides.0.units.0.position", 3.0), "sides.0.units.0.position",
     "(allowed: a list of exactly 2 numbers, x and y)"),
    (lambda d: d["sides"].append(copy.deepcopy(d["sides"][1])), "sides",
     "(allowed: exactly 2 sides, a list of length 2)"),
    (lambda d: d["sides"].pop(), "sides", "(allowed: exactly 2 sides, a list of length 2)"),
    (setter("sides.1.units", []), "sides.1.units", "(allowed: 1 to 30 units, a list of length 1"),
    (setter("sides.0.name", "B" * 81), "sides.0.name", "(allowed: 1 to 80 characters)"),
]  # fmt: skip


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("case", range(len(LENGTHS)))
def test_lengths_are_said_in_words(tmp_path, edition, case):
    mutate, field, words = LENGTHS[case]
    path = scenario_file(tmp_path, edition, mutate)
    msg = refused(path, edition, field, words)
    assert "length 0.." not in msg and "..any" not in msg and "after validation" not in msg, msg


class _Shapes(Spec):
    triple: tuple[int, int, int] = Field((0, 0, 0), strict=False)  # TOML gives a list
    pair: list[int] = Field([0, 0], min_length=2, max_length=2)
    some: list[int] = Field([0], min_length=1)
    few: list[int] = Field([], max_length=3)


@pytest.mark.parametrize(
    "data,field,allowed",
    [
        ({"triple": [1, 2, 3, 4]}, "triple", "exactly 3 items"),
        ({"triple": [1]}, "triple.1", "exactly 3 items"),
        ({"pair": [1, 2, 3]}, "pair", "exactly 2 items, a list of length 2"),
        ({"pair": [1]}, "pair", "exactly 2 items, a list of length 2"),
        ({"some": []}, "some", "at least 1 item, a list of length 1 or more"),
        ({"few": [1, 2, 3, 4]}, "few", "at most 3 items, a list of length 0 to 3"),
    ],
)
def test_a_length_error_says_the_lengths_a_field_allows(data, field, allowed):
    with pytest.raises(ScenarioError) as err:
        validate(_Shapes, data, "shapes.toml")
    assert err.value.field == field
    assert err.value.allowed == allowed, str(err.value)


# ----------------------------------------------------------------------------- the command
SUBPROCESS_CASES = [
    ("7th", setter("sides.0.units.0.name", "\u202e"), "no visible character"),
    ("8th", setter("game.perils_mortal_wounds", "-3"), "negative number"),
    ("7th", setter("sides.0.units.0.psyker.disciplines", ["Telekinesis"] * 2), "listed twice"),
    ("rt", lambda d: d["sides"].append(copy.deepcopy(d["sides"][1])), "exactly 2 sides"),
]


@pytest.mark.parametrize("edition,mutate,words", SUBPROCESS_CASES)
def test_psygym_advise_prints_one_error_line_and_exits_2(tmp_path, edition, mutate, words):
    path = scenario_file(tmp_path, edition, mutate)
    proc = subprocess.run(
        [sys.executable, "-m", "psygym_experiments.cli", "advise", "--edition", edition,
         "--scenario", str(path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("error:"), proc.stderr
    assert "Traceback" not in proc.stderr and words in lines[0], lines[0]
