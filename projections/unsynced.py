"""The read models' SQLite file is written without waiting for the disk, and rebuilt from the
log if the machine stopped while it was being written (issue 15, the half load's tail).

Why: the read models' checkpoints write megabytes at a time, and their fsyncs queue on the
disk every command's commit waits for (``synchronous=FULL`` in the campaigns' file). Measured
at half load on one machine, alternated: with the read models' file never synced the p99 of
commands was under 10 ms in five rounds of five, against 9 to 12 ms with ``synchronous=NORMAL``.

What that costs, and how it is paid: with ``synchronous=OFF`` SQLite promises a whole file when
a *process* dies (what it wrote is in the operating system's cache, which the disk gets in the
end), but not when the *machine* stops (a power cut, a kernel panic): a checkpoint's pages may
be lost after the log that held them was reused, leaving the file damaged, or whole but wrong.
A read model is only a cache of the log, so the file is thrown away then and rebuilt (the
README's "Read models do not wait for the disk" says what a host sees). To know when, each
process that opens the file holds a *marker*, ``<file>-unsynced``, written and synced before
the file is opened, that names the machine's boot (``/proc/sys/kernel/random/boot_id``, new
at every start of the machine):

- a marker of another boot: the machine stopped while the file had unsynced writes, so the
  file (with its ``-wal`` and ``-shm``) is deleted, and the read models start again from the
  first event of the log;
- a marker of this boot: a process died, not the machine; the file is whole, and kept;
- the last process to close the file syncs it (and its log) to the disk and removes the
  marker, so a machine stopped cleanly after the server never rebuilds.

Where there is no boot id (not Linux), or the read models share the campaigns' file (an URI
database), nothing changes: ``synchronous=NORMAL``, which never damages a file in WAL mode.
Claims and releases take the lock of the file's table creation (``<file>.lock``), so a marker
is never removed while another process is claiming it.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from pathlib import Path

from application.schema_lock import sqlite_file_lock

log = logging.getLogger(__name__)

#: Where Linux tells which boot of the machine this is (a new random id at every start).
BOOT_ID = "/proc/sys/kernel/random/boot_id"
#: SQLite's own files beside a database in WAL mode.
SIDE_FILES = ("-wal", "-shm")


def boot_id() -> str | None:
    """This boot of the machine's id, or None where the system does not tell it."""
    try:
        found = Path(BOOT_ID).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return found or None


def marker_path(db: str) -> Path:
    """The marker of read models' file ``db``: ``<db>-unsynced``, beside SQLite's ``-wal``."""
    return Path(f"{db}-unsynced")


def _files(db: str) -> tuple[str, ...]:
    """Database ``db`` and SQLite's files beside it."""
    return (db, *(db + side for side in SIDE_FILES))


def _sync(path: Path) -> None:
    """Write ``path``'s cached pages to the disk (a file or a folder; nothing if missing)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Unsynced:
    """This process's claim on a read models' file written with ``synchronous=OFF``."""

    def __init__(self, db: str, boot: str, fd: int, *, rebuilt: bool) -> None:
        self.db = db
        self.boot = boot
        self._fd: int | None = fd
        #: Whether the claim found the file from an earlier boot's unsynced writes and deleted
        #: it (its read models start again from the log).
        self.rebuilt = rebuilt

    @classmethod
    def claim(cls, db: str) -> Unsynced | None:
        """Claim read models' file ``db`` for unsynced writes (None: not here, see above),
        deleting it first if the machine stopped while it had some."""
        boot = boot_id()
        if boot is None:
            return None
        marker = marker_path(db)
        with sqlite_file_lock(db):
            try:
                found: str | None = marker.read_text(encoding="ascii").strip()
            except FileNotFoundError:
                found = None
            rebuilt = found is not None and found != boot
            if rebuilt:
                # No process of another boot is alive, so nobody has these files open.
                log.warning("the machine stopped while the read models' file %s had writes "
                            "not yet on the disk (boot %s, now %s): it is deleted and the read "
                            "models are rebuilt from the log", db, found, boot)
                for name in _files(db):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(name)
            if found != boot:
                # On the disk before the first unsynced write: a marker lost to a power cut
                # with some of those writes kept would hide a damaged file.
                temporary = marker.with_name(marker.name + ".new")
                with open(temporary, "w", encoding="ascii") as out:
                    out.write(boot + "\n")
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temporary, marker)
                _sync(marker.parent)
            fd = os.open(marker, os.O_RDONLY)
            # Held while this process has the file open: the last to let go syncs it.
            fcntl.flock(fd, fcntl.LOCK_SH)
        return cls(db, boot, fd, rebuilt=rebuilt)

    def release(self) -> None:
        """Let go of the claim, after this process's connections to the file are closed. The
        last process to let go syncs the file and its log and removes the marker."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            with sqlite_file_lock(self.db):
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return  # another process still writes: it syncs when it lets go
                for name in _files(self.db):
                    _sync(Path(name))
                _sync(Path(self.db).parent)  # SQLite deletes its log at the last close
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(marker_path(self.db))
                _sync(Path(self.db).parent)
        finally:
            os.close(fd)
