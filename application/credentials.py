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
import time
from collections.abc import Sequence
from threading import Lock
from typing import TYPE_CHECKING, Any
from uuid import UUID

import msgspec
from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import Aggregate, event
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore
from eventsourcing.utils import EnvType, get_topic, register_topic

from .bounded import BoundedApplication
from .config import POSTGRES_RECORDER
from .schema_lock import creating_tables
from .sqlite_store import checkpoint_elsewhere, local

if TYPE_CHECKING:
    from .store_watch import StoreWatch

# Stores written before the layout of issue 10 name this module's aggregate events by their
# old module ("api.credentials:…"): they resolve here.
register_topic("api.credentials", sys.modules[__name__])

#: seat value of the owner's token
OWNER = 0
#: Campaigns whose last key change a store watch keeps (past it, it starts a new epoch).
WATCHED_CAMPAIGNS = 100_000


def new_token() -> str:
    """A fresh bearer token: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Actor(msgspec.Struct, frozen=True):
    """Who a request acts as: a seat of the campaign, or its owner (seat None)."""

    seat: int | None
    #: The upheld dispute that took the seat away (R-X-REC-8), if one did: the token then
    #: acts as nobody (the server refuses it, naming the dispute).
    removed_by: int | None = None

    @property
    def owner(self) -> bool:
        return self.seat is None


class TableKeys(Aggregate):
    """The token digests of one campaign (the aggregate's id is the campaign's).

    A seat (and the owner, seat :data:`OWNER`) holds one token at a time: issuing a new one
    revokes the one before. Stores written before this rule kept every token issued; read
    again, they keep only each seat's last (the event is the same, its effect stricter).
    """

    @classmethod
    def create_id(cls, campaign_id: UUID, **_: Any) -> UUID:
        return campaign_id

    def __init__(self, campaign_id: UUID, owner: str) -> None:
        self.digests: dict[str, int] = {owner: OWNER}
        #: Seats an upheld dispute took away, each with the dispute (R-X-REC-8): their
        #: tokens are kept, to say so, until the seat is taken again.
        self.removed: dict[int, int] = {}

    @event("SeatKeyIssued")
    def issue(self, seat: int, key: str) -> None:
        self.digests = {k: s for k, s in self.digests.items() if s != seat}
        self.digests[key] = seat
        self.removed = {s: d for s, d in self.removed.items() if s != seat}

    @event("SeatRemoved")
    def remove(self, seat: int, dispute: int) -> None:
        """R-X-REC-8: the seat is no longer at the table, by the upheld ``dispute``."""
        self.removed = {**self.removed, seat: dispute}

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
        checkpoint_elsewhere(datastore)  # on the writer's thread too


class Keyring(BoundedApplication):
    """Stores TableKeys; caches them, re-reading a campaign's keys when a token is unknown or
    the cached keys are older than :attr:`fresh_for` seconds (another process — ``capes
    tokens``, another worker — may have revoked a token since).

    A server reads a busy campaign's keys again before they go stale, off the request's path
    (:meth:`due`, :meth:`refresh`): when they expired under load, every request of that
    campaign until the read was done made one of its own, each in a worker thread, and those
    threads' bursts took the interpreter from the event loop — measured with board reads
    alone on 64 campaigns, a p99 of 30 to 36 ms against 3.4 to 3.6 ms with keys that never
    expire (issue 15).

    On PostgreSQL a server hears every key change as it commits (:meth:`watch_store`): keys
    in memory are then trusted until a change to them is heard, not read again every second
    for every busy campaign."""

    name = "TableKeys"
    #: Seconds the keys in memory are trusted without a store read: how long a token revoked
    #: by another process may still be accepted here (unless the store watch hears it first).
    fresh_for = 2.0

    def __init__(self, env: EnvType | None = None) -> None:
        env = dict(env or {})
        # Keys take no snapshots: given the campaigns' settings, SQLite's one snapshots table
        # would hand a campaign's snapshot (same id) to the keys' repository.
        env.pop("IS_SNAPSHOTTING_ENABLED", None)
        if env.get("PERSISTENCE_MODULE") == "eventsourcing.sqlite":
            env["APPLICATION_RECORDER_TOPIC"] = get_topic(KeysSQLiteRecorder)
        elif env.get("PERSISTENCE_MODULE") == "eventsourcing.postgres":
            # The campaigns' recorder: each commit's notification names the campaign and its
            # keys' version, for the servers' store watches (:meth:`watch_store`).
            env["APPLICATION_RECORDER_TOPIC"] = POSTGRES_RECORDER
        with creating_tables(env):  # one process at a time (issue 13)
            super().__init__(env)
        #: Each campaign's keys in memory, with what they are trusted by: when they were read
        #: (for :attr:`fresh_for`) and the store watch's epoch then (-1: nobody listening).
        self._cache: dict[UUID, tuple[TableKeys, float, int]] = {}
        self._lock = Lock()
        #: Campaigns whose keys are being read again ahead of time (see :meth:`due`).
        self._refreshing: set[UUID] = set()
        #: On PostgreSQL, once :meth:`watch_store` has started it: every commit of keys heard.
        self.watch: StoreWatch | None = None

    def watch_store(self) -> None:
        """On PostgreSQL, hear every process's key changes as they commit (each commit of keys
        notifies their table's channel with the campaign and its keys' version, as the
        campaigns' commits do: :mod:`application.store_watch`). Keys in memory are then
        trusted until a change to them is heard, instead of for :attr:`fresh_for` seconds:
        a busy campaign's keys are no longer read again every second in a worker thread
        (issue 15: on PostgreSQL each server process did so for every table it served), and
        a token revoked by another process is refused here as soon as that is heard, not up
        to :attr:`fresh_for` later. While the watch is not listening (not yet, or it lost its
        connection: a new epoch), keys fall back to :attr:`fresh_for`. A server starts it
        (:func:`api.app.create_app`); :meth:`close` stops it. Elsewhere it does nothing."""
        if self.watch is not None or self.local:
            return
        # Imported here: psycopg is loaded only for a PostgreSQL store.
        from .store_watch import StoreWatch

        if get_topic(type(self.recorder)) == POSTGRES_RECORDER:
            self.watch = StoreWatch(self.recorder, most=WATCHED_CAMPAIGNS)
            self.watch.start()

    def close(self) -> None:
        if self.watch is not None:
            self.watch.stop()
        super().close()

    def _epoch(self) -> int:
        """The store watch's epoch, taken before keys are read (see
        :meth:`StoreWatch.listening_epoch`); -1 without a watch."""
        return self.watch.listening_epoch() if self.watch is not None else -1

    def _watched(self, epoch: int) -> bool:
        """Whether every key change since keys were read in ``epoch`` has been, or will be,
        heard."""
        return self.watch is not None and self.watch.vouches(epoch)

    def open_campaign(self, campaign_id: UUID) -> str:
        """Keys for a new campaign; the owner's token."""
        token = new_token()
        keys = TableKeys(campaign_id=campaign_id, owner=digest(token))
        epoch = self._epoch()
        self.save(keys)
        self._remember(campaign_id, keys, epoch)
        return token

    def issue(self, campaign_id: UUID, seat: int) -> str:
        """A new token for ``seat`` (:data:`OWNER` for the owner), which revokes the seat's
        earlier one. A campaign without keys yet (played from the console: ``capes demo``,
        ``capes fork``) gets them, with an owner token nobody holds until one is issued."""
        with self._lock:
            epoch = self._epoch()
            try:
                keys: TableKeys = self.repository.get(campaign_id)
            except AggregateNotFoundError:
                keys = TableKeys(campaign_id=campaign_id, owner=digest(new_token()))
            token = new_token()
            keys.issue(seat=seat, key=digest(token))
            self.save(keys)
            self._remember(campaign_id, keys, epoch)
            return token

    def remove_seats(self, campaign_id: UUID, seats: Sequence[int], dispute: int) -> None:
        """R-X-REC-8: ``seats`` were taken away by the upheld ``dispute`` (the campaign's log
        says so already): their tokens are refused from now on, naming it, until each seat
        is taken again (:meth:`issue` gives it a new token). Told by the campaigns' store
        (``Campaigns.on_seats_removed``) once the rewind is stored."""
        with self._lock:
            epoch = self._epoch()
            try:
                keys: TableKeys = self.repository.get(campaign_id)
            except AggregateNotFoundError:
                return  # played from the console: nobody holds a token
            held = set(keys.digests.values())
            for seat in seats:
                if seat in held and keys.removed.get(seat) != dispute:
                    keys.remove(seat=seat, dispute=dispute)
            if keys.pending_events:
                self.save(keys)
            self._remember(campaign_id, keys, epoch)

    def _remember(self, campaign_id: UUID, keys: TableKeys, epoch: int = -1) -> None:
        self._cache[campaign_id] = (keys, time.monotonic(), epoch)

    def forget(self, campaign_id: UUID) -> None:
        """Read the campaign's keys anew at its next request (another process changed them)."""
        self._cache.pop(campaign_id, None)

    def _fresh(self, campaign_id: UUID) -> TableKeys | None:
        """The keys in memory if they are still trusted (see :meth:`watch_store`)."""
        cached = self._cache.get(campaign_id)
        if cached is None:
            return None
        keys, read_at, epoch = cached
        if self._watched(epoch):
            assert self.watch is not None
            return None if self.watch.newer(campaign_id, keys.version) else keys
        return keys if time.monotonic() - read_at <= self.fresh_for else None

    @staticmethod
    def _actor(keys: TableKeys | None, seat: int | None) -> Actor | None:
        if keys is None or seat is None:
            return None
        if seat == OWNER:
            return Actor(seat=None)
        return Actor(seat=seat, removed_by=keys.removed.get(seat))

    def cached(self, campaign_id: UUID, token: str) -> Actor | None:
        """Who ``token`` is, from fresh keys in memory only (no store read), or None."""
        keys = self._fresh(campaign_id)
        return self._actor(keys, keys.match(token) if keys is not None else None)

    @property
    def local(self) -> bool:
        """Whether the keys are in a local store (:func:`~application.sqlite_store.local`):
        a look at them may be made on the event loop."""
        return local(self.recorder)

    def confirmed(self, campaign_id: UUID, token: str) -> Actor | None:
        """Who ``token`` is, from keys in memory that are past :attr:`fresh_for` but still the
        store's last: one read of the campaign's last keys event, no reload. None if there
        are none in memory, they changed since (another process issued or revoked a token:
        :meth:`authenticate` reads them again) or the token is not among them.

        Why: a table whose players paused for more than :attr:`fresh_for` seconds (most, between
        two moves) had each next request read its keys again in a worker thread; under load,
        many at once (measured at half load: in the first 100 ms of a round on 64 campaigns,
        requests waited up to 27 ms; some 30 % of that probe's requests over 10 ms)."""
        cached = self._cache.get(campaign_id)
        if cached is None:
            return None
        keys = cached[0]
        last = self.recorder.select_events(campaign_id, desc=True, limit=1)
        if not last or last[0].originator_version != keys.version:
            return None
        self._remember(campaign_id, keys)
        return self._actor(keys, keys.match(token))

    def due(self, campaign_id: UUID) -> bool:
        """Whether the caller should read the campaign's keys again now (:meth:`refresh`, in
        the background): they are in memory and past half of :attr:`fresh_for`, no store
        watch vouches for them (:meth:`watch_store`), and nobody is reading them yet. Claims
        the read: the next callers are told no until it is done."""
        cached = self._cache.get(campaign_id)
        if (cached is None or campaign_id in self._refreshing or self._watched(cached[2])
                or time.monotonic() - cached[1] <= self.fresh_for / 2):
            return False
        self._refreshing.add(campaign_id)
        return True

    def refresh(self, campaign_id: UUID) -> None:
        """Read the campaign's keys again into memory (claimed by :meth:`due`). A failure
        changes nothing: keys that then go stale are read on the request's path, as before."""
        try:
            self._reload(campaign_id)
        finally:
            self._refreshing.discard(campaign_id)

    def _reload(self, campaign_id: UUID) -> TableKeys | None:
        """The campaign's keys read again from the store into memory (None: it has none)."""
        epoch = self._epoch()
        try:
            keys: TableKeys = self.repository.get(campaign_id)
        except AggregateNotFoundError:
            self._cache.pop(campaign_id, None)
            return None
        self._remember(campaign_id, keys, epoch)
        return keys

    def authenticate(self, campaign_id: UUID, token: str) -> Actor | None:
        """Who ``token`` is for this campaign, or None."""
        keys = self._fresh(campaign_id)
        seat = keys.match(token) if keys is not None else None
        if seat is None:
            # Another process may have issued or revoked tokens since: read the keys again.
            keys = self._reload(campaign_id)
            if keys is None:
                return None
            seat = keys.match(token)
        return self._actor(keys, seat)
