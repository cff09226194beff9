"""Live events across workers (api.redis_channels): a burst of publishes goes in batches, and
every message arrives, in the order it was published."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import time

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def throwaway_redis(port: int) -> subprocess.Popen[bytes]:
    """A Redis server of this test's own (never the machine's, which other tests share)."""
    server = subprocess.Popen(["redis-server", "--port", str(port), "--save", "",
                               "--appendonly", "no"], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return server
        time.sleep(0.05)
    server.kill()
    pytest.fail(f"redis-server did not start on port {port}")


def test_a_server_hears_other_servers_again_once_redis_is_back() -> None:
    """Redis stopped for a while and started again: the subscriptions are taken again and the
    messages published after it is back arrive. The library's subscriber task ended with
    Redis's ConnectionError, silently, and the server heard nobody's commands through Redis
    again until it was restarted (its streams saw them only by reading the log every 15 s)."""
    need_redis()
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    url = f"redis://127.0.0.1:{port}/5"
    server = throwaway_redis(port)

    async def main() -> list[tuple[str, bytes]]:
        nonlocal server
        backend = SerialRedisPubSubBackend(redis=Redis.from_url(url))
        heard: list[tuple[str, bytes]] = []

        async def listen() -> None:
            async for message in backend.stream_events():
                heard.append(message)

        await backend.subscribe(["campaign:back"])
        listener = asyncio.get_running_loop().create_task(listen())
        publisher = Redis.from_url(url)
        try:
            await publisher.publish("campaign:back", b"before")
            await asyncio.sleep(0.3)
            server.kill()
            server.wait()
            await asyncio.sleep(1.0)  # Redis away: the listener meets its error
            server = throwaway_redis(port)
            deadline = time.monotonic() + 10
            while (b"after" not in [data for _, data in heard] and time.monotonic() < deadline
                   and not listener.done()):
                with contextlib.suppress(RedisConnectionError):  # its connection was Redis's
                    await publisher.publish("campaign:back", b"after")  # before it stopped
                await asyncio.sleep(0.2)
        finally:
            listener.cancel()
            with contextlib.suppress(BaseException):
                await listener
            await publisher.aclose()
            with contextlib.suppress(Exception):
                await backend.on_shutdown()
        return heard

    try:
        heard = asyncio.run(main())
    finally:
        server.kill()
        server.wait()

    assert ("campaign:back", b"before") in heard
    assert ("campaign:back", b"after") in heard
