"""Drives and the Debt on them (R-CHAR-7, R-STAKE-1, C-DEBT-1, C-STAKE-2)."""

from __future__ import annotations


def is_overdrawn(debt: int, strength: int) -> bool:
    """A Drive is Overdrawn when its unstaked Debt exceeds its strength."""
    return debt > strength


def stake_room(limit: int, staked: int, held: int) -> int:
    """How much more Debt may be staked from a Drive on one Conflict or Complication: never
    above the limit (its strength) in all, and only Debt the Drive holds."""
    return max(0, min(limit - staked, held))
