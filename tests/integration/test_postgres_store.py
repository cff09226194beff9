"""The campaigns' PostgreSQL recorder (application.postgres_store): inserts take no table lock,
so readers of the log must not pass a position that a slower transaction fills in later."""

from __future__ import annotations

import threading
import time
from typing import Any
from uuid import uuid4

import psycopg
import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent
from psycopg.conninfo import make_conninfo
from stores import MakeApp, conninfo
from tcp_proxy import TcpProxy

import application.postgres_store
from application.campaigns import Campaigns
from application.postgres_store import CHANNEL_LENGTH, CampaignsPostgresRecorder, channel_of
from application.store_watch import StoreWatch, payload
from domain.capes.commands import CreateCampaign, SeatPlayer
from domain.capes.events import PlayerSeated

pytestmark = pytest.mark.postgres

#: Seconds a test waits for what comes within a few: a bound that proves only "not for ever".
WAIT = 30


def test_the_campaigns_store_uses_the_recorder_without_the_table_lock(
    postgres_app: Campaigns,
) -> None:
    assert isinstance(postgres_app.recorder, CampaignsPostgresRecorder)


def test_a_reader_waits_for_an_insert_under_way_rather_than_pass_its_position(
    postgres_app: Campaigns, postgres_env: dict[str, str]
) -> None:
    app = postgres_app
    app.create(CreateCampaign(name="Before"))
    recorder: Any = app.recorder
    start = recorder.max_notification_id()
    table = f'"{recorder.datastore.schema}"."{recorder.events_table_name}"'
    dsn = make_conninfo(**conninfo(postgres_env))
    inserted = threading.Event()
    release = threading.Event()

    def slow_writer() -> None:
        # Draws the next position, then holds its transaction open.
        with psycopg.connect(dsn) as conn, conn.transaction():
            conn.execute(f"INSERT INTO {table} (originator_id, originator_version, topic, state) "
                         "VALUES (gen_random_uuid(), 1, 'slow', '\\x7b7d')")
            inserted.set()
            release.wait(10)

    writer = threading.Thread(target=slow_writer)
    writer.start()
    try:
        assert inserted.wait(10)
        later = app.create(CreateCampaign(name="After"))  # commits past the slow one at once
        read: list[Any] = []
        reader = threading.Thread(
            target=lambda: read.extend(recorder.select_notifications(start, 10,
                                                                     inclusive_of_start=False)))
        reader.start()
        time.sleep(0.3)
        assert reader.is_alive(), "the reader must wait for the insert under way"
        release.set()
        reader.join(10)
    finally:
        release.set()
        writer.join(10)

    ids = [n.id for n in read]
    assert later.position in ids and len(ids) == 2 and ids == sorted(ids)
    assert read[0].topic == "slow"  # the slow one's position came first


def test_a_reader_that_stalls_once_it_has_sent_its_read_holds_no_writer_back(
    postgres_app: Campaigns, postgres_env: dict[str, str]
) -> None:
    """The SHARE lock of a read of the last position is let go when PostgreSQL has run it, not
    when the reader next gets a core: the read models' process reads at SCHED_IDLE."""
    app = postgres_app
    recorder: Any = app.recorder
    with recorder.datastore.get_connection() as conn:
        read = recorder._last_position.as_bytes(conn)
    written = threading.Event()
    writer = threading.Thread(target=lambda: (app.create(CreateCampaign(name="Goes on")),
                                              written.set()))
    reader = psycopg.pq.PGconn.connect(make_conninfo(**conninfo(postgres_env)).encode())
    try:
        # The reader sends its read, then stalls: it never takes its answer.
        reader.send_query(read)
        time.sleep(0.2)  # PostgreSQL has run it
        writer.start()
        assert written.wait(5), "a write waited for a stalled reader"
    finally:
        reader.finish()  # ends its session, and with it any lock it held
        writer.join(10)


def test_what_changed_since_a_position_is_each_campaigns_last_version_in_one_look(
    postgres_app: Campaigns,
) -> None:
    """The writer's look at the store before a group (Committer._sync): the last position,
    and each campaign written to after the one it knew, without the events themselves."""
    app = postgres_app
    recorder: Any = app.recorder
    app.create(CreateCampaign(name="Known"))
    known = recorder.max_notification_id()
    first = app.create(CreateCampaign(name="One")).campaign_id
    app.execute(first, SeatPlayer(name="Ana"))
    second = app.create(CreateCampaign(name="Two")).campaign_id
    last = recorder.max_notification_id()

    top, changed = recorder.changes_since(known, 1000)
    assert top == last
    assert dict(changed) == {first: app.get(first).version, second: app.get(second).version}
    assert recorder.changes_since(last, 1000) == (last, [])
    assert recorder.changes_since(known, 1) == (last, [])  # too far behind: forget everything


def test_read_models_on_postgres_follow_another_process_at_once_not_at_the_next_poll(
    make_app: Any, postgres_env: dict[str, str]
) -> None:
    from projections.service import ReadModels

    server, other = make_app(postgres_env), make_app(postgres_env)
    read_models = ReadModels(server, ["directory"], poll=60.0, linger=0.0)
    read_models.start()
    try:
        time.sleep(0.3)  # listening
        written = other.create(CreateCampaign(name="Elsewhere")).position
        deadline = time.monotonic() + 5.0
        while read_models.runner.position() < written and time.monotonic() < deadline:
            time.sleep(0.02)
        # A poll would have come after 60 s: the store's NOTIFY woke the runner.
        assert read_models.runner.position() >= written
    finally:
        read_models.close()


def test_a_commits_notification_names_the_campaigns_it_wrote_and_their_last_versions(
    postgres_app: Campaigns, postgres_env: dict[str, str]
) -> None:
    """What the other workers' store watches hear (application.store_watch): no look at the
    store needed to know whose heads are stale."""
    app = postgres_app
    recorder: Any = app.recorder
    dsn = make_conninfo(**conninfo(postgres_env))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'LISTEN "{recorder.channel_name}"')
        opened = app.create(CreateCampaign(name="Heard"))
        seated = app.execute(opened.campaign_id, SeatPlayer(name="Ada"))
        heard = [n.payload for n in conn.notifies(timeout=2, stop_after=2)]

    assert heard == [f"{opened.campaign_id}:{opened.version}",
                     f"{opened.campaign_id}:{seated.version}"]


def test_a_commit_stores_its_events_at_consecutive_positions_in_the_order_given(
    postgres_app: Campaigns,
) -> None:
    """One statement (the NOTIFY and the INSERT together): each event's position is the one
    returned for it, and the log reads them back in that order."""
    recorder: Any = postgres_app.recorder
    first, second = uuid4(), uuid4()
    events = [StoredEvent(originator_id=campaign, originator_version=version,
                          topic=f"topic-{n}", state=b'{"n": %d}' % n)
              for n, (campaign, version) in enumerate(
                  [(first, 1), (second, 1), (first, 2), (second, 2), (first, 3)])]
    start = recorder.max_notification_id() or 0

    ids = recorder.insert_events(events)

    assert ids == list(range(ids[0], ids[0] + len(events))) and ids[0] > start
    read = recorder.select_notifications(start, 10, inclusive_of_start=False)
    assert [(n.id, n.originator_id, n.originator_version, n.topic, n.state) for n in read] == [
        (i, e.originator_id, e.originator_version, e.topic, e.state)
        for i, e in zip(ids, events, strict=True)]


def test_a_commit_that_takes_a_stored_version_stores_nothing_and_notifies_nothing(
    postgres_app: Campaigns, postgres_env: dict[str, str]
) -> None:
    """All or none: a group with one taken version is refused whole (the writer then decides
    it again), and the other workers hear nothing of it."""
    recorder: Any = postgres_app.recorder
    taken, fresh = uuid4(), uuid4()
    recorder.insert_events([StoredEvent(originator_id=taken, originator_version=1,
                                        topic="first", state=b"{}")])
    start = recorder.max_notification_id()
    dsn = make_conninfo(**conninfo(postgres_env))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'LISTEN "{recorder.channel_name}"')
        with pytest.raises(IntegrityError):
            recorder.insert_events([
                StoredEvent(originator_id=fresh, originator_version=1, topic="new", state=b"{}"),
                StoredEvent(originator_id=taken, originator_version=1, topic="again",
                            state=b"{}")])
        heard = [n.payload for n in conn.notifies(timeout=0.5, stop_after=1)]

    assert heard == []
    assert recorder.select_events(fresh) == []
    assert [e.topic for e in recorder.select_events(taken)] == ["first"]
    assert recorder.max_notification_id() == start


def test_a_command_whose_commit_was_stored_but_whose_answer_was_lost_is_stored_once(
    make_app: MakeApp, postgres_env: dict[str, str]
) -> None:
    """The connection drops after PostgreSQL stored a commit, before its answer arrives: the
    insert tried again finds its versions taken by its own events, and answers with them. It
    used to take that for another writer's commit and decide the command again: one command,
    stored twice (seen with PostgreSQL unreachable for a moment under load)."""
    with TcpProxy(postgres_env["POSTGRES_HOST"], int(postgres_env["POSTGRES_PORT"])) as proxy:
        app = make_app({**postgres_env, "POSTGRES_HOST": "127.0.0.1",
                        "POSTGRES_PORT": str(proxy.port)})
        campaign = app.create(CreateCampaign(name="The lost answer")).campaign_id
        app.execute(campaign, SeatPlayer(name="Ana"))
        proxy.lose_next_answer(b"INSERT 0 ")

        outcome = app.execute(campaign, SeatPlayer(name="Ben"))

        assert proxy.lost.is_set()
    stored = make_app(postgres_env).history(campaign)
    assert [r.event.name for r in stored if isinstance(r.event, PlayerSeated)] == ["Ana", "Ben"]
    assert outcome.version == stored[-1].originator_version


def test_a_command_whose_answer_the_network_held_is_stored_once_when_the_network_comes_back(
    make_app: MakeApp, postgres_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The network falls silent just as PostgreSQL answers a commit: no error, no reset, no
    answer. The commit gives up on that connection once the answer is overdue
    (STATEMENT_TIMEOUT, then POSTGRES_CONNECT_TIMEOUT) and tries again on a new one; the
    network comes back meanwhile, and the commit finds its versions taken by its own events:
    answered, stored once. It used to wait for that answer for ever."""
    monkeypatch.setattr(application.postgres_store, "STATEMENT_TIMEOUT", 1)  # the test's pace
    with TcpProxy(postgres_env["POSTGRES_HOST"], int(postgres_env["POSTGRES_PORT"])) as proxy:
        app = make_app({**postgres_env, "POSTGRES_HOST": "127.0.0.1",
                        "POSTGRES_PORT": str(proxy.port), "POSTGRES_CONNECT_TIMEOUT": "2"})
        campaign = app.create(CreateCampaign(name="The held answer")).campaign_id
        app.execute(campaign, SeatPlayer(name="Ana"))
        proxy.hang_at_next_answer(b"INSERT 0 ")
        answered: list[Any] = []
        command = threading.Thread(
            target=lambda: answered.append(app.execute(campaign, SeatPlayer(name="Ben"))))
        command.start()

        assert proxy.held.wait(WAIT), "the commit's answer never came by"
        assert proxy.knocked.wait(WAIT), "the commit never gave up on its silent connection"
        proxy.resume()
        command.join(WAIT)

        assert not command.is_alive(), "the commit still waits"
    stored = make_app(postgres_env).history(campaign)
    assert [r.event.name for r in stored if isinstance(r.event, PlayerSeated)] == ["Ana", "Ben"]
    assert answered and answered[0].version == stored[-1].originator_version


def test_every_postgresql_store_waits_for_postgresql_a_bounded_time(
    make_app: MakeApp, postgres_env: dict[str, str]
) -> None:
    """The campaigns, their keys, the dice seeds and the read models: each pool connects
    with libpq's bounds on a silent network, and waits for an answer a bounded time."""
    from application.credentials import Keyring
    from application.postgres_store import AnsweringConnection, StorePool
    from projections.views import open_factory

    app = make_app(postgres_env)
    keyring = Keyring(dict(app.env))
    factory = open_factory(app.env)
    try:
        pools = [app.recorder.datastore.pool, keyring.recorder.datastore.pool,  # type: ignore[attr-defined]
                 app.seeds.recorder.datastore.pool, factory.datastore.pool]  # type: ignore[attr-defined]
        for pool in pools:
            assert isinstance(pool, StorePool)
            assert pool.connection_class is AnsweringConnection
            assert pool.timeout == 3  # POSTGRES_CONNECT_TIMEOUT, this project's default
            assert pool.kwargs["connect_timeout"] == 3
            assert pool.kwargs["keepalives"] == 1 and pool.kwargs["tcp_user_timeout"] > 0
        with app.recorder.datastore.get_connection() as conn:  # type: ignore[attr-defined]
            assert conn.answer_within == application.postgres_store.STATEMENT_TIMEOUT + 3
            assert conn.execute("SHOW statement_timeout").fetchone()["statement_timeout"] == (
                f"{application.postgres_store.STATEMENT_TIMEOUT}s")
    finally:
        keyring.close()
        factory.close()


def test_a_commit_under_an_operators_lock_timeout_stores_its_events_as_well(
    postgres_app: Campaigns, monkeypatch: pytest.MonkeyPatch
) -> None:
    """POSTGRES_LOCK_TIMEOUT (the library's setting) still bounds the insert's waits: the
    statement then runs in a transaction that sets it first."""
    recorder: Any = postgres_app.recorder
    monkeypatch.setattr(recorder.datastore, "lock_timeout", 5)
    campaign = uuid4()

    ids = recorder.insert_events([
        StoredEvent(originator_id=campaign, originator_version=v, topic="t", state=b"{}")
        for v in (1, 2)])

    assert len(ids) == 2 and ids[1] == ids[0] + 1
    assert [e.originator_version for e in recorder.select_events(campaign)] == [1, 2]


def test_a_notification_too_long_for_postgresql_says_only_that_something_was_written() -> None:
    many = {uuid4(): 1 for _ in range(300)}
    assert payload(many) == "*"
    one = uuid4()
    assert payload({one: 7}) == f"{one}:7"


def test_a_watch_that_hears_something_unnamed_or_too_much_is_no_longer_trusted() -> None:
    watch = StoreWatch(recorder=None, most=2)
    first, second, third = uuid4(), uuid4(), uuid4()
    watch.heard(f"{first}:3,{second}:5")
    watch.heard(f"{first}:2")  # a slower commit's older version changes nothing
    assert (watch.newer(first, 2), watch.newer(first, 3), watch.newer(second, 4)) == (
        True, False, True)
    epoch = watch.epoch
    watch.heard("*")
    assert watch.epoch == epoch + 1  # the writer looks at the store before trusting it again
    watch.heard(f"{third}:1")  # a third campaign: more than it keeps, so it forgets them all
    assert watch.latest == {} and watch.epoch == epoch + 2


def test_two_stores_in_two_schemas_of_one_database_do_not_hear_each_others_commits(
    make_app: MakeApp, postgres_env: dict[str, str], module_postgres_env: dict[str, str]
) -> None:
    """The library named the channel after the table alone: a host's writers and read models
    woke for every commit of another store in the same database."""
    ours, theirs = make_app(postgres_env), make_app(module_postgres_env)
    ours_channel = ours.recorder.channel_name  # type: ignore[union-attr]
    assert ours_channel != theirs.recorder.channel_name  # type: ignore[union-attr]
    with psycopg.connect(make_conninfo(**conninfo(postgres_env)), autocommit=True) as conn:
        conn.execute(f'LISTEN "{ours_channel}"')
        theirs.create(CreateCampaign(name="Theirs"))
        assert [n.payload for n in conn.notifies(timeout=0.5, stop_after=1)] == []
        ours.create(CreateCampaign(name="Ours"))
        assert len(list(conn.notifies(timeout=5, stop_after=1))) == 1


def test_a_channel_name_too_long_for_postgresql_is_cut_and_stays_apart_from_its_neighbours(
) -> None:
    long = "s" * 60
    first, second = channel_of(long + "1", "events"), channel_of(long + "2", "events")
    assert len(first.encode()) == len(second.encode()) == CHANNEL_LENGTH
    assert first != second
    assert channel_of("public", "stored_events") == "public_stored_events"
