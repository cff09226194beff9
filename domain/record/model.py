"""The record's state: what may be undone, what was reverted, the open dispute, the options."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

import msgspec


class Frozen(msgspec.Struct, frozen=True, gc=False, kw_only=True, forbid_unknown_fields=True):
    """Base of the record's structs."""


#: The types of the table's options, with their bounds: shared by the change of some of them
#: (``PATCH …/options``), so both refuse the same values.
Threshold = Literal["majority", "unanimous"]
DisputeMinutes = Annotated[int, msgspec.Meta(ge=1, le=60 * 24 * 30)]


class TableOptions(Frozen, frozen=True, kw_only=True):
    """How a table settles disputes (R-REC-3, R-REC-4)."""

    #: Votes to uphold a dispute: a majority of the seats other than the disputed event's
    #: actor, or all of them.
    dispute_threshold: Threshold = "majority"
    #: Whether the owner may settle a dispute alone.
    owner_settles: bool = False
    #: Minutes a dispute stays open before it expires, changing nothing.
    dispute_minutes: DisputeMinutes = 60 * 24


class Span(Frozen, frozen=True, kw_only=True):
    """The events of one command: positions ``first``..``last`` of the log, made by ``seat``."""

    seat: int | None
    first: int
    last: int
    #: Whether the command rolled a die: its value was seen, so it cannot be undone (R-X-REC-1).
    rolled: bool = False


class Dispute(Frozen, frozen=True, kw_only=True):
    id: int
    #: The seat that opened it.
    seat: int
    #: The disputed event's position: upheld, the game goes back to just before it.
    position: int
    #: The seat that made the disputed event (None: the owner or the lobby).
    actor: int | None
    reason: str
    #: Seats that vote: every seat but the actor (R-REC-3).
    voters: tuple[int, ...]
    #: Votes to uphold it.
    needed: int
    votes: dict[int, bool] = {}
    expires: datetime

    @property
    def ayes(self) -> int:
        return sum(self.votes.values())

    @property
    def noes(self) -> int:
        return sum(not v for v in self.votes.values())


class SceneDice(Frozen, frozen=True, kw_only=True):
    """The dice of the scene being played: committed, not revealed yet (R-FAIR-1..5)."""

    scene: int
    #: SHA-256 of the server's secret seed, lowercase hex.
    commitment: str
    #: The seats' own seeds (seat, seed), in the order they were added (R-FAIR-2).
    seeds: tuple[tuple[int, str], ...] = ()
    #: Whether the scene's first roll has closed the seeds (R-FAIR-3).
    closed: bool = False


class Record(Frozen, frozen=True, kw_only=True):
    options: TableOptions = TableOptions()
    #: Position of the last event folded in.
    version: int = 0
    #: Position of the last event of the game (not of the record).
    game_version: int = 0
    #: Position of the event that started the current scene, if one is being played.
    scene_start: int | None = None
    #: The latest commands, all by one seat, newest last: what that seat may undo (R-REC-1).
    undoable: tuple[Span, ...] = ()
    #: Stretches of the log (first, last) reverted by undos and rewinds (R-REC-5).
    reverted: tuple[tuple[int, int], ...] = ()
    dispute: Dispute | None = None
    disputes: int = 0
    #: The campaign this one was forked from, and at which version (R-REC-6).
    forked_from: tuple[UUID, int] | None = None
    #: Forks made from this campaign: (fork's id, version forked at).
    forks: tuple[tuple[UUID, int], ...] = ()
    #: The dice committed to and not revealed yet, if any (R-FAIR-1).
    dice: SceneDice | None = None
    #: The campaign's roll counter: the highest one any roll has used (R-FAIR-4).
    rolls: int = 0
    #: The campaign this one was imported from, and how many of its events (R-FAIR-7).
    imported_from: tuple[UUID, int] | None = None
