"""HTTP routes of the record of play: its state, dispute previews, owner settlements and table
options, forks, seat tokens, and diffs between versions (R-REC-*).

Undo, opening a dispute, voting and withdrawing are commands like any other, sent to
``POST /campaigns/{id}/commands`` (``{"command": {"type": "undo"}}``, ``"open_dispute"``,
``"vote"``, ``"withdraw_dispute"``).
"""

from __future__ import annotations

from typing import Annotated, Any, Union
from uuid import UUID

import msgspec
from litestar import get, patch, post
from litestar.exceptions import (
    NotFoundException,
    PermissionDeniedException,
)
from litestar.params import FromPath, JSONBody, PathParameter, QueryParameter

from api import operations, problems
from api.schemas import Applied, EventOut, event_out
from api.services import (
    QUERY_PROBLEMS,
    ActorDep,
    ServicesDep,
    announce,
    apply_command,
    in_thread,
)
from domain.capees import diff as capees_diff
from domain.capees import views as capees_views
from domain.capes import diff as capes_diff
from domain.capes import views as capes_views
from domain.editions import play_of
from domain.record import Record, TableOptions
from domain.record.commands import ChangeTableOptions, SetTableOptions, SettleDispute
from domain.record.model import Dispute, DisputeMinutes, Threshold
from domain.text import MAX_INT, Name

#: The board and the diff of the campaign's own edition (its ``edition`` says which).
Board = Union[capes_views.Board, capees_views.Board]  # noqa: UP007
Diff = Union[capes_diff.Diff, capees_diff.Diff]  # noqa: UP007


def board(state: Any) -> Any:
    return play_of(state.edition).board(state)


def diff(before: Any, after: Any) -> Any:
    return play_of(after.edition).diff(before, after)


OWNER_PROBLEMS = problems.responses(400, 401, 403, 404, 409, 422, 423, 429)
#: A preview is refused as the dispute would be (422, R-REC-2).
PREVIEW_PROBLEMS = problems.responses(400, 401, 403, 404, 422, 423, 429)


class RecordView(msgspec.Struct, frozen=True, kw_only=True):
    """What the record says now: who may undo, what was reverted, the open dispute, forks."""

    version: int
    options: TableOptions
    #: The seat that may undo now, and the positions of what it may undo, newest last.
    may_undo: int | None
    undoable: tuple[tuple[int, int], ...]
    reverted: tuple[tuple[int, int], ...]
    dispute: Dispute | None
    disputes: int
    forked_from: tuple[UUID, int] | None
    forks: tuple[tuple[UUID, int], ...]
    #: The moves a dispute may be about now (their first events, oldest first; R-REC-2),
    #: whether or not one is open (one at a time).
    disputable: tuple[int, ...] = ()


def record_view(version: int, record: Record, disputable: tuple[int, ...] = ()) -> RecordView:
    return RecordView(
        disputable=disputable,
        version=version,
        options=record.options,
        may_undo=record.undoable[-1].seat if record.undoable else None,
        undoable=tuple((s.first, s.last) for s in record.undoable),
        reverted=record.reverted,
        dispute=record.dispute,
        disputes=record.disputes,
        forked_from=record.forked_from,
        forks=record.forks,
    )


@get(
    "/campaigns/{campaign_id:uuid}/record",
    summary="The record of play",
    tags=["record"],
    responses=QUERY_PROBLEMS,
)
async def get_record(
    campaign_id: FromPath[UUID], actor: ActorDep, services: ServicesDep
) -> RecordView:
    app = services.campaigns

    def read() -> RecordView:
        campaign = app.get(campaign_id)
        return record_view(campaign.version, campaign.record, app.disputable_moves(campaign))

    return await in_thread(read)


class Preview(msgspec.Struct, frozen=True, kw_only=True):
    """What upholding a dispute about ``position`` would do (R-REC-2)."""

    #: The first event of the disputed move: the game would go back to just before it.
    first: int
    #: The events that would be reverted.
    reverted: tuple[EventOut, ...]
    #: The board as it would be, in the campaign's edition's shape (``GET …/board``; its
    #: ``edition`` says which): a field cannot hold a union of untagged views.
    board: Any


@get(
    "/campaigns/{campaign_id:uuid}/disputes/preview",
    summary="Preview a dispute",
    tags=["record"],
    responses=PREVIEW_PROBLEMS,
)
async def preview_dispute(
    campaign_id: FromPath[UUID],
    actor: ActorDep,
    services: ServicesDep,
    position: Annotated[
        int, QueryParameter(ge=1, le=2**62, description="Any event of the disputed move")
    ],
) -> Preview:
    """Refused (422) as a dispute naming ``position`` would be (R-REC-2)."""
    app = services.campaigns
    campaign = await in_thread(app.get, campaign_id)
    first = await in_thread(app.disputed_move, campaign_id, position)
    records = await in_thread(app.history, campaign_id, first - 1, 10_000)
    reverted = tuple(
        event_out(r, campaign.record)
        for r in records
        if not isinstance(r.event, _record_event_types())
    )
    state = await in_thread(app.state, campaign_id, first - 1)
    return Preview(first=first, reverted=reverted, board=board(state))


def _record_event_types() -> tuple[type[Any], ...]:
    from domain.record import RECORD_EVENT_TYPES

    return RECORD_EVENT_TYPES


def _owner(actor: ActorDep) -> None:
    if not actor.owner:
        raise PermissionDeniedException("only the owner's token may do this")


class Settlement(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    uphold: bool


@post(
    "/campaigns/{campaign_id:uuid}/disputes/settle",
    status_code=200,
    tags=["owner"],
    summary="Settle the open dispute as the owner",
    responses=OWNER_PROBLEMS,
)
async def settle_dispute(
    campaign_id: FromPath[UUID], data: JSONBody[Settlement], actor: ActorDep, services: ServicesDep
) -> Applied:
    """Only when the table's options let the owner settle alone (R-REC-4)."""
    _owner(actor)
    return await apply_command(services, campaign_id, SettleDispute(uphold=data.uphold))


#: The table's options' route: POST sets them all, PATCH some (one path, one owner's answers).
OPTIONS_ROUTE: dict[str, Any] = {"path": "/campaigns/{campaign_id:uuid}/options",
                                 "status_code": 200, "tags": ["owner"],
                                 "responses": OWNER_PROBLEMS}


@post(summary="Set the table's options", **OPTIONS_ROUTE)
async def set_options(
    campaign_id: FromPath[UUID],
    data: JSONBody[TableOptions],
    actor: ActorDep,
    services: ServicesDep,
) -> Applied:
    """How disputes are settled: threshold, owner settling alone, time limit (R-REC-3/4)."""
    _owner(actor)
    return await apply_command(services, campaign_id, SetTableOptions(options=data))


class OptionsChange(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Some of the table's options (``TableOptions``' fields, typed and bounded alike): the
    ones sent change, the others keep their values."""

    dispute_threshold: Threshold | msgspec.UnsetType = msgspec.UNSET
    owner_settles: bool | msgspec.UnsetType = msgspec.UNSET
    dispute_minutes: DisputeMinutes | msgspec.UnsetType = msgspec.UNSET


@patch(summary="Change some of the table's options", **OPTIONS_ROUTE)
async def change_options(
    campaign_id: FromPath[UUID],
    data: JSONBody[OptionsChange],
    actor: ActorDep,
    services: ServicesDep,
) -> Applied:
    """Only the options sent change (``POST`` sets them all, a field left out to its default),
    merged with the options as they are when it is decided. Recorded as ``POST`` records
    them, every option in the event (R-REC-3/4); none sent is malformed (400)."""
    _owner(actor)
    sent = {k: v for k, v in msgspec.structs.asdict(data).items() if v is not msgspec.UNSET}
    return await apply_command(services, campaign_id, ChangeTableOptions(**sent))


class ForkRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    #: The version to fork from (default: now).
    version: Annotated[int, msgspec.Meta(ge=1, le=MAX_INT)] | None = None
    name: Name | None = None


class Forked(msgspec.Struct, frozen=True, kw_only=True):
    campaign_id: FromPath[UUID]
    source: UUID
    version: int
    #: The fork's owner token, shown once: it issues the fork's seat tokens.
    owner_token: str


@post(
    "/campaigns/{campaign_id:uuid}/forks",
    status_code=201,
    tags=["record"],
    summary="Fork the campaign",
    responses=problems.responses(400, 401, 403, 404, 423, 429),
)
async def fork_campaign(
    campaign_id: FromPath[UUID], data: JSONBody[ForkRequest], actor: ActorDep, services: ServicesDep
) -> Forked:
    """A new campaign from this one's game at ``version`` (R-REC-6); whoever forks owns it.

    With ``CAPES_OPEN_CAMPAIGNS=host`` only the campaign's owner may: a fork is a new campaign,
    and a seat (which anyone who knows a campaign's id can take) opened campaigns at will."""
    if services.hosts_only and not actor.owner:
        raise PermissionDeniedException(
            "with CAPES_OPEN_CAMPAIGNS=host a fork, a new campaign, is the owner's to make")
    outcome = await services.call(
        operations.fork, campaign_id, data.version, name=data.name, seat=actor.seat,
        invalidates=campaign_id,  # the source campaign records ForkMade
    )
    token = await services.call(operations.open_keys, outcome.campaign_id)
    forked = await in_thread(services.campaigns.get, outcome.campaign_id)
    assert forked.record.forked_from is not None
    return Forked(
        campaign_id=outcome.campaign_id,
        source=campaign_id,
        version=forked.record.forked_from[1],
        owner_token=token,
    )


class SeatToken(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    token: str


@post(
    "/campaigns/{campaign_id:uuid}/seats/{seat:int}/token",
    status_code=201,
    tags=["owner"],
    summary="Issue a seat a new token",
    responses=problems.responses(400, 401, 403, 404, 423, 429),
)
async def issue_seat_token(
    campaign_id: FromPath[UUID],
    seat: Annotated[int, PathParameter(ge=1, le=64)],
    actor: ActorDep,
    services: ServicesDep,
) -> SeatToken:
    """For a fork's seats, or a player who lost theirs: the seat's earlier token stops working."""
    _owner(actor)
    state = await in_thread(services.campaigns.state, campaign_id)
    if not 1 <= seat <= len(state.players):
        raise NotFoundException(f"no seat {seat}")
    # Recorded in the log as SeatTokenIssued by the owner (R-X-REC-4), stored after the token.
    _, token = await services.call(
        operations.issue_token, campaign_id, seat, invalidates=campaign_id)
    await announce(services, campaign_id)
    return SeatToken(seat=seat, token=token)


@get(
    "/campaigns/{campaign_id:uuid}/diff",
    summary="What changed between two versions",
    tags=["queries"],
    responses=QUERY_PROBLEMS,
)
async def get_diff(
    campaign_id: FromPath[UUID],
    actor: ActorDep,
    services: ServicesDep,
    from_version: Annotated[int, QueryParameter(name="from", ge=1, le=2**62)],
    to_version: Annotated[int | None, QueryParameter(name="to", ge=1, le=2**62)] = None,
) -> Diff:
    """Per player (tokens, inspirations, debt) and per conflict (sides, dice, allies)."""
    before = await in_thread(services.campaigns.state, campaign_id, from_version)
    after = await in_thread(services.campaigns.state, campaign_id, to_version)
    changes: Diff = diff(before, after)
    return changes


HANDLERS: list[Any] = [
    get_record,
    preview_dispute,
    settle_dispute,
    set_options,
    change_options,
    fork_campaign,
    issue_seat_token,
    get_diff,
]
