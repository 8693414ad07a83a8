"""Scenario files: TOML data validated with pydantic, with errors that name file, field and fix.

A scenario names its ``edition``, the game settings and two ``sides`` of units. Each edition
subclasses :class:`UnitSpec`, :class:`SideSpec` and :class:`ScenarioSpec` with its own fields;
this module holds what they share (units with wounds, toughness, saves, leadership, a position in
inches; names with a visible character; unique unit names; two non-empty sides with different
names) and the loader.

Every problem becomes one :class:`ScenarioError` whose message reads
``<file>: field <dotted.path>: <problem> (allowed: ...)``.

Every size and number a file can state is checked against a maximum named here (units per side,
powers, dice, score values, inches, battle rounds, names) before anything is built from it, so
a file cannot ask for a game too big to hold in memory or for infinite scores. Whole numbers and
flags are strict (``wounds = true`` is not 1), and no text may hold control characters: a
terminal escape code in a unit name would otherwise reach the terminal raw.
"""

from __future__ import annotations

import math
import re
import tomllib
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo

from psygym.dice import DiceError, parse

# The maxima of everything a scenario or data file can size; the shipped files stay far below.
MAX_UNITS = 30
"""Most units on one side of a scenario (the shipped ones have at most 4)."""
MAX_MODELS = 100
"""Most models in one unit."""
MAX_WOUNDS = 100
"""Most wounds of one model."""
MAX_POWERS = 100
"""Most powers (or disciplines, abilities) a list may name, and most entries of a data file
(the 7th edition's shipped disciplines file holds 50)."""
MAX_VALUE = 1000.0
"""Largest score value: of a wound, of a power's or ability's effect, of a warp surge."""
MAX_INCHES = 1000.0
"""Largest distance in inches: a range, a move, either coordinate of a position."""
MAX_BATTLE_ROUNDS = 20
"""Most battle rounds of a game (a Psychic phase limit may be twice this)."""
MAX_DICE = 20
"""Most dice in a dice expression (``20D6``; the shipped data roll at most ``12D6``)."""
MAX_DIE_SIDES = 20
"""Most sides of a die in a dice expression (``D20``)."""
MAX_DICE_MODIFIER = 20
"""Largest added or subtracted number (or constant) in a dice expression."""
MAX_NAME_LENGTH = 80
"""Longest name (of a unit, side, scenario, power or ability), in characters."""
MAX_TEXT_LENGTH = 2000
"""Longest description, in characters."""


class ScenarioError(ValueError):
    """A scenario (or data) file that cannot be used; the message names file, field and fix."""

    def __init__(self, source: str, field: str, problem: str, allowed: str | None = None):
        self.source, self.field, self.problem, self.allowed = source, field, problem, allowed
        # A path holds the keys of tables (power names): one with a right-to-left override or a
        # zero-width space would scramble or hide part of the line, so those are shown escaped.
        shown = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in field)
        msg = f"{source}: field {shown}: {problem}" if field else f"{source}: {problem}"
        if allowed:
            msg += f" (allowed: {allowed})"
        super().__init__(msg)


class Spec(BaseModel):
    """Base of every scenario/data model: unknown fields are errors, values are immutable.

    Every float must be finite: ``inf`` or ``nan`` in a score value or a position would make
    every result ``+inf ± nan`` (or a game without decisions) instead of an error. Types are
    strict: ``true`` is not the whole number 1, nor ``"3"`` the number 3. No text may hold a
    control character (:func:`control_character`); a ``description`` may hold line breaks and
    tabs.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    @field_validator("*")
    @classmethod
    def _printable(cls, value: Any, info: ValidationInfo) -> Any:
        allowed = "\n\t" if info.field_name == "description" else ""
        texts = [value] if isinstance(value, str) else []
        if isinstance(value, list | tuple):
            texts = [v for v in value if isinstance(v, str)]
        elif isinstance(value, dict):
            texts = [v for kv in value.items() for v in kv if isinstance(v, str)]
        for text in texts:
            bad = control_character(text, allowed)
            if bad is not None:
                raise ValueError(
                    f"the text holds the control character U+{ord(bad):04X} (allowed: printable "
                    "text, no control characters or terminal escape codes)"
                )
        return value


def control_character(text: str, allowed: str = "") -> str | None:
    """The first control character of ``text`` (Unicode category Cc) not in ``allowed``, or None.

    Terminal escape codes start with one (ESC, U+001B, or CSI, U+009B), and so do carriage
    returns and backspaces, which can overwrite what a terminal showed.
    """
    return next(
        (ch for ch in text if ch not in allowed and unicodedata.category(ch) == "Cc"), None
    )


_BLANK_GLYPHS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Letters and symbols that draw nothing: the Hangul fillers and the blank Braille pattern."""


def has_visible_character(text: str) -> bool:
    """Whether ``text`` holds a character that draws something on a screen.

    A letter, digit, punctuation mark or symbol counts; spaces, format characters (the
    zero-width space U+200B, the right-to-left override U+202E), control characters, combining
    marks on their own and the few letters that draw nothing (:data:`_BLANK_GLYPHS`) do not.
    """
    return any(
        unicodedata.category(ch)[0] in "LNPS" and ch not in _BLANK_GLYPHS for ch in text
    )


def _visible_name(text: str) -> str:
    # A name the texts cannot show ("Generating powers: ", "'s Psychic phase") names nothing.
    # A control character is left to Spec._printable, whose message is the more precise one.
    if control_character(text) is None and not has_visible_character(text):
        # Code points, not the text: a terminal shows none of it, and blanks get collapsed.
        codes = " ".join(f"U+{ord(ch):04X}" for ch in text[:6]) + (" ..." if len(text) > 6 else "")
        raise ValueError(
            f"the name is only {codes}, no visible character (allowed: at least one letter, "
            "digit, punctuation mark or symbol)"
        )
    return text


Name = Annotated[
    str, Field(min_length=1, max_length=MAX_NAME_LENGTH), AfterValidator(_visible_name)
]
"""A name in a scenario or data file: 1 to :data:`MAX_NAME_LENGTH` characters, at least one
of them visible (:func:`has_visible_character`)."""
Text = Annotated[str, Field(max_length=MAX_TEXT_LENGTH)]
"""A description: at most :data:`MAX_TEXT_LENGTH` characters."""
Value = Annotated[float, Field(ge=0, le=MAX_VALUE)]
"""A score value: 0 to :data:`MAX_VALUE`."""
SignedValue = Annotated[float, Field(ge=-MAX_VALUE, le=MAX_VALUE)]
"""A score value that may count against its side (an ability worth less than nothing)."""
Inches = Annotated[float, Field(ge=0, le=MAX_INCHES)]
"""A distance: 0 to :data:`MAX_INCHES` inches."""
Coordinate = Annotated[float, Field(ge=-MAX_INCHES, le=MAX_INCHES)]
"""One coordinate of a position: -:data:`MAX_INCHES` to :data:`MAX_INCHES` inches."""
Names = Annotated[list[Name], Field(max_length=MAX_POWERS)]
"""A list of power, discipline or ability names: at most :data:`MAX_POWERS`."""


def _not_a_flag(value: Any) -> Any:
    if isinstance(value, bool):  # a Literal[0, 1] takes true as 1, even in strict mode
        raise ValueError(f"{str(value).lower()} is not a player (allowed: 0 or 1)")
    return value


Player = Annotated[Literal[0, 1], BeforeValidator(_not_a_flag)]
"""A player number, 0 or 1 (not ``true`` or ``false``)."""


class UnitSpec(Spec):
    """A unit shared by every edition's scenario (editions add their own fields)."""

    name: Name = Field(description="unique name of the unit in the scenario")
    models: int = Field(1, ge=1, le=MAX_MODELS, description="number of models")
    wounds: int = Field(ge=1, le=MAX_WOUNDS, description="wounds per model")
    toughness: int = Field(4, ge=1, le=10)
    save: int = Field(7, ge=2, le=7, description="armour save (7 means none)")
    invulnerable: int | None = Field(None, ge=2, le=6, description="invulnerable save, if any")
    leadership: int = Field(8, ge=2, le=10)
    # Not strict as a whole: TOML gives a list, and a tuple is only accepted from a list in lax
    # mode; the numbers inside stay strict.
    position: tuple[Coordinate, Coordinate] = Field(strict=False, description="x, y in inches")
    value_per_wound: Value = Field(1.0, description="score value of one wound")


U = TypeVar("U", bound=UnitSpec)


class SideSpec(Spec):
    """One player's army: a name and at least one unit (editions narrow ``units``' type)."""

    name: Name
    units: list[UnitSpec] = Field(min_length=1, max_length=MAX_UNITS)


class ScenarioSpec(Spec):
    """A whole scenario: edition, name, description and exactly two sides."""

    edition: str
    name: Name
    description: Text = ""
    sides: list[SideSpec] = Field(min_length=2, max_length=2)

    @model_validator(mode="after")
    def _unique_unit_names(self) -> ScenarioSpec:
        seen: set[str] = set()
        for i, side in enumerate(self.sides):
            for j, unit in enumerate(side.units):
                if unit.name in seen:
                    raise _FieldProblem(
                        f"sides.{i}.units.{j}.name",
                        f"unit name {unit.name!r} is used twice",
                        "a name no other unit in the scenario has",
                    )
                seen.add(unit.name)
        return self

    @model_validator(mode="after")
    def _distinct_side_names(self) -> ScenarioSpec:
        # Texts name a side by its name ("Blue's Psychic phase"): two alike would be ambiguous.
        if len(self.sides) == 2 and self.sides[0].name == self.sides[1].name:
            raise _FieldProblem(
                "sides.1.name",
                f"both sides are named {self.sides[1].name!r}",
                "a name the other side does not have",
            )
        return self


def repeated(names: Sequence[str]) -> int | None:
    """Index of the first of ``names`` that an earlier one already is, or ``None``."""
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            return i
        seen.add(name)
    return None


class _FieldProblem(ValueError):
    """Raised inside validators to point at a precise field (turned into a ScenarioError)."""

    def __init__(self, field: str, problem: str, allowed: str | None = None):
        self.field, self.problem, self.allowed = field, problem, allowed
        super().__init__(problem)


def field_problem(field: str, problem: str, allowed: str | None = None) -> ValueError:
    """Build an error for a validator to raise that points at ``field`` (a dotted path)."""
    return _FieldProblem(field, problem, allowed)


def _dotted(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


_TYPE_WORDS = {
    "int_type": "a whole number (true and false are not numbers)",
    "float_type": "a number (true and false are not numbers)",
    "bool_type": "true or false",
    "string_type": "text in quotes",
}
"""What a strict type allows, in words, by pydantic error type."""


def _number(x: Any) -> str:
    """A bound as written in a file: ``1000`` rather than ``1000.0``."""
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


_ITEM_WORDS = {
    "position": ("number", "numbers", ", x and y"),
    "sides": ("side", "sides", ""),
    "units": ("unit", "units", ""),
    "powers": ("power", "powers", ""),
    "power": ("power", "powers", ""),
    "disciplines": ("discipline", "disciplines", ""),
    "abilities": ("ability", "abilities", ""),
}
"""What the items of a list field are called, by field name (others are "items")."""


def _unwrap(tp: Any) -> tuple[Any, list[Any]]:
    """``tp`` without ``Annotated`` and ``| None``, and the constraints ``Annotated`` held."""
    meta: list[Any] = []
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp, *extra = get_args(tp)
            for x in extra:
                meta.extend(x.metadata if isinstance(x, FieldInfo) else [x])
        elif origin in (Union, UnionType):
            arms = [a for a in get_args(tp) if a is not type(None)]
            if len(arms) != 1:
                return tp, meta
            tp = arms[0]
        else:
            return tp, meta


def _field_at(model: Any, loc: tuple[Any, ...]) -> tuple[Any, list[Any]] | None:
    """The type and constraints of the field at ``loc`` of ``model``, or ``None`` if unclear."""
    tp, meta = model, []
    for part in loc:
        tp, _ = _unwrap(tp)
        origin, args = get_origin(tp), get_args(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel) and isinstance(part, str):
            info = tp.model_fields.get(part)
            if info is None:
                return None
            tp, meta = info.annotation, list(info.metadata)
        elif isinstance(part, int) and origin is list and args:
            tp, meta = args[0], []
        elif isinstance(part, int) and origin is tuple and args:
            fixed = args[-1] is not Ellipsis
            if fixed and part >= len(args):
                return None
            tp, meta = (args[part] if fixed else args[0]), []
        else:
            return None
    tp, extra = _unwrap(tp)
    return tp, meta + extra


def _lengths_in_words(
    model: Any, loc: tuple[Any, ...], err: Mapping[str, Any], list_length: bool = True
) -> str | None:
    """What lengths the list, tuple or text at ``loc`` allows, in words.

    ``exactly 2 sides, a list of length 2``, ``1 to 30 units, a list of length 1 to 30``,
    ``exactly 2 numbers, x and y``, ``1 to 80 characters``. The bounds come from the model,
    since pydantic's error tells only the one bound that was broken (and nothing of a tuple's
    fixed length). ``list_length=False`` leaves out a list's ``a list of length ...``.
    """
    ctx = err.get("ctx") or {}
    low, high = ctx.get("min_length"), ctx.get("max_length")
    found = _field_at(model, loc) if model is not None else None
    tp = None
    if found is not None:
        tp, meta = found
        for m in meta:
            low = getattr(m, "min_length", None) if low is None else low
            high = getattr(m, "max_length", None) if high is None else high
        args = get_args(tp)
        if get_origin(tp) is tuple and args and args[-1] is not Ellipsis:
            low = high = len(args)
    if low is None and high is None:
        return None
    names = [p for p in loc if isinstance(p, str)]
    if tp is str or err.get("type", "").startswith("string_"):
        one, many, tail = "character", "characters", ""
    else:
        one, many, tail = _ITEM_WORDS.get(names[-1] if names else "", ("item", "items", ""))

    def count(n: int) -> str:
        return f"{n} {one if n == 1 else many}"

    if low == high:
        words, span = f"exactly {count(low)}", f"{low}"
    elif low and high is not None:
        words, span = f"{low} to {high} {many}", f"{low} to {high}"
    elif high is not None:
        words, span = f"at most {count(high)}", f"0 to {high}"
    else:
        words, span = f"at least {count(low)}", f"{low} or more"
    is_list = (tp is not None and get_origin(tp) is list) or ctx.get("field_type") == "List"
    if list_length and is_list:
        tail += f", a list of length {span}"  # as the messages before these words said it
    return words + tail


def _allowed_from(err: Mapping[str, Any], model: Any = None) -> str | None:
    ctx = err.get("ctx") or {}
    kind = err.get("type", "")
    loc = tuple(err.get("loc", ()))
    if kind in ("too_short", "too_long", "string_too_short", "string_too_long"):
        return _lengths_in_words(model, loc, err)
    if kind in ("list_type", "tuple_type"):
        words = _lengths_in_words(model, loc, err, list_length=False)
        return f"a list of {words}" if words else "a list [...]"
    if kind == "missing" and loc and isinstance(loc[-1], int):
        # An item of a fixed-length tuple: say the length rather than "this field is required".
        return _lengths_in_words(model, loc[:-1], err) or "this item is required"
    if "expected" in ctx:
        return str(ctx["expected"])
    words = {"ge": "at least", "gt": "more than", "le": "at most", "lt": "less than"}
    bounds = [f"{words[k]} {_number(ctx[k])}" for k in words if k in ctx]
    if bounds:
        return ", ".join(bounds)
    if kind == "missing":
        return "this field is required"
    if kind == "finite_number":
        return "a finite number (not inf or nan)"
    if kind == "extra_forbidden":
        return "only the fields the edition's scenario format documents"
    if kind in _TYPE_WORDS:
        return _TYPE_WORDS[kind]
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return kind.removesuffix("_type").removesuffix("_parsing").replace("_", " ")
    return None


def validate(model: type[BaseModel], data: Mapping[str, Any], source: str) -> Any:
    """Validate ``data`` with ``model``; raise one :class:`ScenarioError` for the first problem."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        inner = (err.get("ctx") or {}).get("error")
        if isinstance(inner, _FieldProblem):
            raise ScenarioError(source, inner.field, inner.problem, inner.allowed) from None
        field = _dotted(tuple(err.get("loc", ())))
        msg = err.get("msg", "invalid").removeprefix("Value error, ")
        msg = msg.replace(" after validation", "")  # pydantic's words, not the file's
        raise ScenarioError(source, field, msg, _allowed_from(err, model)) from None
    except _FieldProblem as exc:
        raise ScenarioError(source, exc.field, exc.problem, exc.allowed) from None


MAX_TOML_BYTES = 1 << 20
"""Largest scenario or data file read (1 MiB; the shipped ones are a few KiB)."""
MAX_TOML_DEPTH = 16
"""Deepest nesting of tables and arrays allowed (the shipped formats need 4)."""


def read_toml(path: str | Path) -> dict[str, Any]:
    """Read a TOML file; every way it can be unusable becomes one :class:`ScenarioError`.

    A missing file, a directory, a file over :data:`MAX_TOML_BYTES`, bytes that are not UTF-8,
    a syntax error and nesting deeper than :data:`MAX_TOML_DEPTH` each get a message naming
    the file.
    """
    p = Path(path)
    if p.is_dir():
        raise ScenarioError(str(p), "", "is a directory, not a file", "a path to a .toml file")
    if not p.is_file():
        raise ScenarioError(str(p), "", "no such file", "a path to a .toml file or a shipped name")
    size = p.stat().st_size
    if size > MAX_TOML_BYTES:
        raise ScenarioError(
            str(p), "", f"the file is {size} bytes", f"at most {MAX_TOML_BYTES} bytes"
        )
    raw = p.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(
            str(p), "", f"not UTF-8 text (byte {exc.start} is 0x{raw[exc.start]:02x})",
            "a UTF-8 text file",
        ) from None  # fmt: skip
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(str(p), "", f"not valid TOML: {exc}") from None
    except RecursionError:
        data = None
    if data is None or _depth(data) > MAX_TOML_DEPTH:
        raise ScenarioError(
            str(p), "", "tables or arrays are nested too deeply",
            f"at most {MAX_TOML_DEPTH} levels",
        )  # fmt: skip
    return data


_TOML_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n",
                       "\f": "\\f", "\r": "\\r"}  # fmt: skip


def toml_string(text: str) -> str:
    r"""``text`` as a TOML basic string, in ASCII.

    Other characters are escaped: ``\uXXXX`` in the Basic Multilingual Plane and
    ``\UXXXXXXXX`` beyond it (an emoji), never as the surrogate pair JSON writes, which TOML
    refuses; control characters, DEL included, as TOML requires.

    Raises:
        ValueError: ``text`` holds a lone surrogate, which no TOML (nor UTF-8) text can hold.
    """
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _TOML_SHORT_ESCAPES:
            out.append(_TOML_SHORT_ESCAPES[ch])
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif 0xD800 <= code <= 0xDFFF:
            raise ValueError(f"cannot write the lone surrogate U+{code:04X} as TOML")
        elif code > 0xFFFF:
            out.append(f"\\U{code:08x}")
        else:
            out.append(f"\\u{code:04x}")
    out.append('"')
    return "".join(out)


def toml_text(data: Mapping[str, Any]) -> str:
    """TOML text of scenario data (tables, arrays of tables, scalars, arrays, inline tables).

    Raises:
        ValueError: the data holds something TOML cannot hold, or the text does not read back
            as the same data.
    """
    lines: list[str] = []

    def scalar(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"cannot write {v!r} as TOML")
            return repr(v)
        if isinstance(v, str):
            return toml_string(v)
        if isinstance(v, Mapping):
            return "{ " + ", ".join(f"{key(k)} = {scalar(x)}" for k, x in v.items()) + " }"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(scalar(x) for x in v) + "]"
        raise ValueError(f"cannot write {type(v).__name__} as TOML")

    def key(k: str) -> str:
        return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else toml_string(k)

    def is_table_array(v: Any) -> bool:
        return isinstance(v, list) and bool(v) and all(isinstance(x, Mapping) for x in v)

    def table(d: Mapping[str, Any], path: list[str]) -> None:
        for k, v in d.items():
            if not isinstance(v, Mapping) and not is_table_array(v):
                lines.append(f"{key(k)} = {scalar(v)}")
        for k, v in d.items():
            sub = [*path, key(k)]
            if isinstance(v, Mapping):
                lines.extend(["", f"[{'.'.join(sub)}]"])
                table(v, sub)
            elif is_table_array(v):
                for item in v:
                    lines.extend(["", f"[[{'.'.join(sub)}]]"])
                    table(item, sub)

    table(data, [])
    text = "\n".join(lines).lstrip("\n") + "\n"
    if tomllib.loads(text) != data:
        raise ValueError("the scenario data does not survive a TOML round trip")
    return text


def _depth(data: Any) -> int:
    """Nesting depth of tables and arrays, walked without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        node, level = stack.pop()
        if level > MAX_TOML_DEPTH:
            return level
        deepest = max(deepest, level)
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, level + 1) for c in children if isinstance(c, (dict, list)))
    return deepest


def read_edition(data: Mapping[str, Any], source: str) -> str:
    """The ``edition`` field of a scenario's data, checked against the registered editions."""
    from psygym.edition import ids

    known = ", ".join(ids())
    edition = data.get("edition")
    if edition is None:
        raise ScenarioError(source, "edition", "missing", known)
    if edition not in ids():
        raise ScenarioError(source, "edition", f"unknown edition {edition!r}", known)
    return str(edition)


def resolve_path(scenario: str | Path, shipped_dir: Path, edition: str) -> Path:
    """A shipped scenario name (``"duel"``) or a path, as a path to an existing file.

    A bare shipped name means the shipped scenario even where the working folder holds a file
    or folder of that name (give ``duel.toml`` or a path with a folder for that one).
    """
    p = Path(scenario)
    shipped = shipped_dir / f"{scenario}.toml"
    if len(p.parts) == 1 and not p.suffix and shipped.is_file():
        return shipped
    if p.exists():
        return p
    names = ", ".join(sorted(f.stem for f in shipped_dir.glob("*.toml"))) or "none shipped"
    if len(p.parts) > 1 or p.suffix:  # a folder or a suffix: a path, not a shipped name
        ends = f"; a scenario file ends in .toml, not {p.suffix}" if p.suffix != ".toml" else ""
        raise ScenarioError(
            str(p), "", f"no such file (looked for {p.resolve()}){ends}",
            f"a path to a .toml file, or a shipped name: {names}",
        )  # fmt: skip
    raise ScenarioError(str(scenario), "", f"no shipped {edition} scenario of that name", names)


def _one_line(value: str | None) -> str | None:
    if value is not None and ("\n" in value or "\r" in value):
        raise ValueError("text is one line")
    return value


RulesText = Annotated[
    str | None,
    Field(
        None,
        min_length=1,
        max_length=90,
        description="one-line rules text of the effect where the fields alone say it unclearly",
    ),
    AfterValidator(_one_line),
]
"""The optional ``text`` of a power in a data file: one line, at most 90 characters."""


def dice_field(value: str | int) -> str | int:
    """Return ``value`` if it is a dice expression within the maxima, for field validators.

    At most :data:`MAX_DICE` dice of at most :data:`MAX_DIE_SIDES` sides, and a number added or
    subtracted (or a constant) of at most :data:`MAX_DICE_MODIFIER`: an exact distribution is
    built for every expression, and ``1000000D1000000`` would never finish. A constant below 0
    (``'-3'``) or an expression always below 0 (``'D3-4'``) is refused.

    Raises:
        ValueError: it is not; pydantic adds the field's path, the message the allowed forms.
    """
    allowed = (
        f"a dice expression such as 'D3', '2D6', '4', with at most {MAX_DICE} dice of at most "
        f"{MAX_DIE_SIDES} sides and a number of at most {MAX_DICE_MODIFIER}"
    )
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a dice expression (allowed: {allowed})")
    if len(str(value)) > 16:  # long digit runs would be slow to convert, and nothing needs them
        raise ValueError(f"a dice expression of {len(str(value))} characters (allowed: {allowed})")
    try:
        expr = parse(value)
    except DiceError as exc:
        raise ValueError(f"{exc} (allowed: {allowed})") from None
    if expr.max < 0:
        # Every dice field counts something (hits, wounds, damage, dice, turns): a total that is
        # always below 0 would silently count as 0. One that only may be ('D3-2') is kept.
        what = "a negative number" if expr.sides == 0 else f"always negative (at most {expr.max})"
        raise ValueError(f"{value!r} is {what} (allowed: {allowed}, never below 0)")
    too_big = expr.count > MAX_DICE or expr.sides > MAX_DIE_SIDES
    if too_big or abs(expr.modifier) > MAX_DICE_MODIFIER:
        raise ValueError(f"{value!r} is too big (allowed: {allowed})")
    return value


def distance(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Distance in inches between two positions."""
    return ((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5
