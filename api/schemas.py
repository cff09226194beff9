"""Request and response bodies of the HTTP API (msgspec Structs: their constraints are in the
OpenAPI schema, and Litestar validates requests against them before a handler runs)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Union
from uuid import UUID

import msgspec

from domain.capes.commands import COMMAND_TYPES, SeatCommand
from domain.capes.events import EVENT_TYPES

from .records import Recorded

#: Every command a seated player can send (tagged by ``type``: ``roll_die``, ``stake_debt``…).
SEAT_COMMANDS = tuple(t for t in COMMAND_TYPES if issubclass(t, SeatCommand))
AnySeatCommand = Union[SEAT_COMMANDS]  # type: ignore[valid-type]  # noqa: UP007
#: Every event of the edition ``capes`` (tagged by ``type``: the class name).
AnyEvent = Union[EVENT_TYPES]  # type: ignore[valid-type]  # noqa: UP007

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=80)]
Narration = Annotated[str, msgspec.Meta(max_length=2000)]


class Body(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Base of request bodies: unknown fields are refused (HTTP 400)."""


class NewCampaign(Body, frozen=True, kw_only=True):
    name: Name
    starting_tokens: Annotated[int, msgspec.Meta(ge=0, le=99)] = 0
    edition: Literal["capes"] = "capes"


class NewSeat(Body, frozen=True, kw_only=True):
    name: Name


class CommandRequest(Body, frozen=True, kw_only=True):
    """A command for the acting seat (the seat comes from the bearer token)."""

    command: AnySeatCommand
    #: Refuse with 409 unless the campaign is still at this version.
    expected_version: Annotated[int, msgspec.Meta(ge=1)] | None = None
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
    event: AnyEvent


def event_out(record: Recorded[Any]) -> EventOut:
    return EventOut(
        position=record.originator_version,
        type=type(record.event).__name__,
        at=record.timestamp,
        seat=record.seat,
        narration=record.narration,
        event=record.event,
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
