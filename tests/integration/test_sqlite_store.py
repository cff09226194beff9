"""The campaigns' SQLite recorder stores a commit's events with one statement (issue 15): each
call into SQLite lets go of the interpreter's lock, and the writer waited to take it back from
a busy event loop once per call. What must not change: all of a commit's events or none, and
their positions, as the library would give them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import pytest
from eventsourcing.persistence import IntegrityError, InterfaceError, StoredEvent
from eventsourcing.sqlite import SQLiteConnection, SQLiteCursor

from application import sqlite_store
from application.campaigns import open_campaigns
from application.sqlite_store import CampaignsSQLiteRecorder
from domain.capes import commands as c


@pytest.fixture
def recorder(tmp_path: Path) -> Iterator[CampaignsSQLiteRecorder]:
    """The recorder of a new file (its application kept open: closing it closes the pool)."""
    app = open_campaigns({"CAPES_DB": str(tmp_path / "store.sqlite")})
    assert isinstance(app.recorder, CampaignsSQLiteRecorder)
    yield app.recorder
    app.close()


def events(originator: UUID, versions: range) -> list[StoredEvent]:
    return [StoredEvent(originator_id=originator, originator_version=v, topic="test:Event",
                        state=f"state {v}".encode()) for v in versions]


def stored(recorder: CampaignsSQLiteRecorder) -> list[tuple[int, UUID | str, int]]:
    return [(n.id, n.originator_id, n.originator_version)
            for n in recorder.select_notifications(1, 1000)]


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement and commit the recorders send to SQLite from now on."""
    sent: list[str] = []
    for name in ("execute", "executemany"):
        original = getattr(SQLiteCursor, name)

        def record(self: SQLiteCursor, statement: str, *args: Any,
                   _original: Any = original) -> Any:
            sent.append(statement.split(" ", 1)[0].upper())
            return _original(self, statement, *args)

        monkeypatch.setattr(SQLiteCursor, name, record)
    commit = SQLiteConnection.commit

    def record_commit(self: SQLiteConnection) -> None:
        sent.append("COMMIT")
        commit(self)

    monkeypatch.setattr(SQLiteConnection, "commit", record_commit)
    return sent


def test_a_group_of_commands_is_stored_with_one_insert_and_no_transaction_around_it(
        tmp_path: Path, statements: list[str]) -> None:
    app = open_campaigns({"CAPES_DB": str(tmp_path / "store.sqlite")})
    cid = app.create(c.CreateCampaign(name="One statement")).campaign_id
    assert isinstance(app.recorder, CampaignsSQLiteRecorder)
    # As the writer does (application.committer): decided on the campaign in memory, one
    # after another, then committed together.
    first = app.prepare(app.get(cid), c.SeatPlayer(name="Ana"))
    second = app.prepare(first.campaign, c.SeatPlayer(name="Ben"))
    statements.clear()
    outcomes = app.commit([first, second])
    assert statements == ["INSERT"]
    assert [o.position for o in outcomes] == [2, 3] == [
        n.id for n in app.recorder.select_notifications(2, 10)]


def test_the_positions_of_a_commit_are_its_events_positions_in_the_store(
        recorder: CampaignsSQLiteRecorder) -> None:
    first, second = uuid4(), uuid4()
    assert recorder.insert_events(events(first, range(1, 4))) == [1, 2, 3]
    assert recorder.insert_events(events(second, range(1, 3))) == [4, 5]
    assert stored(recorder) == [(1, first, 1), (2, first, 2), (3, first, 3), (4, second, 1),
                                (5, second, 2)]
    assert recorder.max_notification_id() == 5


def test_a_commit_with_a_version_already_taken_stores_none_of_its_events(
        recorder: CampaignsSQLiteRecorder) -> None:
    taken, other = uuid4(), uuid4()
    recorder.insert_events(events(taken, range(1, 3)))
    with pytest.raises(IntegrityError):
        recorder.insert_events([*events(other, range(1, 3)), *events(taken, range(2, 4))])
    assert stored(recorder) == [(1, taken, 1), (2, taken, 2)]
    assert recorder.insert_events(events(other, range(1, 2))) == [3]


def test_more_events_than_one_insert_takes_are_stored_in_one_transaction_all_or_none(
        recorder: CampaignsSQLiteRecorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_store, "ROWS_PER_INSERT", 3)
    long, taken = uuid4(), uuid4()
    assert recorder.insert_events(events(long, range(1, 8))) == list(range(1, 8))
    recorder.insert_events(events(taken, range(1, 2)))
    with pytest.raises(IntegrityError):
        # The conflict is in the last chunk: the chunks before it go too.
        recorder.insert_events([*events(long, range(8, 14)), *events(taken, range(1, 2))])
    assert [n[2] for n in stored(recorder)] == [*range(1, 8), 1]


def test_the_last_position_of_an_empty_store_is_0(recorder: CampaignsSQLiteRecorder) -> None:
    assert recorder.max_notification_id() == 0


def test_the_rows_of_one_campaign_read_back_carry_one_and_the_same_id_object(
        recorder: CampaignsSQLiteRecorder) -> None:
    # Why it matters (issue 15): the read models look each event's campaign up in several
    # dicts, and a key that is the very object looked up skips UUID.__eq__ (Python code).
    first, second = uuid4(), uuid4()
    recorder.insert_events([*events(first, range(1, 4)), *events(second, range(1, 3))])
    ids = [n[1] for n in stored(recorder)]
    assert ids == [first] * 3 + [second] * 2
    assert ids[0] is ids[1] is ids[2] and ids[3] is ids[4] and ids[0] is not ids[3]
    assert [e.originator_id for e in recorder.select_events(first)] == [first] * 3
    assert recorder.select_events(first)[0].originator_id is ids[0]


def test_the_ids_kept_parsed_are_bounded_and_start_again_when_full(
        recorder: CampaignsSQLiteRecorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_store, "ORIGINATORS_KEPT", 2)
    campaigns = [uuid4() for _ in range(5)]
    recorder.insert_events([e for cid in campaigns for e in events(cid, range(1, 3))])
    assert [n[1] for n in stored(recorder)] == [cid for cid in campaigns for _ in (1, 2)]
    assert len(recorder._originators) <= 2


# -- warm connections (application.sqlite_store.warm) -------------------------------------------


def prepared(connection: SQLiteConnection) -> set[str]:
    """The statements a connection holds prepared (SQLite's ``sqlite_stmt`` table), but the
    one asking."""
    cursor = connection.cursor()
    cursor.execute("SELECT sql FROM sqlite_stmt")
    return {row[0] for row in cursor.fetchall()} - {"SELECT sql FROM sqlite_stmt"}


def stmt_table() -> bool:
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute("SELECT sql FROM sqlite_stmt")
        return True
    except sqlite3.Error:
        return False
    finally:
        probe.close()


@pytest.mark.skipif(not stmt_table(), reason="this SQLite has no sqlite_stmt table "
                    "(SQLITE_ENABLE_STMTVTAB): a connection's prepared statements cannot be "
                    "listed")
def test_a_connection_of_the_store_keeps_its_statements_prepared_not_only_its_last(
        recorder: CampaignsSQLiteRecorder) -> None:
    # The library's connections keep one (cached_statements=True): a commit's INSERT after a
    # read of the last position was parsed again every time.
    recorder.insert_events(events(uuid4(), range(1, 3)))
    recorder.max_notification_id()
    with recorder.datastore.get_connection(commit=False) as connection:
        kept = prepared(connection)
    assert recorder.select_max_notification_id_statement in kept
    assert any(sql.startswith(f"INSERT INTO {recorder.events_table_name}") for sql in kept)


def test_the_pool_hands_out_the_connection_returned_last_first(
        recorder: CampaignsSQLiteRecorder) -> None:
    # The one idle longest has not seen the commits since and reads its pages again.
    pool = recorder.datastore.pool
    first = pool.get_connection(is_writer=False)
    second = pool.get_connection(is_writer=False)
    pool.put_connection(first)
    pool.put_connection(second)
    again = pool.get_connection(is_writer=True)
    assert again is second
    pool.put_connection(again)
    assert pool.get_connection(is_writer=False) is second


def test_a_file_that_can_no_longer_be_opened_is_reported_as_the_library_reports_it(
        tmp_path: Path) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    app = open_campaigns({"CAPES_DB": str(folder / "store.sqlite")})
    try:
        pool = app.recorder.datastore.pool
        held = pool.get_connection(is_writer=False)  # the pool's one connection, taken
        folder.rename(tmp_path / "moved")
        with pytest.raises(InterfaceError):
            pool.get_connection(is_writer=False)  # a new one, to a file no longer there
        pool.put_connection(held)
    finally:
        app.close()
