"""What changed between two versions of a CAPEES! campaign: per player, per Complication, at
the table (the same shape as edition ``capes``'s diff, Complications for Conflicts)."""

from __future__ import annotations

import msgspec

from ..shared.diff import Change, changes, items_changed
from .model import CampaignState
from .views import board, ledgers


class PlayerChanges(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    name: str
    changes: tuple[Change, ...]


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
    board_a, board_b = msgspec.to_builtins(board(a)), msgspec.to_builtins(board(b))
    comp_a = {x["id"]: x for x in board_a.pop("complications")}
    comp_b = {x["id"]: x for x in board_b.pop("complications")}
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
    complications = []
    for cid, status, found, item in items_changed(comp_a, comp_b):
        complications.append(ComplicationChanges(
            complication=cid, name=item.get("name", ""), status=status, changes=tuple(found)))
    return Diff(table=tuple(changes(board_a, board_b)), players=tuple(players),
                complications=tuple(complications))
