"""HTTP routes answered from the read models (:mod:`projections`): a campaign's timeline, its
analytics as JSON and PNG charts, analytics across campaigns, and the campaign directory.

The board and ledgers routes (:mod:`api.routes.queries`) are answered from read models too. Each
route
here takes ``?position=N`` (a command's ``position``) and ``?timeout=`` (seconds) like them:
the answer waits until the read model includes that store position (default: the store's last
position when the query arrives). A read model that has not caught up within the timeout is
answered with 503 and ``Retry-After`` (these have no replay to fall back on).

Who sees what: a campaign's timeline and analytics need one of its tokens (a seat's or the
owner's; the charts also take ``?token=`` for ``<img>`` tags). ``GET /analytics`` is public
and holds aggregate figures only: no campaign ids or names, no seats or player names, no
per-page series. ``GET /campaigns`` (the directory) needs the host key, ``CAPES_HOST_KEY``,
as a bearer token: a campaign's id is its invitation, so the list is not for everyone.
"""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

import msgspec
from litestar import Request, Response, get
from litestar.di import Provide
from litestar.exceptions import (
    NotFoundException,
    ServiceUnavailableException,
    ValidationException,
)
from litestar.params import FromPath, QueryParameter

from api import problems
from api.services import (
    ActorDep,
    After,
    PageLimit,
    ReadPosition,
    ServicesDep,
    authenticate,
    authenticate_host,
    in_thread,
)
from projections.analytics import Analytics
from projections.charts import CHARTS, chart
from projections.directory import Listing
from projections.service import ReadModels
from projections.timeline import Entry

#: What these routes may answer besides their result.
READ_PROBLEMS = problems.responses(400, 401, 403, 404, 423, 429, 503)
Timeout = Annotated[
    float,
    QueryParameter(
        ge=0,
        le=10,
        description="Seconds to wait for the read model to catch up with `position` (503 past it)",
    ),
]


class TimelinePage(msgspec.Struct, frozen=True, kw_only=True):
    entries: tuple[Entry, ...]
    #: Pass as ``after`` for the next page; None when this page reached the end.
    next_after: int | None


class Directory(msgspec.Struct, frozen=True, kw_only=True):
    campaigns: tuple[Listing, ...]
    #: Pass as ``offset`` for the next page; None when this page reached the end.
    next_offset: int | None


def _models(read_models: ReadModels | None) -> ReadModels:
    if read_models is None:  # pragma: no cover - create_app always opens them
        raise ServiceUnavailableException("this server has no read models")
    return read_models


def refuse_beyond(read_models: ReadModels, position: int | None) -> None:
    """400 for a ``position`` past the store's last event (the client cannot have been given
    it: every answer's position is stored); before any wait for the read models."""
    head = read_models.beyond(position)
    if head is not None:
        raise ValidationException(f"position {position} is beyond the store's last event ({head})")


def _caught_up(read_models: ReadModels, name: str, position: int | None, timeout: float) -> None:
    """Wait until read model ``name`` includes ``position``; 400 at once for a position that is
    not the store's, 503 when it is late."""
    refuse_beyond(read_models, position)
    if read_models.wait(position, [name], timeout):
        return
    head = read_models.runner.head()
    raise ServiceUnavailableException(
        f"the {name} read model has not caught up with position "
        f"{head if position is None else position} yet; retry shortly",
        headers={"Retry-After": "1"},
    )


@get(
    "/campaigns/{campaign_id:uuid}/timeline",
    summary="The log with reverts marked",
    tags=["read models"],
    responses=READ_PROBLEMS,
)
async def get_timeline(
    campaign_id: FromPath[UUID],
    actor: ActorDep,
    services: ServicesDep,
    after: After = 0,
    limit: PageLimit = 100,
    reverted: Annotated[
        bool | None,
        QueryParameter(description="true: only reverted events; false: only those in effect"),
    ] = None,
    position: ReadPosition = None,
    timeout: Timeout = 2.0,
) -> TimelinePage:
    """Every event with its time, acting seat, narration, and whether an undo or an upheld
    dispute has reverted it (and which event did)."""
    models = _models(services.read_models)

    def read() -> list[Entry]:
        _caught_up(models, "timeline", position, timeout)
        entries = models.timeline.entries(campaign_id, after, limit, reverted)
        if not entries and not models.timeline.has(campaign_id):
            services.campaigns.get(campaign_id)  # 404 if there is no such campaign
        return entries

    entries = await in_thread(read)
    return TimelinePage(
        entries=tuple(entries), next_after=entries[-1].position if len(entries) == limit else None
    )


def _campaign_analytics(
    services: Any, campaign_id: UUID, position: int | None, timeout: float
) -> Analytics:
    models = _models(services.read_models)
    _caught_up(models, "analytics", position, timeout)
    found = models.analytics.analytics(campaign_id)
    if found is None:
        services.campaigns.get(campaign_id)  # 404 if there is no such campaign
        raise NotFoundException(f"campaign {campaign_id} has no analytics")
    return found


@get(
    "/campaigns/{campaign_id:uuid}/analytics",
    summary="The campaign's analytics",
    tags=["read models"],
    responses=READ_PROBLEMS,
)
async def get_campaign_analytics(
    campaign_id: FromPath[UUID],
    actor: ActorDep,
    services: ServicesDep,
    position: ReadPosition = None,
    timeout: Timeout = 2.0,
) -> Analytics:
    """Dice per player with a chi-square fairness figure, Story Tokens and Debt flows,
    conflict outcomes, abilities used and pace; reverted events are left out (and counted)."""
    return await in_thread(_campaign_analytics, services, campaign_id, position, timeout)


@get(
    [f"/campaigns/{{campaign_id:uuid}}/analytics/{name}.png" for name in CHARTS],
    summary="A chart of the campaign's analytics (PNG)",
    tags=["read models"],
    dependencies={"actor": Provide(lambda: None, sync_to_thread=False)},
    media_type="image/png",
    responses={**READ_PROBLEMS, **problems.responses(501)},
)
async def get_chart(
    campaign_id: FromPath[UUID],
    request: Request[Any, Any, Any],
    services: ServicesDep,
    position: ReadPosition = None,
    timeout: Timeout = 2.0,
    token: Annotated[
        str | None, QueryParameter(description="The bearer token, for <img> tags")
    ] = None,
) -> Response[bytes]:
    """``dice``, ``tokens``, ``debt``, ``conflicts``, ``abilities`` or ``pace``."""
    await authenticate(request, campaign_id, services, query=True)
    name = request.url.path.rsplit("/", 1)[-1].removesuffix(".png")

    def draw() -> bytes:
        return chart(_campaign_analytics(services, campaign_id, position, timeout), name)

    return Response(
        await in_thread(draw),
        media_type="image/png",
        headers={"Cache-Control": "private, max-age=5"},
    )


@get(
    "/analytics",
    summary="Analytics across every campaign (aggregate figures; host only)",
    tags=["read models"],
    responses=problems.responses(400, 401, 403, 429, 503),
)
async def get_analytics(
    request: Request[Any, Any, Any],
    services: ServicesDep,
    position: ReadPosition = None,
    timeout: Timeout = 2.0,
) -> Analytics:
    """The same figures as a campaign's, over every campaign, without ids, names, seats or
    per-page series; recomputed at most every few seconds. Needs ``Authorization: Bearer
    $CAPES_HOST_KEY``."""
    authenticate_host(request, services, "analytics across campaigns")
    models = _models(services.read_models)

    def figures() -> Analytics:
        _caught_up(models, "analytics", position, timeout)
        return models.all_analytics()

    return await in_thread(figures)


@get(
    "/campaigns",
    summary="The campaign directory (host only)",
    tags=["read models"],
    responses=problems.responses(400, 401, 403, 429, 503),
)
async def list_campaigns(
    request: Request[Any, Any, Any],
    services: ServicesDep,
    q: Annotated[
        str,
        QueryParameter(
            max_length=80,
            description="Part of the campaign's name or of a player's name (any case)",
        ),
    ] = "",
    closed: Annotated[
        bool | None, QueryParameter(description="Only closed (true) or open (false) campaigns")
    ] = None,
    limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
    offset: Annotated[int, QueryParameter(ge=0, le=2**62)] = 0,
    position: ReadPosition = None,
    timeout: Timeout = 2.0,
) -> Directory:
    """Campaigns, last played first. Needs ``Authorization: Bearer $CAPES_HOST_KEY``."""
    authenticate_host(request, services, "the directory")
    models = _models(services.read_models)

    def search() -> list[Listing]:
        _caught_up(models, "directory", position, timeout)
        return models.directory.search(q, closed=closed, limit=limit, offset=offset)

    found = await in_thread(search)
    return Directory(
        campaigns=tuple(found), next_offset=offset + len(found) if len(found) == limit else None
    )


HANDLERS: list[Any] = [
    get_timeline,
    get_campaign_analytics,
    get_chart,
    get_analytics,
    list_campaigns,
]
