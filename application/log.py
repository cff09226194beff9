"""A campaign's log as read from its stored bytes: one :class:`Entry` per event.

Verification (:mod:`application.audit`), exports and imports (:mod:`application.transfer`,
``Campaigns.import_log``) all read a log this way, from a store or from an export: the envelope
decoded from each event, the canonical bytes its chain hashes, or why it cannot be read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.persistence import Mapper, StoredEvent

from .chain import canonical
from .mapper import topic
from .records import Recorded


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """One event of a log as read (from a store or an export): the envelope decoded from it,
    the canonical bytes of its stored JSON, and its chain; or why it cannot be read."""

    position: int
    record: Recorded[Any] | None
    #: The stored JSON body (None if unreadable); its ``chain`` is left out of the hash.
    body: dict[str, Any] | None = None
    canonical: bytes = b""
    chain: str = ""
    topic: str = ""
    problem: str = ""
    type: str = ""


def entry(mapper: Mapper[UUID], stored: StoredEvent, plain: bytes) -> Entry:
    """The entry of a stored event whose JSON body (decrypted, decompressed) is ``plain``."""
    position, kind = stored.originator_version, stored.topic.partition(":")[2]
    try:
        body = msgspec.json.decode(plain)
        if not isinstance(body, dict):
            raise ValueError("the body is not a JSON object")
        record: Recorded[Any] = mapper.to_domain_event(stored)  # type: ignore[assignment]
    except Exception as e:
        return Entry(position=position, record=None, topic=stored.topic,
                     problem=f"it cannot be decoded: {e}", type=kind)
    problem = ""
    if topic(type(record.event)) != stored.topic:
        problem = f"its topic {stored.topic!r} is not its event's"
    chain = body.get("chain")
    return Entry(position=position, record=record, body=body,
                 canonical=canonical(body, position),
                 chain=chain if isinstance(chain, str) else "", topic=stored.topic,
                 problem=problem, type=kind)


def stored_log(mapper: Mapper[UUID], stored: Iterable[StoredEvent]) -> Iterator[Entry]:
    """The entries of a campaign's stored events, read from their bytes (no cache)."""
    for item in stored:
        try:
            plain = item.state
            if mapper.cipher:
                plain = mapper.cipher.decrypt(plain)
            if mapper.compressor:
                plain = mapper.compressor.decompress(plain)
        except Exception as e:
            yield Entry(position=item.originator_version, record=None, topic=item.topic,
                        problem=f"it cannot be decrypted or decompressed: {e}",
                        type=item.topic.partition(":")[2])
            continue
        yield entry(mapper, item, plain)
