"""What changed between two versions of a CAPEES! campaign: per player, per Complication, at
the table (the same shape as edition ``capes``'s diff, Complications for Conflicts)."""

from __future__ import annotations

import msgspec

from ..shared.diff import Change, PlayerChanges, compared
from .model import CampaignState
from .views import board, ledgers


class ComplicationChanges(msgspec.Struct, frozen=True, kw_only=True):
    complication: int
    name: str
    #: "added", "removed" (resolved or discarded) or "changed".
    status: str
    changes: tuple[Change, ...]


class Diff(msgspec.Struct, frozen=True, kw_only=True):
    table: tuple[Change, ...]
    players: tuple[PlayerChanges, ...]
    complications: tuple[ComplicationChanges, ...]


def diff(a: CampaignState, b: CampaignState) -> Diff:
    """What changed from ``a`` to ``b`` for each player, each Complication, and the table."""
    table, players, items = compared(board(a), board(b), ledgers(a), ledgers(b), "complications")
    return Diff(table=table, players=players, complications=tuple(
        ComplicationChanges(complication=cid, name=found_in.get("name", ""), status=status,
                            changes=tuple(found))
        for cid, status, found, found_in in items))
