"""The campaigns' SQLite recorder: the library's, storing a commit's events in one statement.

Every call into ``sqlite3`` releases the GIL (around each step of a statement) and takes it
back, and the writer thread takes it back from an event loop that is busy with requests: each
time it waits for the loop to let go, up to the interpreter's switch interval (5 ms). The
library's recorder makes several such calls per commit: ``BEGIN``, an ``execute`` per event
(to read each one's rowid), ``COMMIT``; its last-position read ``BEGIN``, ``SELECT``,
``ROLLBACK``. Measured in process with 16 players, the writer beside one busy Python thread:
70 commands/s (without the thread: 4,600); with one statement, 210 (5,600).

Here a commit's events go in with **one** multi-row ``INSERT`` outside an explicit
transaction: SQLite runs a lone statement as a transaction of its own, atomic and durable
(``synchronous=FULL``), so it is one call and one wait. Their ids follow from the
last rowid, since the statement holds the database's only write lock and each row takes the
next rowid (the table is the library's, unchanged). The last position is read with one
statement too.

And the write-ahead log is checkpointed by a thread of its own (:class:`Checkpointer`), never
by a commit on the writer's thread (:func:`checkpoint_elsewhere`), and by one process of all
those that open the file.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import sqlite3
import threading
import time
import weakref
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import (
    IntegrityError,
    InterfaceError,
    OperationalError,
    Recorder,
    StoredEvent,
)
from eventsourcing.popo import POPOApplicationRecorder
from eventsourcing.sqlite import (
    SQLITE3_DEFAULT_LOCK_TIMEOUT,
    SQLiteApplicationRecorder,
    SQLiteConnection,
    SQLiteConnectionPool,
    SQLiteCursor,
    SQLiteDatastore,
)

log = logging.getLogger(__name__)


class CampaignsSQLiteRecorder(SQLiteApplicationRecorder):
    """``SQLiteApplicationRecorder`` whose commits are one statement each (same table, same
    ids) and leave checkpoints to a :class:`Checkpointer`."""

    def __init__(self, datastore: SQLiteDatastore, **kwargs: Any) -> None:
        super().__init__(datastore, **kwargs)
        checkpoint_elsewhere(datastore)
        #: The campaigns' ids as read, by their text: one ``UUID`` object per campaign.
        self._originators: dict[str, UUID | str] = {}

    def convert_originator_id(self, originator_id: str) -> UUID | str:
        """The campaign of a stored row, the same object for every row of one campaign. Why:
        the read models look each event's campaign up in several dicts; a lookup with the
        very object that is the key skips ``UUID.__eq__`` (a Python call), and the text is
        parsed once, not once a row."""
        found = self._originators.get(originator_id)
        if found is None:
            if len(self._originators) >= ORIGINATORS_KEPT:
                self._originators.clear()
            found = self._originators[originator_id] = super().convert_originator_id(
                originator_id)
        return found

    def insert_events(self, stored_events: Sequence[StoredEvent],
                      **kwargs: Any) -> Sequence[int] | None:
        """Store ``stored_events`` all or none, in one ``INSERT`` when they fit in one (see
        the module's docstring); their notification ids. Raises the library's
        ``IntegrityError`` when one of their versions is taken."""
        if not stored_events:
            return []
        if len(stored_events) > ROWS_PER_INSERT:
            return super().insert_events(stored_events, **kwargs)  # a transaction of several
        statement, params = self._insert(stored_events)
        with self._statement(commit=True) as cursor:
            try:
                cursor.execute(statement, params)
            except sqlite3.IntegrityError as e:
                raise IntegrityError(e) from e
            except sqlite3.OperationalError as e:
                raise OperationalError(e) from e
            return self._ids(cursor, len(stored_events))

    def _insert_events(self, c: SQLiteCursor, stored_events: Sequence[StoredEvent],
                       **_: Any) -> Sequence[int] | None:
        # Inside the library's transaction (more events than one INSERT takes): in chunks.
        ids: list[int] = []
        for start in range(0, len(stored_events), ROWS_PER_INSERT):
            chunk = stored_events[start:start + ROWS_PER_INSERT]
            c.execute(*self._insert(chunk))
            ids += self._ids(c, len(chunk))
        return ids

    def _insert(self, stored_events: Sequence[StoredEvent]) -> tuple[str, list[Any]]:
        statement = (f"INSERT INTO {self.events_table_name} VALUES "
                     + ",".join(("(?,?,?,?)",) * len(stored_events)))
        params: list[Any] = []
        for s in stored_events:
            params += (s.originator_id.hex if isinstance(s.originator_id, UUID)
                       else s.originator_id, s.originator_version, s.topic, s.state)
        return statement, params

    @staticmethod
    def _ids(cursor: SQLiteCursor, count: int) -> list[int]:
        last = int(cursor.lastrowid)
        return list(range(last - count + 1, last + 1))

    def max_notification_id(self) -> int:
        """The store's last position, read with one statement (the library's takes three)."""
        with self._statement(commit=False) as cursor:
            cursor.execute(self.select_max_notification_id_statement)
            found: int | None = cursor.fetchone()[0]
            return found or 0

    @contextlib.contextmanager
    def _statement(self, *, commit: bool) -> Iterator[SQLiteCursor]:
        """A cursor on one of the pool's connections for one statement outside an explicit
        transaction (SQLite's own, then), closed after it."""
        with self.datastore.get_connection(commit=commit) as connection:
            cursor = connection.cursor()
            with cursor:
                yield cursor


#: Campaign ids a recorder keeps parsed (then it starts again: a bound, not a cache policy).
ORIGINATORS_KEPT = 100_000

#: Events stored by one ``INSERT`` at most (four parameters each, far below SQLite's bound on
#: a statement's parameters); more, as when a log is imported, go in a transaction in chunks.
ROWS_PER_INSERT = 500


# -- checkpoints off the writer's path ---------------------------------------------------------

#: Seconds between two checkpoints of the write-ahead log by :class:`Checkpointer`.
CHECKPOINT_EVERY = 1.0
#: Pages in the write-ahead log (4 KiB each: 256 MiB) past which a checkpoint waits for the
#: readers and starts the log again from its beginning (see :meth:`Checkpointer.checkpoint`).
#: Why so many: that checkpoint holds the writer back for 5 to 20 ms, and a busy server's log
#: grows by 2,500 to 8,500 pages a second (at 4,096 it came every other second, and about one
#: command in a hundred waited for it; at 16,384, on a fast machine at the half load of issue
#: 15's benchmark, every other second again, each time holding a commit 8 to 11 ms while the
#: commands behind it queued: episodes of some 50 ms in which they took up to 25 ms). The log
#: keeps its size once grown (see :meth:`Checkpointer.checkpoint`): up to 256 MiB of disk
#: beside the database.
MAX_LOG_PAGES = 65_536
#: Tries of that restart before the round gives up (the next round tries again), and the
#: seconds between two: each try holds the writers only while it runs, never while it waits.
RESTART_TRIES = 20
RESTART_PAUSE = 0.002
#: A log this many times :data:`MAX_LOG_PAGES` long is started again even if that means
#: waiting for the readers (the file must not grow without end).
RESTART_WAIT_AT = 4


def local(recorder: Recorder) -> bool:
    """Whether ``recorder`` keeps its events in an SQLite file or in this process's memory: a
    read of it takes some microseconds and may be made on an event loop's thread (never one
    of a server over the network, which the loop would wait for)."""
    return isinstance(recorder, (SQLiteApplicationRecorder, POPOApplicationRecorder))


class LastVersions:
    """What an SQLite file holds now, read on the calling thread from a connection of its own
    (some microseconds: a reader of a write-ahead log takes no lock and never waits): a
    campaign's last stored version (one statement on the table's primary key) and whether
    anyone committed anything since a given look (SQLite's ``PRAGMA data_version``).

    Why: a server whose writer is another process holds the boards that process rendered
    (:class:`api.held_views.HeldViews`); one of them is still the board of now exactly when
    its version is the campaign's last stored one, whoever stored what since. Asking the
    writer instead costs a trip to it and back for every read (issue 15).

    Made for one thread (the event loop's): its connection is opened there, at first use, and
    again after an error."""

    def __init__(self, db_name: str, table: str) -> None:
        self._db_name = db_name
        self._statement = (f"SELECT MAX(originator_version) FROM {table} "
                           "WHERE originator_id = ?")
        self._connection: sqlite3.Connection | None = None
        #: Connections opened so far: a look's mark names its connection too, since
        #: ``data_version`` means something only between two looks of one connection.
        self._opened = 0

    @classmethod
    def of(cls, recorder: Recorder) -> LastVersions | None:
        """For the campaigns' recorder on an SQLite file; None for any other store (on
        PostgreSQL each read is a round trip the event loop would wait for)."""
        if not isinstance(recorder, SQLiteApplicationRecorder):
            return None
        pool = recorder.datastore.pool
        if pool.is_sqlite_memory_mode:
            return None
        return cls(pool.db_name, recorder.events_table_name)

    def __call__(self, campaign_id: UUID) -> int | None:
        """The campaign's last stored version (0: none), or None when the file cannot be
        read at once (busy, gone): the caller then asks whoever knows."""
        row = self._read(self._statement, (campaign_id.hex,))
        return None if row is None else int(row[0] or 0)

    def mark(self) -> tuple[int, int] | None:
        """A mark of the file as it is: the same mark later means nobody committed anything
        to it in between (None: it cannot be read at once)."""
        row = self._read("PRAGMA data_version", ())
        return None if row is None else (self._opened, int(row[0]))

    def _read(self, statement: str, parameters: tuple[Any, ...]) -> tuple[Any, ...] | None:
        try:
            if self._connection is None:
                # timeout 0: a read that would wait for a lock fails instead (never on a loop).
                self._connection = sqlite3.connect(self._db_name, uri=True,
                                                   isolation_level=None, timeout=0)
                self._opened += 1
            row: tuple[Any, ...] = self._connection.execute(statement, parameters).fetchone()
            return row
        except sqlite3.Error:
            self.close()
            return None

    def close(self) -> None:
        """Close the connection (the next read opens another)."""
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                self._connection.close()
            self._connection = None


#: Statements each connection keeps prepared (the ``sqlite3`` module's own default).
STATEMENTS_KEPT = 128


def on_each_connection(datastore: SQLiteDatastore, statement: str) -> None:
    """Run ``statement`` (a ``PRAGMA``) on each connection the datastore opens to a file
    from now on (once, however often it is asked for). The datastore's pool is made warm
    first (:func:`warm`)."""
    pool = datastore.pool
    if pool.is_sqlite_memory_mode:
        return  # a database in memory is left as the library makes it
    applied: list[str] | None = getattr(pool, "_capes_on_connect", None)
    if applied is None:
        applied = warm(pool)
    if statement not in applied:
        applied.append(statement)


class _MostRecentFirst(deque[SQLiteConnection]):
    """The pool's idle connections, handed out most recently returned first."""

    def popleft(self) -> SQLiteConnection:
        return self.pop()


def warm(pool: SQLiteConnectionPool) -> list[str]:
    """Make a pool of connections to an SQLite file hand out warm connections: each keeps
    :data:`STATEMENTS_KEPT` statements prepared, and the one returned last is the next one
    out. Returns the statements each new connection runs first (:func:`on_each_connection`
    adds to them).

    Why: the library opens its connections with ``cached_statements=True``, which the
    ``sqlite3`` module reads as a cache of *one* statement, so every statement that differs
    from a connection's last one (a commit's ``INSERT`` after a read of the last position)
    is parsed and planned again; and its pool hands out the connection idle longest, so once
    it holds a few (threads asked at once, as the writer's preparing threads do), each
    statement runs on a connection that has not seen the last commits and must read its
    pages again (SQLite drops a connection's cached pages when another connection wrote).
    Profiled in the writer process at half load (py-spy, native): parsing 12% and reading
    pages 9% of its commits' time on the CPU."""
    pool._pool = _MostRecentFirst(pool._pool)
    library_connect = pool._create_connection
    applied: list[str] = []

    def connect() -> SQLiteConnection:
        if not pool.is_journal_mode_wal:
            # The library's first connection puts the file in WAL mode (once per pool).
            library_connect().close()
        try:
            connection = sqlite3.connect(
                database=pool.db_name, uri=True, check_same_thread=False, isolation_level=None,
                cached_statements=STATEMENTS_KEPT,
                timeout=pool.lock_timeout or SQLITE3_DEFAULT_LOCK_TIMEOUT)
        except (sqlite3.Error, TypeError) as e:
            raise InterfaceError(e) from e  # as the library reports a file it cannot open
        connection.row_factory = sqlite3.Row  # as the library's
        for pragma in applied:
            connection.execute(pragma)
        return SQLiteConnection(sqlite_conn=connection, max_age=pool.max_age)

    pool._create_connection = connect  # type: ignore[method-assign]
    pool._capes_on_connect = applied  # type: ignore[attr-defined]
    return applied


def checkpoint_elsewhere(datastore: SQLiteDatastore) -> None:
    """The datastore's connections never checkpoint the write-ahead log when they commit: a
    :class:`Checkpointer` does, in a thread of its own.

    Why: SQLite's default (``wal_autocheckpoint=1000``) makes the commit that brings the log to
    1,000 pages copy them into the database and wait for the disk, on the writer's thread and
    with every command queued behind it: measured with a thousand tables (about 500 pages a
    second), commits of 60 to 230 ms every few seconds, which alone put the command p99 over
    50 ms. A checkpoint in another thread takes 1 to 30 ms and holds up no writer (WAL mode
    lets writers append while a checkpoint copies)."""
    on_each_connection(datastore, "PRAGMA wal_autocheckpoint=0")


def lock_path(db_name: str, role: str = "checkpointer") -> str:
    """The file whose lock makes a process the one that does ``role`` for SQLite file
    ``db_name`` (a path or a ``file:`` URI): ``<file>-<role>``, beside SQLite's own ``-wal``
    and ``-shm`` (the checkpointer's by default; the read models' runner's is ``-runner``,
    :mod:`projections.election`)."""
    path = db_name.removeprefix("file:").split("?", 1)[0] if db_name.startswith("file:") \
        else db_name
    return f"{path}-{role}"


class LockFile:
    """A file whose exclusive ``flock`` makes one process at a time the one that does
    something for an SQLite file: its checkpoints (:class:`Checkpointer`), its read models
    (:mod:`projections.election`). Taken without waiting; let go by :meth:`release`, or by the
    kernel when the process ends, however it ends (a ``SIGKILL`` too), so a process that dies
    never leaves it taken.

    The holder may write a line into the file saying who it is (:meth:`note`); another process
    reads it with :func:`held_by` while the lock is held (the line of a holder that is gone
    stays in the file, and means nothing once the lock is free)."""

    def __init__(self, path: str) -> None:
        self.path = path
        #: The open lock file while this process holds the lock, else None.
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this process holds the lock (through this object)."""
        return self._fd is not None

    def claim(self) -> bool:
        """Take the lock if no other process holds it (never waits); whether this process
        holds it. Raises ``OSError`` when the file cannot be made or opened (a folder we may
        not write to): the caller decides what that means."""
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            # A lock of its own open file: two objects in one process exclude each other too.
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def note(self, line: str) -> None:
        """Write ``line`` into the held lock file in place of what was there (who holds it)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):  # only a note: the lock is what counts
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, line.encode() + b"\n", 0)

    def release(self) -> None:
        """Let go of the lock (nothing if not held)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # the lock goes with the file's last descriptor
            self._fd = None


def held_by(path: str) -> str | None:
    """What the process holding the lock of lock file ``path`` wrote into it (``""`` if
    nothing), or None when no process holds it (or there is no such file). Looks without
    waiting: it takes a shared lock for an instant, which a claim made at that very moment
    finds taken (it tries again at its next round)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return os.pread(fd, 4096, 0).decode(errors="replace").strip()
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class Checkpointer:
    """Checkpoints an SQLite file's write-ahead log every :data:`CHECKPOINT_EVERY` seconds, in
    a daemon thread, on a connection of its own (``PRAGMA wal_checkpoint(PASSIVE)``: it copies
    what no reader still needs and never blocks a writer).

    One process checkpoints a file, whichever holds the lock of :func:`lock_path` (``flock``,
    released by the kernel when the process ends): the others' checkpointers wait their turn,
    trying again every round. Why: every process that opens the store (the server, its read
    models' process, a worker more, the command line) had one, and two checkpointers on one
    file took turns holding the writer back (measured at half load: commits of 60 to 240 ms
    and a command p99 of 111 ms and 1 s in two runs of three, against 9 to 17 ms with one).

    The thread holds its owner weakly and stops when the owner is gone or :meth:`stop` is
    called; a process that ends without either leaves a log SQLite checkpoints itself when
    the file is next closed."""

    def __init__(self, db_name: str, owner: object, every: float = CHECKPOINT_EVERY) -> None:
        self.db_name = db_name
        self.every = every
        self.checkpoints = 0
        #: Checkpoints that started an overgrown log again from its beginning.
        self.restarts = 0
        #: Held while this process is the file's checkpointer.
        self._lock = LockFile(lock_path(db_name))
        self._owner = weakref.ref(owner)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="capes-checkpoints", daemon=True)

    def start(self) -> Checkpointer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(5.0)

    @property
    def elected(self) -> bool:
        """Whether this process is the file's checkpointer (see :meth:`claim`)."""
        return self._lock.held

    def claim(self) -> bool:
        """Become the file's checkpointer if no other process is (never waits)."""
        try:
            return self._lock.claim()
        except OSError:  # a folder we may not write to: checkpoint like before, unelected
            log.debug("no checkpointer lock beside %s", self.db_name, exc_info=True)
            return True

    def _release(self) -> None:
        self._lock.release()

    def checkpoint(self, connection: sqlite3.Connection) -> tuple[int, int, int]:
        """One checkpoint: (busy, pages in the log, pages checkpointed).

        Passive, unless the log has grown past :data:`MAX_LOG_PAGES`: the log starts anew
        only when a write finds every reader done with it, and with readers and writers on
        several threads at all times that moment may never come (measured: four threads
        preparing campaigns grew it by 10 MB a second). Then the checkpoint starts it again
        (``RESTART``, :meth:`_restart`), which holds new writes back while it copies what
        came since the passive checkpoint and starts the log anew (milliseconds). Not
        ``TRUNCATE``: a log that keeps its size is written over in place, and a commit's
        ``fdatasync`` then has no file size to record (measured at half load: 5 to 20 ms
        held up a round, against 10 to 240 ms)."""
        busy, pages, done = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if pages > MAX_LOG_PAGES:
            busy, pages, done = self._restart(connection, wait=pages > RESTART_WAIT_AT
                                              * MAX_LOG_PAGES)
        self.checkpoints += 1
        return int(busy), int(pages), int(done)

    def _restart(self, connection: sqlite3.Connection, *, wait: bool) -> tuple[int, int, int]:
        """Start the log again from its beginning: a ``RESTART`` checkpoint that does not wait.

        Why not wait: a checkpoint that finds a reader still in the log (or a write under way)
        waits through SQLite's busy handler, which sleeps 1, 2, 5, 10, 15… ms between looks
        while holding every writer back: commits held 8 to 25 ms (measured at half load, where
        they made the slowest hundredth's largest bursts). With no busy handler it answers
        at once, busy or done, and holds the writers only while it copies the last frames and
        starts the log again (4 to 8 ms measured); it tries again after a pause in which the
        writers and readers go on. A log past :data:`RESTART_WAIT_AT` times the limit is
        restarted waiting, as before."""
        busy = pages = done = 0
        connection.execute(f"PRAGMA busy_timeout={5000 if wait else 0}")
        try:
            for attempt in range(1 if wait else RESTART_TRIES):
                if attempt:
                    time.sleep(RESTART_PAUSE)  # the writers and readers go on meanwhile
                busy, pages, done = connection.execute(
                    "PRAGMA wal_checkpoint(RESTART)").fetchone()
                if not busy:
                    self.restarts += 1
                    break
        finally:
            connection.execute("PRAGMA busy_timeout=5000")
        return busy, pages, done

    def _run(self) -> None:
        connection: sqlite3.Connection | None = None
        try:
            while not self._stop.wait(self.every) and self._owner() is not None:
                if not self.claim():
                    continue  # another process checkpoints this file
                try:
                    if connection is None:
                        connection = sqlite3.connect(self.db_name, uri=True, timeout=5.0,
                                                     isolation_level=None,
                                                     check_same_thread=False)
                    self.checkpoint(connection)
                except sqlite3.Error:  # a busy or vanished file: the next round tries again
                    log.debug("checkpoint of %s failed", self.db_name, exc_info=True)
        finally:
            if connection is not None:
                connection.close()
            self._release()
