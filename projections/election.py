"""One runner of a store's read models at a time, whoever starts them.

Every process that may run the read models takes part in an election: each worker of a server
with ``CAPES_PROJECTIONS=internal``, the read models' process of every ``capes serve``
(``process``, the default) and ``capes projections run``. The one that holds the store's lock
runs them; the others stand by, try again every :data:`STANDBY_RETRY` seconds, and take over
when the holder stops or dies, since its lock goes with it:

- on PostgreSQL, a session-level advisory lock (``pg_try_advisory_lock``) keyed by the schema
  and the set of read models, held on a connection of its own: PostgreSQL lets go of it when
  that connection ends (the process ended, or was killed: its socket closes; a machine gone
  from the network: the keepalives below);
- on SQLite, the ``flock`` of a file beside the read models' file, ``<file>-runner``
  (:class:`application.sqlite_store.LockFile`, as the checkpointer's): the kernel lets go of
  it when the process ends, however it ends.

Why: two runners on one store took turns at the same tables, each one's batch refused when the
other had moved the tracking first, each logging it and reading again, doing the work twice;
and hosts had to set ``CAPES_PROJECTIONS=external`` on every server but one to avoid it.

A reader that waits for a position (read-your-writes) while the runner is another process
tells that process (:meth:`Election.nudge`): on PostgreSQL with a ``NOTIFY`` on the store's
wake channel, which the runner listens to wherever it runs; on SQLite with a datagram to
the wake socket the runner wrote into the lock file (a read models' process of ``capes serve``
has one, :mod:`projections.wake`). A runner without one (a worker's thread) is waited for by
polling its tracking, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any

import msgspec

from application.postgres_store import channel_of
from application.schema_lock import connect_postgres
from application.sqlite_store import LockFile, held_by, lock_path

from .wake import Wake

log = logging.getLogger(__name__)

#: Seconds between two tries of a runner that stands by.
STANDBY_RETRY = 2.0
#: Seconds between two looks that the connection holding a PostgreSQL lock is still alive
#: (lost, the lock is lost with it: the runner stands by and tries again).
CHECK_EVERY = 1.0
#: Seconds between two nudges of the runner by one process (one is enough: it writes
#: everything stored when it wakes; the others are a safety net).
NUDGE_EVERY = 0.2
#: Seconds of silence before PostgreSQL (and this side) probe the lock's connection, the
#: seconds between probes, and the probes unanswered before it is dropped: a runner whose
#: machine vanished from the network loses its lock within about 25 s.
KEEPALIVE = (10, 5, 3)


class Holder(msgspec.Struct, frozen=True, kw_only=True):
    """Who runs the read models: a process, on a machine, and the socket it is woken on."""

    pid: int = 0
    host: str = ""
    #: The wake socket of the runner (SQLite: :mod:`projections.wake`), if it has one.
    wake: str | None = None

    def __str__(self) -> str:
        if not self.pid:
            return "another process"
        return f"process {self.pid} on {self.host}" if self.host else f"process {self.pid}"


def this_process(wake: str | None = None) -> Holder:
    """This process, as a holder."""
    return Holder(pid=os.getpid(), host=socket.gethostname(), wake=wake)


class Election:
    """The election of the runner of one store's read models (one object per runner)."""

    #: The lock, for people.
    where = ""

    def __init__(self, wake: str | None = None) -> None:
        self.me = this_process(wake)
        self._nudged = 0.0
        self._nudge_lock = threading.Lock()

    @property
    def held(self) -> bool:
        """Whether this runner holds the lock (runs the read models)."""
        raise NotImplementedError

    def claim(self) -> bool:
        """Take the lock if nobody holds it, without waiting; whether this runner holds it
        (one that held it and lost it, as a PostgreSQL connection can be lost, no longer does
        and tries again)."""
        raise NotImplementedError

    def release(self) -> None:
        """Let go of the lock (nothing if not held): the next runner to try takes over."""
        raise NotImplementedError

    def holder(self) -> Holder | None:
        """Who holds the lock now (None: nobody)."""
        raise NotImplementedError

    def nudge(self) -> None:
        """Tell the runner, in another process, that a reader waits for a position (at most
        every :data:`NUDGE_EVERY` seconds; nothing happens where it cannot be told)."""
        if not self._nudge_lock.acquire(blocking=False):
            return  # another thread of this process is at it
        try:
            now = time.monotonic()
            if now - self._nudged < NUDGE_EVERY:
                return
            self._nudged = now
            self._nudge()
        finally:
            self._nudge_lock.release()

    def _nudge(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Let go of the lock and of whatever the election holds open."""
        self.release()


class FileElection(Election):
    """The election on an SQLite file: the ``flock`` of ``<read models' file>-runner``
    (:func:`runner_lock`), which the holder fills with who it is (:class:`Holder`)."""

    def __init__(self, path: str, wake: str | None = None) -> None:
        super().__init__(wake)
        self.path = path
        self.where = f"the lock file {path}"
        self._lock = LockFile(path)
        #: Set when no lock file can be made (a folder we may not write to): this runner then
        #: runs the read models without an election, as every runner did before.
        self._unelected = False
        self._wakes: dict[str, Wake] = {}

    @property
    def held(self) -> bool:
        return self._lock.held or self._unelected

    def claim(self) -> bool:
        if self.held:
            return True
        try:
            got = self._lock.claim()
        except OSError as e:
            log.warning("read models: cannot make the runner's lock file %s (%s): this process "
                        "runs them without an election", self.path, e.strerror)
            self._unelected = True
            return True
        if got:
            self._lock.note(msgspec.json.encode(self.me).decode())
        return got

    def release(self) -> None:
        self._lock.release()
        self._unelected = False

    def holder(self) -> Holder | None:
        if self._lock.held:
            return self.me
        return _holder(held_by(self.path))

    def _nudge(self) -> None:
        # Read without looking whether the lock is held (that look takes a lock for an
        # instant, which a runner taking over at that instant would find taken): the socket
        # of a holder that is gone is gone too, and a datagram to it is lost, as it may be.
        try:
            with open(self.path, encoding="utf-8", errors="replace") as file:
                holder = _holder(file.read(4096).strip())
        except OSError:
            return
        if holder is None or not holder.wake or holder.wake == self.me.wake:
            return
        wake = self._wakes.get(holder.wake)
        if wake is None:
            for old in self._wakes.values():
                old.close()
            self._wakes = {holder.wake: (wake := Wake(holder.wake))}
        wake()

    def close(self) -> None:
        super().close()
        for wake in self._wakes.values():
            wake.close()
        self._wakes = {}


def _holder(text: str | None) -> Holder | None:
    """The holder a lock file names (None: no holder; unreadable: "another process")."""
    if text is None:
        return None
    try:
        return msgspec.json.decode(text, type=Holder)
    except msgspec.MsgspecError:
        return Holder()


#: How a runner names its connection to PostgreSQL (``application_name``, which
#: ``pg_stat_activity`` shows): :meth:`PostgresElection.holder` reads it back.
APPLICATION_NAME = "capes read models: pid {pid} on {host}"
_NAMED = re.compile(r"capes read models: pid (\d+) on (.*)")

#: The holder of an advisory lock (a bigint key: its high half in ``classid``, its low half in
#: ``objid``, ``objsubid`` 1), in this database.
_HOLDER = """
SELECT a.pid, a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid::bigint = %s AND l.objid::bigint = %s
"""


def advisory_key(text: str) -> int:
    """A signed 64-bit key for ``pg_try_advisory_lock`` drawn from ``text``."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big", signed=True)


class PostgresElection(Election):
    """The election on PostgreSQL: a session-level advisory lock keyed by the schema and the
    set of read models (:func:`advisory_key`), held on a connection of its own."""

    def __init__(self, env: Mapping[str, Any], datastore: Any, table_set: str,
                 wake: str | None = None) -> None:
        super().__init__(wake)
        self.env = env
        #: The read models' datastore: for the looks and nudges (its pool's connections).
        self.datastore = datastore
        schema = datastore.schema or "public"
        self.key = advisory_key(f"capes: the read models {table_set} in schema {schema}")
        self.where = f"the advisory lock {self.key} (schema {schema})"
        #: The channel a reader's nudge is sent on, which the runner listens to.
        self.channel = channel_of(schema, "capes_read_models_wake")
        self._connection: Any = None
        self._held = False
        self._checked = 0.0

    @property
    def held(self) -> bool:
        return self._held

    def claim(self) -> bool:
        import psycopg

        if self._held:
            if time.monotonic() - self._checked < CHECK_EVERY:
                return True
            try:
                self._connection.execute("SELECT 1")
                self._checked = time.monotonic()
                return True
            except psycopg.Error as e:
                log.warning("read models: the connection that held the runner's lock is lost "
                            "(%s)", " ".join(str(e).split()) or type(e).__name__)
                self.release()
        try:
            if self._connection is None:
                idle, interval, count = KEEPALIVE
                name = APPLICATION_NAME.format(pid=self.me.pid, host=self.me.host)
                self._connection = connect_postgres(
                    self.env, application_name=name.encode()[:63].decode(errors="ignore"),
                    keepalives=1, keepalives_idle=idle, keepalives_interval=interval,
                    keepalives_count=count,
                    # PostgreSQL's side: a client that vanished is dropped, and its lock freed.
                    options=f"-c tcp_keepalives_idle={idle} -c tcp_keepalives_interval="
                            f"{interval} -c tcp_keepalives_count={count}")
            row = self._connection.execute("SELECT pg_try_advisory_lock(%s)",
                                           (self.key,)).fetchone()
        except psycopg.Error:
            log.debug("read models: cannot try the runner's lock", exc_info=True)
            self._close()
            return False
        self._held = bool(row and row[0])
        self._checked = time.monotonic()
        return self._held

    def release(self) -> None:
        # The lock is the session's: it goes with the connection.
        self._close()

    def _close(self) -> None:
        connection, self._connection = self._connection, None
        self._held = False
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.close()

    def holder(self) -> Holder | None:
        if self._held:
            return self.me
        from psycopg.rows import tuple_row

        key = self.key & 0xFFFF_FFFF_FFFF_FFFF
        with self.datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            cur.execute(_HOLDER, (key >> 32, key & 0xFFFF_FFFF))
            row = cur.fetchone()
        if row is None:
            return None
        named = _NAMED.fullmatch(row[1] or "")
        if named is None:
            return Holder()
        return Holder(pid=int(named[1]), host=named[2])

    def _nudge(self) -> None:
        # Only a hurry (the reader polls the tracking anyway): never a failed query for it.
        with contextlib.suppress(Exception), self.datastore.get_connection() as conn:
            conn.execute("SELECT pg_notify(%s, '')", (self.channel,))


def runner_lock(db: str, table_set: str) -> str:
    """The runner's lock file of read models' SQLite file ``db``: ``<db>-runner`` for every
    read model, ``<db>-runner-<names>`` for a set of them (``capes projections run --name``)."""
    return lock_path(db, "runner" if table_set == "all" else f"runner-{table_set}")


def election_for(factory: Any, table_set: str, wake: str | None = None) -> Election | None:
    """The election of the runner of ``table_set`` (``all``, or read models' names joined by
    ``+``) in the read models' store of ``factory``; None for a store only this process sees
    (in memory: nothing to elect). ``wake``: the socket this process is woken on, if any."""
    datastore = factory.datastore
    module = type(factory).__module__
    if module.endswith("postgres"):
        return PostgresElection(factory.env, datastore, table_set, wake)
    pool = getattr(datastore, "pool", None)
    if module.endswith("sqlite") and pool is not None and not pool.is_sqlite_memory_mode:
        return FileElection(runner_lock(pool.db_name, table_set), wake)
    return None
