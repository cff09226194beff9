"""The timeline read model: every campaign's log, one row per event, with the acting seat, the
time, the narration, and whether an undo or an upheld dispute has reverted it since.

An ``Undone`` or ``Rewound`` event marks the stretch it reverts (``first``..``last``) as
reverted, by the position of the undo or rewind, in the same transaction as its own row: the
flags always agree with ``domain.record.is_reverted`` of the campaign's record. Rows are never
deleted. It needs no campaign state, so it is the cheapest read model to rebuild.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

import msgspec

from domain.record.events import Rewound, Undone

from .model import Change, ReadModel
from .views import Op, PostgresView, SQLiteView

NAME = "timeline"
TABLE = "capes_timeline"
DDL = (
    f"CREATE TABLE IF NOT EXISTS {{schema}}{TABLE} (campaign_id TEXT NOT NULL, "
    "version INTEGER NOT NULL, position BIGINT NOT NULL, at TEXT NOT NULL, type TEXT NOT NULL, "
    "seat INTEGER, narration TEXT NOT NULL, command INTEGER NOT NULL, event TEXT NOT NULL, "
    "reverted INTEGER NOT NULL DEFAULT 0, reverted_by INTEGER, "
    "PRIMARY KEY (campaign_id, version))",
)
INSERT = (
    f"INSERT INTO {{schema}}{TABLE} (campaign_id, version, position, at, type, seat, narration, "
    "command, event, reverted, reverted_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, NULL)"
)
REVERT = (
    f"UPDATE {{schema}}{TABLE} SET reverted = 1, reverted_by = ? WHERE campaign_id = ? "
    "AND version BETWEEN ? AND ? AND reverted = 0"
)
_encode = msgspec.json.Encoder().encode


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """One event of a campaign's log."""

    #: Position in the campaign's log (its version after this event).
    position: int
    at: datetime
    type: str
    #: The acting seat; None for the owner or the lobby.
    seat: int | None
    narration: str
    #: Position of the first event of the command this event belongs to.
    command: int
    event: dict[str, Any]
    #: Whether an undo or an upheld dispute has reverted it (R-REC-5).
    reverted: bool
    #: Position of the ``Undone`` or ``Rewound`` event that reverted it.
    reverted_by: int | None = None


class TimelineSQLite(SQLiteView):
    name = NAME
    ddl = DDL
    tables = (TABLE,)


class TimelinePostgres(PostgresView):
    name = NAME
    ddl = DDL
    tables = (TABLE,)


class TimelineModel(ReadModel):
    name = NAME
    views = (TimelineSQLite, TimelinePostgres)
    needs_state = False

    def operations(self, changes: Sequence[Change]) -> list[Op]:
        ops: list[Op] = []
        rows: list[tuple[Any, ...]] = []
        for change in changes:
            r = change.record
            campaign = change.campaign
            rows.append((campaign, r.originator_version, change.position, change.at,
                         type(r.event).__name__, r.seat, r.narration,
                         r.command or r.originator_version, _encode(r.event).decode()))
            if isinstance(r.event, (Undone, Rewound)):
                ops.append((INSERT, rows))
                rows = []
                ops.append((REVERT, [(r.originator_version, campaign, r.event.first,
                                      r.event.last)]))
        ops.append((INSERT, rows))
        return ops

    def entries(self, campaign_id: UUID, after: int = 0, limit: int = 100,
                reverted: bool | None = None) -> list[Entry]:
        """Up to ``limit`` events of the campaign after position ``after``, oldest first;
        ``reverted`` True or False keeps only the reverted ones or only the others."""
        where = "" if reverted is None else f" AND reverted = {int(reverted)}"
        rows = self.store.read(
            "SELECT version, at, type, seat, narration, command, event, reverted, reverted_by "
            f"FROM {{schema}}{TABLE} WHERE campaign_id = ? AND version > ?{where} "
            "ORDER BY version LIMIT ?",
            (str(campaign_id), after, limit),
        )
        return [
            Entry(position=int(version), at=datetime.fromisoformat(at), type=kind, seat=seat,
                  narration=narration, command=int(command), event=msgspec.json.decode(event),
                  reverted=bool(flag), reverted_by=by)
            for version, at, kind, seat, narration, command, event, flag, by in rows
        ]

    def has(self, campaign_id: UUID) -> bool:
        return bool(self.store.read(
            f"SELECT 1 FROM {{schema}}{TABLE} WHERE campaign_id = ? LIMIT 1",
            (str(campaign_id),)))
