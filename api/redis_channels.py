"""Live events across worker processes: Litestar's Redis pub/sub backend, subscribing one
call at a time and publishing what queued up in one round trip.

Every live stream subscribes its campaign's channel when it opens (the first of a worker's
streams on a campaign makes the backend SUBSCRIBE on its one Redis connection). Many streams
opening at once — a host's players reconnecting after a restart, the many-tables benchmark —
made many concurrent SUBSCRIBE calls on that connection, and some subscriptions were lost
without an error: measured with 400 streams opened 250 at a time, one worker, 186 of 300
deliveries never arrived (3 when opened 4 at a time). Taking the backend's (un)subscriptions
one after another keeps every one.

Every command a worker runs is published (:func:`api.services.announce`). Litestar's backend
sends each message as a Lua script of its own and waits for its answer before the next: a
round trip per command, measured at about 0.1 ms of the worker's CPU per request of the game
mix with two workers (issue 15). Here the messages that queue up while one batch is on its
way go together, as plain ``PUBLISH`` commands in one pipeline, in the order they came.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from typing import Any

from litestar.channels.backends.redis import RedisChannelsPubSubBackend

log = logging.getLogger(__name__)


class SerialRedisPubSubBackend(RedisChannelsPubSubBackend):
    """``RedisChannelsPubSubBackend`` whose subscribe and unsubscribe calls never overlap and
    whose publishes are sent in batches, in order."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._subscribing = asyncio.Lock()
        self._outbox: list[tuple[bytes, list[str]]] = []
        self._sending: asyncio.Task[None] | None = None

    async def subscribe(self, channels: Iterable[str]) -> None:
        async with self._subscribing:
            await super().subscribe(channels)

    async def unsubscribe(self, channels: Iterable[str]) -> None:
        async with self._subscribing:
            await super().unsubscribe(channels)

    async def publish(self, data: bytes, channels: Iterable[str]) -> None:
        """Queue ``data`` for ``channels``: sent with whatever else is queued, after the batch
        on its way (one task sends, so messages keep their order)."""
        self._outbox.append((data, list(dict.fromkeys(channels))))
        if self._sending is None or self._sending.done():
            self._sending = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        while self._outbox:
            batch, self._outbox = self._outbox, []
            try:
                async with self._redis.pipeline(transaction=False) as pipe:
                    for data, channels in batch:
                        for name in channels:
                            pipe.publish(name, data)
                    await pipe.execute()
            except Exception:  # Redis away: these messages are lost to live streams, which
                # read the log once the next message shows them a gap (nothing is lost).
                log.exception("could not publish %d live messages to Redis", len(batch))

    async def on_shutdown(self) -> None:
        """Send what is queued, then close."""
        sending = self._sending
        if sending is not None:
            with contextlib.suppress(Exception):
                await sending
        await super().on_shutdown()
