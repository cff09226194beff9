"""``capes backup FILE``: a consistent copy of the SQLite store, taken while it is in use, that
holds every acknowledged command (the newest of them still in the write-ahead log)."""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any

import pytest
from stores import sqlite_file

from application.audit import verify_stored
from application.backup import backup_sqlite
from application.campaigns import open_campaigns
from cli.main import main
from domain.capes import commands as c


def test_a_backup_taken_while_the_store_is_open_holds_every_command_and_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any,
) -> None:
    store = tmp_path / "capes.sqlite"
    monkeypatch.setenv("CAPES_DB", str(store))
    app = open_campaigns({"CAPES_DB": str(store)})
    try:
        campaign = app.create(c.CreateCampaign(name="Tuesday night")).campaign_id
        for name in ("Ana", "Ben", "Cleo"):
            app.execute(campaign, c.SeatPlayer(name=name))
        version = app.get(campaign).version
        # The store is open and its newest commits are in the log, not yet in the file.
        assert Path(f"{store}-wal").stat().st_size > 0

        copy = tmp_path / "copy.sqlite"
        assert main(["backup", str(copy)]) == 0
        assert "capes verify" in capsys.readouterr().out
        app.execute(campaign, c.SeatPlayer(name="Dee"))  # the store goes on
    finally:
        app.close()

    backed_up = open_campaigns({"CAPES_DB": str(copy)})
    try:
        assert backed_up.get(campaign).version == version
        assert verify_stored(backed_up, campaign).ok
    finally:
        backed_up.close()


def opened_by_this_process(path: Path) -> list[str]:
    """The files of ``path`` (the store, its log and the log's index) this process has open."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, closed since
            continue
        if target.startswith(str(path)):
            held.append(target)
    return held


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux's /proc")
def test_a_backup_lets_go_of_the_store_as_it_ends_not_when_the_collector_runs(
        tmp_path: Path) -> None:
    """Its connection was left to the garbage collector (``sqlite3``'s ``with`` does not close
    one), so a process that took a backup kept the store open for a while: a store then put
    back from a backup, written over with its log removed, failed the next connection with
    "disk I/O error" (one run in ten to twenty of tests/projections; with the collector off,
    every run)."""
    store = tmp_path / "capes.sqlite"
    open_campaigns({"CAPES_DB": str(store)}).close()
    gc.disable()  # what the collector would close is not closed here
    try:
        backup_sqlite(str(store), tmp_path / "copy.sqlite")
        assert opened_by_this_process(store) == []
    finally:
        gc.enable()


def test_a_backup_never_overwrites_a_file_and_leaves_nothing_when_it_cannot_be_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any,
) -> None:
    store = tmp_path / "capes.sqlite"
    monkeypatch.setenv("CAPES_DB", str(store))
    open_campaigns({"CAPES_DB": str(store)}).close()
    there = tmp_path / "there.sqlite"
    there.write_bytes(b"an earlier backup")
    assert main(["backup", str(there)]) == 1
    assert "exists already" in capsys.readouterr().err
    assert there.read_bytes() == b"an earlier backup"

    nowhere = tmp_path / "no-such-folder" / "copy.sqlite"
    assert main(["backup", str(nowhere)]) == 1
    assert "cannot write" in capsys.readouterr().err
    assert not nowhere.parent.exists()

    # A store that SQLite cannot read past its header: nothing written either.
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    monkeypatch.setenv("CAPES_DB", str(damaged))
    assert main(["backup", str(tmp_path / "copy.sqlite")]) == 1
    assert "cannot back up" in capsys.readouterr().err
    assert not (tmp_path / "copy.sqlite").exists()
    assert not list(tmp_path.glob("*.partial"))


def test_a_backup_of_a_store_that_is_not_an_sqlite_file_says_what_to_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any,
) -> None:
    monkeypatch.setenv("CAPES_DB", ":memory:")
    assert main(["backup", str(tmp_path / "copy.sqlite")]) == 2
    assert "SQLite store" in capsys.readouterr().err


def test_the_backup_is_one_sqlite_file_with_the_tokens_tables_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = tmp_path / "capes.sqlite"
    monkeypatch.setenv("CAPES_DB", str(store))
    open_campaigns({"CAPES_DB": str(store)}).close()
    with sqlite_file(store) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master "
                                                 "WHERE type = 'table'")}
    copy = tmp_path / "copy.sqlite"
    assert main(["backup", str(copy)]) == 0
    with sqlite_file(copy) as db:
        copied = {name for (name,) in db.execute("SELECT name FROM sqlite_master "
                                                 "WHERE type = 'table'")}
    assert copied == tables


@pytest.mark.parametrize(("seated_lost", "seated_made"), [(3, 0), (1, 3)],
                         ids=["read models past the restored log", "restored log past them"])
def test_a_restored_backup_beside_the_read_models_of_a_later_log_is_listed_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, seated_lost: int,
    seated_made: int,
) -> None:
    """Restored as the README says (the backup put in the store's place), the read models'
    file of the log it replaced stayed: at a position past the restored log's last event, they
    listed a campaign the store no longer had and passed over the events it took next (a
    campaign made after the restore was never listed). And when the restored store takes more
    commands than the backup lost before the read models next open, their position is one the
    store has again, naming another event (tests/projections/test_read_model_lineage.py): kept,
    they listed the lost campaign and never the one made after the restore, whose first events
    they took as applied."""
    store = tmp_path / "capes.sqlite"
    monkeypatch.setenv("CAPES_DB", str(store))
    app = open_campaigns({"CAPES_DB": str(store)})
    try:
        kept = app.create(c.CreateCampaign(name="Kept")).campaign_id
        assert main(["backup", str(tmp_path / "copy.sqlite")]) == 0
        lost = app.create(c.CreateCampaign(name="Lost after the backup")).campaign_id
        for name in ("Ana", "Ben", "Cleo")[:seated_lost]:
            app.execute(lost, c.SeatPlayer(name=name))
    finally:
        app.close()
    assert main(["campaigns"]) == 0  # the read models catch up with the later log
    capsys.readouterr()

    (tmp_path / "copy.sqlite").replace(store)  # the server stopped: restored
    app = open_campaigns({"CAPES_DB": str(store)})
    try:
        made = app.create(c.CreateCampaign(name="Made after the restore")).campaign_id
        for name in ("Ana", "Ben", "Cleo")[:seated_made]:
            app.execute(made, c.SeatPlayer(name=name))
    finally:
        app.close()
    assert main(["campaigns"]) == 0
    listed = capsys.readouterr().out
    assert str(kept) in listed and str(made) in listed and str(lost) not in listed, listed
