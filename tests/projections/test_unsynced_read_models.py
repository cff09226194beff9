"""The read models' SQLite file never waits for the disk, and is rebuilt from the log when the
machine stopped while it had writes not on the disk (projections/unsynced.py, issue 15)."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from readmodel_helpers import check_read_models, dump, open_table, play

from application.campaigns import Campaigns, open_campaigns
from projections import unsynced
from projections.service import ReadModels
from projections.unsynced import boot_id, marker_path
from projections.views import claim_unsynced, read_models_file


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Campaigns]:
    campaigns = open_campaigns({"CAPES_DB": str(tmp_path / "c.sqlite")})
    try:
        yield campaigns
    finally:
        campaigns.close()


def played(app: Campaigns, commands: int = 40) -> list:
    campaign = open_table(app, "Unsynced")
    play(app, campaign, random.Random(7), commands)
    return [campaign]


def the_file(app: Campaigns) -> str:
    return read_models_file(app.env["SQLITE_DBNAME"])


def synchronous(read_models: ReadModels) -> int:
    view = read_models.board.store
    return int(view.read("PRAGMA synchronous")[0][0])


def died(read_models: ReadModels) -> None:
    """The process dies: its connections go, its claim is never released."""
    read_models.runner.stop()
    read_models.factory.close()
    assert read_models.unsynced is not None
    fd, read_models.unsynced._fd = read_models.unsynced._fd, None
    assert fd is not None
    os.close(fd)  # what the system does for the files of a process that ends


def test_read_models_in_a_file_of_their_own_never_wait_for_the_disk_while_a_marker_names_this_boot(
        app: Campaigns) -> None:
    read_models = ReadModels(app)
    try:
        assert synchronous(read_models) == 0  # OFF
        marker = marker_path(the_file(app))
        assert marker.read_text().strip() == boot_id()
    finally:
        read_models.close()
    assert not marker.exists()  # synced and let go: a clean stop never rebuilds


def test_the_marker_is_removed_by_the_last_process_to_let_go_of_the_file(app: Campaigns) -> None:
    first, second = ReadModels(app), ReadModels(app)
    marker = marker_path(the_file(app))
    first.close()
    assert marker.exists()  # the second still writes without syncing
    second.close()
    assert not marker.exists()


def test_read_models_of_a_process_that_died_are_kept_as_they_were(app: Campaigns) -> None:
    campaigns = played(app)
    read_models = ReadModels(app)
    read_models.runner.catch_up()
    position = read_models.runner.position()
    died(read_models)
    assert marker_path(the_file(app)).exists()

    again = ReadModels(app)
    try:
        assert again.unsynced is not None and not again.unsynced.rebuilt
        assert again.runner.refresh()["board"] == position  # nothing to do again
        check_read_models(app, again, campaigns)
    finally:
        again.close()


def test_after_the_machine_stopped_mid_write_the_file_is_deleted_and_rebuilt_from_the_log(
        app: Campaigns) -> None:
    campaigns = played(app)
    read_models = ReadModels(app)
    read_models.runner.catch_up()
    before = dump(read_models)
    died(read_models)
    # The machine stopped before the disk had it all: the file is damaged, and the marker
    # names the boot it was written in.
    path = Path(the_file(app))
    path.write_bytes(b"not what SQLite wrote" * 100)
    marker_path(str(path)).write_text("an-earlier-boot\n")

    again = ReadModels(app)
    try:
        assert again.unsynced is not None and again.unsynced.rebuilt
        assert set(again.runner.refresh().values()) == {0}  # from the log's first event
        again.runner.catch_up()
        assert dump(again) == before
        check_read_models(app, again, campaigns)
        assert marker_path(str(path)).read_text().strip() == boot_id()
    finally:
        again.close()


def test_where_the_machine_tells_no_boot_the_read_models_wait_for_the_disk_as_before(
        app: Campaigns, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(unsynced, "BOOT_ID", str(tmp_path / "no-such-file"))
    read_models = ReadModels(app)
    try:
        assert read_models.unsynced is None
        assert synchronous(read_models) == 1  # NORMAL
        assert not marker_path(the_file(app)).exists()
    finally:
        read_models.close()


@pytest.mark.parametrize("env", [
    {"PERSISTENCE_MODULE": "eventsourcing.popo"},
    # The read models share a URI database with the campaigns, whose log must be synced.
    {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": "file:x.sqlite?mode=rwc"},
    {"PERSISTENCE_MODULE": "eventsourcing.postgres", "SQLITE_DBNAME": "c.sqlite"},
])
def test_only_a_read_models_file_of_their_own_is_written_unsynced(env: dict[str, str]) -> None:
    assert claim_unsynced(env) is None
