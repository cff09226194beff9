"""Dice: every die shows 1-6, drawn by the server (R-ROLL-1, C-TABLE-4)."""

from __future__ import annotations

#: The faces of a die.
FACES = range(1, 7)


def is_fair(value: int) -> bool:
    """Whether ``value`` can come up on a die."""
    return value in FACES


def overdrawn_result(before: int, rolled: int) -> int:
    """An Overdrawn roll only ever lowers its die: the new value stands if it is lower
    (R-PAGE-2, C-DEBT-2)."""
    return min(before, rolled)
