"""A copy of the SQLite store taken while the server runs (``capes backup``).

Why SQLite's online backup (``sqlite3.Connection.backup``) and not a copy of the file: while
the server runs, the newest commits are in the write-ahead log (``capes.sqlite-wal``) until a
checkpoint copies them into the file, so the file alone is an older campaign, and a copy of
both taken one after the other can catch a checkpoint half done. The backup reads one
consistent snapshot of the store through SQLite (every acknowledged command in it, the tokens'
and dice seeds' tables too: they live in the same file) while writers go on.

The read models' file is not backed up: it is rebuilt from the log when missing.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path


class BackupError(Exception):
    """Why no backup was written (nothing is left at the target)."""


def backup_sqlite(source: str, target: Path) -> int:
    """Copy the SQLite store ``source`` to the new file ``target``; the bytes written.

    Refuses a target that exists (a backup never overwrites one) and a source that is not an
    SQLite file. The copy is written beside the target and renamed into place once complete
    and synced, so a target that exists is a whole backup."""
    if target.exists():
        raise BackupError(f"{target} exists already: a backup never overwrites a file")
    if not Path(source).is_file():
        raise BackupError(f"the store {source} does not exist")
    if not target.parent.is_dir():
        raise BackupError(f"cannot write {target}: the folder {target.parent} does not exist")
    partial = target.with_name(target.name + ".partial")
    try:
        # Read-only: a backup never changes the store it reads, nor creates one.
        # closing(): a connection's own ``with`` ends a transaction and leaves it open until
        # the garbage collector frees it, and a process that took a backup kept the store
        # open meanwhile (tests/integration/test_backup.py says what that broke).
        reading = f"file:{Path(source).resolve()}?mode=ro"
        with closing(sqlite3.connect(reading, uri=True)) as store, \
                closing(sqlite3.connect(partial)) as copy:
            store.backup(copy)
        with open(partial, "rb+") as written:
            os.fsync(written.fileno())
        os.replace(partial, target)
    except sqlite3.DatabaseError as e:
        raise BackupError(f"cannot back up {source}: {e}") from None
    except OSError as e:
        raise BackupError(f"cannot write {target}: {e}") from None
    finally:
        partial.unlink(missing_ok=True)
    return target.stat().st_size
