"""Live events across workers (api.redis_channels): a burst of publishes goes in batches, and
every message arrives, in the order it was published."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis
from stores import REDIS_URL, need_redis

from api.redis_channels import SerialRedisPubSubBackend


def test_a_burst_of_publishes_arrives_whole_and_in_order_in_fewer_round_trips() -> None:
    need_redis()

    async def main() -> tuple[list[bytes], int]:
        listener = Redis.from_url(REDIS_URL)
        pubsub = listener.pubsub()
        await pubsub.subscribe("campaign:burst")
        await pubsub.get_message(timeout=1)  # the subscription's confirmation
        backend = SerialRedisPubSubBackend(redis=Redis.from_url(REDIS_URL))
        batches = 0
        send = backend._send

        async def counted() -> None:
            nonlocal batches
            batches += 1
            await send()

        backend._send = counted  # type: ignore[method-assign]
        for n in range(200):
            await backend.publish(b"message %d" % n, ["campaign:burst"])
        await backend.on_shutdown()  # sends what is still queued
        heard: list[bytes] = []
        while len(heard) < 200:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=2)
            if message is None:
                break
            heard.append(message["data"])
        await pubsub.aclose()
        await listener.aclose()
        return heard, batches

    heard, batches = asyncio.run(main())

    assert heard == [b"message %d" % n for n in range(200)]
    assert batches < 200
