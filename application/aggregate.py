"""A campaign as an immutable aggregate, and the lean projector that folds it from the store.

eventsourcing's own aggregates replay through ``project_aggregate``, which runs a runtime
Protocol ``isinstance`` check per event (most of its replay time, see shared/NOTES.md). Here the
aggregate is a frozen msgspec Struct and :func:`project_campaign` folds the edition's ``evolve``
over the events directly, building one new aggregate at the end. Being immutable, a cached
aggregate can be handed to any number of threads and never needs a deep copy.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

import msgspec

from domain.editions import get_edition
from domain.record import Record, RecordEvent
from domain.record import evolve as record_evolve
from domain.record.events import Rewound, Undone

from .records import Recorded, Snapshot, edition_of


class StaleSnapshot(Exception):
    """A snapshot folded by another rules version (or unreadable): replay the events instead."""


class UnfoldableLog(ValueError):
    """Events that no campaign's log could hold, so no game can be folded from them (an undo
    of events that are not before it, say): an export whose chain holds but whose events were
    written by no rules. A real error, not an assert, since ``python -O`` drops asserts."""


class Campaign(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """A campaign at one version: its edition's state plus the stream's bookkeeping."""

    id: UUID
    #: Version of the last event folded in (the number of events).
    version: int
    created_on: datetime
    modified_on: datetime
    #: Name of the edition of the rules the campaign was created with.
    edition: str
    #: The edition's state (``domain.capes.model.CampaignState`` for ``capes``): the game.
    state: Any
    #: The record of play: what may be undone, what was reverted, the open dispute.
    record: Record = Record()
    #: Head of the hash chain: the last event's ``chain`` (R-FAIR-6), so appends are O(1).
    chain: str = ""
    #: The game states an undo or a rewind may still return to: (version, state) pairs, oldest
    #: first, each the state after the game event (or revert) at that version, kept from just
    #: before the oldest undoable command or the open dispute's move (see :func:`prune_past`).
    #: So an undo, and the vote on a dispute already open, is a lookup, never a load of the
    #: past (which replayed the earlier reverts, each with its own load: the cost of an undo
    #: doubled with every undo, issue 13). A dispute may name any move of the scene (R-REC-2),
    #: but keeping every state since the scene's start made a long scene's snapshots huge (each
    #: snapshot encoded thousands of states); the rare rewind to a move older than this asks
    #: ``game_at``, one load of the nearest snapshot before it.
    past: tuple[tuple[int, Any], ...] = ()


#: Loads the game state of a campaign as it was at a version (for undos and rewinds).
GameAt = Callable[[UUID, int], Any]


def _no_past(campaign_id: UUID, version: int) -> Any:
    raise RuntimeError(f"campaign {campaign_id} reverts to version {version}: no loader given")


#: Told the campaign after each event a fold takes in: (version, modified_on, game state,
#: record, chain head) — what :func:`project_campaign` holds after it, not yet an aggregate.
Step = Callable[[int, datetime, Any, Record, str], None]


def project_campaign(
    aggregate: Campaign | None,
    events: Iterable[Recorded[Any] | Snapshot],
    game_at: GameAt = _no_past,
    each: Step | None = None,
) -> Campaign | None:
    """Fold ``events`` into ``aggregate`` (None: start from nothing).

    eventsourcing calls this with at most one snapshot first, then events in order. Returns
    None when there is nothing at all (the campaign does not exist). Raises StaleSnapshot for a
    snapshot taken by another rules version. An undo or a rewind sets the game back to its
    state just before the reverted stretch (R-REC-5): found in the campaign's ``past`` (the
    states folded since the oldest undoable command or the open dispute's move); a rewind to a
    move older than that (a dispute opened on an old move of a long scene) asks ``game_at`` to
    load it.

    ``each`` (optional) is told the campaign after every event folded in after the first item
    (the read models need the state around each event; one fold of a campaign's events
    costs them less than a fold per event, which builds and prunes an aggregate each).
    """
    items = iter(events)
    if aggregate is None:
        first = next(items, None)
        if first is None:
            return None
        aggregate = _start(first)
    edition = get_edition(aggregate.edition)
    evolve, starts_scene, rolled = edition.evolve, edition.starts_scene, edition.rolled
    state, rec = aggregate.state, aggregate.record
    version, modified, chain = aggregate.version, aggregate.modified_on, aggregate.chain
    past = list(aggregate.past) or [(version, state)]
    for item in items:
        # Only envelopes follow the first item; skipping an isinstance check per item here is
        # most of what makes this projector faster than the library's.
        recorded: Recorded[Any] = item  # type: ignore[assignment]
        event, version = recorded.event, recorded.originator_version
        start = recorded.command or version
        if isinstance(event, RecordEvent):
            rec = record_evolve(rec, version, recorded.seat, start, event)
            if isinstance(event, (Undone, Rewound)):
                if not 1 <= event.first - 1 < version:
                    # No game to return to: before the campaign began, or not yet folded.
                    raise UnfoldableLog(f"event {version} reverts to before event "
                                        f"{event.first}, which is not an event before it")
                state = _state_at(past, event.first - 1)
                if state is None:
                    state = game_at(aggregate.id, event.first - 1)
                past.append((version, state))
        else:
            state = evolve(state, event)
            roll = rolled(event)
            rec = record_evolve(rec, version, recorded.seat, start, event, starts_scene(event),
                                roll[0] if roll else 0, roll is not None)
            past.append((version, state))
        modified, chain = recorded.timestamp, recorded.chain
        if each is not None:
            each(version, modified, state, rec, chain)
    if version == aggregate.version:
        return aggregate
    return msgspec.structs.replace(
        aggregate, version=version, modified_on=modified, state=state, record=rec, chain=chain,
        past=prune_past(past, rec),
    )


def _state_at(past: list[tuple[int, Any]], version: int) -> Any:
    """The game state after the event at ``version`` from ``past``, or None if it reaches
    back no further than that."""
    if not past or past[0][0] > version:
        return None
    index = bisect_right(past, version, key=_version) - 1
    return past[index][1]


def _version(entry: tuple[int, Any]) -> int:
    return entry[0]


def prune_past(past: Sequence[tuple[int, Any]], rec: Record) -> tuple[tuple[int, Any], ...]:
    """``past`` from the entry in effect just before the oldest event a revert can reach
    without a load: the first undoable command (R-REC-1) and the open dispute's move (R-REC-2).
    Both only move forward, so nothing older is needed again but for a dispute opened later on
    an older move of the scene, which loads its state. Deterministic in ``past``
    (if it reaches back that far) and ``rec``: a snapshot's past is checked against it."""
    reach = [rec.undoable[0].first] if rec.undoable else []
    if rec.dispute is not None:
        reach.append(rec.dispute.position)
    if not reach:
        return tuple(past[-1:])
    index = max(bisect_right(past, min(reach) - 1, key=_version) - 1, 0)
    return tuple(past[index:])


def _start(first: Recorded[Any] | Snapshot) -> Campaign:
    """The aggregate of a stream's first item: a snapshot or the creation event."""
    if isinstance(first, Snapshot):
        edition = get_edition(first.edition)
        if first.rules_version != edition.rules_version:
            raise StaleSnapshot(
                f"snapshot of {first.originator_id} v{first.originator_version} is from rules "
                f"{first.rules_version}, not {edition.rules_version}"
            )
        if not first.chain:
            raise StaleSnapshot(f"snapshot of {first.originator_id} v{first.originator_version} "
                                "has no hash chain head")
        return Campaign(
            id=first.originator_id,
            version=first.originator_version,
            created_on=first.created_on,
            modified_on=first.timestamp,
            edition=first.edition,
            state=first.state,
            record=first.record,
            chain=first.chain,
            # A snapshot written when the past reached back to the scene's start keeps only
            # what a revert may look up now: what audit.check_snapshots checks of it.
            past=prune_past(first.past, first.record) if first.past else (),
        )
    edition = edition_of(type(first.event))
    version = first.originator_version
    state = edition.evolve(edition.initial_state(), first.event)
    return Campaign(
        id=first.originator_id,
        version=version,
        created_on=first.timestamp,
        modified_on=first.timestamp,
        edition=edition.name,
        state=state,
        record=record_evolve(Record(), version, first.seat, first.command or version,
                             first.event, edition.starts_scene(first.event)),
        chain=first.chain,
    )
