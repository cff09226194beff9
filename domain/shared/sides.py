"""Sides of a Conflict or Complication (R-CONF-2, C-COMP-3)."""

from __future__ import annotations

from collections.abc import Sequence


def controlling(totals: Sequence[int]) -> int | None:
    """The index of the side with the strictly highest total; a tie for highest: None."""
    if not totals:
        return None
    best = max(totals)
    if list(totals).count(best) > 1:
        return None
    return list(totals).index(best)
