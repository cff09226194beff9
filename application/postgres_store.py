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
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import (
    IntegrityError,
    InterfaceError,
    Notification,
    OperationalError,
    ProgrammingError,
)
from eventsourcing.postgres import PostgresApplicationRecorder
from psycopg.sql import SQL, Identifier

from .store_watch import payload

#: Attempts of a commit whose connection was lost, and the seconds between them (the
#: library's retry of its insert).
INSERT_ATTEMPTS = 10
INSERT_WAIT = 0.2

#: The longest name PostgreSQL takes for a channel (NAMEDATALEN - 1 bytes).
CHANNEL_LENGTH = 63


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
