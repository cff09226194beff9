"""The HTTP server: a Litestar app over the Campaigns application (the composition root).

Routes (all under ``/campaigns``; the OpenAPI schema and a docs UI are at ``/schema``):

- ``POST /campaigns`` opens a campaign and returns the owner's token;
  ``POST /campaigns/{id}/seats`` seats a player and returns the seat's token.
- ``POST /campaigns/{id}/commands`` runs one command for the token's seat.
- ``GET /campaigns/{id}``, ``/board``, ``/ledgers``, ``/characters``, ``/state`` (each with
  ``?version=N`` to look at the past), ``/events?after=&limit=`` (the log, paged) and
  ``/events/stream`` (Server-Sent Events, resuming from ``Last-Event-ID``).

Every route but ``POST /campaigns`` and ``POST /seats`` needs ``Authorization: Bearer <token>``
(the stream also takes ``?token=``, since browsers' EventSource cannot send headers).
The eventsourcing application is synchronous, so handlers run it in a worker thread.
"""

from __future__ import annotations

import gc
import importlib
import os
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar
from uuid import UUID, uuid4

import anyio
import msgspec
from litestar import Litestar, Request, Router, get, post
from litestar._openapi.schema_generation import SchemaCreator
from litestar._openapi.schema_generation.plugins.struct import StructSchemaPlugin
from litestar.channels import ChannelsPlugin
from litestar.channels.backends.base import ChannelsBackend
from litestar.channels.backends.memory import MemoryChannelsBackend
from litestar.config.cors import CORSConfig
from litestar.di import NamedDependency, Provide
from litestar.exceptions import (
    NotAuthorizedException,
    NotFoundException,
    PermissionDeniedException,
    ValidationException,
)
from litestar.middleware.rate_limit import RateLimitConfig
from litestar.openapi.config import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.openapi.spec import Schema
from litestar.params import FromPath, JSONBody, QueryParameter
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import ServerSentEvent, ServerSentEventMessage
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig
from litestar.typing import FieldDefinition

from domain.capes import commands as c
from domain.capes.model import CampaignState, Character
from domain.capes.views import Board, Ledger, board, ledgers
from domain.record.commands import OpenDispute, SetTableOptions
from projections.service import ReadModels, open_read_models

from . import problems
from .application import Campaigns, open_campaigns
from .committer import Committer
from .credentials import Actor, Keyring
from .schemas import (
    Applied,
    CampaignOpened,
    CampaignSummary,
    CommandRequest,
    DisputeMove,
    EventOut,
    EventsPage,
    NewCampaign,
    NewSeat,
    SeatTaken,
    event_out,
)

T = TypeVar("T")
#: The pages' Jinja2 templates (:mod:`api.routes.pages`).
TEMPLATES = Path(__file__).resolve().parent / "templates"
#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE = 15.0
#: Modules with more routes: each has ``HANDLERS``, a list of Litestar route handlers.
ROUTE_MODULES: tuple[str, ...] = (
    "api.routes_record", "api.routes_projections", "api.routes_audit", "api.routes.pages",
)
#: Largest request body accepted (HTTP 413 above it).
MAX_BODY = 64 * 1024
#: The problems a query may answer with (documented in the OpenAPI schema).
QUERY_PROBLEMS = problems.responses(400, 401, 404, 429)
Version = Annotated[
    int | None,
    QueryParameter(
        ge=1, le=2**62, description="Look at the campaign as it was after this many events"
    ),
]
ReadPosition = Annotated[
    int | None,
    QueryParameter(
        ge=0,
        le=2**62,
        description="Answer once the read model includes this store position "
        "(a command's `position`: read-your-writes); 0: as it is. Default: the "
        "store's last position when the query arrives",
    ),
]
ReadTimeout = Annotated[
    float,
    QueryParameter(
        ge=0,
        le=10,
        description="Seconds to wait for the read model to catch up with `position` "
        "(the board and ledgers: only when another process runs the read models; past it "
        "they are replayed instead)",
    ),
]
At = Annotated[
    datetime | None,
    QueryParameter(
        description="Look at the campaign as it was at this time (ISO 8601 with a zone)"
    ),
]


@dataclass
class Services:
    campaigns: Campaigns
    keyring: Keyring
    channels: ChannelsPlugin
    #: Every write of the process goes through it: one thread, commands in groups.
    committer: Committer
    read_models: ReadModels | None = None
    #: ``CAPES_HOST_KEY``: the bearer token of the host's routes (directory); "" none.
    host_key: str = ""


#: Handlers name their dependencies explicitly (inferring them stops working in Litestar 3).
ServicesDep = NamedDependency[Services]
ActorDep = NamedDependency[Actor]


async def in_thread(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run blocking store reads in a worker thread (they may wait for a read model)."""
    return await anyio.to_thread.run_sync(lambda: func(*args, **kwargs))


def channel(campaign_id: UUID) -> str:
    return f"campaign:{campaign_id}"


# -- authentication --------------------------------------------------------------------------


#: The HttpOnly cookie a browser's page gets in exchange for its token (``POST
#: /campaigns/{id}/session``): it authenticates reads only (GET), so that an ``EventSource``, an
#: ``<img>`` or a download link needs no token in its URL; every write still needs the header.
SESSION_COOKIE = "capes_session"


def _token(request: Request[Any, Any, Any], query: bool) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    if query and request.query_params.get("token"):
        return request.query_params.get("token") or None
    if request.method in ("GET", "HEAD"):
        # Reads only: a cookie rides along with any request, a write must prove intent.
        return request.cookies.get(SESSION_COOKIE) or None
    return None


async def authenticate(
    request: Request[Any, Any, Any], campaign_id: UUID, services: Services, query: bool = False
) -> Actor:
    token = _token(request, query)
    if token is None:
        raise NotAuthorizedException("a bearer token is required: Authorization: Bearer <token>")
    # Known tokens are checked in memory, on the event loop; only an unknown one costs a
    # store read, in a worker thread (a hop per request is a good share of its time).
    actor = services.keyring.cached(campaign_id, token)
    if actor is None:
        actor = await in_thread(services.keyring.authenticate, campaign_id, token)
    if actor is None:
        raise NotAuthorizedException("this token is not one of this campaign's")
    return actor


async def provide_actor(
    request: Request[Any, Any, Any], campaign_id: FromPath[UUID], services: ServicesDep
) -> Actor:
    return await authenticate(request, campaign_id, services)


def seat_of(actor: ActorDep) -> int:
    if actor.seat is None:
        raise PermissionDeniedException(
            "the owner's token does not sit at the table: use a seat's token"
        )
    return actor.seat


# -- lobby -----------------------------------------------------------------------------------


@post(
    "/campaigns",
    status_code=201,
    summary="Open a campaign",
    tags=["lobby"],
    responses=problems.responses(400, 413, 429),
)
async def open_campaign(data: JSONBody[NewCampaign], services: ServicesDep) -> CampaignOpened:
    """A new campaign; the response's ``owner_token`` is shown once."""
    campaign_id = uuid4()
    token = await services.committer.call(services.keyring.open_campaign, campaign_id)
    command = c.CreateCampaign(
        name=data.name, starting_tokens=data.starting_tokens, edition=data.edition
    )
    outcome = await services.committer.call(services.campaigns.create, command,
                                            campaign_id=campaign_id)
    if data.options is not None:
        outcome = await services.committer.execute(campaign_id,
                                                   SetTableOptions(options=data.options))
    return CampaignOpened(campaign_id=campaign_id, owner_token=token, version=outcome.version)


@post(
    "/campaigns/{campaign_id:uuid}/seats",
    status_code=201,
    summary="Take a seat",
    tags=["lobby"],
    responses=problems.responses(400, 404, 409, 413, 422, 429),
)
async def take_seat(
    campaign_id: FromPath[UUID], data: JSONBody[NewSeat], services: ServicesDep
) -> SeatTaken:
    """Seat a player (between scenes, R-X-SEAT-1); the response's ``token`` is shown once.

    The campaign id is the invitation: whoever has it may join.
    """
    outcome = await services.committer.execute(campaign_id, c.SeatPlayer(name=data.name))
    seat = len(outcome.state.players)
    token = await services.committer.call(services.keyring.issue, campaign_id, seat)
    await _announce(services, campaign_id)
    return SeatTaken(campaign_id=campaign_id, seat=seat, token=token, version=outcome.version)


# -- commands --------------------------------------------------------------------------------


async def _announce(services: ServicesDep, campaign_id: FromPath[UUID]) -> None:
    services.channels.publish(b"1", [channel(campaign_id)])
    if services.read_models is not None:
        services.read_models.runner.poke()


async def _apply(
    services: ServicesDep,
    campaign_id: FromPath[UUID],
    command: Any,
    narration: str = "",
    expected_version: int | None = None,
) -> Applied:
    outcome = await services.committer.execute(
        campaign_id, command, narration=narration, expected_version=expected_version
    )
    if outcome.events:
        await _announce(services, campaign_id)
    return Applied(
        version=outcome.version,
        events=tuple(event_out(r) for r in outcome.events),
        position=outcome.position,
    )


@post(
    "/campaigns/{campaign_id:uuid}/commands",
    status_code=200,
    summary="Run a command",
    tags=["play"],
    request_max_body_size=MAX_BODY,
    responses=problems.responses(400, 401, 403, 404, 409, 413, 422, 429),
)
async def run_command(
    campaign_id: FromPath[UUID],
    data: JSONBody[CommandRequest],
    actor: ActorDep,
    services: ServicesDep,
) -> Applied:
    """Run one command for the token's seat: the events it appended and the new version.

    ``command.seat`` may be left out (it is the token's seat); naming another seat is 403.
    Refusals: 422 with the rule id, 403 for another seat's character, 409 for a stale
    ``expected_version``.
    """
    seat = seat_of(actor)
    command: Any = data.command
    if command.seat not in (0, seat):
        raise PermissionDeniedException(f"seat {seat} may not act for seat {command.seat}")
    if isinstance(command, DisputeMove):
        # The server fills in what the record needs to know (actor, time) itself.
        command = OpenDispute(seat=seat, position=command.position, reason=command.reason)
    command = msgspec.structs.replace(command, seat=seat)
    return await _apply(services, campaign_id, command, data.narration, data.expected_version)


@post(
    "/campaigns/{campaign_id:uuid}/close",
    status_code=200,
    summary="Close the campaign",
    tags=["owner"],
    responses=problems.responses(401, 403, 404, 409, 422, 429),
)
async def close_campaign(
    campaign_id: FromPath[UUID], actor: ActorDep, services: ServicesDep
) -> Applied:
    """The owner closes the campaign: no command is accepted after it."""
    if not actor.owner:
        raise PermissionDeniedException("only the owner's token may close the campaign")
    return await _apply(services, campaign_id, c.CloseCampaign())


# -- queries ---------------------------------------------------------------------------------


async def _state(
    services: ServicesDep,
    campaign_id: FromPath[UUID],
    version: int | None,
    at: datetime | None = None,
) -> CampaignState:
    """The game now, at ``version``, or as it was at time ``at``."""
    if at is not None:
        if version is not None:
            raise ValidationException("ask for a version or a time, not both")
        if at.utcoffset() is None:
            raise ValidationException("give the time with its zone, e.g. 2026-11-22T20:00Z")
        version = await in_thread(services.campaigns.version_at, campaign_id, at)
        if version == 0:
            raise NotFoundException(f"campaign {campaign_id} did not exist yet at {at}")
    state: CampaignState = await in_thread(services.campaigns.state, campaign_id, version)
    return state


async def _view(
    services: Services, campaign_id: UUID, version: int | None, at: datetime | None,
    position: int | None, timeout: float, read_model: str, render: Callable[[Any], T],
) -> T:
    """Now: from a read model, once it has caught up with ``position``; in the past, or when
    the read model lags past ``timeout``: rendered from the replayed state."""
    if version is None and at is None and services.read_models is not None:
        query = getattr(services.read_models, read_model)

        def now() -> T:
            # One trip to a worker thread for both ways (each trip costs a request time).
            found = query(campaign_id, position, timeout)
            return found if found is not None else render(services.campaigns.state(campaign_id))

        return await in_thread(now)
    return render(await _state(services, campaign_id, version, at))


@get(
    "/campaigns/{campaign_id:uuid}",
    summary="The campaign",
    tags=["queries"],
    responses=QUERY_PROBLEMS,
)
async def campaign_summary(
    campaign_id: FromPath[UUID], actor: ActorDep, services: ServicesDep
) -> CampaignSummary:
    agg = await in_thread(services.campaigns.get, campaign_id)
    state: CampaignState = agg.state
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
    """Scene, page, phase, whose move and what they may do, conflicts with their dice.

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
) -> tuple[Ledger, ...]:
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
) -> tuple[Character, ...]:
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
    return await _state(services, campaign_id, version, at)


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
    after: Annotated[
        int, QueryParameter(ge=0, le=2**62, description="Events after this position")
    ] = 0,
    limit: Annotated[int, QueryParameter(ge=1, le=1000)] = 100,
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
) -> ServerSentEvent:
    """Every event from ``after`` (or the ``Last-Event-ID`` header) on, then each new one.

    Each message's ``id`` is the event's position and its ``event`` the event type (none with
    ``plain=true``). With ``board=true``, once the stream has sent every event there is, it
    sends ``{"type": "board", "version": N, "board": {...}}`` (id N, event ``board``): the
    board after event N, so a page needs no second request to redraw.
    """
    await authenticate(request, campaign_id, services, query=True)
    last_id = request.headers.get("last-event-id", "").strip()
    start = int(last_id) if last_id.isdigit() else (after or 0)
    await in_thread(services.campaigns.get, campaign_id)  # 404 before the stream starts
    return ServerSentEvent(_follow(services, campaign_id, start, plain, with_board))


class BoardMessage(msgspec.Struct, frozen=True, kw_only=True):
    """The stream's ``board`` message: the board as of event ``version``."""

    type: Literal["board"] = "board"
    version: int
    board: Board


async def _follow(
    services: ServicesDep, campaign_id: FromPath[UUID], last: int, plain: bool = False,
    with_board: bool = False,
) -> AsyncGenerator[ServerSentEventMessage, None]:
    encoder = msgspec.json.Encoder()
    subscriber = await services.channels.subscribe([channel(campaign_id)])
    try:
        while True:
            # Subscribed first, read second: nothing appended in between can be missed.
            records = await in_thread(services.campaigns.history, campaign_id, last, 200)
            for record in records:
                out: EventOut = event_out(record)
                yield ServerSentEventMessage(
                    data=encoder.encode(out).decode(), event=None if plain else out.type,
                    id=out.position,
                )
                last = out.position
            if len(records) == 200:
                continue
            if records and with_board:
                state = await in_thread(services.campaigns.state, campaign_id, last)
                message = BoardMessage(version=last, board=board(state))
                yield ServerSentEventMessage(
                    data=encoder.encode(message).decode(), event=None if plain else "board",
                    id=last,
                )
            with anyio.move_on_after(KEEPALIVE) as waited:
                async for _ in subscriber.iter_events():
                    break
            if waited.cancelled_caught:
                yield ServerSentEventMessage(comment="keep-alive")
    finally:
        with anyio.CancelScope(shield=True):
            await services.channels.unsubscribe(subscriber)


# -- the app ---------------------------------------------------------------------------------


class ClosedStructsPlugin(StructSchemaPlugin):
    """Structs that refuse unknown fields (HTTP 400) say so: ``additionalProperties: false``.

    Litestar's own plugin leaves it out, so the schema would allow what the server refuses.
    """

    def to_openapi_schema(
        self, field_definition: FieldDefinition, schema_creator: SchemaCreator
    ) -> Schema:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        if field_definition.type_.__struct_config__.forbid_unknown_fields:
            schema.additional_properties = False
        return schema


def _docs() -> tuple[OpenAPIConfig, Router | None]:
    """The OpenAPI schema at /schema, with a Swagger UI served from this machine (no CDN)."""
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:  # pragma: no cover - a dependency; the schema still works without it
        return OpenAPIConfig(title="Capes table server", version="0.1.0", path="/schema"), None
    assets = "/schema-assets"
    ui = SwaggerRenderPlugin(
        js_url=f"{assets}/swagger-ui-bundle.js",
        css_url=f"{assets}/swagger-ui.css",
        standalone_preset_js_url=f"{assets}/swagger-ui-standalone-preset.js",
        favicon=f"<link rel='icon' href='{assets}/favicon-32x32.png'>",
        path="/",
    )
    config = OpenAPIConfig(
        title="Capes table server",
        version="0.1.0",
        path="/schema",
        render_plugins=[ui],
        description="Play Capes campaigns over HTTP. Rule refusals are 422 problem details "
        "carrying the rule id (`rule`).",
    )
    router = create_static_files_router(
        path=assets, directories=[swagger_ui_path], include_in_schema=False
    )
    return config, router


def channels_backend(environ: Mapping[str, str]) -> ChannelsBackend:
    """Redis pub/sub when ``CAPES_REDIS_URL`` is set (many workers), else in-process."""
    url = environ.get("CAPES_REDIS_URL", "").strip()
    if not url:
        return MemoryChannelsBackend()
    from litestar.channels.backends.redis import RedisChannelsPubSubBackend
    from redis.asyncio import Redis

    return RedisChannelsPubSubBackend(redis=Redis.from_url(url))


def cors_config(environ: Mapping[str, str]) -> CORSConfig | None:
    """CORS for clients served from other origins: off unless ``CAPES_CORS_ORIGINS`` lists
    them (comma-separated, e.g. ``https://table.example``; ``*`` for any). Tokens travel in
    the ``Authorization`` header, so no credentials (cookies) are allowed across origins."""
    origins = [o.strip() for o in environ.get("CAPES_CORS_ORIGINS", "").split(",") if o.strip()]
    if not origins:
        return None
    return CORSConfig(
        allow_origins=origins,
        allow_methods=["GET", "POST", "OPTIONS"],
        allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
        expose_headers=["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
                        "Retry-After", "Content-Disposition"],
        allow_credentials=False,
        max_age=600,
    )


def create_server() -> Litestar:
    """The app as ``capes serve`` runs it: :func:`create_app` from the environment and, once
    it has started, everything built so far frozen out of the garbage collector's reach.

    Why: the app's own objects (routes, schemas, modules: some 80,000) live as long as the
    process, yet every full collection walked them all, a pause of about 30 ms every few
    seconds under load (measured: the worst requests at half load waited for it). Frozen
    (``gc.freeze``), a full collection walks only what came after: about 2.5 ms. The campaigns'
    states are not tracked at all (their Structs are ``gc=False``)."""
    app = create_app()
    app.on_startup.append(_freeze_startup_objects)
    return app


def _freeze_startup_objects() -> None:
    gc.collect()
    gc.freeze()


def create_app(
    campaigns: Campaigns | None = None,
    keyring: Keyring | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    rate_limit: int | None = None,
) -> Litestar:
    """The server. Without arguments the stores come from the environment (``CAPES_DB``,
    ``CAPES_DATABASE_URL``, ``CAPES_REDIS_URL``); ``rate_limit`` is requests per second per
    client (``CAPES_RATE_LIMIT``, default 50; 0 turns it off)."""
    environ = os.environ if environ is None else environ
    if campaigns is None:
        campaigns = open_campaigns(environ)
    if keyring is None:
        # The tokens live in the same store as the campaigns, in tables of their own.
        keyring = Keyring(dict(campaigns.env))
    plugin = ChannelsPlugin(backend=channels_backend(environ), arbitrary_channels_allowed=True)
    read_models = open_read_models(campaigns, environ=environ)
    committer = Committer(campaigns)
    services = Services(
        campaigns=campaigns,
        committer=committer,
        keyring=keyring,
        channels=plugin,
        read_models=read_models,
        host_key=environ.get("CAPES_HOST_KEY", "").strip(),
    )
    if rate_limit is None:
        rate_limit = int(environ.get("CAPES_RATE_LIMIT", "50") or 0)
    middleware = []
    if rate_limit > 0:
        middleware.append(
            RateLimitConfig(rate_limit=("second", rate_limit), exclude=["/schema"]).middleware
        )
    openapi, assets = _docs()
    handlers: list[Any] = [
        open_campaign,
        take_seat,
        run_command,
        close_campaign,
        campaign_summary,
        get_board,
        get_ledgers,
        get_characters,
        get_state,
        get_events,
        stream_events,
    ]
    for name in ROUTE_MODULES:
        handlers.extend(importlib.import_module(name).HANDLERS)
    if assets is not None:
        handlers.append(assets)
    return Litestar(
        route_handlers=handlers,
        template_config=TemplateConfig(directory=TEMPLATES, engine=JinjaTemplateEngine),
        cors_config=cors_config(environ),
        dependencies={
            "services": Provide(lambda: services, use_cache=True, sync_to_thread=False),
            "actor": Provide(provide_actor),
        },
        plugins=[plugin, ClosedStructsPlugin()],
        exception_handlers=problems.HANDLERS,
        middleware=middleware,
        openapi_config=openapi,
        request_max_body_size=MAX_BODY,
        on_startup=[committer.start, read_models.start],
        # The writer finishes what is queued before the stores close (a lambda: Litestar would
        # pass the app to stop() as its timeout).
        on_shutdown=[lambda: committer.stop(), read_models.close, campaigns.close,
                     keyring.close],
    )
