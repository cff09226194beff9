"""What changed between two versions of a campaign: per player, per conflict, at the table.

Compares the board and ledger views field by field, so a diff reads like the views do:
``Change(path="tokens", before=0, after=2)`` under the player's seat,
``Change(path="sides[0].total", before=3, after=5)`` under the conflict's id.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .model import CampaignState
from .views import board, ledgers


class Change(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    before: Any
    after: Any


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


def _key(item: Any) -> Any:
    if isinstance(item, dict):
        for k in ("id", "seat", "index", "name"):
            if k in item:
                return item[k]
    return None


def changes(before: Any, after: Any, path: str = "") -> list[Change]:
    """Leaf-level differences between two builtins trees (lists of records matched by id)."""
    if isinstance(before, dict) and isinstance(after, dict):
        found: list[Change] = []
        for k in sorted(set(before) | set(after), key=str):
            sub = f"{path}.{k}" if path else str(k)
            found.extend(changes(before.get(k), after.get(k), sub))
        return found
    if isinstance(before, list | tuple) and isinstance(after, list | tuple):
        keys_b, keys_a = [_key(x) for x in before], [_key(x) for x in after]
        if all(k is not None for k in keys_b + keys_a):
            old, new = dict(zip(keys_b, before, strict=True)), dict(zip(keys_a, after,
                                                                      strict=True))
            found = []
            for k in [*keys_b, *(k for k in keys_a if k not in old)]:
                found.extend(changes(old.get(k), new.get(k), f"{path}[{k}]"))
            return found
        if len(before) == len(after):
            found = []
            for i, (b, a) in enumerate(zip(before, after, strict=True)):
                found.extend(changes(b, a, f"{path}[{i}]"))
            return found
    if before == after:
        return []
    return [Change(path=path, before=before, after=after)]


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
    for cid in sorted(set(conflicts_a) | set(conflicts_b)):
        old, new = conflicts_a.get(cid), conflicts_b.get(cid)
        status = "added" if old is None else "removed" if new is None else "changed"
        found = changes(old, new) if status == "changed" else []
        if status != "changed" or found:
            text = (new or old or {}).get("text", "")
            conflicts.append(ConflictChanges(conflict=cid, text=text, status=status,
                                             changes=tuple(found)))
    return Diff(table=tuple(changes(board_a, board_b)), players=tuple(players),
                conflicts=tuple(conflicts))
