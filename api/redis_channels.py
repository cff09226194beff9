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

Redis may go away for a while (restarted, the network): the library's subscriber ended with
its ``ConnectionError``, silently, and the server heard no other server's commands through
Redis again until it was restarted. Here it tries again every second, taking its
subscriptions again, and the log says once that Redis is away and once that it is back (it
said so with a traceback for every batch published meanwhile).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Iterable
from typing import Any

from litestar.channels.backends.redis import RedisChannelsPubSubBackend
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

#: Seconds between tries to reach Redis again once it went away.
RECONNECT = 1.0


class SerialRedisPubSubBackend(RedisChannelsPubSubBackend):
    """``RedisChannelsPubSubBackend`` whose subscribe and unsubscribe calls never overlap and
    whose publishes are sent in batches, in order."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._subscribing = asyncio.Lock()
        self._outbox: list[tuple[bytes, list[str]]] = []
        self._sending: asyncio.Task[None] | None = None
        #: Redis was found unreachable and has not been heard from since (said once).
        self.away = False

    def _lost(self, error: Exception) -> None:
        if not self.away:
            self.away = True
            log.warning("Redis is unreachable (%s: %s): live events of the commands other "
                        "servers run reach this server's streams late meanwhile (each reads the "
                        "log within 15 s), and nothing is lost; trying again every %.0f s",
                        type(error).__name__, error, RECONNECT)

    def _back(self) -> None:
        if self.away:
            self.away = False
            log.warning("Redis is reachable again: live events cross the servers again")

    async def stream_events(self) -> AsyncGenerator[tuple[str, Any], None]:
        """The library's, going on once Redis is back: its subscriptions are taken again
        when the next read connects (redis-py's ``PubSub.on_connect``)."""
        while True:
            try:
                async for message in super().stream_events():
                    self._back()
                    yield message
            except (RedisError, OSError) as error:
                self._lost(error)
                await asyncio.sleep(RECONNECT)

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
                self._back()
            except (RedisError, OSError) as error:  # Redis away: these messages are lost to
                # live streams, which read the log once the next message shows them a gap,
                # or within 15 s (nothing is lost).
                self._lost(error)
                log.debug("could not publish %d live messages to Redis", len(batch))
            except Exception:
                log.exception("could not publish %d live messages to Redis", len(batch))

    async def on_shutdown(self) -> None:
        """Send what is queued, then close."""
        sending = self._sending
        if sending is not None:
            with contextlib.suppress(Exception):
                await sending
        await super().on_shutdown()
