"""Splitting one die into several (R-SPLIT-1, C-SPLIT-1)."""

from __future__ import annotations


def split_values(value: int, into: int) -> list[int]:
    """As even as possible, largest first (5 into 2 is 3+2; 6 into 3 is 2+2+2)."""
    q, r = divmod(value, into)
    return [q + 1] * r + [q] * (into - r)
