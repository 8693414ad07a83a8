"""Exact odds tables shared by every edition's ``odds`` module, and their exact rounding.

An edition declares its tables by name (``Edition.odds``), each a function returning one
:class:`Table`;
values are ``Fraction`` probabilities (shown as percentages rounded half-up to two decimals) or
plain numbers. The ``psygym odds`` command formats them as a table, CSV, JSON or Markdown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any


def percent(p: Fraction | float, places: int = 2) -> str:
    """``p`` as a percentage rounded half-up (exactly, for fractions): 21/32 -> ``"65.63"``."""
    q = Fraction(p) * 100
    # Decimal division keeps 28 significant digits: a tie at two decimals stays an exact tie.
    exact = Decimal(q.numerator) / Decimal(q.denominator)
    return str(exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


@dataclass
class Table:
    """One odds table: a title, column names and rows; ``Fraction`` cells print as percentages."""

    name: str
    title: str
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)
    note: str = ""

    def cell(self, value: Any) -> str:
        """A cell as text: fractions as percentages with two decimals, others as they are."""
        if isinstance(value, Fraction):
            return percent(value)
        if isinstance(value, float):
            return f"{value:.4g}"
        return str(value)

    def text_rows(self) -> list[list[str]]:
        """Every row as text cells."""
        return [[self.cell(v) for v in row] for row in self.rows]
