"""Events of the record: past tense, frozen, tagged by class name like an edition's."""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID

import msgspec

from .model import TableOptions


class RecordEvent(msgspec.Struct, frozen=True, tag_field="type", forbid_unknown_fields=True):
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


RECORD_EVENT_TYPES: tuple[type[RecordEvent], ...] = (
    TableOptionsSet, Undone, DisputeOpened, DisputeVoted, DisputeSettled, Rewound, ForkMade,
    ForkedFrom,
)
