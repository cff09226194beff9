"""Request and response bodies of the HTTP API (msgspec Structs: their constraints are in the
OpenAPI schema, and Litestar validates requests against them before a handler runs)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Union
from uuid import UUID

import msgspec

from application.records import Recorded
from domain.editions import EDITIONS, PLAYS
from domain.record import RECORD_EVENT_TYPES, Record, TableOptions, is_reverted
from domain.record.commands import AddSeed, Reason, Undo, Vote, WithdrawDispute
from domain.text import MAX_INT, Name, Narration


class DisputeMove(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="open_dispute",
              forbid_unknown_fields=True):
    """Dispute a move of the current scene (R-REC-2): any of its events' positions."""

    seat: Annotated[int, msgspec.Meta(ge=0, le=64)] = 0
    position: Annotated[int, msgspec.Meta(ge=1, le=MAX_INT)]
    reason: Reason


#: The record's commands a seat sends like game commands (R-REC-1..4, R-FAIR-2).
RECORD_SEAT_COMMANDS = (Undo, DisputeMove, Vote, WithdrawDispute, AddSeed)
#: Every command a seated player can send, of every edition (tagged by ``type``: ``roll_die``,
#: ``stake_debt``… for ``capes``, ``capees.claim``… for ``capees``) and of the record. A
#: campaign takes its own edition's only (another edition's is refused with 400).
SEAT_COMMANDS = (
    *(t for play in PLAYS.values() for t in play.seat_command_types), *RECORD_SEAT_COMMANDS,
)
AnySeatCommand = Union[SEAT_COMMANDS]  # type: ignore[valid-type]  # noqa: UP007
#: Every event of every edition and of the record (tagged by ``type``: the class name,
#: ``capees.`` first for edition ``capees``).
EVENT_TYPES = tuple(t for edition in EDITIONS.values() for t in edition.event_types)
AnyEvent = Union[EVENT_TYPES + RECORD_EVENT_TYPES]  # type: ignore[valid-type]  # noqa: UP007
#: The editions a campaign can be opened with.
EditionName = Literal["capes", "capees"]

class Body(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Base of request bodies: unknown fields are refused (HTTP 400)."""


class NewCampaign(Body, frozen=True, kw_only=True):
    name: Name
    #: Story Tokens each player starts with (edition ``capes``; ``capees`` hands tokens out
    #: as each scene starts, C-PROM-1).
    starting_tokens: Annotated[int, msgspec.Meta(ge=0, le=99)] = 0
    edition: EditionName = "capes"
    #: How the table settles disputes (R-REC-3, R-REC-4); the defaults when left out.
    options: TableOptions | None = None


class NewSeat(Body, frozen=True, kw_only=True):
    name: Name


class CommandRequest(Body, frozen=True, kw_only=True):
    """A command for the acting seat (the seat comes from the bearer token)."""

    command: AnySeatCommand
    #: Refuse with 409 unless the campaign is still at this version.
    expected_version: Annotated[int, msgspec.Meta(ge=1, le=MAX_INT)] | None = None
    #: What the player says happens (R-SRV-1); stored with the command's first event.
    narration: Narration = ""


class EventOut(msgspec.Struct, frozen=True, kw_only=True):
    """One event of the log."""

    #: Position in the campaign's log (its version after this event); the SSE id.
    position: int
    type: str
    at: datetime
    seat: int | None
    narration: str
    #: Position of the first event of the command this one belongs to.
    command: int
    #: Reverted by an undo or an upheld dispute: in the log, not in the game (R-REC-5).
    reverted: bool = False
    event: AnyEvent  # type: ignore[valid-type]
    #: The event's hash chain (R-FAIR-6): keep the last one seen to detect a rewrite later.
    chain: str = ""


def event_out(record: Recorded[Any], rec: Record | None = None) -> EventOut:
    position = record.originator_version
    return EventOut(
        position=position,
        type=type(record.event).__name__,
        at=record.timestamp,
        seat=record.seat,
        narration=record.narration,
        command=record.command or position,
        reverted=rec is not None and is_reverted(rec, position),
        event=record.event,
        chain=record.chain,
    )


class CampaignOpened(msgspec.Struct, frozen=True, kw_only=True):
    campaign_id: UUID
    #: The owner's bearer token: keep it, it is shown once.
    owner_token: str
    version: int


class SeatTaken(msgspec.Struct, frozen=True, kw_only=True):
    campaign_id: UUID
    seat: int
    #: The seat's bearer token: keep it, it is shown once.
    token: str
    version: int


class Applied(msgspec.Struct, frozen=True, kw_only=True):
    """An accepted command: the events it appended and the campaign's new version."""

    version: int
    events: tuple[EventOut, ...]
    #: Store position of the last event appended (0: none): pass it as ``?position=`` to a
    #: query answered from a read model to see this command's effect (read-your-writes).
    position: int = 0


class EventsPage(msgspec.Struct, frozen=True, kw_only=True):
    events: tuple[EventOut, ...]
    #: Pass as ``after`` for the next page; None when this page reached the end.
    next_after: int | None


class CampaignSummary(msgspec.Struct, frozen=True, kw_only=True):
    campaign_id: UUID
    name: str
    edition: str
    rules_version: str
    version: int
    created_on: datetime
    modified_on: datetime
    players: tuple[str, ...]
    closed: bool
    #: The first event at which the campaign's log does not verify, if it does not: it takes
    #: no command until the host repairs or forks it (every answer about it also carries the
    #: ``Capes-Log-Broken`` header).
    broken_at: int | None = None
