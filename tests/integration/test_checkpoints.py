"""An SQLite file's write-ahead log is checkpointed by a thread of its own, never by a command's
commit (application.sqlite_store, issue 15): a commit that checkpointed waited for the disk
with every command queued behind it."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from stores import sqlite_file

from application import sqlite_store
from application.campaigns import Campaigns, open_campaigns
from application.credentials import Keyring
from application.sqlite_store import Checkpointer
from domain.capes import commands as c
from projections.service import open_read_models


def a_campaign_with_moves(app: Campaigns) -> None:
    cid = app.create(c.CreateCampaign(name="Checkpoints")).campaign_id
    for name in ("Ana", "Ben", "Cleo"):
        app.execute(cid, c.SeatPlayer(name=name))
    for n in range(20):
        app.execute(cid, c.Narrate(seat=1, text=f"Line {n}"))


def pragma(recorder: Any, name: str) -> int:
    """A setting of the recorder's connections: ``wal_autocheckpoint`` (the pages at which a
    commit checkpoints; 0: never), ``synchronous`` (2: a commit waits for the disk)."""
    with recorder.datastore.get_connection(commit=False) as connection:
        cursor = connection.cursor()
        cursor.execute(f"PRAGMA {name}")
        return int(cursor.fetchone()[0])


def test_the_writers_connections_never_checkpoint_when_they_commit(tmp_path: Path) -> None:
    app = open_campaigns({"CAPES_DB": str(tmp_path / "c.sqlite")})
    try:
        a_campaign_with_moves(app)
        keys = Keyring(dict(app.env))
        try:
            assert [pragma(r, "wal_autocheckpoint")
                    for r in (app.recorder, app.seeds.recorder, keys.recorder)] == [0, 0, 0]
        finally:
            keys.close()
    finally:
        app.close()


def test_the_checkpointer_copies_the_log_into_the_database_and_stops_with_the_store(
    tmp_path: Path,
) -> None:
    db = tmp_path / "c.sqlite"
    app = open_campaigns({"CAPES_DB": str(db)})
    checkpointer = app.checkpointer
    assert checkpointer is not None
    try:
        a_campaign_with_moves(app)
        deadline = time.monotonic() + 5
        while checkpointer.checkpoints == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert checkpointer.checkpoints >= 1
        with sqlite_file(db) as connection:
            busy, pages, done = checkpointer.checkpoint(connection)
        assert busy == 0 and pages == done  # nothing left that a checkpoint could not copy
    finally:
        app.close()
    assert not checkpointer._thread.is_alive()


def test_the_in_memory_store_has_no_log_to_checkpoint() -> None:
    app = open_campaigns({"CAPES_DB": ":memory:"})
    try:
        assert app.checkpointer is None
    finally:
        app.close()


class Owner:
    """What a checkpointer works for (a Campaigns application): held weakly."""


def test_a_checkpointer_whose_store_is_gone_stops_by_itself(tmp_path: Path) -> None:
    owner = Owner()
    checkpointer = Checkpointer(str(tmp_path / "gone.sqlite"), owner, every=0.01).start()
    del owner
    checkpointer._thread.join(2.0)
    assert not checkpointer._thread.is_alive()


def test_a_log_grown_past_its_bound_starts_again_from_its_beginning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sqlite_store, "MAX_LOG_PAGES", 1)
    db = tmp_path / "c.sqlite"
    app = open_campaigns({"CAPES_DB": str(db)})
    checkpointer = app.checkpointer
    assert checkpointer is not None
    checkpointer.stop()  # this test checkpoints by itself
    try:
        a_campaign_with_moves(app)
        with sqlite_file(db) as connection:
            busy, grown, _ = checkpointer.checkpoint(connection)
            assert (busy, checkpointer.restarts) == (0, 1) and grown > 1
            cid = app.create(c.CreateCampaign(name="After the restart")).campaign_id
            # The next commit writes at the log's beginning: the log holds just its pages.
            _, pages, _ = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert 0 < pages < grown
        assert app.get(cid).state.name == "After the restart"
    finally:
        app.close()


def test_a_restart_that_finds_a_reader_in_the_log_gives_up_at_once_and_holds_no_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It never sleeps in SQLite's busy handler while every writer waits for it: it tries
    again after a pause, and a log past its hard bound is restarted waiting, as before."""
    monkeypatch.setattr(sqlite_store, "MAX_LOG_PAGES", 1)
    monkeypatch.setattr(sqlite_store, "RESTART_TRIES", 3)
    monkeypatch.setattr(sqlite_store, "RESTART_WAIT_AT", 10**9)  # never past the hard bound
    db = tmp_path / "c.sqlite"
    app = open_campaigns({"CAPES_DB": str(db)})
    checkpointer = app.checkpointer
    assert checkpointer is not None
    checkpointer.stop()  # this test checkpoints by itself
    reader = sqlite3.connect(db, isolation_level=None)
    try:
        a_campaign_with_moves(app)
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM stored_events").fetchone()  # a reader in the log
        cid = app.create(c.CreateCampaign(name="Read meanwhile")).campaign_id
        with sqlite_file(db, timeout=5.0) as connection:
            began = time.monotonic()
            busy, _, _ = checkpointer.checkpoint(connection)
            assert (busy, checkpointer.restarts) == (1, 0)
            # Not the connection's busy timeout (5 s) waited out: three tries, two pauses.
            assert time.monotonic() - began < 2.5, "it did not wait for the reader"
            app.execute(cid, c.SeatPlayer(name="Ana"))  # the writer goes on
            reader.execute("COMMIT")
            busy, _, _ = checkpointer.checkpoint(connection)
            assert (busy, checkpointer.restarts) == (0, 1)
        assert app.get(cid).state.name == "Read meanwhile"
    finally:
        reader.close()
        app.close()


def test_one_process_checkpoints_a_file_and_another_takes_over_when_it_stops(
    tmp_path: Path,
) -> None:
    """Every process that opens the store has a checkpointer; the lock beside the file lets
    one of them work (two took turns holding the writer back)."""
    db = str(tmp_path / "c.sqlite")
    owner = Owner()
    first = Checkpointer(db, owner, every=0.01)
    second = Checkpointer(db, owner, every=0.01)
    assert first.claim() and not second.claim()
    assert Path(sqlite_store.lock_path(db)).exists()
    first.start()
    second.start()
    try:
        deadline = time.monotonic() + 5
        while first.checkpoints < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert first.checkpoints >= 3 and second.checkpoints == 0
        first.stop()
        assert not first.elected
        while second.checkpoints == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert second.elected and second.checkpoints > 0
    finally:
        first.stop()
        second.stop()


def test_the_checkpointer_lock_of_a_uri_is_beside_its_file() -> None:
    assert sqlite_store.lock_path("file:/srv/capes.sqlite?mode=rwc") == \
        "/srv/capes.sqlite-checkpointer"
    assert sqlite_store.lock_path("/srv/capes.sqlite") == "/srv/capes.sqlite-checkpointer"


def test_a_command_waits_for_the_disk_and_a_read_models_commit_does_not(tmp_path: Path) -> None:
    """The log is the record (nothing acknowledged is lost: FULL, 2); a read model is rebuilt
    from it, so its file of its own is never synced (OFF, 0: rebuilt if the machine stops
    while it has writes not on the disk, tests/projections/test_unsynced_read_models.py)."""
    app = open_campaigns({"CAPES_DB": str(tmp_path / "c.sqlite")})
    models = open_read_models(app, environ={})
    try:
        a_campaign_with_moves(app)
        models.runner.catch_up()
        assert pragma(app.recorder, "synchronous") == 2
        assert {pragma(m.store, "synchronous") for m in models.models.values()} == {0}
    finally:
        models.close()
        app.close()
