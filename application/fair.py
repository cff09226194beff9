"""Provably fair dice: the commit-reveal seeds and the HMAC construction (R-FAIR-1..5).

When a scene starts the server draws a secret 32-byte seed and appends only its SHA-256
(``DiceCommitted``). The seats may add seeds of their own until the scene's first roll
(``SeatSeedAdded``, then ``SeedsClosed``). Die number ``counter`` of the campaign, rolled in
scene ``scene``, is::

    key      = the server seed (32 bytes)
    message  = b"capes-dice-v1" ‖ 0x00
               ‖ campaign id (16 bytes, RFC 4122 order)
               ‖ scene (4 bytes, big-endian) ‖ counter (8 bytes, big-endian)
               ‖ number of seat seeds (2 bytes, big-endian)
               ‖ for each seat seed, in ascending seat order:
                     seat (2 bytes, big-endian) ‖ length of the seed's UTF-8 (2 bytes,
                     big-endian) ‖ the seed's UTF-8 bytes
               ‖ attempt (4 bytes, big-endian), from 0
    block    = HMAC-SHA256(key, message)
    die      = 1 + (b mod 6) for the first byte b of block with b < 252;
               no such byte (probability 2^-192): the next attempt

Bytes 252..255 are rejected so each face keeps exactly 42 of the 252 accepted byte values: no
modulo bias. When the scene ends the seed is revealed (``DiceRevealed``) and anyone can check
it against the commitment and recompute every die of the scene.

Until then the seed lives only in :class:`DiceSeeds`, an eventsourcing application of its own
(its own tables in the same store), never in a campaign's log, a snapshot, a response or an
export.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sys
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from itertools import count
from threading import Lock
from typing import Any
from uuid import UUID, uuid5

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import Aggregate
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore
from eventsourcing.utils import Environment, EnvType, get_topic, register_topic

from .bounded import BoundedApplication
from .sqlite_store import checkpoint_elsewhere

# Stores written before the layout of issue 10 name this module's aggregate events by their
# old module ("api.fair:…"): they resolve here.
register_topic("api.fair", sys.modules[__name__])

#: Bytes of a server seed.
SEED_BYTES = 32
#: Prefix of every HMAC message: the construction's name and version.
DOMAIN = b"capes-dice-v1\x00"
SIDES = 6
#: Bytes at or above this are rejected: 252 = 42 * 6.
LIMIT = 256 - 256 % SIDES


def new_seed() -> bytes:
    """A fresh server seed from the operating system's CSPRNG."""
    return secrets.token_bytes(SEED_BYTES)


def commitment(seed: bytes) -> str:
    """What ``DiceCommitted`` shows of a seed: its SHA-256, lowercase hex."""
    return hashlib.sha256(seed).hexdigest()


def message(campaign_id: UUID, scene: int, counter: int,
            seeds: Sequence[tuple[int, str]], attempt: int = 0) -> bytes:
    """The HMAC message of one die (see the module's documentation for the layout)."""
    parts = [DOMAIN, campaign_id.bytes, scene.to_bytes(4, "big"), counter.to_bytes(8, "big"),
             len(seeds).to_bytes(2, "big")]
    for seat, seed in sorted(seeds):
        raw = seed.encode()
        parts += [seat.to_bytes(2, "big"), len(raw).to_bytes(2, "big"), raw]
    parts.append(attempt.to_bytes(4, "big"))
    return b"".join(parts)


def derive(seed: bytes, campaign_id: UUID, scene: int, counter: int,
           seeds: Sequence[tuple[int, str]] = ()) -> int:
    """The die (1..6) drawn as roll ``counter`` of the campaign in ``scene`` (R-FAIR-4)."""
    for attempt in count():
        block = hmac.new(seed, message(campaign_id, scene, counter, seeds, attempt),
                         hashlib.sha256).digest()
        for byte in block:
            if byte < LIMIT:
                return 1 + byte % SIDES
    raise AssertionError("unreachable")  # pragma: no cover


# -- the secret store --------------------------------------------------------------------------


class SceneSeed(Aggregate):
    """One server seed, stored under its campaign and commitment."""

    @classmethod
    def create_id(cls, campaign_id: UUID, commitment: str, **_: Any) -> UUID:
        return seed_id(campaign_id, commitment)

    def __init__(self, campaign_id: UUID, commitment: str, seed: str) -> None:
        self.campaign_id = campaign_id
        self.commitment = commitment
        self.seed = seed


_NAMESPACE = UUID("5b0c43e2-64c1-4d1e-9b0f-2f6a4f0c9d11")


def seed_id(campaign_id: UUID, commitment: str) -> UUID:
    return uuid5(_NAMESPACE, f"{campaign_id}/{commitment}")


class SeedsSQLiteRecorder(SQLiteApplicationRecorder):
    """On SQLite, keep the seeds out of the campaigns' events table (see
    application.credentials)."""

    def __init__(self, datastore: SQLiteDatastore, events_table_name: str = "diceseeds_events"):
        super().__init__(datastore, events_table_name)
        checkpoint_elsewhere(datastore)  # on the writer's thread too


#: Settings passed on from the campaigns' store: where to store, and how to encrypt.
_STORE_KEYS = ("PERSISTENCE_MODULE", "SQLITE_", "POSTGRES_", "CIPHER_", "COMPRESSOR_")
_CACHED = 4096


class DiceSeeds(BoundedApplication):
    """The server seeds of every campaign's scenes, in tables of their own (R-FAIR-1).

    A seed is written here before its commitment is appended to the campaign, so a commitment
    never outlives its seed (a seed whose command failed is simply never used). It survives a
    restart like any stored event. Nothing here is reachable from the HTTP API.
    """

    name = "DiceSeeds"

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        settings = {k: v for k, v in (env or {}).items() if k.startswith(_STORE_KEYS)}
        if settings.get("PERSISTENCE_MODULE") == "eventsourcing.sqlite":
            settings["APPLICATION_RECORDER_TOPIC"] = get_topic(SeedsSQLiteRecorder)
        super().__init__(settings)
        #: Seeds by (campaign, commitment): asked for at every roll, so no uuid5 per lookup.
        self._cache: OrderedDict[tuple[UUID, str], bytes] = OrderedDict()
        self._lock = Lock()

    def construct_env(self, name: str, env: EnvType | None = None) -> Environment:
        """Exactly the settings given: os.environ is not merged in (see Campaigns)."""
        return Environment(name, dict(env or {}))

    def draw(self, campaign_id: UUID) -> str:
        """A new secret seed for ``campaign_id``, stored; returns its commitment."""
        seed = new_seed()
        committed = commitment(seed)
        self.save(SceneSeed(campaign_id=campaign_id, commitment=committed, seed=seed.hex()))
        self._remember((campaign_id, committed), seed)
        return committed

    def seed(self, campaign_id: UUID, committed: str) -> bytes | None:
        """The seed behind ``committed``, or None if this store never drew it."""
        key = (campaign_id, committed)
        with self._lock:
            found = self._cache.get(key)
        if found is not None:
            return found
        try:
            stored: SceneSeed = self.repository.get(seed_id(campaign_id, committed))
        except AggregateNotFoundError:
            return None
        seed = bytes.fromhex(stored.seed)
        if commitment(seed) != committed:  # pragma: no cover - a damaged secret store
            return None
        self._remember(key, seed)
        return seed

    def _remember(self, key: tuple[UUID, str], seed: bytes) -> None:
        with self._lock:
            self._cache[key] = seed
            while len(self._cache) > _CACHED:
                self._cache.popitem(last=False)

    def __repr__(self) -> str:
        return f"DiceSeeds({self.factory.__class__.__module__})"
