"""Live events across worker processes: Litestar's Redis pub/sub backend, subscribing one
call at a time.

Every live stream subscribes its campaign's channel when it opens (the first of a worker's
streams on a campaign makes the backend SUBSCRIBE on its one Redis connection). Many streams
opening at once — a host's players reconnecting after a restart, the many-tables benchmark —
made many concurrent SUBSCRIBE calls on that connection, and some subscriptions were lost
without an error: measured with 400 streams opened 250 at a time, one worker, 186 of 300
deliveries never arrived (3 when opened 4 at a time). Taking the backend's (un)subscriptions
one after another keeps every one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from litestar.channels.backends.redis import RedisChannelsPubSubBackend


class SerialRedisPubSubBackend(RedisChannelsPubSubBackend):
    """``RedisChannelsPubSubBackend`` whose subscribe and unsubscribe calls never overlap."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._subscribing = asyncio.Lock()

    async def subscribe(self, channels: Iterable[str]) -> None:
        async with self._subscribing:
            await super().subscribe(channels)

    async def unsubscribe(self, channels: Iterable[str]) -> None:
        async with self._subscribing:
            await super().unsubscribe(channels)
