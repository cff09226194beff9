"""The directory read model: one row per campaign, to list and search them.

Name, edition, players, when it was created and last played, its version, whether it is
closed, and the campaign it was forked from. Searching matches the name or a player's name,
case-insensitively.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

import msgspec

from .model import Change, ReadModel, last_per_campaign
from .views import Op, PostgresView, SQLiteView, iso

NAME = "directory"
TABLE = "capes_directory"
DDL = (
    f"CREATE TABLE IF NOT EXISTS {{schema}}{TABLE} (campaign_id TEXT PRIMARY KEY, "
    "name TEXT NOT NULL, edition TEXT NOT NULL, players TEXT NOT NULL, "
    "search TEXT NOT NULL, created TEXT NOT NULL, last_activity TEXT NOT NULL, "
    "version INTEGER NOT NULL, position BIGINT NOT NULL, closed INTEGER NOT NULL, "
    "scenes_played INTEGER NOT NULL, forked_from TEXT, forked_at INTEGER)",
    f"CREATE INDEX IF NOT EXISTS capes_directory_activity ON {{schema}}{TABLE} "
    "(last_activity)",
)
UPSERT = (
    f"INSERT INTO {{schema}}{TABLE} (campaign_id, name, edition, players, search, created, "
    "last_activity, version, position, closed, scenes_played, forked_from, forked_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (campaign_id) DO UPDATE SET "
    "name = excluded.name, edition = excluded.edition, players = excluded.players, "
    "search = excluded.search, created = excluded.created, "
    "last_activity = excluded.last_activity, version = excluded.version, "
    "position = excluded.position, closed = excluded.closed, "
    "scenes_played = excluded.scenes_played, forked_from = excluded.forked_from, "
    "forked_at = excluded.forked_at"
)
COLUMNS = ("campaign_id, name, edition, players, created, last_activity, version, closed, "
           "scenes_played, forked_from, forked_at")


class Listing(msgspec.Struct, frozen=True, kw_only=True):
    """A campaign in the directory."""

    campaign_id: UUID
    name: str
    edition: str
    players: tuple[str, ...]
    created: datetime
    #: Time of its last event.
    last_activity: datetime
    version: int
    closed: bool
    scenes_played: int
    #: The campaign it was forked from, and at which version (R-REC-6).
    forked_from: UUID | None = None
    forked_at: int | None = None


class DirectorySQLite(SQLiteView):
    name = NAME
    ddl = DDL
    tables = (TABLE,)


class DirectoryPostgres(PostgresView):
    name = NAME
    ddl = DDL
    tables = (TABLE,)


def _like(text: str) -> str:
    """A LIKE pattern matching ``text`` anywhere, its own % and _ taken literally."""
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class DirectoryModel(ReadModel):
    name = NAME
    views = (DirectorySQLite, DirectoryPostgres)
    latest_only = True  # a row per campaign, from its last change

    def operations(self, changes: Sequence[Change]) -> list[Op]:
        rows = []
        for change in last_per_campaign(changes):
            campaign = change.after
            assert campaign is not None
            state = campaign.state
            players = [p.name for p in getattr(state, "players", ())]
            name = str(getattr(state, "name", ""))
            forked = campaign.record.forked_from
            rows.append((
                str(campaign.id), name, campaign.edition, msgspec.json.encode(players).decode(),
                "\n".join([name, *players]).lower(), iso(campaign.created_on),
                iso(campaign.modified_on), campaign.version, change.position,
                int(bool(getattr(state, "closed", False))),
                int(getattr(state, "scenes_played", 0)),
                str(forked[0]) if forked else None, forked[1] if forked else None,
            ))
        return [(UPSERT, rows)]

    def search(self, text: str = "", *, closed: bool | None = None, limit: int = 50,
               offset: int = 0) -> list[Listing]:
        """Campaigns whose name or a player's name contains ``text``, last played first."""
        where: list[str] = ["1 = 1"]
        params: list[Any] = []
        if text:
            where.append("search LIKE ? ESCAPE '\\'")
            params.append(_like(text))
        if closed is not None:
            where.append("closed = ?")
            params.append(int(closed))
        rows = self.store.read(
            f"SELECT {COLUMNS} FROM {{schema}}{TABLE} WHERE {' AND '.join(where)} "
            "ORDER BY last_activity DESC, campaign_id LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [_listing(row) for row in rows]

    def get(self, campaign_id: UUID) -> Listing | None:
        rows = self.store.read(f"SELECT {COLUMNS} FROM {{schema}}{TABLE} WHERE campaign_id = ?",
                               (str(campaign_id),))
        return _listing(rows[0]) if rows else None

    def count(self) -> int:
        return int(self.store.read(f"SELECT COUNT(*) FROM {{schema}}{TABLE}")[0][0])


def _listing(row: tuple[Any, ...]) -> Listing:
    (campaign_id, name, edition, players, created, last, version, closed, scenes, forked_from,
     forked_at) = row
    return Listing(
        campaign_id=UUID(campaign_id), name=name, edition=edition,
        players=tuple(msgspec.json.decode(players)), created=datetime.fromisoformat(created),
        last_activity=datetime.fromisoformat(last), version=int(version), closed=bool(closed),
        scenes_played=int(scenes), forked_from=UUID(forked_from) if forked_from else None,
        forked_at=forked_at,
    )
