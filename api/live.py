"""A process's live streams, held with as little as possible per open stream (issue 15).

A host with a thousand tables holds four thousand streams open, each waiting seconds between
messages. Litestar's own ``ServerSentEvent`` holds each one with an anyio task group (two
tasks, cancel scopes, events), an async generator for the body and, here, a channels
subscriber with its queue: some 155 objects the garbage collector tracks per stream, and some
twenty new ones for every message, which live until the next one and so reach the oldest
generation. The full collections that this brought on walked every stream's objects: measured
with 4,000 streams, pauses of 150 to 400 ms every few seconds, which alone put the command
p99 over 50 ms.

Here a stream is a :class:`Follower` (a list of messages, one future while it waits) inside
the one request task the server already runs for it, plus one task that waits for the client
to go (:func:`disconnected`). The streams of one campaign share a :class:`Room`: one channel
subscription per campaign and process, whose messages the room hands to each follower. A
keep-alive tick wakes the streams that have been quiet for :data:`KEEPALIVE` seconds, instead
of a timer per stream and wait.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any
from uuid import UUID

import anyio
from litestar.channels import ChannelsPlugin
from litestar.response import ServerSentEvent
from litestar.response.base import ASGIResponse
from litestar.types import Receive, Scope, Send

from application.config import STREAMS_PER_TOKEN

#: Seconds of quiet after which a stream sends a keep-alive comment (and reads the log).
KEEPALIVE = 15.0
#: Messages a follower keeps for a client that does not read them; past it they are dropped
#: and the stream reads them from the log once the client has caught up (nothing is lost).
MAX_INBOX = 256


def channel(campaign_id: UUID) -> str:
    """The channel on which a campaign's commands are announced."""
    return f"campaign:{campaign_id}"


class Follower:
    """One open stream: the announcements it has not sent yet, and how to wake it."""

    __slots__ = ("due", "inbox", "overflowed", "since", "waiter")

    def __init__(self, now: float) -> None:
        self.inbox: list[bytes] = []
        #: The inbox overflowed: what it held must be read from the log.
        self.overflowed = False
        #: A keep-alive is due (set by the hub's tick).
        self.due = False
        #: When the stream last sent something (the event loop's clock).
        self.since = now
        self.waiter: asyncio.Future[None] | None = None

    def push(self, message: bytes) -> None:
        if len(self.inbox) >= MAX_INBOX:
            self.inbox.clear()
            self.overflowed = True
        else:
            self.inbox.append(message)
        self.wake()

    def wake(self, *_: Any) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self) -> None:
        """Until there is something to send, a keep-alive is due or :meth:`wake` is called."""
        if self.inbox or self.due or self.overflowed:
            return
        self.waiter = asyncio.get_running_loop().create_future()
        try:
            await self.waiter
        finally:
            self.waiter = None

    def take(self) -> list[bytes]:
        """The announcements received since the last call, oldest first."""
        inbox, self.inbox = self.inbox, []
        return inbox


class Room:
    """A campaign's streams in this process and their one channel subscription."""

    __slots__ = ("followers", "ready", "task")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.followers: set[Follower] = set()
        #: Done once the channel is subscribed: from then on nothing announced is missed.
        self.ready: asyncio.Future[None] = loop.create_future()
        self.task: asyncio.Task[None] | None = None

    def push(self, message: bytes) -> None:
        """Hand an announcement to every stream of the room."""
        for follower in self.followers:
            follower.push(message)


class LiveHub:
    """The rooms of a process's open streams, by campaign, and their keep-alive tick."""

    def __init__(self, channels: ChannelsPlugin, keepalive: float = KEEPALIVE,
                 per_holder: int = STREAMS_PER_TOKEN) -> None:
        self.channels = channels
        self.keepalive = keepalive
        self.rooms: dict[UUID, Room] = {}
        #: Open streams by holder (campaign, seat; None: the owner), at most ``per_holder``
        #: each (:meth:`admit`).
        self.per_holder = per_holder
        self.holders: dict[tuple[UUID, int | None], int] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ticker: asyncio.Task[None] | None = None

    def announce(self, campaign_id: UUID, message: bytes) -> None:
        """Hand ``message`` to this process's streams of the campaign, without the channels:
        for a server whose streams are all in its own process (no Redis). Each command's
        announcement through the in-memory channel took two task switches (the plugin's
        publisher and its subscriber loop) even when no stream was open."""
        room = self.rooms.get(campaign_id)
        if room is not None:
            room.push(message)

    def admit(self, holder: tuple[UUID, int | None]) -> bool:
        """Count one more stream of ``holder``, unless it has :attr:`per_holder` open already
        (then False). Why: each stream is an open socket, and one token could hold thousands,
        the server's open files; a player's tabs and devices need a few."""
        open_ = self.holders.get(holder, 0)
        if open_ >= self.per_holder:
            return False
        self.holders[holder] = open_ + 1
        return True

    def release(self, holder: tuple[UUID, int | None]) -> None:
        """One stream of ``holder`` has ended."""
        left = self.holders.get(holder, 0) - 1
        if left > 0:
            self.holders[holder] = left
        else:
            self.holders.pop(holder, None)

    def followers(self) -> int:
        """How many streams are open (for tests and figures)."""
        return sum(len(room.followers) for room in self.rooms.values())

    async def join(self, campaign_id: UUID) -> Follower:
        """A new follower of the campaign, once its announcements are subscribed (read the log
        after this, and nothing appended in between is missed)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            # A new event loop (the in-process test client starts one per client): what the
            # old one held cannot be awaited here.
            self._loop, self.rooms, self._ticker = loop, {}, None
        room = self.rooms.get(campaign_id)
        if room is None:
            room = self.rooms[campaign_id] = Room(loop)
            room.task = loop.create_task(self._listen(campaign_id, room))
        follower = Follower(loop.time())
        room.followers.add(follower)
        if self._ticker is None:
            self._ticker = loop.create_task(self._tick())
        try:
            await asyncio.shield(room.ready)
        except BaseException:
            self.leave(campaign_id, follower)
            raise
        return follower

    def leave(self, campaign_id: UUID, follower: Follower) -> None:
        """The stream is closed: the last one of a room gives up its subscription."""
        room = self.rooms.get(campaign_id)
        if room is None or follower not in room.followers:
            return
        room.followers.discard(follower)
        if not room.followers:
            del self.rooms[campaign_id]
            if room.task is not None:
                room.task.cancel()

    async def _listen(self, campaign_id: UUID, room: Room) -> None:
        subscriber = None
        try:
            subscriber = await self.channels.subscribe([channel(campaign_id)])
            room.ready.set_result(None)
            async for message in subscriber.iter_events():
                room.push(message)
        except Exception as e:
            # The channel could not be subscribed (Redis is down): the streams waiting to
            # open get the error; a later one tries again.
            if not room.ready.done():
                room.ready.set_exception(e)
            if self.rooms.get(campaign_id) is room:
                del self.rooms[campaign_id]
            for follower in room.followers:
                follower.overflowed = True  # read the log rather than wait for announcements
                follower.wake()
        finally:
            if not room.ready.done():
                room.ready.cancel()
            if subscriber is not None:
                with anyio.CancelScope(shield=True):
                    await self.channels.unsubscribe(subscriber)

    async def _tick(self) -> None:
        """Mark the streams quiet for :attr:`keepalive` seconds and wake them."""
        loop = asyncio.get_running_loop()
        while self.rooms:
            await asyncio.sleep(self.keepalive / 3)
            now = loop.time()
            for room in tuple(self.rooms.values()):
                for follower in room.followers:
                    if now - follower.since >= self.keepalive:
                        follower.due = True
                        follower.wake()
        self._ticker = None


async def disconnected(receive: Receive) -> None:
    """Returns when the client has gone (the request's body, none for a GET, is skipped)."""
    while (await receive())["type"] != "http.disconnect":
        pass


#: What streams a response's body: given the ASGI ``send`` and a future done once the client
#: has gone, it sends until then.
Body = Callable[[Send, "asyncio.Future[None]"], Awaitable[None]]


class LiveResponse(ServerSentEvent):
    """A ``ServerSentEvent`` (same headers, same OpenAPI description) whose body is sent by
    ``body`` in the request's own task, with one more task that waits for the client to go,
    instead of Litestar's task group and async generators."""

    def __init__(self, body: Body, *, retry_duration: int,
                 ended: Callable[[], None] | None = None) -> None:
        super().__init__((), retry_duration=retry_duration)
        self.body = body
        self.retry_duration = retry_duration
        #: Called once the response is over, however it ended (the stream counted: released).
        self.ended = ended

    def to_asgi_response(self, *args: Any, **kwargs: Any) -> ASGIResponse:
        headers = super().to_asgi_response(*args, **kwargs)
        return _LiveASGIResponse(headers, self.body, self.retry_duration,  # type: ignore[return-value]
                                 self.ended)


class _LiveASGIResponse:
    """The ASGI side of :class:`LiveResponse`: Litestar's start of the response (status,
    headers, cookies), then the body."""

    def __init__(self, start: ASGIResponse, body: Body, retry_duration: int,
                 ended: Callable[[], None] | None = None) -> None:
        self.start = start
        self.body = body
        self.retry_duration = retry_duration
        self.ended = ended

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self._respond(receive, send)
        finally:
            if self.ended is not None:
                self.ended()

    async def _respond(self, receive: Receive, send: Send) -> None:
        await self.start.start_response(send=send)
        # The first line of every stream, as Litestar's ServerSentEvent writes it.
        await send({"type": "http.response.body", "more_body": True,
                    "body": b"retry: %d\r\n" % self.retry_duration})
        gone = asyncio.ensure_future(disconnected(receive))
        try:
            # Until the client goes, or the stream ends it (its token revoked).
            await self.body(send, gone)
        except asyncio.CancelledError:
            # The server is stopping (its grace for requests under way is over): the stream
            # ends here, and the client reconnects to the next server. Not an error of the
            # application's, which the server would log with a traceback.
            pass
        finally:
            client_gone = gone.done()
            gone.cancel()
        if client_gone:
            return  # nobody to end the response for
        with contextlib.suppress(Exception):  # a client gone meanwhile: nothing to end
            # The response ends (a server would log "returned without completing response").
            await send({"type": "http.response.body", "body": b"", "more_body": False})
