"""What the store holds: :class:`Recorded` envelopes around domain events, and snapshots.

Both are msgspec Structs and satisfy eventsourcing's domain event protocol (``originator_id``,
``originator_version``, ``timestamp``), so the library stores them as they are; the mapper
(:mod:`application.mapper`) encodes them with msgspec.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar
from uuid import UUID

import msgspec

from domain.edition import Edition
from domain.editions import EDITION_OF_EVENT, EDITIONS, get_edition
from domain.record import RECORD_EVENT_TYPES, Record

EventT = TypeVar("EventT")


class Recorded(msgspec.Struct, Generic[EventT], frozen=True, gc=False, kw_only=True):
    """One stored event: the domain event plus who did it, when, and what they said (R-SRV-1)."""

    #: The campaign.
    originator_id: UUID
    #: Position in the campaign's stream, 1 for its creation.
    originator_version: int
    #: When the command was accepted (UTC); every event of one command shares it.
    timestamp: datetime
    #: The acting seat; None for the campaign's owner or the lobby.
    seat: int | None = None
    #: The player's narration of the command, carried by its first event.
    narration: str = ""
    #: Version of the event's schema, for upcasting old events when a schema changes.
    schema: int = 1
    #: Position of the first event of the command this event belongs to (0: this one).
    command: int = 0
    #: The domain event: one of the edition's event types.
    event: EventT
    #: The hash chain: SHA-256 of the previous event's chain and this event's canonical bytes,
    #: lowercase hex (R-FAIR-6, see :mod:`application.chain`); set by the application when
    #appending.
    chain: str = ""


class Snapshotted(Protocol):
    """What a snapshot is taken of: a campaign as folded
    (:class:`application.aggregate.Campaign`)."""

    @property
    def id(self) -> UUID: ...
    @property
    def version(self) -> int: ...
    @property
    def modified_on(self) -> datetime: ...
    @property
    def created_on(self) -> datetime: ...
    @property
    def edition(self) -> str: ...
    @property
    def state(self) -> Any: ...
    @property
    def record(self) -> Record: ...
    @property
    def chain(self) -> str: ...


class Snapshot(msgspec.Struct, frozen=True, kw_only=True):
    """A campaign's state at one version, so a load need not replay every event."""

    originator_id: UUID
    originator_version: int
    #: The campaign's ``modified_on`` at that version.
    timestamp: datetime
    created_on: datetime
    edition: str
    #: The rules engine that folded ``state``; a snapshot from another one is not used.
    rules_version: str
    state: Any
    #: The record (undo, disputes, reverts) at that version.
    record: Record = Record()
    #: The hash chain's head at that version (R-FAIR-6).
    chain: str = ""

    @classmethod
    def take(cls, aggregate: Snapshotted) -> Snapshot:
        """The snapshot of ``aggregate`` (eventsourcing's snapshot protocol)."""
        return cls(
            originator_id=aggregate.id,
            originator_version=aggregate.version,
            timestamp=aggregate.modified_on,
            created_on=aggregate.created_on,
            edition=aggregate.edition,
            rules_version=get_edition(aggregate.edition).rules_version,
            state=aggregate.state,
            record=aggregate.record,
            chain=aggregate.chain,
        )


#: Topic prefix of the record's events (``record:Undone``), which belong to no edition.
RECORD = "record"


def family_of(event_type: type[Any]) -> str:
    """The topic prefix of an event class: its edition's name, or ``record``."""
    if event_type in RECORD_EVENT_TYPES:
        return RECORD
    return edition_of(event_type).name


def edition_of(event_type: type[Any]) -> Edition:
    """The edition whose events include ``event_type`` (TypeError if none does).

    Every event class belongs to exactly one edition (:data:`domain.editions.EDITION_OF_EVENT`
    refuses a class registered twice), so the answer never depends on registration order.
    """
    try:
        return EDITIONS[EDITION_OF_EVENT[event_type]]
    except KeyError:
        raise TypeError(f"{event_type.__qualname__} is not an event of any edition") from None
