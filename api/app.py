"""The HTTP server: a Litestar app over the Campaigns application (the composition root).

Routes (the OpenAPI schema and a docs UI are at ``/schema``), one module per group in
:mod:`api.routes`:

- lobby: ``POST /campaigns`` opens a campaign and returns the owner's token;
  ``POST /campaigns/{id}/seats`` seats a player and returns the seat's token;
- play: ``POST /campaigns/{id}/commands`` runs one command for the token's seat;
  ``POST /campaigns/{id}/close``;
- holder: ``GET /campaigns/{id}/me``: which campaign and seat a token is;
- queries: ``GET /campaigns/{id}``, ``/board``, ``/ledgers``, ``/characters``, ``/state``
  (each with ``?version=N`` to look at the past), ``/events?after=&limit=`` (the log, paged)
  and ``/events/stream`` (Server-Sent Events, resuming from ``Last-Event-ID``);
- record (undo, disputes, forks, diffs), projections (read models, analytics), audit
  (verify, export);
- host: ``GET /health`` (and ``HEAD``), unauthenticated, for load balancers and probes;
- pages: the table in a browser at ``/`` (lobby), ``/play/{id}`` (the table) and
  ``/play/{id}/analytics``, their files under ``/static``, and ``POST /campaigns/{id}/session``
  (the token exchanged for a read-only cookie).

Every route but ``POST /campaigns``, ``POST /seats`` and ``/health`` needs ``Authorization:
Bearer <token>`` (the stream and the charts also take ``?token=``, since browsers'
EventSource and ``<img>`` cannot send headers; :class:`TokensOutOfLog` keeps it out of the
access log). The host's
routes take ``CAPES_HOST_KEY`` as their bearer token, and so does ``POST /campaigns`` with
``CAPES_OPEN_CAMPAIGNS=host``.
A browser page uses the session cookie (GET requests only) instead of ``?token=``. CORS is off
unless ``CAPES_CORS_ORIGINS`` lists origins.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

from eventsourcing.persistence import InterfaceError, OperationalError
from litestar import Litestar, Router
from litestar._openapi.schema_generation import SchemaCreator
from litestar._openapi.schema_generation.plugins.struct import StructSchemaPlugin
from litestar.channels import ChannelsPlugin
from litestar.channels.backends.base import ChannelsBackend
from litestar.channels.backends.memory import MemoryChannelsBackend
from litestar.config.cors import CORSConfig
from litestar.datastructures import MutableScopeHeaders
from litestar.di import Provide
from litestar.middleware.rate_limit import RateLimitConfig
from litestar.openapi.config import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.openapi.spec import Components, Schema, SecurityScheme, Tag
from litestar.static_files import create_static_files_router
from litestar.types import Message, Scope
from litestar.typing import FieldDefinition

from api import problems
from api.body import StrictRequest
from api.held_views import HeldViews
from api.routes import audit, holder, host, lobby, pages, play, queries, record
from api.routes import projections as read_model_routes
from api.services import MAX_BODY, Services, hear, provide_actor
from api.static_assets import GZIPPED, AssetCaching, Fingerprints
from api.writer import RemoteWriter
from api.writer_pool import REMOTE, WriterPool, remote_writer
from application.campaigns import Campaigns, open_campaigns
from application.collector import Collector
from application.committer import Committer
from application.config import (
    cors_origins,
    describe_persistence,
    requests_per_second,
    streams_per_token,
    who_opens_campaigns,
    writer_mode,
)
from application.credentials import Keyring
from application.errors import StoreUnreachable
from application.integrity import Integrity
from application.sqlite_store import LastVersions
from domain.capees import views as capees_views
from domain.capes import views as capes_views
from projections.service import open_read_models

#: The route modules, each with ``HANDLERS``, in the order the schema lists them.
ROUTE_MODULES = (lobby, play, queries, holder, record, read_model_routes, audit, host, pages)


#: The editions' views (board, ledgers…), which the server answers with exactly their fields.
VIEWS = (capes_views.View, capees_views.View)


class ClosedStructsPlugin(StructSchemaPlugin):
    """Structs that refuse unknown fields (HTTP 400) say so: ``additionalProperties: false``.

    Litestar's own plugin leaves it out, so the schema would allow what the server refuses.
    The editions' views are closed too: an answer is ``oneOf`` the two editions' shapes, and
    an open Capes ledger also matched a CAPEES! one (which only adds ``editor``), so a CAPEES!
    ledger with no characters matched both and broke the ``oneOf``.
    """

    def to_openapi_schema(
        self, field_definition: FieldDefinition, schema_creator: SchemaCreator
    ) -> Schema:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        kind = field_definition.type_
        if kind.__struct_config__.forbid_unknown_fields or issubclass(kind, VIEWS):
            schema.additional_properties = False
        return schema


#: The bearer security scheme of the schema: every route but opening a campaign and taking a
#: seat needs ``Authorization: Bearer <token>`` (the docs page's Authorize button sets it).
BEARER = "bearer"


#: Swagger UI's built files (the ``swagger-ui-py`` package's), and where they are served.
SWAGGER_UI = Path(str(resources.files("swagger_ui") / "static"))
DOCS, DOCS_ASSETS = "/schema", "/schema-assets"
#: The files the docs page names, fingerprinted: ~1.9 MB that a browser then keeps for a year.
DOCS_FILES = ("swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui.css",
              "favicon-32x32.png")


def _docs() -> tuple[OpenAPIConfig, Router]:
    """The OpenAPI schema at /schema, with Swagger UI 5 (it renders OpenAPI 3.1, which Litestar
    writes) served from this machine: the built files of the ``swagger-ui-py`` package, no CDN.

    Cached and gzipped as the pages' own files are (:mod:`api.static_assets`): the page names
    each file by its fingerprint; the page (which carries the whole schema), the schema and the
    files are gzipped, on their own routers, and the API's JSON answers are not.
    """
    fingerprints = Fingerprints.of(SWAGGER_UI, DOCS_ASSETS, DOCS_FILES)
    ui = SwaggerRenderPlugin(
        js_url=fingerprints.url("swagger-ui-bundle.js"),
        css_url=fingerprints.url("swagger-ui.css"),
        standalone_preset_js_url=fingerprints.url("swagger-ui-standalone-preset.js"),
        favicon=f"<link rel='icon' href='{fingerprints.url('favicon-32x32.png')}'>",
        path="/",
    )
    config = OpenAPIConfig(
        title="Capes table server",
        version="0.1.0",
        path=DOCS,
        # Litestar's own router for /schema (the page, openapi.json), with gzip added.
        openapi_router=Router(DOCS, route_handlers=[], include_in_schema=False, dto=None,
                              return_dto=None, middleware=[GZIPPED]),
        render_plugins=[ui],
        description="Play Capes campaigns over HTTP. Rule refusals are 422 problem details "
        "carrying the rule id (`rule`). Authorize with the token a campaign or a seat gave you "
        "(or the host key for the host's routes).",
        components=Components(security_schemes={BEARER: SecurityScheme(
            type="http", scheme="bearer",
            description="A campaign's owner or seat token, or the host key (CAPES_HOST_KEY)")}),
        security=[{BEARER: []}],
        # The docs page lists the groups in the order a table meets them.
        tags=[Tag(name=name, description=text) for name, text in (
            ("lobby", "Open a campaign, take a seat: no token needed"),
            ("play", "Commands of a seat"),
            ("queries", "The board, ledgers, characters, state and log, now or in the past"),
            ("record", "Undo, disputes, diffs"),
            ("owner", "The owner's: options, settling disputes, forks, seats' tokens, closing"),
            ("read models", "Timeline, analytics and charts; the host's directory"),
            ("audit", "Verify a campaign's chain and dice; export its log"),
            ("host", "The server's health, for load balancers and probes: no token needed"),
        )],
    )
    # The caching outside gzip: it answers 304 for the representation sent (its ETag).
    router = create_static_files_router(
        path=DOCS_ASSETS, directories=[SWAGGER_UI], include_in_schema=False,
        middleware=[AssetCaching(fingerprints), GZIPPED],
    )
    return config, router


def channels_backend(environ: Mapping[str, str]) -> ChannelsBackend:
    """Redis pub/sub when ``CAPES_REDIS_URL`` is set (many workers), else in-process."""
    url = environ.get("CAPES_REDIS_URL", "").strip()
    if not url:
        return MemoryChannelsBackend()
    from redis.asyncio import Redis

    from api.redis_channels import SerialRedisPubSubBackend

    return SerialRedisPubSubBackend(redis=Redis.from_url(url))


def cors_config(environ: Mapping[str, str]) -> CORSConfig | None:
    """CORS for clients served from other origins: off unless ``CAPES_CORS_ORIGINS`` lists
    them (comma-separated, e.g. ``https://table.example``; ``*`` for any). Tokens travel in
    the ``Authorization`` header, so no credentials (cookies) are allowed across origins."""
    origins = cors_origins(environ)
    if not origins:
        return None
    return CORSConfig(
        allow_origins=origins,
        allow_methods=["GET", "POST", "PATCH", "OPTIONS"],  # PATCH: some of the options
        allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
        expose_headers=["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
                        "Retry-After", "Content-Disposition"],
        allow_credentials=False,
        max_age=600,
    )


async def mark_broken(campaigns: Campaigns, message: Message, scope: Scope) -> None:
    """Every answer about a campaign whose log does not verify says so, with the first event
    found wrong (issue 13): ``Capes-Log-Broken: <position>``."""
    if message["type"] != "http.response.start" or not campaigns.broken:
        return
    campaign_id: Any = scope.get("path_params", {}).get("campaign_id")  # a UUID, parsed
    broken = campaigns.broken.get(campaign_id) if campaign_id is not None else None
    if broken is not None:
        headers = MutableScopeHeaders.from_message(message)
        headers["Capes-Log-Broken"] = str(broken[0])


#: A query string's parameter: its name as sent, then its value up to the next ``&`` (or the
#: space ending the request target in a log line).
_QUERY_PARAMETER = re.compile(r"(?<=[?&])([^&=\s]*)=([^&\s]*)")


def _redacted(found: re.Match[str]) -> str:
    """The parameter ``found`` with its value blanked if it is a ``token``.

    The name is compared decoded as the server decodes it (``%74oken``, ``tok%65n`` and
    ``token`` are one parameter to it): matching the literal ``token=`` let a token sent under
    an encoded name into the log. Upper case is blanked too, to be safe.
    """
    if unquote_plus(found[1]).lower() != "token":
        return found[0]
    return f"{found[1]}=[redacted]"


def redact_tokens(line: str) -> str:
    """``line`` with the value of every query parameter named ``token`` blanked, the rest of
    it (other parameters, the status) as it was."""
    return _QUERY_PARAMETER.sub(_redacted, line)


class TokensOutOfLog(logging.Filter):
    """Blanks ``?token=`` in uvicorn's access log lines: only the tokens' digests are kept.

    Browsers' ``EventSource`` and ``<img>`` cannot send a header, so those routes take the
    token in the query string, which the access log writes (``client - "GET /path?query"``).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and record.args:
            record.args = tuple(redact_tokens(a) if isinstance(a, str) else a
                                for a in record.args)
        record.msg = redact_tokens(str(record.msg))
        return True


def keep_tokens_out_of_logs() -> None:
    """Put :class:`TokensOutOfLog` on the access log of uvicorn (once per process)."""
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, TokensOutOfLog) for f in access.filters):
        access.addFilter(TokensOutOfLog())


def create_server() -> Litestar:
    """The app as ``capes serve`` runs it: :func:`create_app` from the environment, tokens
    kept out of the access log, and, once it has started, what lives long frozen out of the
    garbage collector's reach (:class:`application.collector.Collector`).

    Why: the app's own objects (routes, schemas, modules: some 80,000) live as long as the
    process, and so do an open stream's (some 120 each), yet every full collection walked them
    all: a pause of about 30 ms every few seconds under load, and of 150 to 400 ms with 4,000
    streams open. Frozen (``gc.freeze``), a full collection walks only what came after. The
    campaigns' states are not tracked at all (their Structs are ``gc=False``)."""
    # Each worker process builds its app here, after uvicorn configured its logging.
    keep_tokens_out_of_logs()
    app = create_app()
    collector = Collector()
    app.on_startup.append(collector.start)
    app.on_shutdown.append(collector.stop)
    return app


async def _stop_writer(committer: Committer | RemoteWriter | WriterPool) -> None:
    # Not the bound method itself: Litestar would pass the app to stop() as its timeout.
    if isinstance(committer, REMOTE):
        await committer.stop()
    else:
        committer.stop()


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
    hosts_only = who_opens_campaigns(environ) == "host"  # a bad setting fails before the store
    # The writer in a process of its own opens the store from the same settings: only for a
    # store named by the environment (not a Campaigns object handed in).
    in_process = writer_mode(environ) == "process" and campaigns is None
    if campaigns is None:
        campaigns = open_campaigns(environ)
    if keyring is None:
        # The tokens live in the same store as the campaigns, in tables of their own.
        keyring = Keyring(dict(campaigns.env))
    # A seat an upheld dispute took away loses its token (R-X-REC-8), told by the writer.
    campaigns.on_seats_removed = keyring.remove_seats
    backend = channels_backend(environ)
    plugin = ChannelsPlugin(backend=backend, arbitrary_channels_allowed=True)
    read_models = open_read_models(campaigns, environ=environ)
    integrity = Integrity(campaigns)
    committer: Committer | RemoteWriter | WriterPool = (
        remote_writer(environ, HeldViews(LastVersions.of(campaigns.recorder))) if in_process
        else Committer(campaigns, integrity=integrity))
    services = Services(
        campaigns=campaigns,
        committer=committer,
        keyring=keyring,
        channels=plugin,
        read_models=read_models,
        host_key=environ.get("CAPES_HOST_KEY", "").strip(),
        integrity=integrity,
        hosts_only=hosts_only,
        local_live=isinstance(backend, MemoryChannelsBackend),
    )
    services.live.per_holder = streams_per_token(environ)
    if services.local_live and isinstance(committer, REMOTE) and committer.shared:
        # Workers sharing writer processes and no Redis: their live messages go through them.
        services.relay = committer.relay
        committer.on_live = partial(hear, services)
    if rate_limit is None:
        rate_limit = requests_per_second(environ)
    middleware = []
    if rate_limit > 0:
        middleware.append(
            # Not /health: a load balancer's probes may share the address of a proxy that
            # every player's requests come through, and a 429 would take the server out.
            RateLimitConfig(rate_limit=("second", rate_limit),
                            exclude=["/schema", "^/health$"]).middleware
        )
    openapi, assets = _docs()
    # A store that cannot be reached, in any request (its tokens, a read, a write): a 503
    # naming it, not a 500.
    unreachable = dict.fromkeys((OperationalError, InterfaceError, StoreUnreachable),
                                problems.store_unreachable(describe_persistence(campaigns.env)))
    templates, static_files = pages.browser_files()
    handlers: list[Any] = [h for module in ROUTE_MODULES for h in module.HANDLERS]
    handlers += [assets, static_files]
    return Litestar(
        route_handlers=handlers,
        template_config=templates,
        cors_config=cors_config(environ),
        dependencies={
            "services": Provide(lambda: services, use_cache=True, sync_to_thread=False),
            "actor": Provide(provide_actor),
        },
        plugins=[plugin, ClosedStructsPlugin()],
        exception_handlers={**problems.HANDLERS, **unreachable},
        middleware=middleware,
        openapi_config=openapi,
        request_max_body_size=MAX_BODY,
        # Bodies decode strictly, and a malformed one is a 400, never a 500 (issue 13).
        request_class=StrictRequest,
        on_startup=[committer.start, read_models.start, keyring.watch_store,
                    pages.compile_templates],
        # The writer finishes what is queued before the stores close.
        on_shutdown=[partial(_stop_writer, committer), read_models.close, campaigns.close,
                     keyring.close],
        before_send=[partial(mark_broken, campaigns)],
    )
