"""The hash chain of a campaign's log (R-FAIR-6): every event is bound to all before it.

Each stored event carries ``chain``, the lowercase hex of::

    chain(n) = SHA-256( chain(n-1) ‖ canonical(n) )      chain(0) = the campaign id's 16 bytes

where ``chain(n-1)`` is the previous event's chain as 32 raw bytes and ``canonical(n)`` the
event's canonical bytes: the compact JSON (UTF-8, no whitespace, the keys of every object
sorted, no ASCII escaping) of the event exactly as it is stored, plus its position::

    {"command": 7, "event": {…, "type": "DieRolled"}, "narration": "…", "position": 9,
     "schema": 2, "seat": 2, "timestamp": "2026-11-22T19:02:03.123456Z"}

The hash is over the stored JSON, not over objects rebuilt from it, so it holds whatever code
reads the event later (an event upcast to a newer shape keeps the chain of the shape it was
written in) and arrays keep the order they were written in. These are exactly the ``time`` and
``payload`` columns of an export (:mod:`application.transfer`), so anyone can recompute a chain
from an export with any JSON library that sorts keys, e.g. Python's
``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``.
The position and the previous chain are inside the hash, so altering, removing or reordering
any event changes every chain after it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.persistence import Mapper

from .mapper import MsgspecMapper
from .records import Recorded

__all__ = ["canonical", "genesis", "link", "linked", "stored_body"]


def canonical(body: Mapping[str, Any], position: int) -> bytes:
    """The canonical bytes of a stored event's JSON ``body`` (its ``chain`` left out)."""
    hashed = {key: value for key, value in body.items() if key != "chain"}
    hashed["position"] = position
    return msgspec.json.encode(hashed, order="sorted")


def genesis(campaign_id: UUID) -> bytes:
    """What the first event's chain links to: the campaign id's 16 bytes."""
    return campaign_id.bytes


def link(previous: bytes, canonical_bytes: bytes) -> bytes:
    """The chain (raw bytes) of an event with these canonical bytes after ``previous``."""
    return hashlib.sha256(previous + canonical_bytes).digest()


def stored_body(mapper: Mapper[UUID], record: Recorded[Any]) -> dict[str, Any]:
    """The JSON body ``mapper`` stores for ``record``; ``mapper`` must neither compress nor
    encrypt (the real one may: its plain bytes are the same)."""
    body: dict[str, Any] = msgspec.json.decode(mapper.to_stored_event(record).state)
    return body


def linked(mapper: MsgspecMapper, campaign_id: UUID, head: str,
           records: Iterable[Recorded[Any]]) -> Iterator[Recorded[Any]]:
    """``records`` (in order, right after ``head``; "" for a new log) with ``chain`` set.

    The mapper makes each event's canonical bytes at once (``MsgspecMapper.canonical``,
    tested to equal :func:`canonical` of :func:`stored_body`); where it cannot (an event
    holding a mapping keyed by numbers), they are made from the stored JSON."""
    previous = bytes.fromhex(head) if head else genesis(campaign_id)
    for record in records:
        hashed = mapper.canonical(record)
        if hashed is None:
            hashed = canonical(stored_body(mapper, record), record.originator_version)
        previous = link(previous, hashed)
        yield msgspec.structs.replace(record, chain=previous.hex())
