"""Scenario files: TOML data validated with pydantic, with errors that name file, field and fix.

A scenario names its ``edition``, the game settings and two ``sides`` of units. Each edition
subclasses :class:`UnitSpec`, :class:`SideSpec` and :class:`ScenarioSpec` with its own fields;
this module holds what they share (units with wounds, toughness, saves, leadership, a position in
inches; unique unit names; two non-empty sides) and the loader.

Every problem becomes one :class:`ScenarioError` whose message reads
``<file>: field <dotted.path>: <problem> (allowed: ...)``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from psygym.dice import DiceError, parse


class ScenarioError(ValueError):
    """A scenario (or data) file that cannot be used; the message names file, field and fix."""

    def __init__(self, source: str, field: str, problem: str, allowed: str | None = None):
        self.source, self.field, self.problem, self.allowed = source, field, problem, allowed
        msg = f"{source}: field {field}: {problem}" if field else f"{source}: {problem}"
        if allowed:
            msg += f" (allowed: {allowed})"
        super().__init__(msg)


class Spec(BaseModel):
    """Base of every scenario/data model: unknown fields are errors, values are immutable.

    Every float must be finite: ``inf`` or ``nan`` in a score value or a position would make
    every result ``+inf ± nan`` (or a game without decisions) instead of an error.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class UnitSpec(Spec):
    """A unit shared by every edition's scenario (editions add their own fields)."""

    name: str = Field(min_length=1, description="unique name of the unit in the scenario")
    models: int = Field(1, ge=1, le=100, description="number of models")
    wounds: int = Field(ge=1, le=100, description="wounds per model")
    toughness: int = Field(4, ge=1, le=10)
    save: int = Field(7, ge=2, le=7, description="armour save (7 means none)")
    invulnerable: int | None = Field(None, ge=2, le=6, description="invulnerable save, if any")
    leadership: int = Field(8, ge=2, le=10)
    position: tuple[float, float] = Field(description="x, y in inches")
    value_per_wound: float = Field(1.0, ge=0, description="score value of one wound")


U = TypeVar("U", bound=UnitSpec)


class SideSpec(Spec):
    """One player's army: a name and at least one unit (editions narrow ``units``' type)."""

    name: str = Field(min_length=1)
    units: list[UnitSpec] = Field(min_length=1)


class ScenarioSpec(Spec):
    """A whole scenario: edition, name, description and exactly two sides."""

    edition: str
    name: str = Field(min_length=1)
    description: str = ""
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


def _allowed_from(err: Mapping[str, Any]) -> str | None:
    ctx = err.get("ctx") or {}
    kind = err.get("type", "")
    if "expected" in ctx:
        return str(ctx["expected"])
    bounds = [f"{k.replace('_', ' ')} {ctx[k]}" for k in ("ge", "gt", "le", "lt") if k in ctx]
    if bounds:
        return ", ".join(bounds)
    if kind == "missing":
        return "this field is required"
    if kind == "finite_number":
        return "a finite number (not inf or nan)"
    if kind == "extra_forbidden":
        return "only the fields the edition's scenario format documents"
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return kind.removesuffix("_type").removesuffix("_parsing").replace("_", " ")
    if kind in ("too_short", "too_long"):
        return f"length {ctx.get('min_length', 0)}..{ctx.get('max_length', 'any')}"
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
        raise ScenarioError(source, field, msg, _allowed_from(err)) from None
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
    """A shipped scenario name (``"duel"``) or a path, as a path to an existing file."""
    p = Path(scenario)
    if p.suffix == ".toml" or p.exists():
        return p
    candidate = shipped_dir / f"{scenario}.toml"
    if candidate.is_file():
        return candidate
    names = ", ".join(sorted(f.stem for f in shipped_dir.glob("*.toml")))
    raise ScenarioError(
        str(scenario), "", f"no shipped {edition} scenario of that name", names or "none shipped"
    )


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
    """Return ``value`` if it is a dice expression, for pydantic field validators.

    Raises:
        ValueError: it is not; pydantic adds the field's path, the message the allowed forms.
    """
    try:
        parse(value)
    except DiceError as exc:
        raise ValueError(f"{exc} (allowed: a dice expression such as 'D3', '2D6', '4')") from None
    return value


def distance(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Distance in inches between two positions."""
    return ((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5
