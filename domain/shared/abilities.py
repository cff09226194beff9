"""Abilities rolling dice, and what using one costs (R-ABIL-1, R-ABIL-2, C-ABIL-3, C-ABIL-6)."""

from __future__ import annotations


def can_roll(rating: int, die_value: int) -> bool:
    """An ability may roll a die only if its rating is at least the value the die shows."""
    return rating >= die_value


def is_blocking(super_: bool) -> bool:
    """A super ability costs 1 Debt on a Drive; any other one is Blocked once used."""
    return not super_
