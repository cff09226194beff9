"""What becomes of staked Debt when a Conflict or Complication resolves (R-RES-2, C-RES-2)."""

from __future__ import annotations


def losing_return(amount: int) -> int:
    """A losing stake comes back doubled: the Debt itself plus as much again from the pile."""
    return 2 * amount
