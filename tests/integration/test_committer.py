"""The server's writer (application.committer): one thread, commands committed in groups, on real
stores.

To have several commands queued at once, a test first queues a call that holds the writer
until they are all in: the writer then takes them as one group.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, TypeVar
from uuid import UUID

import pytest
from stores import MakeApp

from application.campaigns import Campaigns, Outcome
from application.committer import Committer
from application.errors import CampaignConflict
from domain.capes.commands import CreateCampaign, FrameScene, SeatPlayer
from domain.errors import DomainError, InvalidReference, NotPermitted, RuleViolation

T = TypeVar("T")

NAMES = ("Ada", "Brook", "Cass", "Dev")


def run(main: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(main())  # type: ignore[arg-type]


def new_table(app: Campaigns, players: int = 0) -> UUID:
    campaign_id = app.create(CreateCampaign(name="Night Patrol")).campaign_id
    for name in NAMES[:players]:
        app.execute(campaign_id, SeatPlayer(name=name))
    return campaign_id


async def grouped(committer: Committer, *writes: Callable[[], Awaitable[Any]]) -> list[Any]:
    """Run ``writes`` with the writer held until all are queued: one group. Their results,
    exceptions included."""
    hold = threading.Event()
    held = asyncio.ensure_future(committer.call(hold.wait, 10))
    await asyncio.sleep(0.05)  # the writer is now inside the call
    tasks = [asyncio.ensure_future(write()) for write in writes]
    for _ in range(500):  # every write is queued (a command first loads its campaign)
        if committer._queue.qsize() >= len(writes):
            break
        await asyncio.sleep(0.01)
    hold.set()
    await held
    return list(await asyncio.gather(*tasks, return_exceptions=True))


@pytest.fixture
def committer(store_app: Campaigns) -> Any:
    writer = Committer(store_app)
    yield writer
    writer.stop()


def test_commands_queued_together_are_stored_in_one_group_each_on_the_one_before(
    store_app: Campaigns, committer: Committer
) -> None:
    campaign_id = new_table(store_app)

    async def main() -> list[Any]:
        return await grouped(committer, *(
            lambda name=name: committer.execute(campaign_id, SeatPlayer(name=name))
            for name in NAMES))

    groups = committer.groups
    outcomes: list[Outcome] = run(main)

    assert committer.groups == groups + 1
    assert [o.version for o in outcomes] == [2, 3, 4, 5]
    assert [len(o.state.players) for o in outcomes] == [1, 2, 3, 4]
    positions = [o.position for o in outcomes]
    assert positions == sorted(positions) and len(set(positions)) == 4
    assert [p.name for p in store_app.state(campaign_id).players] == list(NAMES)
    assert [r.event.name for r in store_app.history(campaign_id, after=1)] == list(NAMES)


def test_a_refused_command_in_a_group_is_refused_alone_and_the_others_are_stored(
    store_app: Campaigns, committer: Committer
) -> None:
    campaign_id = new_table(store_app)

    async def main() -> list[Any]:
        return await grouped(
            committer,
            lambda: committer.execute(campaign_id, SeatPlayer(name="Ada")),
            lambda: committer.execute(campaign_id, FrameScene(seat=9, text="Nowhere")),
            lambda: committer.execute(campaign_id, SeatPlayer(name="Brook")),
        )

    first, refused, third = run(main)

    assert isinstance(refused, (RuleViolation, NotPermitted, InvalidReference))
    assert (first.version, third.version) == (2, 3)
    assert store_app.get(campaign_id).version == 3


def test_a_stale_expected_version_is_refused_with_a_conflict_and_stores_nothing(
    store_app: Campaigns, committer: Committer
) -> None:
    campaign_id = new_table(store_app, players=1)

    async def main() -> list[Any]:
        return await grouped(
            committer,
            lambda: committer.execute(campaign_id, SeatPlayer(name="Brook"), expected_version=2),
            lambda: committer.execute(campaign_id, SeatPlayer(name="Cass"), expected_version=2),
        )

    accepted, stale = run(main)

    assert accepted.version == 3
    assert isinstance(stale, CampaignConflict)
    assert [p.name for p in store_app.state(campaign_id).players] == ["Ada", "Brook"]


class TwoWriters(NamedTuple):
    """A server's writer and another process's application on one store, and a table."""

    server: Campaigns
    committer: Committer
    other: Campaigns
    campaign_id: UUID


@pytest.fixture
def two_writers(make_app: MakeApp, shared_store_env: dict[str, str]) -> Any:
    server, other = make_app(shared_store_env), make_app(shared_store_env)
    committer = Committer(server)
    yield TwoWriters(server, committer, other, new_table(server, players=1))
    committer.stop()


def test_a_write_by_another_process_is_seen_before_the_next_command(
    two_writers: TwoWriters,
) -> None:
    committer, cli, campaign_id = two_writers.committer, two_writers.other, two_writers.campaign_id

    async def main() -> list[Outcome]:
        first = await committer.execute(campaign_id, SeatPlayer(name="Brook"))
        cli.execute(campaign_id, SeatPlayer(name="Cass"))  # behind the writer's back
        return [first, await committer.execute(campaign_id, SeatPlayer(name="Dev"))]

    first, second = run(main)

    assert (first.version, second.version) == (3, 5)
    assert [p.name for p in second.state.players] == ["Ada", "Brook", "Cass", "Dev"]


def test_a_group_beaten_to_the_store_by_another_writer_runs_each_command_again(
    two_writers: TwoWriters,
) -> None:
    server, committer, other, campaign_id = two_writers

    async def main() -> list[Any]:
        await committer.execute(campaign_id, SeatPlayer(name="Brook"))  # the writer's head
        # In one batch: another writer appends (after the writer looked at the store), then
        # two commands are decided on the writer's head, which is no longer the stored one.
        return await grouped(
            committer,
            lambda: committer.call(other.execute, campaign_id, SeatPlayer(name="Cass")),
            lambda: committer.execute(campaign_id, SeatPlayer(name="Dev")),
            lambda: committer.execute(campaign_id, SeatPlayer(name="Eli"),
                                      expected_version=4),
        )

    raced, dev, eli = run(main)

    assert raced.version == 4
    # Run again on the campaign as stored: Dev is seated after Cass; Eli's expected version
    # (4) is no longer the campaign's (5), so Eli gets the 409 a client can act on.
    assert dev.version == 5
    assert isinstance(eli, CampaignConflict)
    names = [p.name for p in server.state(campaign_id).players]
    assert names == ["Ada", "Brook", "Cass", "Dev"]
    assert names == [p.name for p in other.state(campaign_id).players]


def test_stop_finishes_what_is_queued(store_app: Campaigns) -> None:
    committer = Committer(store_app)
    campaign_id = new_table(store_app)
    hold = threading.Event()

    async def main() -> list[Any]:
        held = asyncio.ensure_future(committer.call(hold.wait, 10))
        await asyncio.sleep(0.05)
        tasks = [asyncio.ensure_future(committer.execute(campaign_id, SeatPlayer(name=name)))
                 for name in NAMES]
        # Every command is queued (each first loads its campaign in a worker thread: on a busy
        # machine that can take longer than a fixed pause).
        for _ in range(500):
            if committer._queue.qsize() >= len(NAMES):
                break
            await asyncio.sleep(0.01)
        stopping = asyncio.get_running_loop().run_in_executor(None, committer.stop)
        hold.set()
        await stopping
        await held
        return list(await asyncio.gather(*tasks))

    outcomes = run(main)

    assert [o.version for o in outcomes] == [2, 3, 4, 5]
    assert store_app.get(campaign_id).version == 5


def test_any_error_of_a_call_goes_back_to_its_caller(committer: Committer) -> None:
    def fails() -> None:
        raise DomainError("no")

    async def main() -> None:
        await committer.call(fails)

    with pytest.raises(DomainError, match="no"):
        run(main)


def test_a_campaign_slow_to_load_holds_up_no_other_campaigns_write(
    make_app: MakeApp, sqlite_env: dict[str, str]
) -> None:
    """Issue 13: loading a campaign the writer does not hold happens off the writer thread,
    so a long campaign (its first load after a restart) never stalls another's commands."""
    setup = make_app(sqlite_env)
    slow, quick = new_table(setup), new_table(setup)
    app = make_app(sqlite_env)
    release = threading.Event()
    loading = threading.Event()
    get = app.get

    def slow_get(campaign_id: UUID, version: int | None = None) -> Any:
        if campaign_id == slow and not loading.is_set():
            loading.set()
            release.wait(10)  # a load that takes as long as the test wants
        return get(campaign_id, version)

    app.get = slow_get  # type: ignore[method-assign]
    writer = Committer(app)

    async def main() -> tuple[Outcome, bool, Outcome]:
        held = asyncio.ensure_future(writer.execute(slow, SeatPlayer(name="Ada")))
        while not loading.is_set():
            await asyncio.sleep(0.01)
        other = await asyncio.wait_for(writer.execute(quick, SeatPlayer(name="Brook")), 5)
        still_loading = not held.done()
        release.set()
        return other, still_loading, await held

    try:
        other, still_loading, done = run(main)
    finally:
        release.set()
        writer.stop()
    assert other.version == 2 and still_loading
    assert done.version == 2


# -- reads of now (the board and ledgers the server answers from memory) ---------------------


def test_a_campaign_the_writer_just_wrote_is_read_from_its_heads_without_a_trip(
    store_app: Campaigns, committer: Committer
) -> None:
    campaign_id = new_table(store_app)

    async def main() -> tuple[Outcome, Any, Any]:
        seated = await committer.execute(campaign_id, SeatPlayer(name="Ada"))
        return seated, committer.current(campaign_id, seated.position), committer.current(
            campaign_id, seated.position + 1)

    seated, read, beyond = run(main)

    assert read is not None and read.version == seated.version == 2
    assert [p.name for p in read.state.players] == ["Ada"]
    # A position the writer does not know the store to have is not answered from memory.
    assert beyond is None


def test_a_read_of_a_position_another_process_wrote_sees_that_write(
    two_writers: TwoWriters,
) -> None:
    committer, cli, campaign_id = two_writers.committer, two_writers.other, two_writers.campaign_id

    async def main() -> tuple[Any, Any, Any]:
        await committer.execute(campaign_id, SeatPlayer(name="Brook"))
        behind = cli.execute(campaign_id, SeatPlayer(name="Cass"))  # behind the writer's back
        from_memory = committer.current(campaign_id, behind.position)
        read = await committer.latest(campaign_id, behind.position)
        beyond = await committer.latest(campaign_id, behind.position + 1000)
        return from_memory, read, beyond

    from_memory, read, beyond = run(main)

    assert from_memory is None  # the writer does not know that position yet
    assert read is not None and [p.name for p in read.state.players] == ["Ada", "Brook", "Cass"]
    assert beyond is None  # not in the store: the caller says so


def test_a_read_without_a_position_sees_what_another_process_wrote_before_it(
    two_writers: TwoWriters,
) -> None:
    committer, cli, campaign_id = two_writers.committer, two_writers.other, two_writers.campaign_id

    async def main() -> Any:
        await committer.execute(campaign_id, SeatPlayer(name="Brook"))
        cli.execute(campaign_id, SeatPlayer(name="Cass"))
        await asyncio.sleep(0.05)  # longer than the writer trusts its heads unasked
        return await committer.latest(campaign_id)

    read = run(main)

    assert [p.name for p in read.state.players] == ["Ada", "Brook", "Cass"]


def test_a_read_of_now_long_after_the_last_write_is_answered_from_memory_if_nothing_is_newer(
    store_app: Campaigns, committer: Committer
) -> None:
    """Past the time the writer trusts its heads unasked, a reader on an SQLite file or in
    memory asks the store's last position itself instead of going through the writer thread;
    on PostgreSQL (a round trip the event loop would wait for) the store watch, which hears
    every commit, says that nothing newer was stored."""
    campaign_id = new_table(store_app)

    async def main() -> Any:
        await committer.execute(campaign_id, SeatPlayer(name="Ada"))
        assert committer.watch is None or committer._watching(), "listening before the write"
        await asyncio.sleep(0.05)  # longer than the writer trusts its heads unasked
        return committer.current(campaign_id)

    read = run(main)

    assert read is not None and [p.name for p in read.state.players] == ["Ada"]


def test_an_idle_writer_sleeps_on_a_local_store_and_looks_at_a_servers_while_asked(
    store_app: Campaigns, committer: Committer
) -> None:
    """On an SQLite file or in memory a reader looks at the store itself (above), so the idle
    writer does not wake to look too (it only took the interpreter's lock from the readers);
    on PostgreSQL the store watch hears every commit, so it does not either; with the watch
    not listening it looks every few milliseconds while queries come, so that they are
    answered from memory."""
    campaign_id = new_table(store_app)

    async def main() -> tuple[float | None, int]:
        await committer.execute(campaign_id, SeatPlayer(name="Ada"))
        await asyncio.sleep(0.05)  # longer than the writer trusts its heads unasked
        await committer.latest(campaign_id)  # a query (on PostgreSQL, through the writer)
        looks = committer._synced_at
        await asyncio.sleep(0.1)
        return committer._idle_timeout(), int(committer._synced_at != looks)

    timeout, looked = run(main)
    assert (timeout, looked) == (None, 0)

    if committer.watch is not None:
        committer.watch.stop()  # a watch that lost its connection is not trusted

        async def unwatched() -> tuple[float | None, int]:
            await committer.latest(campaign_id)
            looks = committer._synced_at
            await asyncio.sleep(0.1)
            return committer._idle_timeout(), int(committer._synced_at != looks)

        timeout, looked = run(unwatched)
        assert timeout is not None and looked == 1


def test_a_read_of_now_after_another_process_wrote_is_not_answered_from_memory(
    two_writers: TwoWriters,
) -> None:
    committer, cli, campaign_id = two_writers.committer, two_writers.other, two_writers.campaign_id

    async def main() -> tuple[Any, Any]:
        await committer.execute(campaign_id, SeatPlayer(name="Brook"))
        cli.execute(campaign_id, SeatPlayer(name="Cass"))
        await asyncio.sleep(0.05)
        return committer.current(campaign_id), await committer.latest(campaign_id)

    from_memory, read = run(main)

    assert from_memory is None  # the store has a position the writer does not know
    assert [p.name for p in read.state.players] == ["Ada", "Brook", "Cass"]


def test_two_workers_writing_the_same_tables_at_once_lose_and_repeat_nothing(
    make_app: MakeApp, shared_store_env: dict[str, str]
) -> None:
    """Two server processes' writers (here: two applications on one store), each seating
    players at the same tables at the same moment: every accepted command is stored once, at
    the next version of its campaign; a stale expected version is a 409 (CampaignConflict)."""
    first, second = make_app(shared_store_env), make_app(shared_store_env)
    writers = (Committer(first), Committer(second))
    tables = [new_table(first) for _ in range(4)]
    seats = 10

    async def main() -> tuple[list[Any], list[Any]]:
        plain = [asyncio.ensure_future(writers[n % 2].execute(
                     table, SeatPlayer(name=f"P{n}-{table.hex[:4]}")))
                 for n in range(seats) for table in tables]
        results = list(await asyncio.gather(*plain, return_exceptions=True))
        # Every table is at version 1 + seats now: version 1 is long gone.
        stale = [await asyncio.gather(w.execute(t, SeatPlayer(name="Late"), expected_version=1),
                                      return_exceptions=True) for w in writers for t in tables]
        return results, [r for group in stale for r in group]

    try:
        results, stale = run(main)
    finally:
        for writer in writers:
            writer.stop()

    assert all(isinstance(r, Outcome) for r in results), results
    assert all(isinstance(r, CampaignConflict) for r in stale)
    for table in tables:
        mine = sorted(r.version for r in results if r.campaign_id == table)
        assert mine == list(range(2, seats + 2))  # each version once: nothing lost or doubled
        history = first.history(table, limit=1000)
        assert [r.originator_version for r in history] == list(range(1, seats + 2))
        names = [p.name for p in second.state(table).players]
        assert sorted(names) == sorted(f"P{n}-{table.hex[:4]}" for n in range(seats))
    positions = [n.id for n in first.recorder.select_notifications(0, 1000)]
    assert positions == sorted(set(positions))


@pytest.mark.postgres
def test_on_postgresql_a_write_by_another_worker_is_heard_and_read_anew_without_a_look(
    make_app: MakeApp, postgres_env: dict[str, str]
) -> None:
    """The store watch (application.store_watch) hears another worker's commit: the writer's
    head of that campaign is stale at once, and the read of now loads it anew, with no look
    at the store (before, every read after a few milliseconds went through the writer thread
    for one)."""
    server, cli = make_app(postgres_env), make_app(postgres_env)
    committer = Committer(server)
    campaign_id = new_table(server, players=1)
    watch = committer.watch
    assert watch is not None

    async def main() -> tuple[Any, Any, Any, float, float]:
        await committer.execute(campaign_id, SeatPlayer(name="Brook"))
        await committer.latest(campaign_id)  # the writer has looked once since the watch began
        for _ in range(200):
            if committer._watching():
                break
            await asyncio.sleep(0.01)
        kept = committer.current(campaign_id)
        looked = committer._synced_at
        behind = cli.execute(campaign_id, SeatPlayer(name="Cass"))  # another worker
        for _ in range(200):
            if watch.newer(campaign_id, behind.version - 1):
                break
            await asyncio.sleep(0.01)
        stale = committer.current(campaign_id)
        return kept, stale, await committer.latest(campaign_id), looked, committer._synced_at

    try:
        kept, stale, read, looked, looked_after = run(main)
    finally:
        committer.stop()

    assert kept is not None and kept.version == 3  # its own write: from memory
    assert stale is None  # heard: no longer answered from memory
    assert [p.name for p in read.state.players] == ["Ada", "Brook", "Cass"]
    assert looked_after == looked  # no look at the store was needed
