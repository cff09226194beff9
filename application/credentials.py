"""Bearer tokens of a campaign: the owner's and each seat's, stored hashed.

Tokens are random (``secrets``); only their SHA-256 digests are kept, in an eventsourcing
application of their own (``TableKeys``, its own tables in the same store), so they never appear
in a campaign's event log, its exports or its hash chain. Lookups compare every digest with
``hmac.compare_digest`` so the time taken says nothing about which one matched.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sys
from threading import Lock
from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Aggregate, event
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore
from eventsourcing.utils import EnvType, get_topic, register_topic

# Stores written before the layout of issue 10 name this module's aggregate events by their
# old module ("api.credentials:…"): they resolve here.
register_topic("api.credentials", sys.modules[__name__])

#: seat value of the owner's token
OWNER = 0


def new_token() -> str:
    """A fresh bearer token: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Actor(msgspec.Struct, frozen=True):
    """Who a request acts as: a seat of the campaign, or its owner (seat None)."""

    seat: int | None

    @property
    def owner(self) -> bool:
        return self.seat is None


class TableKeys(Aggregate):
    """The token digests of one campaign (the aggregate's id is the campaign's)."""

    @classmethod
    def create_id(cls, campaign_id: UUID, **_: Any) -> UUID:
        return campaign_id

    def __init__(self, campaign_id: UUID, owner: str) -> None:
        self.digests: dict[str, int] = {owner: OWNER}

    @event("SeatKeyIssued")
    def issue(self, seat: int, key: str) -> None:
        # A seat holds one key: a new one (a lost link replaced) revokes the one before.
        self.digests = {k: s for k, s in self.digests.items() if s != seat}
        self.digests[key] = seat

    def match(self, token: str) -> int | None:
        """The seat (OWNER for the owner) whose token this is, in constant time per digest."""
        wanted = digest(token)
        found: int | None = None
        for key, seat in self.digests.items():
            if hmac.compare_digest(key, wanted):
                found = seat
        return found


class KeysSQLiteRecorder(SQLiteApplicationRecorder):
    """On SQLite every application shares one events table unless told otherwise (PostgreSQL
    names tables after the application): keep the keys out of the campaigns' table."""

    def __init__(self, datastore: SQLiteDatastore, events_table_name: str = "tablekeys_events"):
        super().__init__(datastore, events_table_name)


class Keyring(Application[UUID]):
    """Stores TableKeys; caches them, re-reading a campaign's keys when a token is unknown."""

    name = "TableKeys"

    def __init__(self, env: EnvType | None = None) -> None:
        env = dict(env or {})
        # Keys take no snapshots: given the campaigns' settings, SQLite's one snapshots table
        # would hand a campaign's snapshot (same id) to the keys' repository.
        env.pop("IS_SNAPSHOTTING_ENABLED", None)
        if env.get("PERSISTENCE_MODULE") == "eventsourcing.sqlite":
            env["APPLICATION_RECORDER_TOPIC"] = get_topic(KeysSQLiteRecorder)
        super().__init__(env)
        self._cache: dict[UUID, TableKeys] = {}
        self._lock = Lock()

    def open_campaign(self, campaign_id: UUID) -> str:
        """Keys for a new campaign; the owner's token."""
        token = new_token()
        self.save(TableKeys(campaign_id=campaign_id, owner=digest(token)))
        return token

    def issue(self, campaign_id: UUID, seat: int) -> str:
        """A new token for ``seat``; the seat's earlier token no longer works."""
        with self._lock:
            keys: TableKeys = self.repository.get(campaign_id)
            token = new_token()
            keys.issue(seat=seat, key=digest(token))
            self.save(keys)
            self._cache[campaign_id] = keys
            return token

    def cached(self, campaign_id: UUID, token: str) -> Actor | None:
        """Who ``token`` is, from the keys in memory only (no store read), or None."""
        keys = self._cache.get(campaign_id)
        seat = keys.match(token) if keys is not None else None
        return None if seat is None else Actor(seat=None if seat == OWNER else seat)

    def authenticate(self, campaign_id: UUID, token: str) -> Actor | None:
        """Who ``token`` is for this campaign, or None."""
        keys = self._cache.get(campaign_id)
        seat = keys.match(token) if keys is not None else None
        if seat is None:
            # Another worker may have issued it since: read the keys again, once.
            try:
                keys = self.repository.get(campaign_id)
            except AggregateNotFoundError:
                return None
            self._cache[campaign_id] = keys
            seat = keys.match(token)
        if seat is None:
            return None
        return Actor(seat=None if seat == OWNER else seat)
