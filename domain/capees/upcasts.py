"""Older shapes of this edition's events (none yet: every type is at version 1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Payload = dict[str, Any]

SCHEMAS: dict[str, int] = {}
UPCASTERS: dict[tuple[str, int], Callable[[Payload], Payload]] = {}


def schema_version(event_type: type[Any]) -> int:
    return SCHEMAS.get(event_type.__name__, 1)


def upcast(type_name: str, schema: int, payload: Payload) -> Payload:
    for version in range(schema, SCHEMAS.get(type_name, 1)):
        payload = UPCASTERS[(type_name, version)](payload)
    return payload
