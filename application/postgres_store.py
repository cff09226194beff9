"""The campaigns' PostgreSQL recorder: writers do not queue for the whole table; readers wait
for the inserts under way instead.

eventsourcing's PostgreSQL recorder takes ``LOCK TABLE … IN EXCLUSIVE MODE`` on the events
table in every insert, held to the end of the transaction, so that notification ids commit in
the order they were drawn and a reader of the log never passes an id that a slower transaction
fills in later. The price: one writer at a time per table — each server process's commit (its
WAL flush included) waits for every other's, so a second worker could only add queueing
(measured: a group commit of 16 commands took 8.6 ms p50 on this machine, and two workers'
commits never overlapped).

Here inserts take no table lock — two workers' transactions run, and flush, side by side; a
campaign's versions still cannot be taken twice (the table's unique (originator_id,
originator_version) key, which the writer answers with a conflict and a retry). The readers
take over the ordering instead: the last position a reader may trust (:meth:`max_notification_id`)
is read under ``LOCK TABLE … IN SHARE MODE``, which waits for every insert under way to end
(SHARE conflicts with the ROW EXCLUSIVE lock an insert holds to its commit) and keeps new ones
out for the one ``SELECT`` (sent with it, so the lock is held only as long as PostgreSQL takes
to run the two); :meth:`select_notifications` reads no further than that unless
told where to stop. An id below it whose transaction rolled back is a gap for ever (the
sequence does not give ids back), which readers already step over.

And a commit is **one statement**, sent and answered in one round trip: the ``NOTIFY`` (as
``pg_notify`` in a ``WITH``) and the multi-row ``INSERT … RETURNING``, outside an explicit
transaction (PostgreSQL runs a lone statement as a transaction of its own, atomic and flushed
to its log before it answers). The library's insert (a pipeline: ``BEGIN``, the lock timeout,
the ``NOTIFY``, the ``INSERT``, a sync, ``COMMIT``) waited on the server about 13 times a
commit, and under the game mix the one writer of every worker spent most of a 3.5 ms group in
those waits: the mix on PostgreSQL was bound by that writer's commits a second, which a second
worker cannot add to.

The campaigns' application uses it (``Campaigns.construct_env``), and so do their keys
(``Keyring``: its notifications tell the servers' store watches whose keys changed); its
readers are this project's own (the writer's look at the store, the read models' catch-up,
the live subscription), all through these two methods.

Every PostgreSQL store of the project (the campaigns, their keys, the dice seeds, the read
models) waits for PostgreSQL a bounded time (:func:`bound_waits`): a request is answered, a
503 naming the store if need be, whether PostgreSQL refuses connections or the network to it
falls silent.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import time
from collections.abc import Sequence
from typing import Any

import psycopg
from eventsourcing.persistence import (
    IntegrityError,
    InterfaceError,
    Notification,
    OperationalError,
    ProgrammingError,
)
from eventsourcing.postgres import (
    ConnectionPool,
    PostgresApplicationRecorder,
    PostgresDatastore,
)
from psycopg.sql import SQL, Identifier, Literal
from psycopg_pool import PoolTimeout

from .errors import StoreUnreachable
from .store_watch import payload

#: Attempts of a commit whose connection was lost, and the seconds between them (the
#: library's retry of its insert).
INSERT_ATTEMPTS = 10
INSERT_WAIT = 0.2

#: The longest name PostgreSQL takes for a channel (NAMEDATALEN - 1 bytes).
CHANNEL_LENGTH = 63

#: Seconds a statement may run: PostgreSQL cancels one that runs longer (its
#: ``statement_timeout``), and the server gives up on an answer that has not come
#: ``POSTGRES_CONNECT_TIMEOUT`` seconds after that (see :func:`bound_waits`). The server's own
#: statements take milliseconds; a long campaign's export or the host's analytics, seconds.
STATEMENT_TIMEOUT = 30


def channel_of(schema: str, table: str) -> str:
    """The channel a store's commits are announced on: its table's name *and its schema's*.

    The library names it after the table alone, so that two hosts' stores in two schemas of one
    database (``CAPES_DATABASE_URL=…?schema=``) heard each other's commits: each one's writers
    and read models woke for the other's (and its store watch was told of campaigns it does not
    hold). A name too long for PostgreSQL ends in a digest of the whole, so that two long
    names stay apart.
    """
    name = f"{schema}_{table}"
    if len(name.encode()) <= CHANNEL_LENGTH:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:16]
    return f"{name.encode()[:CHANNEL_LENGTH - 17].decode(errors='ignore')}_{digest}"


class CampaignsPostgresRecorder(PostgresApplicationRecorder):
    """``PostgresApplicationRecorder`` without the table lock on insert (same table), each
    commit one statement."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.channel_name = channel_of(self.datastore.schema, self.events_table_name)
        table = SQL("{0}.{1}").format(Identifier(self.datastore.schema),
                                      Identifier(self.events_table_name))
        # The lock timeout, the SHARE lock and the SELECT in one message, outside an explicit
        # transaction: PostgreSQL runs them as one transaction of their own and lets go of the
        # lock when the SELECT ends, without waiting for the client. With BEGIN, each statement
        # and COMMIT (five round trips), the lock stayed taken while the reader received the
        # SELECT's answer and sent its COMMIT, and every insert waited for it; the read models'
        # process, a reader, runs at SCHED_IDLE and may wait long for a core between the two.
        self._last_position = SQL("; ").join([
            self.lock_table_statements[0],
            SQL("LOCK TABLE {0} IN SHARE MODE").format(table),
            self.max_notification_id_statement])
        # pg_notify is volatile: PostgreSQL runs the WITH once, whatever joins it. The events
        # go as four arrays, one a column, of values psycopg's C code dumps: as an array of
        # the library's composite type, each field was quoted by a regular expression in
        # Python (a fifth of a commit's time in the writer).
        self._insert_at_once = SQL(
            "WITH notified AS (SELECT pg_notify(%s, %s)) "
            "INSERT INTO {0} (originator_id, originator_version, topic, state) "
            "SELECT e.originator_id, e.originator_version, e.topic, e.state "
            "FROM unnest(%s::{1}[], %s::bigint[], %s::text[], %s::bytea[]) "
            "AS e (originator_id, originator_version, topic, state), notified "
            "RETURNING notification_id").format(
                table, SQL(self.datastore.originator_id_type))
        self._same = SQL(
            "SELECT notification_id, originator_id, originator_version, topic, state FROM {0} "
            "WHERE (originator_id, originator_version) IN "
            "(SELECT * FROM unnest(%s::{1}[], %s::bigint[]))").format(
                table, SQL(self.datastore.originator_id_type))
        self._changes = SQL(
            "SELECT originator_id, MAX(originator_version) AS version FROM {0} "
            "WHERE notification_id > %s AND notification_id <= %s "
            "GROUP BY originator_id").format(table)

    def insert_events(self, stored_events: Sequence[Any], **kwargs: Any) -> Sequence[int] | None:
        """Store ``stored_events`` all or none, with the notification of the campaigns they
        write, in one statement (see the module's docstring); their notification ids, in
        their order. Raises the library's ``IntegrityError`` when one of their versions is
        taken (nothing stored, nothing notified).

        A connection lost on the way is tried again, as the library does (up to
        :data:`INSERT_ATTEMPTS` times, :data:`INSERT_WAIT` s apart). But a commit whose
        connection dropped after PostgreSQL had it may have been stored: tried again, it finds
        its versions taken — by itself. So after a lost connection a taken version is looked
        at: if the stored events are these very ones, their ids are the answer. Taken for
        another writer's, the writer decided the command again on the campaign that already
        held it: stored twice (a narration, a roll), or refused by the rules it had passed."""
        if not stored_events:
            return []
        uncertain = False
        for attempt in range(1, INSERT_ATTEMPTS + 1):
            try:
                return self._insert(stored_events)
            except IntegrityError:
                found = self._stored_ids(stored_events) if uncertain else None
                if found is None:
                    raise
                return found
            except (InterfaceError, OperationalError):
                if attempt == INSERT_ATTEMPTS:
                    raise
                uncertain = True
                time.sleep(INSERT_WAIT)
        raise AssertionError("unreachable")  # pragma: no cover

    def _insert(self, stored_events: Sequence[Any]) -> list[int]:
        """One attempt of :meth:`insert_events`."""
        columns = (self.channel_name, payload(_written(stored_events)),
                   [e.originator_id for e in stored_events],
                   [e.originator_version for e in stored_events],
                   [e.topic for e in stored_events], [e.state for e in stored_events])
        timeout = bool(self.datastore.lock_timeout)
        with self.datastore.get_connection() as conn, conn.cursor() as curs, \
                conn.transaction() if timeout else contextlib.nullcontext():
            if timeout:
                # An operator's POSTGRES_LOCK_TIMEOUT bounds the insert's wait for a version
                # another transaction is inserting, as in the library's insert: it holds for
                # a transaction, so then the statement runs in one (two round trips more).
                curs.execute(self.lock_table_statements[0])
            curs.execute(self._insert_at_once, columns, prepare=True)
            # Each row draws its id from the sequence as it is inserted, in the order given.
            ids: list[int] = sorted(row["notification_id"] for row in curs.fetchall())
        if len(ids) != len(stored_events):
            raise ProgrammingError(f"{len(stored_events)} events stored, {len(ids)} ids returned")
        return ids

    def _stored_ids(self, stored_events: Sequence[Any]) -> list[int] | None:
        """The notification ids of ``stored_events`` if every one of them is stored as given
        (same campaign, version, topic and body), else None."""
        with self.datastore.cursor() as curs:
            curs.execute(self._same, ([e.originator_id for e in stored_events],
                                      [e.originator_version for e in stored_events]))
            found = {(row["originator_id"], row["originator_version"]): row
                     for row in curs.fetchall()}
        ids = []
        for event in stored_events:
            row = found.get((event.originator_id, event.originator_version))
            if row is None or row["topic"] != event.topic or bytes(row["state"]) != event.state:
                return None
            ids.append(row["notification_id"])
        return sorted(ids)

    def max_notification_id(self) -> int | None:
        """The last position such that every insert that drew an id up to it has ended: a
        reader that reads up to it misses nothing that commits later (an insert that begins
        after it draws a higher id). One round trip: see ``_last_position``."""
        with self.datastore.cursor() as curs:
            curs.execute(self._last_position)
            while curs.description is None and curs.nextset():
                pass  # the lock timeout's and the lock's results: no rows
            row = curs.fetchone()
            assert row is not None
            found: int | None = row["max"]
            return found

    def changes_since(self, position: int, most: int) -> tuple[int, list[tuple[Any, int]]]:
        """What was stored after ``position``: the last position (as
        :meth:`max_notification_id` gives it: every insert up to it has ended) and, for each
        campaign written to since, its last version (none when more than ``most`` positions
        passed: the caller then forgets everything rather than have them all read), without
        the events' bodies. For the writer's look at the store before a group
        (``Committer._sync``), which took the last position and then every event after it,
        bodies and all. Everything up to the last position is committed once it is read, so
        the campaigns are read after the lock is let go."""
        last = self.max_notification_id() or 0
        if last <= position or last - position > most:
            return last, []
        with self.datastore.cursor() as curs:
            curs.execute(self._changes, (position, last), prepare=True)
            return last, [(found["originator_id"], found["version"]) for found in curs.fetchall()]

    def select_notifications(
        self,
        start: int | None,
        limit: int,
        stop: int | None = None,
        topics: Sequence[str] = (),
        *,
        inclusive_of_start: bool = True,
    ) -> Sequence[Notification]:
        """The library's, stopping at :meth:`max_notification_id` unless ``stop`` is given."""
        if stop is None:
            stop = self.max_notification_id()
            if stop is None:
                return []
        found: Sequence[Notification] = super().select_notifications(
            start, limit, stop, topics, inclusive_of_start=inclusive_of_start)
        return found


def _written(stored_events: Sequence[Any]) -> dict[Any, int]:
    """The campaigns ``stored_events`` write to, each with its last version."""
    written: dict[Any, int] = {}
    for event in stored_events:
        if written.get(event.originator_id, 0) < event.originator_version:
            written[event.originator_id] = event.originator_version
    return written


# -- bounded waits ------------------------------------------------------------------------------


def bound_waits(datastore: PostgresDatastore) -> None:
    """Make every wait of ``datastore`` for PostgreSQL a bounded one, before it first connects.

    ``wait``, the library's ``POSTGRES_CONNECT_TIMEOUT`` (this project's default: 3 s), bounds:

    - a wait for a connection: the pool's (the library's setting), and each attempt to connect
      (libpq's ``connect_timeout``; psycopg's own default is 130 s). A wait that ends with no
      connection is not tried again (:class:`StorePool`): each of the library's reads and
      writes was tried ten times, each waiting ``wait`` seconds;
    - a network that falls silent under a connection, dropping packets without a word: TCP
      keepalives after ``wait`` seconds of quiet, and ``tcp_user_timeout`` for bytes sent and
      never acknowledged (both libpq's), drop the connection;
    - an answer: PostgreSQL cancels a statement after :data:`STATEMENT_TIMEOUT` seconds
      (``statement_timeout``), and a connection whose answer has not come ``wait`` seconds
      after that is closed (:class:`AnsweringConnection`). A proxy or a NAT on the way (a
      TCP proxy, PgBouncer, a cloud database's proxy) answers TCP's keepalives itself,
      whatever lies behind it: only the answer's deadline notices PostgreSQL gone silent
      behind it.

    Each of these fails the read or the write with the library's ``OperationalError`` or
    :class:`StoreUnreachable`: a 503 naming the store for a request. The pool goes on trying
    to connect in the background (psycopg's reconnection, given ``wait`` seconds a round, so
    that once PostgreSQL is back the next request finds it at once, not after a backoff of
    minutes).

    Why here: the library builds the pool without these (it hands ``POSTGRES_CONNECT_TIMEOUT``
    to the pool's wait alone), so a request waited ten times 30 s for a PostgreSQL that
    refused it, and for ever for one behind a silent network."""
    old = datastore.pool
    assert isinstance(old.kwargs, dict), "the library's pool is given its settings as a dict"
    wait = old.timeout
    seconds = max(2, math.ceil(wait))  # libpq's connect_timeout: whole seconds, 2 at least
    configure = datastore.after_connect_func()
    statement = SQL("SET statement_timeout = {0}").format(Literal(f"{STATEMENT_TIMEOUT}s"))
    answer_within = STATEMENT_TIMEOUT + wait

    def after_connect(conn: psycopg.Connection[Any]) -> None:
        if isinstance(conn, AnsweringConnection):
            conn.answer_within = answer_within
        configure(conn)
        conn.execute(statement)

    datastore.pool = StorePool(
        connection_class=AnsweringConnection,
        kwargs={**old.kwargs, **tcp_options(seconds)},
        min_size=old.min_size,
        max_size=old.max_size,
        open=False,
        configure=after_connect,
        timeout=wait,
        max_waiting=old.max_waiting,
        max_lifetime=old.max_lifetime,
        check=ConnectionPool.check_connection if datastore.pre_ping else None,
        reconnect_timeout=wait,
        get_password_func=old.get_password_func,
    )
    old.close()  # never opened


def tcp_options(seconds: int) -> dict[str, Any]:
    """libpq's options that bound the waits of a connection on the network (see
    :func:`bound_waits`): connecting, and a peer gone silent — keepalives after ``seconds`` of
    quiet, three of them ``seconds`` apart, and sent bytes unacknowledged as long."""
    return {
        "connect_timeout": seconds,
        "keepalives": 1,
        "keepalives_idle": seconds,
        "keepalives_interval": seconds,
        "keepalives_count": 3,
        "tcp_user_timeout": 4 * seconds * 1000,
    }


class AnsweringConnection(psycopg.Connection[Any]):
    """A connection that waits for PostgreSQL's answer :attr:`answer_within` seconds at most.

    psycopg waits on the socket in short intervals (to let a Ctrl-C through), telling the
    operation each time that nothing came: that is where the deadline is looked at
    (:func:`_within`). A wait that ends with no answer closes the connection — what it would
    have said next is not known — and raises ``psycopg.OperationalError``, as a connection
    lost does: the pool replaces it, and a write tried again finds out whether the first try
    was stored (:meth:`CampaignsPostgresRecorder.insert_events`). A wait given a deadline of
    its own (psycopg's, for a listener's notifications) keeps it."""

    #: Seconds to wait for an answer; None: for ever (set by :func:`bound_waits`).
    answer_within: float | None = None
    #: Whether the connection was closed for want of an answer (the pool's others may be
    #: behind the same silent network: :class:`StorePool` replaces them).
    unanswered = False

    def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
        if timeout is not None:  # the caller's own deadline (psycopg 3.3's notifies())
            return super().wait(gen, interval, timeout)
        within = self.answer_within
        if within is None or not interval:
            return super().wait(gen, interval)
        try:
            return super().wait(_within(gen, within), interval)
        except _NoAnswer:
            self.unanswered = True
            self.pgconn.finish()
            raise psycopg.OperationalError(
                f"PostgreSQL did not answer within {within:g} s") from None


class _NoAnswer(Exception):
    """An operation's deadline passed with no answer (see :class:`AnsweringConnection`)."""


def _within(gen: Any, seconds: float) -> Any:
    """psycopg's operation ``gen``, which raises :class:`_NoAnswer` when it is told, past
    ``seconds`` from now, that nothing came (its waits run in intervals: psycopg then sends
    it ``READY_NONE``, a falsy value). Everything else goes through unchanged."""
    deadline = time.monotonic() + seconds
    try:
        state = next(gen)
        while True:
            ready = yield state
            if not ready and time.monotonic() >= deadline:
                gen.close()
                raise _NoAnswer
            state = gen.send(ready)
    except StopIteration as done:
        return done.value


class StorePool(ConnectionPool[Any]):
    """The library's pool, but that a wait for a connection that ends with none raises
    :class:`StoreUnreachable`, which the library's reads and writes do not try again (they
    try its ``OperationalError`` ten times, each waiting as long again), and that a
    connection closed for want of an answer (:class:`AnsweringConnection`) takes the pool's
    idle ones with it: made on the same network, they would each keep a request waiting as
    long."""

    def getconn(self, timeout: float | None = None) -> Any:
        try:
            return super().getconn(timeout)
        except PoolTimeout as e:
            waited = self.timeout if timeout is None else timeout
            raise StoreUnreachable(f"no connection to PostgreSQL within {waited:g} s") from e

    def putconn(self, conn: Any) -> None:
        if getattr(conn, "unanswered", False):
            self.drain()
        super().putconn(conn)
