"""Events of the record: past tense, frozen, tagged by class name like an edition's."""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID

import msgspec

from .model import TableOptions


class RecordEvent(msgspec.Struct, frozen=True, gc=False, tag_field="type",
                  forbid_unknown_fields=True):
    """Base of the record's events."""


class TableOptionsSet(RecordEvent, frozen=True, tag=True):
    options: TableOptions


class Undone(RecordEvent, frozen=True, tag=True):
    """R-REC-1: ``seat`` took back its command at positions ``first``..``last``."""

    seat: int
    first: int
    last: int


class DisputeOpened(RecordEvent, frozen=True, tag=True):
    dispute: int
    seat: int
    position: int
    actor: int | None
    reason: str
    voters: tuple[int, ...]
    needed: int
    expires: datetime


class DisputeVoted(RecordEvent, frozen=True, tag=True):
    dispute: int
    seat: int
    uphold: bool


class DisputeSettled(RecordEvent, frozen=True, tag=True):
    dispute: int
    upheld: bool
    by: Literal["vote", "owner", "expiry", "withdrawal"]


class Rewound(RecordEvent, frozen=True, tag=True):
    """R-REC-5: the game is back to just before ``first``; ``first``..``last`` are reverted."""

    dispute: int
    first: int
    last: int


class ForkMade(RecordEvent, frozen=True, tag=True):
    """R-REC-6: a new campaign ``fork`` starts from this one's state at ``version``."""

    fork: UUID
    version: int


class ForkedFrom(RecordEvent, frozen=True, tag=True):
    """R-REC-6: this campaign starts from ``source``'s state at ``version``."""

    source: UUID
    version: int


class DiceCommitted(RecordEvent, frozen=True, tag=True):
    """R-FAIR-1: the server drew a secret seed for ``scene``'s dice; only its SHA-256 is here
    (lowercase hex)."""

    scene: int
    commitment: str


class SeatSeedAdded(RecordEvent, frozen=True, tag=True):
    """R-FAIR-2: ``seat`` added its own seed to the dice of the scene being played."""

    seat: int
    seed: str


class SeedsClosed(RecordEvent, frozen=True, tag=True):
    """R-FAIR-3: the scene's first roll closes the seeds; every die of it uses those added."""

    scene: int


class DiceRevealed(RecordEvent, frozen=True, tag=True):
    """R-FAIR-5: the server seed of ``scene``'s dice (64 hex digits), once nothing more is
    drawn from it."""

    scene: int
    seed: str


class ImportedFrom(RecordEvent, frozen=True, tag=True):
    """R-FAIR-7: the events before this one are campaign ``source``'s first ``version`` events,
    imported after their chain was verified to end at ``chain``."""

    source: UUID
    version: int
    chain: str


class SeatTokenIssued(RecordEvent, frozen=True, tag=True):
    """R-X-REC-4: a bearer token for ``seat`` was (re)issued, by ``by``: ``"seat"`` (the player
    taking the seat) or ``"owner"``. The token itself is never in the log."""

    seat: int
    by: Literal["seat", "owner"]


RECORD_EVENT_TYPES: tuple[type[RecordEvent], ...] = (
    TableOptionsSet, Undone, DisputeOpened, DisputeVoted, DisputeSettled, Rewound, ForkMade,
    ForkedFrom, DiceCommitted, SeatSeedAdded, SeedsClosed, DiceRevealed, ImportedFrom,
    SeatTokenIssued,
)
