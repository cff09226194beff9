"""Several shared writer processes, each the one writer of its share of the campaigns (issue 15).

``capes serve --workers N`` on PostgreSQL with ``CAPES_WRITERS=K`` (K up to N) runs K writer
processes (cli/writer_hub.py). Each worker connects to every one of them and sends all that
concerns a campaign (its commands, its reads of now, its named writes, its live messages to pass
on) to the writer its id falls to (:meth:`WriterPool.of`): the same one in every worker, since
they all list the sockets in the order ``capes serve`` named them. So a campaign still has one
writer, one head and one queue whichever worker a player's request reaches, and its commands
never race; while the campaigns of the table as a whole are committed by several writers at
once, side by side in PostgreSQL (application/postgres_store.py takes no table lock).

Why: with one writer process for every worker, all the workers' commands go through one
process, which commits its groups one after another: the most a server carries, whatever its
workers and cores. Off by default (``CAPES_WRITERS=1``): on two cores, two writers kept the
machine busier for fewer commands (groups half as large, each a commit of its own), the CPU
being the limit there, not the one writer (README, "Writers by campaign").

Nothing here is needed for correctness: should two writers ever write one campaign (the
sockets named otherwise, a writer started again), the store refuses the second version and the
writer decides the command again on the campaign as stored (application/committer.py), as with
a writer per worker before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID

from api.held_views import HeldViews
from api.writer import RemoteWriter, Rendered
from application.aggregate import Campaign
from application.config import WRITER_SOCKET, writer_sockets


class WriterPool:
    """The server's handles on several shared writer processes, with
    :class:`~api.writer.RemoteWriter`'s interface: each call goes to the campaign's writer."""

    #: What :meth:`running` tells about, for people.
    kind = "a writer process"

    def __init__(self, environ: Mapping[str, str], held: HeldViews | None = None) -> None:
        #: The boards and ledgers rendered by any of them (a campaign has one writer, so
        #: one held view a campaign, as with one writer).
        self.held = held if held is not None else HeldViews(None)
        self.shared = environ[WRITER_SOCKET]
        self.writers = tuple(RemoteWriter(dict(environ) | {WRITER_SOCKET: path}, self.held)
                             for path in writer_sockets(environ))
        self._on_live: Callable[[UUID, bytes], None] | None = None

    def of(self, campaign_id: UUID) -> RemoteWriter:
        """The writer of ``campaign_id``: by the id's number, which every worker computes
        alike (``UUID.int`` is the object's own field, no computation)."""
        writers = self.writers
        return writers[campaign_id.int % len(writers)]

    @property
    def on_live(self) -> Callable[[UUID, bytes], None] | None:
        """Where the other workers' live messages go, whichever writer passes them on."""
        return self._on_live

    @on_live.setter
    def on_live(self, hear: Callable[[UUID, bytes], None] | None) -> None:
        self._on_live = hear
        for writer in self.writers:
            writer.on_live = hear

    # -- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to every writer process (each once it answers)."""
        await asyncio.gather(*(writer.start() for writer in self.writers))

    def running(self) -> bool:
        """Whether every writer process is connected (``GET /health``)."""
        return all(writer.running() for writer in self.writers)

    async def stop(self) -> None:
        """Close this server's connections (``capes serve`` stops the writer processes)."""
        await asyncio.gather(*(writer.stop() for writer in self.writers))

    # -- requests: each to its campaign's writer ------------------------------------------

    def relay(self, campaign_id: UUID, message: bytes) -> None:
        """Have the campaign's writer pass a live message on to the other workers: every
        worker is connected to it, so each hears the message once."""
        self.of(campaign_id).relay(campaign_id, message)

    async def execute(self, campaign_id: UUID, command: Any, *, narration: str = "",
                      expected_version: int | None = None) -> Rendered:
        """:meth:`RemoteWriter.execute` by the campaign's writer."""
        return await self.of(campaign_id).execute(campaign_id, command, narration=narration,
                                                  expected_version=expected_version)

    async def view(self, campaign_id: UUID, kind: str, position: int | None = None,
                   version: int | None = None) -> bytes | None:
        """:meth:`RemoteWriter.view` by the campaign's writer."""
        return await self.of(campaign_id).view(campaign_id, kind, position, version)

    async def latest(self, campaign_id: UUID, position: int | None = None) -> Campaign | None:
        """:meth:`RemoteWriter.latest` by the campaign's writer."""
        return await self.of(campaign_id).latest(campaign_id, position)

    async def call(self, operation: Callable[..., Any], *args: Any,
                   invalidates: UUID | None = None, **kwargs: Any) -> Any:
        """A named write (:mod:`api.operations`) by the writer of the campaign it concerns:
        ``invalidates``, else its ``campaign_id``, else its first campaign id argument (a
        fork runs on its source's writer; the new campaign's own writer loads it when first
        asked)."""
        concerned = invalidates or kwargs.get("campaign_id") or next(
            (a for a in args if isinstance(a, UUID)), None)
        writer = self.writers[0] if concerned is None else self.of(concerned)
        return await writer.call(operation, *args, invalidates=invalidates, **kwargs)


def remote_writer(environ: Mapping[str, str],
                  held: HeldViews | None = None) -> RemoteWriter | WriterPool:
    """The server's handle on its writer process(es): a pool where ``capes serve`` named
    several shared ones, else one (its own, or the one shared)."""
    if len(writer_sockets(environ)) > 1:
        return WriterPool(environ, held)
    return RemoteWriter(environ, held)


#: The writers in other processes, as ``isinstance`` takes them.
REMOTE = (RemoteWriter, WriterPool)
