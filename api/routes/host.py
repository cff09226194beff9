"""The host's health check: ``GET /health`` (and ``HEAD``) for a load balancer, systemd, Docker
or Kubernetes.

200 while the server can serve: the store answers and the writer runs. 503, with the same
fields and the failing part in words, when the store cannot be reached or the writer (thread or
process) has stopped. The read models' position is told beside the store's: read models
behind catch up on their own and the table plays meanwhile (boards and ledgers of now come
from the writer), so lagging is no 503.

Unauthenticated, so it tells nothing of any campaign (no id, name or token) nor where the store
is: the kind of store only; the host's log has the rest. Cheap: the writer's state is looked at
on the event loop, and the store is asked one thing, its last position (with the read models'
positions), in one hop to a worker thread bounded by :data:`STORE_WAIT`, one at a time
(:class:`StoreLook`): no replay, no scan.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Literal
from weakref import WeakKeyDictionary

import anyio
import msgspec
from eventsourcing.persistence import PersistenceError
from litestar import Response, get, head
from litestar.openapi.datastructures import ResponseSpec

from api.services import Services, ServicesDep, Writer
from api.writer_pool import REMOTE
from application.campaigns import Campaigns
from application.config import describe_persistence, store_kind
from projections.service import ReadModels

log = logging.getLogger(__name__)

#: Seconds the store has to give its last position before the check says it cannot be
#: reached (a probe's own timeout is to be longer: Kubernetes' default, 1 s, is not).
STORE_WAIT = 3.0
#: The failing part, in words.
STORE_DOWN = "the store cannot be reached"


class ReadModelsHealth(msgspec.Struct, frozen=True, kw_only=True):
    """How far the read models have followed the store's log."""

    #: The lowest store position every read model includes.
    position: int
    #: The store's last position.
    store_position: int
    #: ``store_position - position``: events they have still to take in.
    behind: int


class Health(msgspec.Struct, frozen=True, kw_only=True):
    """Whether this server can serve, and why not."""

    status: Literal["ok", "unavailable"]
    store: Literal["postgresql", "sqlite", "memory"]
    writer: Literal["ok", "stopped"]
    #: None when the store could not be asked.
    read_models: ReadModelsHealth | None
    #: What fails, in words (empty when the status is ok).
    problems: list[str]


async def check(services: Services) -> Health:
    """The server's health now (see the module's docstring)."""
    problems: list[str] = []
    writer = services.committer
    running = writer.running()
    if not running:
        # Started here too: a load balancer that took the server out on this 503 sends it no
        # request that would start the writer again.
        services.background(_restart(writer))
        problems.append(f"{writer.kind} stopped: another is starting")
    read_models = await _read_models(services)
    if read_models is None:
        problems.append(STORE_DOWN)
    kind: Any = store_kind(services.campaigns.env)
    return Health(status="unavailable" if problems else "ok", store=kind,
                  writer="ok" if running else "stopped", read_models=read_models,
                  problems=problems)


async def _restart(writer: Writer) -> None:
    if isinstance(writer, REMOTE):
        await writer.start()
    else:
        writer.start()


class StoreLook:
    """The look at the store's positions under way in this server, shared by the probes
    that come while it is: one worker thread at a time asks the store, whatever the probes.

    Why: a look is left to finish on its own past :data:`STORE_WAIT`, and a store that never
    answers (a network fallen silent) would otherwise keep a thread for every probe, one
    every few seconds for as long as it lasts, each holding one of the worker threads every
    request's work shares. A look that has ended is never reused: the next probe starts
    another (its answer is of the moment)."""

    def __init__(self) -> None:
        self._under_way: asyncio.Task[tuple[int, int]] | None = None

    async def __call__(self, look: Callable[[], tuple[int, int]]) -> tuple[int, int]:
        under_way, loop = self._under_way, asyncio.get_running_loop()
        # (A look of another event loop, one that ended, is not waited for: a test's.)
        if under_way is None or under_way.done() or under_way.get_loop() is not loop:
            under_way = self._under_way = loop.create_task(anyio.to_thread.run_sync(look))
            under_way.add_done_callback(_seen)
        # Shielded: a probe that stops waiting leaves the look to the next probes.
        return await asyncio.wait_for(asyncio.shield(under_way), STORE_WAIT)


def _seen(look: asyncio.Task[Any]) -> None:
    """Take a look's failure, which a probe that gave up waiting never reads (else asyncio
    logs it as never retrieved); the probes that waited for it have logged it."""
    if not look.cancelled():
        look.exception()


#: Each store application's look under way (a server serves one; tests build many).
_LOOKS: WeakKeyDictionary[Campaigns, StoreLook] = WeakKeyDictionary()


async def _read_models(services: Services) -> ReadModelsHealth | None:
    """The read models' and the store's positions, read in a worker thread given
    :data:`STORE_WAIT` seconds (left to finish on its own past them, shared with the probes
    that come meanwhile: :class:`StoreLook`); None if the store could not be asked (logged,
    naming it)."""
    models: ReadModels | None = services.read_models
    recorder = services.campaigns.recorder

    def look() -> tuple[int, int]:
        if models is None:
            head = recorder.max_notification_id() or 0
            return head, head
        return models.progress()

    store_look = _LOOKS.setdefault(services.campaigns, StoreLook())
    try:
        position, store_position = await store_look(look)
    except (PersistenceError, TimeoutError) as error:
        reason = " ".join(str(error).split()) or type(error).__name__
        log.warning("health: %s cannot be reached: %s",
                    describe_persistence(services.campaigns.env), reason)
        return None
    return ReadModelsHealth(position=position, store_position=store_position,
                            behind=max(0, store_position - position))


def _status(health: Health) -> int:
    return 200 if health.status == "ok" else 503


#: A probe's answer is of the moment: no cache on the way keeps it.
NO_STORE = {"Cache-Control": "no-store"}


@get(
    "/health",
    summary="Whether the server can serve",
    tags=["host"],
    security=[{}],  # no token needed: it tells nothing of any campaign
    responses={503: ResponseSpec(data_container=Health, generate_examples=False,
                                 description="The store cannot be reached or the writer "
                                 "stopped (`problems` says which)")},
)
async def health(services: ServicesDep) -> Response[Health]:
    """200 when the store answers and the writer runs; 503 with the same fields otherwise.
    The read models' position is told beside the store's (behind is not a 503: they catch up
    on their own). For load balancers, systemd, Docker and Kubernetes probes."""
    found = await check(services)
    return Response(found, status_code=_status(found), headers=NO_STORE)


@head("/health", include_in_schema=False)
async def health_head(services: ServicesDep) -> Response[None]:
    """``GET /health``'s status without its body."""
    found = await check(services)
    return Response(None, status_code=_status(found), headers=NO_STORE)


HANDLERS: list[Any] = [health, health_head]
