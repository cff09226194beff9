"""The campaigns' SQLite recorder: the library's, inserting a commit's events in one call.

eventsourcing's SQLite application recorder inserts events one ``execute`` at a time, to read
each one's rowid (its notification id). Every call into ``sqlite3`` releases the GIL and takes
it back, and a busy server's writer waits for it each time: with several commands committed
together that is a wait per event (measured: the largest share of a group commit's time).
Here the events of a transaction go in with one ``executemany``; their ids follow from the
last rowid, since the transaction holds the database's only write lock and each insert takes
the next rowid (the table is the library's, unchanged).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor


class CampaignsSQLiteRecorder(SQLiteApplicationRecorder):
    """``SQLiteApplicationRecorder`` with batched inserts (same table, same ids)."""

    def _insert_events(self, c: SQLiteCursor, stored_events: Sequence[StoredEvent],
                       **_: Any) -> Sequence[int] | None:
        if not stored_events:
            return []
        c.executemany(self.insert_events_statement, [
            (s.originator_id.hex if isinstance(s.originator_id, UUID) else s.originator_id,
             s.originator_version, s.topic, s.state)
            for s in stored_events
        ])
        c.execute("SELECT last_insert_rowid()")
        last = int(c.fetchone()[0])
        return list(range(last - len(stored_events) + 1, last + 1))
