"""Older shapes of this edition's events, brought up to date as they are read.

A long campaign outlives the code that wrote its first events. Each stored event carries the
schema version of its type at the time; when a type's shape changes, its version goes up here
and an upcaster turns the old payload (a dict, as stored) into the next version's. Reading an
old event runs the chain of upcasters up to the current version; writing always uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Payload = dict[str, Any]

#: Current schema version of each event type whose shape has changed (the others are 1).
SCHEMAS: dict[str, int] = {"DieRolled": 2, "OverdrawnDieRolled": 2, "SideSchismed": 2}


def _roll_counter(payload: Payload) -> Payload:
    """Version 1 rolls predate provably fair dice: they carry no roll counter (R-FAIR-4)."""
    return {**payload, "draw": payload.get("draw", 0)}


def _no_side_removed(payload: Payload) -> Payload:
    """Version 1 Schisms left an emptied side on the table (before R-SCHISM-1 removed it):
    replayed, they remove none, so later events' side numbers keep their meaning."""
    return {**payload, "removed": None}


#: (event type, version) -> the upcaster from that version to the next.
UPCASTERS: dict[tuple[str, int], Callable[[Payload], Payload]] = {
    ("DieRolled", 1): _roll_counter,
    ("OverdrawnDieRolled", 1): _roll_counter,
    ("SideSchismed", 1): _no_side_removed,
}


def schema_version(event_type: type[Any]) -> int:
    return SCHEMAS.get(event_type.__name__, 1)


def upcast(type_name: str, schema: int, payload: Payload) -> Payload:
    """``payload`` of a ``type_name`` event written at ``schema``, in the current shape."""
    for version in range(schema, SCHEMAS.get(type_name, 1)):
        payload = UPCASTERS[(type_name, version)](payload)
    return payload
