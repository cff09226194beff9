"""What changed between two versions of a campaign: per player, per conflict, at the table.

Compares the board and ledger views field by field, so a diff reads like the views do:
``Change(path="tokens", before=0, after=2)`` under the player's seat,
``Change(path="sides[0].total", before=3, after=5)`` under the conflict's id.
"""

from __future__ import annotations

import msgspec

from ..shared.diff import Change, changes, items_changed
from .model import CampaignState
from .views import board, ledgers


class PlayerChanges(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    name: str
    changes: tuple[Change, ...]


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
    board_a, board_b = msgspec.to_builtins(board(a)), msgspec.to_builtins(board(b))
    conflicts_a = {c["id"]: c for c in board_a.pop("conflicts")}
    conflicts_b = {c["id"]: c for c in board_b.pop("conflicts")}
    for view in (board_a, board_b):
        view.pop("waiting_for")
    led_a = {x["seat"]: x for x in msgspec.to_builtins(ledgers(a))}
    led_b = {x["seat"]: x for x in msgspec.to_builtins(ledgers(b))}
    players = []
    for seat in sorted(set(led_a) | set(led_b)):
        found = changes(led_a.get(seat), led_b.get(seat))
        if found:
            name = (led_b.get(seat) or led_a[seat])["name"]
            players.append(PlayerChanges(seat=seat, name=name, changes=tuple(found)))
    conflicts = []
    for cid, status, found, item in items_changed(conflicts_a, conflicts_b):
        conflicts.append(ConflictChanges(conflict=cid, text=item.get("text", ""), status=status,
                                         changes=tuple(found)))
    return Diff(table=tuple(changes(board_a, board_b)), players=tuple(players),
                conflicts=tuple(conflicts))
