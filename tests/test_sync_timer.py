"""The bench's timer of the store's own syncs (``scripts/sync_timer.c``, read by
``scripts/benchmarks/syncs.py``): preloaded into a process, it times the ``fdatasync`` SQLite
makes to commit to its write-ahead log, and the bench cuts those times by its rounds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"

#: Three commits to an SQLite store in WAL mode with full syncs, as the server's store commits.
COMMITS = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=FULL")
db.execute("CREATE TABLE IF NOT EXISTS events (n INTEGER)")
for n in range(3):
    db.execute("INSERT INTO events VALUES (?)", (n,))
"""


@pytest.fixture()
def syncs(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine: the bench leaves the store's syncs out")
    monkeypatch.syspath_prepend(str(SCRIPTS))
    from benchmarks import syncs

    return syncs


def commit_with_the_timer(syncs: ModuleType, folder: Path) -> Path:
    """Three commits to a store in ``folder`` by a process with the timer preloaded; its log."""
    lib = syncs.build(folder)
    assert lib is not None
    log = folder / "syncs.log"
    subprocess.run([sys.executable, "-c", COMMITS, str(folder / "store.sqlite")], check=True,
                   env=os.environ | syncs.environment(lib, log))
    return log


def test_every_commit_of_a_preloaded_sqlite_store_is_timed_and_cut_by_the_round(
    syncs: ModuleType, tmp_path: Path
) -> None:
    log = tmp_path / "syncs.log"
    began = time.monotonic()
    with syncs.timing(log):
        commit_with_the_timer(syncs, tmp_path)
    ended = time.monotonic()

    lines = log.read_text().splitlines()
    assert lines, "no sync was timed"
    for line in lines:
        start, took, call, path = line.split(" ", 3)
        assert began <= float(start) <= ended  # the bench's own clock (time.monotonic)
        assert float(took) >= 0 and call in ("fsync", "fdatasync")
        # The file synced, by its path: the store's files, or their folder (SQLite syncs it
        # when it makes its write-ahead log).
        assert tmp_path.resolve() in (Path(path), Path(path).parent)
    found = syncs.summary(log, began, ended)
    assert found["store_syncs"] >= 3  # one at least a commit, to the write-ahead log
    assert found["store_sync_max_ms"] >= found["store_sync_p99_ms"] >= found["store_sync_p50_ms"]
    assert syncs.summary(log, ended + 1, ended + 2) == {}  # another round's window: none


def test_without_the_timer_a_server_runs_as_it_would(syncs: ModuleType, tmp_path: Path) -> None:
    assert syncs.environment(None, tmp_path / "syncs.log") == {}
    assert syncs.summary(tmp_path / "never-written.log", 0, 1) == {}
    assert syncs.text({}) == "the store's own syncs: not timed"


def test_outside_a_timing_block_the_preloaded_server_logs_nothing(
    syncs: ModuleType, tmp_path: Path
) -> None:
    log = commit_with_the_timer(syncs, tmp_path)
    assert not log.exists() or log.read_text() == ""
