"""Words for the texts every edition and the command line print.

One home for a count with its noun, so no text reads "1 cards" or "1 attempts left".
"""

from __future__ import annotations

_IRREGULAR = {"die": "dice"}
"""Plurals not made by adding ``s`` or ``es``."""


def plural(n: int | float | str, word: str, many: str | None = None) -> str:
    """``n`` with ``word`` in the number it needs: ``"1 card"``, ``"0 cards"``, ``"2 dice"``.

    Args:
        n: the count: a number (a float prints as ``2.5``), or a dice expression as text
            (``"2D6"`` counts as several, ``"1"`` as one).
        word: the noun for one (``"card"``, ``"die"``, ``"success"``).
        many: the noun for several when it is not ``word`` + ``s`` (or ``es`` after s, x, z,
            ch, sh) nor a known irregular plural (``die`` -> ``dice``).
    """
    one = n == "1" if isinstance(n, str) else n == 1
    count = n if isinstance(n, str) else f"{n:g}" if isinstance(n, float) else str(n)
    if one:
        return f"{count} {word}"
    if many is None:
        many = _IRREGULAR.get(word)
    if many is None:
        many = word + ("es" if word.endswith(("s", "x", "z", "ch", "sh")) else "s")
    return f"{count} {many}"


__all__ = ["plural"]
