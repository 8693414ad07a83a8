"""Shared unit values of Rogue Trader states: one object per value, changes memoised.

A game sees few distinct :class:`~.state.UnitState` values (a few hundred in the duel) and makes
the same change to the same unit again and again. :func:`evolve_unit` returns one shared object
per value, so its hash is computed once and every memo key holding units (legal actions,
observation blocks, the fast walk's graph) compares them by identity instead of field by field.
:func:`put` changes one unit of a state's ``units`` tuple, and :func:`shared_units` shares the
tuples too. The values are the same (ints, bools and tuples, as the fields are declared), so the
states are the same.
"""

from __future__ import annotations

from typing import Any

from psygym.editions.rogue_trader.state import UnitState
from psygym.kernel import evolve

_UNIT_CHANGES: dict[tuple, UnitState] = {}
"""``(unit, changes) -> changed unit`` (:func:`evolve_unit`)."""
_UNITS: dict[UnitState, UnitState] = {}
"""One shared object per unit value (:func:`shared`)."""
_UNIT_TUPLES: dict[tuple[UnitState, ...], tuple[UnitState, ...]] = {}
"""One shared tuple per value of ``State.units`` (:func:`shared_units`)."""
_MAX_UNITS = 100_000  # a game sees a few hundred unit values; bound anyway


def put(units: tuple[UnitState, ...], i: int, **changes: Any) -> tuple[UnitState, ...]:
    """``units`` with unit ``i`` changed (the unit and the tuple shared, :func:`evolve_unit`)."""
    return shared_units((*units[:i], evolve_unit(units[i], changes), *units[i + 1 :]))


def shared_units(units: tuple[UnitState, ...]) -> tuple[UnitState, ...]:
    """The one shared tuple equal to ``units`` (``units`` itself the first time).

    States reached by different moves then hold the same tuple, which the memos holding
    states (and the garbage collector) see once.
    """
    if len(_UNIT_TUPLES) >= _MAX_UNITS:
        _UNIT_TUPLES.clear()
    return _UNIT_TUPLES.setdefault(units, units)


def shared(unit: UnitState) -> UnitState:
    """The one shared object equal to ``unit`` (``unit`` itself the first time)."""
    if len(_UNITS) >= _MAX_UNITS:
        _UNITS.clear()
        _UNIT_CHANGES.clear()
    return _UNITS.setdefault(unit, unit)


def evolve_unit(unit: UnitState, changes: dict[str, Any]) -> UnitState:
    """``evolve(unit, **changes)`` as one shared object per value, memoised."""
    key = (unit, tuple(changes.items()))
    out = _UNIT_CHANGES.get(key)
    if out is None:
        out = shared(evolve(unit, **changes))
        _UNIT_CHANGES[key] = out
    return out


__all__ = ["evolve_unit", "put", "shared", "shared_units"]
