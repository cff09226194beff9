"""The process's live streams (api.live, issue 15): one channel subscription per campaign shared
by its streams, announcements handed to each, a quiet stream woken for its keep-alive, a client
that does not read never holding more than a bounded inbox.

In process, on the memory channels backend the server uses with one worker (the streams over
real HTTP are in test_live_events.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from uuid import UUID, uuid4

from litestar.channels import ChannelsPlugin
from litestar.channels.backends.memory import MemoryChannelsBackend

from api.live import MAX_INBOX, Follower, LiveHub, channel

WAIT = 2.0


def run(test: Callable[[LiveHub, ChannelsPlugin], Awaitable[None]], keepalive: float = 15.0
        ) -> None:
    async def main() -> None:
        plugin = ChannelsPlugin(backend=MemoryChannelsBackend(), arbitrary_channels_allowed=True)
        async with plugin:
            await test(LiveHub(plugin, keepalive=keepalive), plugin)

    asyncio.run(main())


async def announced(follower: Follower, count: int = 1) -> list[bytes]:
    """The next ``count`` announcements the follower is handed."""
    async def heard() -> None:
        while len(follower.inbox) < count:
            await follower.wait()
            await asyncio.sleep(0)

    await asyncio.wait_for(heard(), WAIT)
    return follower.take()


async def announce(plugin: ChannelsPlugin, campaign_id: UUID, message: bytes) -> None:
    plugin.publish(message, [channel(campaign_id)])


def test_the_streams_of_a_campaign_share_one_subscription_and_each_hears_every_announcement(
) -> None:
    async def test(hub: LiveHub, plugin: ChannelsPlugin) -> None:
        campaign, other = uuid4(), uuid4()
        ana, ben = await hub.join(campaign), await hub.join(campaign)
        cleo = await hub.join(other)
        assert set(hub.rooms) == {campaign, other}
        assert hub.followers() == 3
        await announce(plugin, campaign, b"1 1\nfirst")
        await announce(plugin, campaign, b"2 2\nsecond")
        assert await announced(ana, 2) == [b"1 1\nfirst", b"2 2\nsecond"]
        assert await announced(ben, 2) == [b"1 1\nfirst", b"2 2\nsecond"]
        assert cleo.take() == []  # another campaign's

    run(test)


def test_the_last_stream_to_leave_gives_up_the_subscription_and_a_new_one_subscribes_again(
) -> None:
    async def test(hub: LiveHub, plugin: ChannelsPlugin) -> None:
        campaign = uuid4()
        ana, ben = await hub.join(campaign), await hub.join(campaign)
        room = hub.rooms[campaign]
        hub.leave(campaign, ana)
        assert hub.rooms[campaign] is room  # Ben still listens
        hub.leave(campaign, ben)
        hub.leave(campaign, ben)  # twice: nothing more happens
        assert campaign not in hub.rooms
        assert room.task is not None
        await asyncio.wait_for(asyncio.gather(room.task, return_exceptions=True), WAIT)
        assert room.task.done()

        cleo = await hub.join(campaign)
        await announce(plugin, campaign, b"3 3\nthird")
        assert await announced(cleo) == [b"3 3\nthird"]

    run(test)


def test_a_quiet_stream_is_woken_when_its_keep_alive_is_due() -> None:
    async def test(hub: LiveHub, plugin: ChannelsPlugin) -> None:
        follower = await hub.join(uuid4())
        await asyncio.wait_for(follower.wait(), WAIT)
        assert follower.due and follower.take() == []

    run(test, keepalive=0.1)


def test_a_client_that_reads_nothing_holds_a_bounded_inbox_and_reads_the_log_instead() -> None:
    follower = Follower(now=0.0)
    for n in range(MAX_INBOX):
        follower.push(b"%d %d\n" % (n, n))
    assert len(follower.inbox) == MAX_INBOX and not follower.overflowed
    follower.push(b"overflow")
    assert follower.inbox == [] and follower.overflowed


def test_waking_a_stream_that_is_not_waiting_changes_nothing() -> None:
    follower = Follower(now=0.0)
    follower.wake()
    assert follower.waiter is None and follower.take() == []


def test_with_one_worker_an_announcement_reaches_the_campaigns_streams_without_the_channel(
) -> None:
    """No Redis (``Services.local_live``): every stream is the process's own, so a command's
    announcement is handed to them at once, with no trip through the in-memory channel."""
    async def test(hub: LiveHub, plugin: ChannelsPlugin) -> None:
        campaign, other = uuid4(), uuid4()
        ana, ben = await hub.join(campaign), await hub.join(campaign)
        cleo = await hub.join(other)
        hub.announce(campaign, b"4 4\nfourth")
        hub.announce(uuid4(), b"1 1\nnobody's")  # no stream open on it: dropped
        assert ana.take() == ben.take() == [b"4 4\nfourth"]  # already there: no task switch
        assert cleo.take() == []

    run(test)
