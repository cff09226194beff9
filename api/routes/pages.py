"""The table in a browser: server-rendered pages, their static files, and the session cookie.

- ``GET /``: the lobby (open a campaign; a player's invitation link leads to the table).
- ``GET /play/{id}``: the table of a campaign: board, ledgers, legal moves, log, record.
- ``GET /play/{id}/analytics``: the campaign's charts.
- ``GET /static/...``: the pages' scripts and styles, served by this process (no CDN, no
  build step), each named by the pages with its fingerprint and then kept by browsers for a
  year (:mod:`api.static_assets`). The pages and these files are gzipped; the API is not.
- ``POST /campaigns/{id}/session``: exchanges the bearer token (header) for an HttpOnly,
  SameSite=Strict cookie scoped to ``/campaigns/{id}``, which authenticates reads only, so
  that the page's ``EventSource``, chart ``<img>`` tags and export link carry no token.

The pages hold no game logic: their script calls the HTTP API (``/campaigns/...``) with the
token from the invitation link's fragment (``#token=...``), which never reaches the server
in a URL, a log line or a ``Referer`` (the pages also send ``Referrer-Policy: no-referrer``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

import msgspec
from litestar import Litestar, Request, Response, Router, get, post
from litestar.datastructures import Cookie
from litestar.params import FromPath
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import Template
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig

from api import problems
from api.services import SESSION_COOKIE, ActorDep, Services, ServicesDep, _token, in_thread
from api.static_assets import GZIPPED, AssetCaching, Fingerprints
from application.errors import CampaignNotFound

HERE = Path(__file__).resolve().parent.parent
#: The Jinja2 templates of the pages.
TEMPLATES = HERE / "templates"
#: Scripts and styles, served under STATIC_PATH.
STATIC = HERE / "static"
STATIC_PATH = "/static"
#: Headers of every page: no Referer leaves it, nothing is loaded from elsewhere.
PAGE_HEADERS = {
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data: blob:; "
    "style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
}


#: The pages' templates, compiled when the server starts rather than by its first visitor.
PAGES = ("lobby.html", "table.html", "analytics.html", "characters_capes.html",
         "characters_capees.html")


def compile_templates(app: Litestar) -> None:
    """An ``on_startup`` hook: compile the templates (the first page otherwise waits for it)."""
    assert app.template_engine is not None
    for name in PAGES:
        app.template_engine.get_template(name)


def _page(name: str, **context: Any) -> Template:
    return Template(template_name=name, context=context, headers=PAGE_HEADERS)


@get("/", include_in_schema=False)
async def lobby_page(services: ServicesDep) -> Template:
    """The lobby: open a campaign (with the host key, when only the host may:
    ``CAPES_OPEN_CAMPAIGNS=host``)."""
    return _page("lobby.html", title="Capes", hosts_only=services.hosts_only)


async def _edition(services: Services, campaign_id: UUID) -> str:
    """The campaign's edition (``capes`` for one not found: its page says the link is bad)."""
    try:
        return await in_thread(services.campaigns.edition_of, campaign_id)
    except CampaignNotFound:
        return "capes"


@get("/play/{campaign_id:uuid}", include_in_schema=False)
async def table_page(campaign_id: FromPath[UUID], services: ServicesDep) -> Template:
    """The table of one campaign, in its edition's shape: the edition's character forms and
    script (edition-<name>.js) beside the shared table (the script fetches everything with
    the link's token)."""
    edition = await _edition(services, campaign_id)
    return _page("table.html", title="Capes: the table", campaign_id=str(campaign_id),
                 edition=edition)


@get("/play/{campaign_id:uuid}/analytics", include_in_schema=False)
async def analytics_page(campaign_id: FromPath[UUID], services: ServicesDep) -> Template:
    """The campaign's charts (a ``capees`` campaign's include its Victory Points)."""
    edition = await _edition(services, campaign_id)
    return _page("analytics.html", title="Capes: analytics", campaign_id=str(campaign_id),
                 edition=edition)


class Session(msgspec.Struct, frozen=True, kw_only=True):
    """Who the token is: a seat (1, 2, …), or the campaign's owner (seat null)."""

    seat: int | None
    owner: bool


@post(
    "/campaigns/{campaign_id:uuid}/session",
    status_code=200,
    summary="Exchange the token for a read-only session cookie (browsers)",
    tags=["lobby"],
    responses=problems.responses(401, 403, 404, 429),
)
async def open_session(
    campaign_id: FromPath[UUID], request: Request[Any, Any, Any], actor: ActorDep
) -> Response[Session]:
    """Who the token is; sets an HttpOnly, SameSite=Strict cookie for ``/campaigns/{id}``
    holding the token: GET requests there (the event stream, charts, export) are then
    authenticated without a token in their URL. Writes still need ``Authorization: Bearer``."""
    token = _token(request, query=False)
    assert token is not None  # the actor dependency authenticated it
    cookie = Cookie(
        key=SESSION_COOKIE,
        value=token,
        path=f"/campaigns/{campaign_id}",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return Response(Session(seat=actor.seat, owner=actor.owner), cookies=[cookie])


def browser_files() -> tuple[TemplateConfig[JinjaTemplateEngine], Router]:
    """The pages' templates and the router of their static files, sharing the files'
    fingerprints, computed here once as the app is built (the templates' ``asset(name)``)."""
    fingerprints = Fingerprints.of(STATIC, STATIC_PATH)
    templates = TemplateConfig(directory=TEMPLATES, engine=JinjaTemplateEngine,
                               engine_callback=fingerprints.into_templates)
    # The caching outside gzip: it answers 304 for the representation sent (its ETag).
    files = create_static_files_router(path=STATIC_PATH, directories=[STATIC],
                                       include_in_schema=False, name="static",
                                       middleware=[AssetCaching(fingerprints), GZIPPED])
    return templates, files


HANDLERS: list[Any] = [
    # Only the pages are gzipped, never the API (its JSON answers, its event stream).
    Router("/", route_handlers=[lobby_page, table_page, analytics_page], middleware=[GZIPPED]),
    open_session,
]
