"""The shared kernel every edition's rules use: the fast frozen-state copy and chance tables.

- :func:`evolve` is ``dataclasses.replace`` for frozen states, about five times faster: it copies
  the instance dictionary instead of calling ``__init__`` (states have no ``__post_init__``
  checks to skip), or for a slotted class runs a copier generated once from its fields, and
  still rejects a field name the class does not have.
- :class:`ChanceTable` holds one chance node's exact outcomes once, with the float cumulative
  table that :meth:`ChanceTable.sample` draws from, so sampling and exact solving read the same
  numbers (DESIGN: chance is an explicit node with exact outcomes).
- :func:`weighted_choice` is the one weighted random draw (policies' action probabilities,
  chance outcomes): one uniform number, one binary search; :func:`uniform_choice` is the same
  draw for equal weights, with the cumulative sums kept per count.
- :class:`ChanceCache` memoises tables per chance-node key, for rules whose node distribution
  depends on a few fields of the state; :class:`Memo` shares other immutable values (events)
  by key.
- :func:`check_player` is the one check that a player is a seat of the game, with one message;
  ``RulesBase`` wraps every edition's ``observe`` in it (:func:`guard_observe`).
"""

from __future__ import annotations

import functools
import operator
import types
from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import fields, is_dataclass
from fractions import Fraction
from itertools import accumulate
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

_new = object.__new__
_set = object.__setattr__
_MISSING: Any = object()
_COPIERS: dict[type, Callable[..., Any]] = {}


def _copier(cls: type) -> Callable[..., Any]:
    """The copy function ``evolve`` uses for ``cls``, generated once per class.

    A class with an instance dictionary is copied by copying that dictionary and updating it;
    the field count tells an unknown name (a dictionary holds exactly the fields). A slotted
    class gets generated code that sets each slot from the change or the original, with one
    keyword parameter per field, so Python itself rejects an unknown name.
    """
    if not is_dataclass(cls):
        raise TypeError(f"evolve needs a dataclass instance, got {cls.__name__}")
    names = tuple(f.name for f in fields(cls))
    if hasattr(cls, "__dict__") and "__slots__" not in cls.__dict__:
        count = len(names)
        known = frozenset(names)

        def copy_dict(obj: Any, changes: dict[str, Any]) -> Any:
            values = obj.__dict__.copy()
            values.update(changes)
            if len(values) != count:
                _unknown(cls, known, changes)
            out = _new(cls)
            _set(out, "__dict__", values)
            return out

        copier = copy_dict
    else:
        # One member-descriptor setter per slot: assignment without the frozen __setattr__.
        # Its own names start with ``_evolve_``, so no field name can shadow them.
        env: dict[str, Any] = {"_evolve_new": _new, "_evolve_cls": cls, "_evolve_M": _MISSING}
        lines = []
        for k, name in enumerate(names):
            env[f"_evolve_s{k}"] = getattr(cls, name).__set__
            value = f"_evolve_obj.{name} if {name} is _evolve_M else {name}"
            lines.append(f"    _evolve_s{k}(_evolve_o, {value})")
        params = ", ".join(f"{name}=_evolve_M" for name in names)
        code = f"def copy_slots(_evolve_obj, /, *, {params}):\n"
        code += "    _evolve_o = _evolve_new(_evolve_cls)\n"
        code += "\n".join(lines) + "\n    return _evolve_o\n"
        exec(code, env)  # noqa: S102 - generated from the dataclass's own field names
        generated = env["copy_slots"]
        known = frozenset(names)

        def copy_slotted(obj: Any, changes: dict[str, Any]) -> Any:
            try:
                return generated(obj, **changes)
            except TypeError:
                _unknown(cls, known, changes)
                raise

        copier = copy_slotted
    _COPIERS[cls] = copier
    return copier


def _unknown(cls: type, known: frozenset[str], changes: dict[str, Any]) -> None:
    unknown = ", ".join(sorted(set(changes) - known))
    if unknown:
        raise TypeError(f"{cls.__name__} has no field(s) {unknown}")


def evolve(obj: T, **changes: Any) -> T:
    """A copy of the frozen dataclass ``obj`` with ``changes`` applied (fast ``replace``).

    Raises:
        TypeError: a name in ``changes`` is not a field of ``obj``'s class.
    """
    copier = _COPIERS.get(type(obj))
    if copier is None:
        copier = _copier(type(obj))
    return copier(obj, changes)


def weighted_choice(items: Sequence[T], weights: Iterable[float], rng: np.random.Generator) -> T:
    """One of ``items`` drawn with probability proportional to ``weights`` (one uniform draw).

    ``weights`` is any iterable of as many numbers as ``items`` (a list, a dictionary's values).
    """
    n = len(items)
    if n == 1:
        return items[0]
    cumulative = list(accumulate(map(float, weights)))
    idx = bisect_right(cumulative, rng.random() * cumulative[-1])
    return items[idx if idx < n else n - 1]


_UNIFORM_CUMULATIVE: dict[int, list[float]] = {}
"""Cumulative sums of ``n`` weights ``1.0 / n`` by ``n`` (a few sizes: up to an action space's)."""


def uniform_choice(items: Sequence[T], rng: np.random.Generator) -> T:
    """``weighted_choice(items, [1.0 / n] * n, rng)`` for ``n = len(items)``, the same draw.

    The cumulative sums of ``n`` equal weights ``1.0 / n`` depend on ``n`` alone, so they are
    built once per ``n``: the same floats, the same one uniform number (none when ``n == 1``)
    and the same binary search as :func:`weighted_choice`, without the per-call lists.
    """
    n = len(items)
    if n == 1:
        return items[0]
    cumulative = _UNIFORM_CUMULATIVE.get(n)
    if cumulative is None:
        cumulative = _UNIFORM_CUMULATIVE[n] = list(accumulate(map(float, [1.0 / n] * n)))
    idx = bisect_right(cumulative, rng.random() * cumulative[-1])
    return items[idx if idx < n else n - 1]


class ChanceTable:
    """The exact outcomes of one chance node and the float table sampling draws from.

    Attributes:
        exact: ``(outcome, probability)`` pairs as given (``Fraction`` or float), in order.
        outcomes: the same with float probabilities: what ``chance_outcomes`` returns. Rules'
            outcomes are action numbers; a dice sampler's may be any hashable value.
        cumulative: running sums of the float probabilities (the last is 1 up to rounding).
    """

    __slots__ = ("cumulative", "exact", "outcomes")

    def __init__(self, exact: Iterable[tuple[int, float | Fraction]]):
        self.exact: tuple[tuple[Any, float | Fraction], ...] = tuple(exact)
        if not self.exact:
            raise ValueError("a chance table needs at least one outcome")
        self.outcomes: list[tuple[Any, float]] = [(o, float(p)) for o, p in self.exact]
        self.cumulative: list[float] = list(accumulate(p for _, p in self.outcomes))

    @classmethod
    def from_weights(cls, weights: Iterable[tuple[int, int | Fraction]]) -> ChanceTable:
        """A table from whole-number (or exact) weights, normalised exactly."""
        pairs = [(o, Fraction(w)) for o, w in weights if w]
        total = sum((w for _, w in pairs), Fraction(0))
        return cls((o, w / total) for o, w in pairs)

    def sample(self, rng: np.random.Generator) -> Any:
        """One outcome drawn with ``rng`` from exactly these probabilities."""
        cumulative = self.cumulative
        idx = bisect_right(cumulative, rng.random() * cumulative[-1])
        last = len(cumulative) - 1
        return self.outcomes[idx if idx < last else last][0]

    def probability(self, outcome: int) -> float:
        """The float probability of ``outcome`` (0 if it is not listed)."""
        for o, p in self.outcomes:
            if o == outcome:
                return p
        return 0.0

    def __len__(self) -> int:
        return len(self.outcomes)

    def __repr__(self) -> str:
        return f"ChanceTable({self.outcomes!r})"


class ChanceCache:
    """Chance tables memoised by a key that fixes the node's distribution.

    ``get(key, build)`` returns the table for ``key``, calling ``build()`` (which returns the
    exact ``(outcome, probability)`` pairs) the first time only. The cache is bounded: past
    ``max_size`` keys it is cleared, so long runs over many distinct nodes stay in memory.
    """

    __slots__ = ("_tables", "max_size")

    def __init__(self, max_size: int = 200_000):
        self._tables: dict[Hashable, ChanceTable] = {}
        self.max_size = max_size

    def get(self, key: Hashable, build: Callable[[], Iterable[tuple[int, float | Fraction]]]):
        """The table for ``key`` (built with ``build`` on a miss)."""
        table = self._tables.get(key)
        if table is None:
            if len(self._tables) >= self.max_size:
                self._tables.clear()
            table = self._tables[key] = ChanceTable(build())
        return table

    def __len__(self) -> int:
        return len(self._tables)


class Memo:
    """Values built once per key and shared afterwards (bounded, like :class:`ChanceCache`).

    For immutable values such as events: ``get(key, build)`` returns the value for ``key``,
    calling ``build()`` the first time only; ``key`` must hold everything the value depends
    on. Past ``max_size`` keys the memo is cleared.
    """

    __slots__ = ("_values", "max_size")

    def __init__(self, max_size: int = 200_000):
        self._values: dict[Hashable, Any] = {}
        self.max_size = max_size

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        """The value for ``key`` (built with ``build`` on a miss)."""
        values = self._values
        value = values.get(key)
        if value is None:
            if len(values) >= self.max_size:
                values.clear()
            value = values[key] = build()
        return value

    def __len__(self) -> int:
        return len(self._values)


def check_player(player: Any, num_players: int = 2) -> int:
    """``player`` as an ``int``, if it is a seat of the game (0 or 1).

    Raises:
        ValueError: anything else (a negative number, 2, a float, ``None``), in one line.
    """
    try:
        seat = operator.index(player)
    except TypeError:
        seat = -1
    if not 0 <= seat < num_players:
        seats = " or ".join(str(p) for p in range(num_players))
        raise ValueError(f"player must be {seats}, got {player!r}")
    return seat


def guard_observe(cls: type) -> None:
    """Make the ``observe(self, state, player)`` that ``cls`` defines refuse a non-seat first.

    ``RulesBase.__init_subclass__`` calls it for every rules class, so each edition's
    ``observe`` refuses 2 or -1 with one line of :func:`check_player` instead of indexing with
    it (a wrong seat's vector, or an ``IndexError``). A class that does not define ``observe``
    itself, or defines it as anything but a plain concrete function, is left as it is.
    """
    observe = cls.__dict__.get("observe")
    if not isinstance(observe, types.FunctionType) or getattr(
        observe, "__isabstractmethod__", False
    ):
        return

    @functools.wraps(observe)
    def checked(self: Any, state: Any, player: Any) -> Any:
        return observe(self, state, check_player(player, self.num_players))

    cls.observe = checked  # type: ignore[attr-defined]


__all__ = [
    "ChanceCache",
    "ChanceTable",
    "Memo",
    "check_player",
    "evolve",
    "guard_observe",
    "uniform_choice",
    "weighted_choice",
]
