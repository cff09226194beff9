"""Leaf-level differences between two views, as builtins trees (the record's diffs)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import msgspec


class Change(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    before: Any
    after: Any


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
            old = dict(zip(keys_b, before, strict=True))
            new = dict(zip(keys_a, after, strict=True))
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


def items_changed(
    before: Mapping[int, Any], after: Mapping[int, Any]
) -> Iterator[tuple[int, str, list[Change], Any]]:
    """For each item of a board found by id (a Conflict, a Complication) that was added,
    removed or changed: its id, ``"added"``/``"removed"``/``"changed"``, its changes (none
    when added or removed) and the item as last seen."""
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        status = "added" if old is None else "removed" if new is None else "changed"
        found = changes(old, new) if status == "changed" else []
        if status != "changed" or found:
            yield key, status, found, new if new is not None else old


class PlayerChanges(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    name: str
    changes: tuple[Change, ...]


Compared = tuple[tuple[Change, ...], tuple[PlayerChanges, ...],
                 list[tuple[int, str, list[Change], Any]]]


def compared(board_a: msgspec.Struct, board_b: msgspec.Struct, ledgers_a: Any, ledgers_b: Any,
             items: str) -> Compared:
    """Two versions of a campaign compared through its views, as each edition's ``diff``
    reports them: the table's changes (the board but for its ``items`` and whom it waits
    for), each player's whose ledger changed, and each of the board's ``items`` (a Conflict, a
    Complication) added, removed or changed, as :func:`items_changed` gives them."""
    view_a, view_b = msgspec.to_builtins(board_a), msgspec.to_builtins(board_b)
    items_a = {x["id"]: x for x in view_a.pop(items)}
    items_b = {x["id"]: x for x in view_b.pop(items)}
    for view in (view_a, view_b):
        view.pop("waiting_for")
    led_a = {x["seat"]: x for x in msgspec.to_builtins(ledgers_a)}
    led_b = {x["seat"]: x for x in msgspec.to_builtins(ledgers_b)}
    players = []
    for seat in sorted(set(led_a) | set(led_b)):
        found = changes(led_a.get(seat), led_b.get(seat))
        if found:
            name = (led_b.get(seat) or led_a[seat])["name"]
            players.append(PlayerChanges(seat=seat, name=name, changes=tuple(found)))
    return (tuple(changes(view_a, view_b)), tuple(players),
            list(items_changed(items_a, items_b)))
