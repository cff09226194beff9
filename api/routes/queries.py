"""Queries of a campaign: its summary, board, ledgers, characters, state, the event log and the
live stream (Server-Sent Events, resuming from ``Last-Event-ID``). ``?version=N`` or ``?at=``
look at the past; the board and ledgers of now come from the read models."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar, Union
from uuid import UUID

import msgspec
from litestar import Request, get
from litestar.di import Provide
from litestar.exceptions import (
    NotAuthorizedException,
    NotFoundException,
    TooManyRequestsException,
    ValidationException,
)
from litestar.params import FromPath, QueryParameter
from litestar.response import ServerSentEventMessage
from litestar.types import Send

from api.live import LiveResponse
from api.routes.projections import refuse_beyond
from api.schemas import CampaignSummary, EventsPage, event_out
from api.services import (
    QUERY_PROBLEMS,
    ActorDep,
    After,
    At,
    PageLimit,
    ReadPosition,
    ReadTimeout,
    Services,
    ServicesDep,
    Version,
    authenticate,
    in_thread,
    sse_events,
)
from application.aggregate import Campaign
from application.errors import SeatRemoved
from domain.capees import model as capees_model
from domain.capees import views as capees_views
from domain.capes import model as capes_model
from domain.capes import views as capes_views
from domain.editions import board_of, play_of
from domain.text import MAX_INT

#: The answers of each edition, by campaign: ``capes`` or ``capees`` (its ``edition`` field).
CampaignState = Union[capes_model.CampaignState, capees_model.CampaignState]  # noqa: UP007
Board = Union[capes_views.Board, capees_views.Board]  # noqa: UP007
Ledgers = tuple[Union[capes_views.Ledger, capees_views.Ledger], ...]  # noqa: UP007
Characters = tuple[Union[capes_model.Character, capees_model.Character], ...]  # noqa: UP007


def board(campaign: Campaign) -> Any:
    """The board of the campaign's own edition (showing an open dispute, R-REC-2)."""
    return board_of(campaign.edition, campaign.state, campaign.record)


def ledgers(campaign: Campaign) -> Any:
    """The ledgers of the campaign's own edition."""
    return play_of(campaign.edition).ledgers(campaign.state)


#: The read models of now that the writer renders (``Services.view``), by name.
RENDERERS: dict[str, Callable[[Any], Any]] = {"board_of": board, "ledgers_of": ledgers}


T = TypeVar("T")


async def _state(
    services: ServicesDep,
    campaign_id: FromPath[UUID],
    version: int | None,
    at: datetime | None = None,
) -> Any:
    """The game now, at ``version``, or as it was at time ``at``."""
    return (await _campaign(services, campaign_id, version, at)).state


async def _campaign(
    services: ServicesDep,
    campaign_id: FromPath[UUID],
    version: int | None,
    at: datetime | None = None,
) -> Campaign:
    """The campaign (its game and record) now, at ``version``, or as it was at time ``at``."""
    if version is None and at is None:
        now = await services.committer.latest(campaign_id)
        assert now is not None, "no position asked: always answered"
        return now
    if at is not None:
        if version is not None:
            raise ValidationException("ask for a version or a time, not both")
        if at.utcoffset() is None:
            raise ValidationException("give the time with its zone, e.g. 2026-11-22T20:00Z")
        version = await in_thread(services.campaigns.version_at, campaign_id, at)
        if version == 0:
            raise NotFoundException(f"campaign {campaign_id} did not exist yet at {at}")
    return await in_thread(services.campaigns.get, campaign_id, version)


async def _view(
    services: Services, campaign_id: UUID, version: int | None, at: datetime | None,
    position: int | None, timeout: float, read_model: str, render: Callable[[Any], T],
) -> T:
    """Now: rendered on the event loop from the campaign as the writer holds it (the same
    document as the read model's, without a hop to another thread); ``position=0`` (the read
    model as it is) or a position the store does not have: from a read model, once it has
    caught up with ``position``. In the past, or when the read model lags past ``timeout``:
    rendered from the replayed state."""
    if version is None and at is None and position != 0:
        shown = await services.view(campaign_id, read_model, render, position)
        if shown is not None:
            return shown
    if version is None and at is None and services.read_models is not None:
        models = services.read_models
        query = getattr(models, read_model)

        def now() -> T:
            # One trip to a worker thread for both ways (each trip costs a request time).
            refuse_beyond(models, position)
            found = query(campaign_id, position, timeout)
            return found if found is not None else render(services.campaigns.get(campaign_id))

        return await in_thread(now)
    return render(await _campaign(services, campaign_id, version, at))


@get(
    "/campaigns/{campaign_id:uuid}",
    summary="The campaign",
    tags=["queries"],
    responses=QUERY_PROBLEMS,
)
async def campaign_summary(
    campaign_id: FromPath[UUID], actor: ActorDep, services: ServicesDep
) -> CampaignSummary:
    agg = await services.committer.latest(campaign_id)
    assert agg is not None, "no position asked: always answered"
    state = agg.state
    return CampaignSummary(
        campaign_id=campaign_id,
        name=state.name,
        edition=agg.edition,
        rules_version=state.rules_version,
        version=agg.version,
        created_on=agg.created_on,
        modified_on=agg.modified_on,
        players=tuple(p.name for p in state.players),
        closed=state.closed,
        broken_at=services.campaigns.broken.get(campaign_id, (None,))[0],
    )


@get(
    "/campaigns/{campaign_id:uuid}/board",
    summary="The board",
    tags=["queries"],
    responses=QUERY_PROBLEMS,
)
async def get_board(
    campaign_id: FromPath[UUID],
    actor: ActorDep,
    services: ServicesDep,
    version: Version = None,
    at: At = None,
    position: ReadPosition = None,
    timeout: ReadTimeout = 2.0,
) -> Board:
    """Scene, page, phase, whose move and what they may do, conflicts with their dice
    (edition ``capes``); story, scene, step, Prominence, Victory Points and Complications
    (edition ``capees``): the board of the campaign's edition, its ``edition`` field says which.

    Now: from the board read model (see ``position``); at a ``version`` or time: replayed.
    """
    return await _view(services, campaign_id, version, at, position, timeout, "board_of", board)


@get(
    "/campaigns/{campaign_id:uuid}/ledgers",
    summary="Every player's ledger",
    tags=["queries"],
    responses=QUERY_PROBLEMS,
)
async def get_ledgers(
    campaign_id: FromPath[UUID],
    actor: ActorDep,
    services: ServicesDep,
    version: Version = None,
    at: At = None,
    position: ReadPosition = None,
    timeout: ReadTimeout = 2.0,
) -> Ledgers:
    """Story Tokens, Inspirations, and the characters' Debt per Drive, staked and blocked.

    Now: from the ledgers read model (see ``position``); at a ``version`` or time: replayed.
    """
    return await _view(
        services, campaign_id, version, at, position, timeout, "ledgers_of", ledgers
    )


@get(
    "/campaigns/{campaign_id:uuid}/characters",
    summary="The characters",
    tags=["queries"],
    responses=QUERY_PROBLEMS,
)
async def get_characters(
    campaign_id: FromPath[UUID],
    actor: ActorDep,
    services: ServicesDep,
    version: Version = None,
    at: At = None,
) -> Characters:
    """Every character's sheet, in the campaign's edition's shape."""
    state = await _state(services, campaign_id, version, at)
    return tuple(state.characters[i] for i in sorted(state.characters))


@get(
    "/campaigns/{campaign_id:uuid}/state",
    summary="The whole state",
    tags=["queries"],
    responses=QUERY_PROBLEMS,
)
async def get_state(
    campaign_id: FromPath[UUID],
    actor: ActorDep,
    services: ServicesDep,
    version: Version = None,
    at: At = None,
) -> CampaignState:
    """The rules engine's state of the campaign, now or at ``version``."""
    state: CampaignState = await _state(services, campaign_id, version, at)
    return state


@get(
    "/campaigns/{campaign_id:uuid}/events",
    summary="The event log",
    tags=["queries"],
    responses=QUERY_PROBLEMS,
)
async def get_events(
    campaign_id: FromPath[UUID],
    actor: ActorDep,
    services: ServicesDep,
    after: After = 0,
    limit: PageLimit = 100,
) -> EventsPage:
    records = await in_thread(services.campaigns.history, campaign_id, after, limit)
    record = (await in_thread(services.campaigns.get, campaign_id)).record
    events = tuple(event_out(r, record) for r in records)
    return EventsPage(
        events=events, next_after=events[-1].position if len(events) == limit else None
    )


@get(
    "/campaigns/{campaign_id:uuid}/events/stream",
    summary="Live events (SSE)",
    tags=["queries"],
    dependencies={"actor": Provide(lambda: None, sync_to_thread=False)},
    media_type="text/event-stream",
    responses=QUERY_PROBLEMS,
)
async def stream_events(
    campaign_id: FromPath[UUID],
    request: Request[Any, Any, Any],
    services: ServicesDep,
    after: Annotated[
        int | None, QueryParameter(ge=0, le=2**62, description="Resume after this position")
    ] = None,
    token: Annotated[
        str | None, QueryParameter(description="The bearer token, for clients that cannot "
                                   "send headers (a browser page: use the session cookie)")
    ] = None,
    plain: Annotated[
        bool, QueryParameter(description="Messages without an event name, so that "
                             "`EventSource.onmessage` receives them (the type is in the data)")
    ] = False,
    with_board: Annotated[
        bool, QueryParameter(name="board", description="After each change, one more message "
                             "(event `board`): the board as of that change")
    ] = False,
    heartbeat: Annotated[
        bool, QueryParameter(description="The keep-alive as a message a client receives, "
                             '`{"type": "keep-alive", "every": 15.0}` (event `keep-alive`), '
                             "first at once, then after every `every` seconds of quiet (else a "
                             "comment): a client that hears nothing for longer knows the "
                             "connection is dead, though no error says so")
    ] = False,
) -> LiveResponse:
    """Every event from ``after`` (or the ``Last-Event-ID`` header) on, then each new one.

    Each message's ``id`` is the event's position and its ``event`` the event type (none with
    ``plain=true``). With ``board=true``, once the stream has sent every event there is, it
    sends ``{"type": "board", "version": N, "board": {...}}`` (id N, event ``board``): the
    board after event N, so a page needs no second request to redraw. With
    ``heartbeat=true`` the keep-alive is a message too (see the parameter).
    """
    actor = await authenticate(request, campaign_id, services, query=True)
    start = _resume_from(request.headers.get("last-event-id", ""), after)
    await services.committer.latest(campaign_id)  # 404 before the stream starts
    holder = (campaign_id, actor.seat)  # None: the owner
    hub = services.live
    if not hub.admit(holder):
        raise TooManyRequestsException(
            f"this token holds {hub.per_holder} live streams open already (CAPES_STREAMS_PER_"
            "TOKEN): close one, another tab or device of yours", headers={"Retry-After": "5"})

    async def allowed() -> bool:
        """Whether the stream's token is still the campaign's: a new link for the seat
        revokes it, and so does an upheld dispute that takes the seat away (R-X-REC-8); the
        stream opened with it ends before it sends anything more (it went on reading the
        table live). Known tokens are checked in memory."""
        try:
            await authenticate(request, campaign_id, services, query=True)
        except (NotAuthorizedException, SeatRemoved):
            return False
        return True

    async def body(send: Send, gone: asyncio.Future[None]) -> None:
        await _follow(services, campaign_id, start, send, gone, plain, with_board, allowed,
                      heartbeat)

    return LiveResponse(body, retry_duration=RECONNECT_MS, ended=lambda: hub.release(holder))


def _resume_from(last_id: str, after: int | None) -> int:
    """Where a stream starts: after the ``Last-Event-ID`` a reconnecting browser sends back
    (an id this server sent: a position), else after ``after``, else from the start. A header
    that is not such a position is refused (400 naming it), as ``after`` would be: it was
    read past the store's integers (a 500 once the stream had started) or silently ignored."""
    last_id = last_id.strip()
    if not last_id:
        return after or 0
    if not (last_id.isascii() and last_id.isdigit() and int(last_id) <= MAX_INT):
        raise ValidationException(f"Last-Event-ID is an event's position, 0 to {MAX_INT}, "
                                  f"not {last_id[:40]!r}")
    return int(last_id)


#: How soon a browser's EventSource reconnects after the stream drops (its default is ~3 s,
#: long at a table): sent as the stream's first line (``retry:``).
RECONNECT_MS = 1000
#: The event-name lines of messages in their wire form (left out with ``plain=true``).
_EVENT_LINES = re.compile(rb"^event: [^\r\n]*\r?\n", re.MULTILINE)
#: A comment line only. ``ServerSentEventMessage(comment=…)`` adds an empty ``data:`` line, which
#: a browser's EventSource dispatches as a message with empty data: every open table's page
#: got one every 15 s and failed to parse it.
KEEPALIVE_MESSAGE = b": keep-alive\r\n\r\n"


def heartbeat_message(every: float, plain: bool) -> bytes:
    """The keep-alive of a stream opened with ``heartbeat=true``: a message with no ``id`` (a
    browser's ``Last-Event-ID`` stays the last event's), which a page's script receives, so
    that it can tell a dead connection (a laptop woken from sleep, a phone changing networks:
    the browser may see no error for minutes) from a quiet table."""
    return ServerSentEventMessage(
        data=f'{{"type":"keep-alive","every":{every}}}',
        event=None if plain else "keep-alive").encode()


class BoardMessage(msgspec.Struct, frozen=True, kw_only=True):
    """The stream's ``board`` message: the board as of event ``version``."""

    type: Literal["board"] = "board"
    version: int
    board: Board


class _Revoked(Exception):
    """The stream's token is no longer the campaign's: the stream ends."""


async def _follow(
    services: Services, campaign_id: UUID, last: int, send: Send, gone: asyncio.Future[None],
    plain: bool = False, with_board: bool = False,
    allowed: Callable[[], Awaitable[bool]] | None = None, heartbeat: bool = False,
) -> None:
    """Send the campaign's events after ``last``, then each command's as it is announced,
    until the client goes (``gone``) or ``allowed`` says its token is revoked."""
    encoder = msgspec.json.Encoder()
    hub = services.live
    follower = await hub.join(campaign_id)
    gone.add_done_callback(follower.wake)
    loop = asyncio.get_running_loop()

    async def write(chunk: bytes) -> None:
        if allowed is not None and not await allowed():
            raise _Revoked
        follower.since = loop.time()
        await send({"type": "http.response.body", "body": chunk, "more_body": True})

    def shown(wire: bytes) -> bytes:
        """Events as the client asked for them (``plain``: without event names)."""
        return _EVENT_LINES.sub(b"", wire) if plain else wire

    keepalive = heartbeat_message(hub.keepalive, plain) if heartbeat else KEEPALIVE_MESSAGE
    try:
        if heartbeat:
            await write(keepalive)  # at once: the client learns how often to expect one
        behind = True
        while not gone.done():
            if behind:
                # Joined first, read second: nothing appended in between can be missed.
                records = await in_thread(services.campaigns.history, campaign_id, last, 200)
                if records:
                    outs = [event_out(record) for record in records]
                    await write(shown(sse_events(outs)))
                    last = outs[-1].position
                if len(records) == 200:
                    continue
                behind = False
                if records and with_board:
                    await write(await _board_message(services, campaign_id, last, plain, encoder))
            await follower.wait()
            if follower.overflowed:
                follower.overflowed, behind = False, True
                follower.take()
                continue
            if follower.due and not follower.inbox:
                follower.due = False
                await write(keepalive)
                # Quiet for a while: look at the log too. Announcements are sent at most once
                # (Redis pub/sub between workers drops one now and then, e.g. while a worker
                # subscribes); this bounds what a lost one costs to a delay.
                behind = True
                continue
            follower.due = False
            for message in follower.take():
                # A command's events, ready to send: passed on if they follow what was sent,
                # skipped if they were sent already (read from the log); else read the log.
                header, _, wire = message.partition(b"\n")
                first, _, final = header.partition(b" ")
                if behind or not wire:
                    behind = True
                elif int(first) == last + 1:
                    await write(shown(wire))
                    last = int(final)
                    if with_board:
                        await write(
                            await _board_message(services, campaign_id, last, plain, encoder))
                elif int(final) > last:
                    behind = True
    except _Revoked:
        return
    finally:
        hub.leave(campaign_id, follower)


async def _board_message(
    services: Services, campaign_id: UUID, version: int, plain: bool,
    encoder: msgspec.json.Encoder,
) -> bytes:
    """The board after event ``version``: from the writer's campaign when it is at that version
    (the usual case, right after the command), else replayed to it."""
    # Every seat's stream sends this same board: rendered once for all of them.
    shown = await services.view(campaign_id, "board_of", board, version, version)
    if shown is None:
        shown = board(await in_thread(services.campaigns.get, campaign_id, version))
    message = BoardMessage(version=version, board=shown)
    return ServerSentEventMessage(
        data=encoder.encode(message).decode(), event=None if plain else "board", id=version
    ).encode()


HANDLERS = [
    campaign_summary,
    get_board,
    get_ledgers,
    get_characters,
    get_state,
    get_events,
    stream_events,
]
