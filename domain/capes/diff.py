"""What changed between two versions of a campaign: per player, per conflict, at the table.

Compares the board and ledger views field by field, so a diff reads like the views do:
``Change(path="tokens", before=0, after=2)`` under the player's seat,
``Change(path="sides[0].total", before=3, after=5)`` under the conflict's id.
"""

from __future__ import annotations

import msgspec

from ..shared.diff import Change, PlayerChanges, compared
from .model import CampaignState
from .views import board, ledgers


class ConflictChanges(msgspec.Struct, frozen=True, kw_only=True):
    conflict: int
    text: str
    #: "added", "removed" (resolved, vetoed or deadlocked) or "changed".
    status: str
    changes: tuple[Change, ...]


class Diff(msgspec.Struct, frozen=True, kw_only=True):
    table: tuple[Change, ...]
    players: tuple[PlayerChanges, ...]
    conflicts: tuple[ConflictChanges, ...]


def diff(a: CampaignState, b: CampaignState) -> Diff:
    """What changed from ``a`` to ``b`` for each player, each conflict, and the table."""
    table, players, items = compared(board(a), board(b), ledgers(a), ledgers(b), "conflicts")
    return Diff(table=table, players=players, conflicts=tuple(
        ConflictChanges(conflict=cid, text=found_in.get("text", ""), status=status,
                        changes=tuple(found))
        for cid, status, found, found_in in items))
