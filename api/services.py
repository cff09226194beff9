"""What the HTTP handlers share: the services, authentication, and running a command.

Handlers name their dependencies explicitly (``ServicesDep``, ``ActorDep``): inferring them
stops working in Litestar 3. The eventsourcing application is synchronous, so reads that may
touch the store run in a worker thread (:func:`in_thread`); every write goes through the
writer (:class:`~application.committer.Committer` on a thread of its own, or in a process of
its own: :mod:`api.writer`).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast
from uuid import UUID

import anyio
import msgspec
from litestar import Request
from litestar.channels import ChannelsPlugin
from litestar.di import NamedDependency
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.params import FromPath, QueryParameter

from api import problems
from api.live import LiveHub, channel
from api.schemas import Applied, EventOut, event_out
from api.writer import RemoteWriter, Rendered
from api.writer_pool import REMOTE, WriterPool
from application.aggregate import Campaign
from application.campaigns import Campaigns, Outcome
from application.credentials import Actor, Keyring
from application.errors import SeatRemoved
from application.integrity import Integrity
from domain.record import RecordCommand
from projections.service import ReadModels

if TYPE_CHECKING:
    from application.committer import Committer

    #: The process's writer: a thread of it, or its handle on the writer process(es).
    Writer = Committer | RemoteWriter | WriterPool
else:
    # Litestar's signature model reads the field's type at run time and takes no union of
    # two classes of ours: there it is Any; the type checker sees the union.
    Writer = Any

T = TypeVar("T")
log = logging.getLogger(__name__)
#: Largest request body accepted (HTTP 413 above it).
MAX_BODY = 64 * 1024
#: The problems a query may answer with (documented in the OpenAPI schema).
QUERY_PROBLEMS = problems.responses(400, 401, 403, 404, 423, 429)
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
#: A page of the log: the events after this position, and how many at most.
After = Annotated[int, QueryParameter(ge=0, le=2**62, description="Events after this position")]
PageLimit = Annotated[int, QueryParameter(ge=1, le=1000)]
At = Annotated[
    datetime | None,
    QueryParameter(
        description="Look at the campaign as it was at this time (ISO 8601 with a zone)"
    ),
]


class RenderedViews:
    """The board and ledgers of now, rendered once per state of a campaign.

    Every seat's page reads the same board after each command (a GET, or a live stream's
    ``board`` message), and rendering it (whose move, what they may do) is most of such a
    read's own work. Kept by the identity of the campaign rendered, which is immutable: a new
    command, an undo or a reload gives a new object, so a view is never served for a state it
    was not rendered from."""

    def __init__(self, size: int = 20_000) -> None:
        self._size = size
        self._views: dict[tuple[UUID, str], tuple[Any, Any]] = {}

    def of(self, campaign: Campaign | None, kind: str, render: Callable[[Any], T],
           version: int | None = None) -> T | None:
        """The view ``kind`` of ``campaign`` (:meth:`render`), or None when there is no
        campaign or it is not at ``version`` (when given)."""
        if campaign is None or (version is not None and campaign.version != version):
            return None
        # The campaign, not only its game: the board shows an open dispute (R-REC-2).
        return self.render(campaign.id, kind, campaign, render)

    def render(self, campaign_id: UUID, kind: str, state: Any, render: Callable[[Any], T]) -> T:
        """``render(state)``, or what it gave for this very state before."""
        key = (campaign_id, kind)
        found = self._views.get(key)
        if found is not None and found[0] is state:
            view: T = found[1]
            return view
        view = render(state)
        if len(self._views) >= self._size:
            self._views.clear()  # a host past this many tables renders each once more
        self._views[key] = (state, view)
        return view


@dataclass
class Services:
    campaigns: Campaigns
    keyring: Keyring
    channels: ChannelsPlugin
    #: Every write of the process goes through it: one thread, commands in groups; or the
    #: writer process's handle (``CAPES_WRITER=process``, :mod:`api.writer`).
    committer: Writer
    read_models: ReadModels | None = None
    #: ``CAPES_HOST_KEY``: the bearer token of the host's routes (the directory, analytics
    #: across campaigns, and opening campaigns when restricted); "" none.
    host_key: str = ""
    #: Verifies each campaign's log once (issue 13): broken ones are marked and locked.
    integrity: Integrity | None = None
    #: ``CAPES_OPEN_CAMPAIGNS=host``: only the host key opens campaigns.
    hosts_only: bool = False
    #: The board and ledgers of now, rendered once per state (issue 15).
    views: RenderedViews = field(default_factory=RenderedViews)
    #: The process's open live streams, one channel subscription per campaign (issue 15).
    live: LiveHub = field(init=False)
    #: No Redis: every live stream is this process's own, and announcements go to them
    #: directly (:meth:`LiveHub.announce`) rather than through the in-memory channel.
    local_live: bool = False
    #: Several workers sharing one writer process, with no Redis: each live message of this
    #: worker's goes to the others through it too (:meth:`api.writer.RemoteWriter.relay`).
    relay: Callable[[UUID, bytes], None] | None = None

    #: Work started by requests that none of them waits for (see :meth:`background`).
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set, init=False)

    def __post_init__(self) -> None:
        self.live = LiveHub(self.channels)

    async def call(self, operation: Callable[..., T], *args: Any,
                   invalidates: UUID | None = None, **kwargs: Any) -> T:
        """A named write (:mod:`api.operations`) in turn with the commands, by the writer.

        ``invalidates``: a campaign the write may append to (its head is read anew); its keys
        in this process are read anew too, when the writer is another process (which issued
        or revoked a token)."""
        committer = self.committer
        if isinstance(committer, REMOTE):
            found: T = await committer.call(operation, *args, invalidates=invalidates, **kwargs)
            if invalidates is not None:
                self.keyring.forget(invalidates)
            return found
        done: T = await committer.call(operation, self.campaigns, self.keyring, *args,
                                       invalidates=invalidates, **kwargs)
        return done

    async def view(self, campaign_id: UUID, kind: str, render: Callable[[Any], T],
                   position: int | None = None, version: int | None = None) -> T | None:
        """The board or ledgers (``kind``: ``board_of``, ``ledgers_of``) of now, rendered from
        the campaign as the writer holds it, if it holds it as stored (including ``position``;
        at exactly ``version`` if given); else None. From a writer process, the JSON it
        rendered, which the answer carries as it is (``msgspec.Raw``)."""
        committer = self.committer
        if isinstance(committer, REMOTE):
            raw = await committer.view(campaign_id, kind, position, version)
            return None if raw is None else cast(T, msgspec.Raw(raw))
        return self.views.of(await committer.latest(campaign_id, position), kind, render, version)

    def background(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run ``work`` on the event loop without waiting for it (held until done: the loop
        keeps only a weak reference to a task). Its failure is logged."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("background work failed", exc_info=task.exception())


#: Handlers name their dependencies explicitly (inferring them stops working in Litestar 3).
ServicesDep = NamedDependency[Services]
ActorDep = NamedDependency[Actor]


async def in_thread(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run blocking store reads in a worker thread (they may wait for a read model)."""
    return await anyio.to_thread.run_sync(lambda: func(*args, **kwargs))


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
    # store read, in a worker thread (a hop per request is a good share of its time). Keys
    # past their freshness in a local store (SQLite) are confirmed on the loop by one read of
    # their last event, and read again only if they changed.
    keyring = services.keyring
    actor = keyring.cached(campaign_id, token)
    if actor is None and keyring.local:
        actor = keyring.confirmed(campaign_id, token)
    if actor is None:
        actor = await in_thread(keyring.authenticate, campaign_id, token)
    elif not keyring.local and keyring.due(campaign_id):
        # Read again before they go stale, without making this request wait for it.
        services.background(in_thread(keyring.refresh, campaign_id))
    if actor is None:
        raise NotAuthorizedException("this token is not one of this campaign's")
    if actor.removed_by is not None:
        # R-X-REC-8: the seat is no longer at the table: reads too are refused, naming why.
        assert actor.seat is not None
        raise SeatRemoved(actor.seat, actor.removed_by)
    integrity = services.integrity
    if integrity is not None and not integrity.checked(campaign_id):
        # The first request about a campaign in this process verifies its log and snapshots
        # (once, in a worker thread): nothing is served from a forged snapshot, and a broken
        # log is marked before anything is said about it (issue 13).
        await in_thread(integrity.ensure, campaign_id)
    return actor


def authenticate_host(request: Request[Any, Any, Any], services: Services, what: str) -> None:
    """Let the request through only with ``Authorization: Bearer $CAPES_HOST_KEY``."""
    if not services.host_key:
        raise PermissionDeniedException(f"{what} is off: the host sets CAPES_HOST_KEY")
    token = _token(request, query=False)
    if token is None:
        raise NotAuthorizedException("the host key is required: Authorization: Bearer <key>")
    if not hmac.compare_digest(token.encode(), services.host_key.encode()):
        raise NotAuthorizedException("this is not the host key")


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


# -- running a command -----------------------------------------------------------------------


async def announce(services: ServicesDep, campaign_id: FromPath[UUID],
                   events: tuple[EventOut, ...] = ()) -> None:
    """Tell the live streams and the read models that the campaign has new events.

    With ``events`` (contiguous, as a command's answer has them) the streams get them ready
    to send (:func:`live_message`): each stream that has sent everything before them passes
    them on as they are, with no store read, no thread hop and no encoding of its own (four
    players' streams on a table made four reads of the log per command). Without, or for a
    stream that is behind, the stream reads the log."""
    publish(services, campaign_id, live_message(events))


def publish(services: Services, campaign_id: UUID, message: bytes) -> None:
    """Hand a campaign's live message (:func:`live_message`) to its streams and wake the read
    models."""
    if services.local_live:
        if services.relay is not None:
            services.relay(campaign_id, message)
        hear(services, campaign_id, message)
        return
    services.channels.publish(message, [channel(campaign_id)])
    if services.read_models is not None:
        services.read_models.runner.poke()


def hear(services: Services, campaign_id: UUID, message: bytes) -> None:
    """A live message for this process's streams of the campaign: one of its own, or another
    worker's passed on by the writer process they share; and wake the read models."""
    services.live.announce(campaign_id, message)
    if services.read_models is not None:
        services.read_models.runner.poke()


_encoder = msgspec.json.Encoder()


def sse_events(events: Sequence[EventOut]) -> bytes:
    """``events`` as Server-Sent Events (id: the position, event: the type, data: the JSON).

    What ``ServerSentEventMessage(data=…, event=…, id=…).encode()`` writes (tested), without
    its line splitting: JSON from msgspec and an event's type never hold a line break. Every
    command's events are written so for its streams: this is on the hot path."""
    return b"".join(b"id: %d\r\nevent: %s\r\ndata: %s\r\n\r\n"
                    % (out.position, out.type.encode(), _encoder.encode(out)) for out in events)


def live_message(events: tuple[EventOut, ...]) -> bytes:
    """What a live stream is sent for ``events``: ``b"<first> <last>\n"`` and their
    :func:`sse_events` (see api.routes.queries); b"" for none."""
    if not events:
        return b""
    return b"%d %d\n" % (events[0].position, events[-1].position) + sse_events(events)


async def apply_command(
    services: ServicesDep,
    campaign_id: FromPath[UUID],
    command: Any,
    narration: str = "",
    expected_version: int | None = None,
) -> Applied:
    outcome = await services.committer.execute(
        campaign_id, command, narration=narration, expected_version=expected_version
    )
    if isinstance(outcome, Rendered):
        if isinstance(command, RecordCommand):
            # An upheld dispute may have taken seats away (R-X-REC-8), in the writer
            # process's keys: read anew here before the streams hear of it.
            services.keyring.forget(campaign_id)
        # Encoded by the writer process: the answer goes out as it is (msgspec writes a Raw
        # verbatim), and so does the streams' message.
        if outcome.live:
            publish(services, campaign_id, outcome.live)
        return cast(Applied, msgspec.Raw(outcome.answer))
    applied = applied_of(outcome)
    if applied.events:
        await announce(services, campaign_id, applied.events)
    return applied


def applied_of(outcome: Outcome) -> Applied:
    """A command's answer: the events it appended, the campaign's version and the store's
    position (the writer thread's and the writer process's answers alike)."""
    return Applied(version=outcome.version, events=tuple(event_out(r) for r in outcome.events),
                   position=outcome.position)
