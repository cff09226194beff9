"""Deciding the record's commands and folding its events.

``decide(record, seats, command)`` takes the seats of the table from the game state (the record
knows no edition). ``evolve(record, position, seat, command_start, event, starts_scene)`` folds
every event of the log, the edition's included, so the record knows what each seat did last
and where the scene began. The game state's own rewind (back to just before a position) is done
by the application, which can load any past version.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from functools import singledispatch
from typing import Any

import msgspec

from ..errors import (
    DomainError,
    InvalidReference,
    Malformed,
    NotPermitted,
    RuleViolation,
    StaleVersion,
)
from .commands import (
    AddSeed,
    ChangeTableOptions,
    ExpireDispute,
    IssueToken,
    OpenDispute,
    RecordCommand,
    SetTableOptions,
    SettleDispute,
    Undo,
    Vote,
    WithdrawDispute,
)
from .events import (
    DiceCommitted,
    DiceRevealed,
    DisputeOpened,
    DisputeSettled,
    DisputeVoted,
    ForkedFrom,
    ForkMade,
    ImportedFrom,
    RecordEvent,
    Rewound,
    SeatSeedAdded,
    SeatTokenIssued,
    SeedsClosed,
    TableOptionsSet,
    Undone,
)
from .model import Dispute, Record, SceneDice, Span, TableOptions

replace = msgspec.structs.replace
OWNER = 0


class DisputePending(StaleVersion):
    """A dispute is open: commands that change the game wait until it is settled (HTTP 409)."""

    def __init__(self, dispute: Dispute) -> None:
        super().__init__(
            f"dispute {dispute.id} about event {dispute.position} is open: the game waits until "
            "it is settled (R-REC-2)"
        )
        self.dispute = dispute


def is_reverted(record: Record, position: int) -> bool:
    """Whether an undo or a rewind reverted the event at ``position`` (R-REC-5)."""
    return any(first <= position <= last for first, last in record.reverted)


def guard(record: Record, command: Any) -> None:
    """Refuse a game command while a dispute is open (R-REC-2)."""
    if record.dispute is not None and not isinstance(command, RecordCommand):
        raise DisputePending(record.dispute)


def check_disputable(record: Record, first: int, game: bool) -> None:
    """R-REC-2: raise unless the move starting at position ``first`` (``game``: whether that
    is a game event, not one of the record's) is a move of the current scene still in effect.
    Between scenes the current scene is the one just ended, until the next is framed
    (R-X-REC-5): ``scene_start`` moves only when a scene is framed.

    What a dispute about the move, and its preview, is refused for; whether a dispute is
    open already is the command's own check."""
    start = record.scene_start
    if start is None or not start <= first <= record.game_version:
        raise RuleViolation("R-REC-2", "only an event of the current scene may be disputed",
                            [f"{start}..{record.game_version}"] if start else [])
    if not game or is_reverted(record, first):
        raise RuleViolation("R-REC-2", f"event {first} is not a move of the game still in "
                            "effect")


def may_dispute(record: Record, first: int, game: bool) -> bool:
    """Whether :func:`check_disputable` lets the move starting at ``first`` be disputed."""
    try:
        check_disputable(record, first, game)
    except RuleViolation:
        return False
    return True


def awaited(record: Record) -> dict[int, tuple[str, ...]] | None:
    """While a dispute is open, what the table waits for instead of the game (R-REC-2): seat
    -> the record's commands it may use to end it (R-REC-3 votes, R-REC-4 the opener's
    withdrawal); None when no dispute is open."""
    dispute = record.dispute
    if dispute is None:
        return None
    moves: dict[int, tuple[str, ...]] = {
        seat: ("vote",) for seat in dispute.voters if seat not in dispute.votes}
    moves[dispute.seat] = (*moves.get(dispute.seat, ()), "withdraw_dispute")
    return dict(sorted(moves.items()))


# -- decide ----------------------------------------------------------------------------------


@singledispatch
def _decide(command: RecordCommand, record: Record, seats: Sequence[int]) -> list[RecordEvent]:
    raise InvalidReference(f"unknown command {type(command).__name__}")


def decide(record: Record, seats: Sequence[int], command: RecordCommand,
           closed: bool = False) -> tuple[RecordEvent, ...]:
    """The record's events for ``command``, or raise a DomainError.

    ``closed``: whether the game is over (its owner closed it): then nothing is accepted,
    not even a dispute or the table's options, so nothing can reopen it (R-X-REC-3); only a
    seat's token is still issued (and recorded), to read it.
    """
    if closed and not isinstance(command, (ExpireDispute, IssueToken)):
        raise NotPermitted("the campaign is closed: nothing but reads, exports and forks "
                           "(R-X-REC-3)")
    if command.seat != OWNER and command.seat not in seats:
        raise InvalidReference(f"no seat {command.seat} at this table")
    return tuple(_decide(command, record, seats))


def _open(record: Record) -> Dispute:
    if record.dispute is None:
        raise RuleViolation("R-REC-3", "no dispute is open")
    return record.dispute


def _settle(record: Record, dispute: Dispute, upheld: bool, by: Any) -> list[RecordEvent]:
    events: list[RecordEvent] = [DisputeSettled(dispute=dispute.id, upheld=upheld, by=by)]
    if upheld:
        # R-REC-5: the game goes back to just before the disputed event.
        events.append(Rewound(dispute=dispute.id, first=dispute.position,
                              last=record.game_version))
    return events


def _tally(record: Record, dispute: Dispute) -> list[RecordEvent]:
    if dispute.ayes >= dispute.needed:
        return _settle(record, dispute, True, "vote")
    if dispute.noes > len(dispute.voters) - dispute.needed:
        return _settle(record, dispute, False, "vote")
    return []


@_decide.register
def _undo(command: Undo, record: Record, seats: Sequence[int]) -> list[RecordEvent]:
    if record.dispute is not None:
        raise DisputePending(record.dispute)
    if not record.undoable or record.undoable[-1].seat != command.seat:
        raise RuleViolation("R-REC-1", "a seat undoes only its own last command, and only "
                            "until another seat acts")
    span = record.undoable[-1]
    if span.rolled:
        # R-X-REC-1: the die's value was in the answer: undoing it would be a free re-roll.
        raise RuleViolation("R-X-REC-1", "a command that rolled a die cannot be undone once "
                            "its value is seen; the table can dispute it instead (R-REC-2)")
    return [Undone(seat=command.seat, first=span.first, last=span.last)]


@_decide.register
def _dispute(command: OpenDispute, record: Record, seats: Sequence[int]) -> list[RecordEvent]:
    if command.seat == OWNER:
        raise NotPermitted("disputes are opened by seats, not by the owner's token")
    if record.dispute is not None:
        raise RuleViolation("R-REC-2", f"dispute {record.dispute.id} is open: one at a time")
    check_disputable(record, command.position, command.disputable)
    voters = tuple(s for s in seats if s != command.actor)
    if voters == (command.seat,) and command.actor is not None:
        # R-X-REC-2: a dispute needs someone besides its opener to agree. At a two-seat table
        # the only other seat is the actor's: it votes too, so it must concede.
        voters = tuple(sorted((command.seat, command.actor)))
    if not voters:  # pragma: no cover - a table has two seats at least
        raise RuleViolation("R-REC-3", "no seat may vote on this dispute")
    needed = len(voters) if record.options.dispute_threshold == "unanimous" else (
        len(voters) // 2 + 1
    )
    opened = DisputeOpened(
        dispute=record.disputes + 1, seat=command.seat, position=command.position,
        actor=command.actor, reason=command.reason, voters=voters, needed=needed,
        expires=command.at + timedelta(minutes=record.options.dispute_minutes),
    )
    events: list[RecordEvent] = [opened]
    if command.seat in voters:
        # Opening a dispute is a vote to uphold it.
        vote = DisputeVoted(dispute=opened.dispute, seat=command.seat, uphold=True)
        events.append(vote)
        after = evolve(evolve(record, record.version, command.seat, record.version, opened),
                       record.version, command.seat, record.version, vote)
        assert after.dispute is not None
        events.extend(_tally(record, after.dispute))
    return events


@_decide.register
def _vote(command: Vote, record: Record, seats: Sequence[int]) -> list[RecordEvent]:
    dispute = _open(record)
    if command.seat not in dispute.voters:
        raise RuleViolation("R-REC-3", "the seats other than the disputed event's actor vote",
                            dispute.voters)
    if command.seat in dispute.votes:
        raise RuleViolation("R-REC-3", f"seat {command.seat} has voted on this dispute already")
    vote = DisputeVoted(dispute=dispute.id, seat=command.seat, uphold=command.uphold)
    counted = replace(dispute, votes={**dispute.votes, command.seat: command.uphold})
    return [vote, *_tally(record, counted)]


@_decide.register
def _owner_settles(command: SettleDispute, record: Record,
                   seats: Sequence[int]) -> list[RecordEvent]:
    dispute = _open(record)
    if command.seat != OWNER:
        raise NotPermitted("only the owner settles a dispute alone")
    if not record.options.owner_settles:
        raise RuleViolation("R-REC-4", "this table's options do not let the owner settle "
                            "disputes alone")
    return _settle(record, dispute, command.uphold, "owner")


@_decide.register
def _withdraw(command: WithdrawDispute, record: Record,
              seats: Sequence[int]) -> list[RecordEvent]:
    dispute = _open(record)
    if command.seat != dispute.seat:
        raise NotPermitted("only the seat that opened a dispute withdraws it")
    return _settle(record, dispute, False, "withdrawal")


@_decide.register
def _expire(command: ExpireDispute, record: Record, seats: Sequence[int]) -> list[RecordEvent]:
    dispute = _open(record)
    if command.at < dispute.expires:
        raise RuleViolation("R-REC-4", f"the dispute is open until {dispute.expires.isoformat()}")
    return _settle(record, dispute, False, "expiry")


@_decide.register
def _options(command: SetTableOptions, record: Record,
             seats: Sequence[int]) -> list[RecordEvent]:
    _owners_options(command)
    return [TableOptionsSet(options=command.options)]


@_decide.register
def _change_options(command: ChangeTableOptions, record: Record,
                    seats: Sequence[int]) -> list[RecordEvent]:
    # The options of R-REC-3 (dispute_threshold) and R-REC-4 (owner_settles,
    # dispute_minutes), merged here with the options as the log has them now: an owner's
    # change made on another page meanwhile is kept, and no "someone wrote first" is asked.
    _owners_options(command)
    changes = {name: value for name in TableOptions.__struct_fields__
               if (value := getattr(command, name)) is not None}
    if not changes:
        raise Malformed("no option given: give one or more of "
                        + ", ".join(TableOptions.__struct_fields__))
    return [TableOptionsSet(options=replace(record.options, **changes))]


def _owners_options(command: RecordCommand) -> None:
    """The table's options (R-REC-3, R-REC-4) are the owner's to set."""
    if command.seat != OWNER:
        raise NotPermitted("only the owner sets the table's options")


@_decide.register
def _add_seed(command: AddSeed, record: Record, seats: Sequence[int]) -> list[RecordEvent]:
    if command.seat == OWNER:
        raise NotPermitted("seeds are added by the seats, not by the owner's token")
    dice = record.dice
    if dice is None:
        raise RuleViolation("R-FAIR-2", "no scene's dice are committed to: a seed is added "
                            "once a scene has started, before its first roll")
    if dice.closed:
        raise RuleViolation("R-FAIR-2", f"the seeds of scene {dice.scene} closed with its "
                            "first roll")
    if any(seat == command.seat for seat, _ in dice.seeds):
        raise RuleViolation("R-FAIR-2", f"seat {command.seat} has added its seed to scene "
                            f"{dice.scene} already")
    return [SeatSeedAdded(seat=command.seat, seed=command.seed)]


@_decide.register
def _issue_token(command: IssueToken, record: Record,
                 seats: Sequence[int]) -> list[RecordEvent]:
    # R-X-REC-4: a seat is issued its own token as it sits down; later only the owner issues.
    if command.holder not in seats:
        raise InvalidReference(f"no seat {command.holder} at this table")
    if command.seat not in (OWNER, command.holder):
        raise NotPermitted("only the owner issues a token for another seat")
    return [SeatTokenIssued(seat=command.holder,
                            by="owner" if command.seat == OWNER else "seat")]


# -- evolve ----------------------------------------------------------------------------------


def evolve(
    record: Record, position: int, seat: int | None, command_start: int, event: Any,
    starts_scene: bool = False, draw: int = 0, rolled: bool = False,
) -> Record:
    """The record after the event at ``position`` (a game event or one of the record's).

    ``draw`` is the roll counter of the die a game event rolled (0: none, R-FAIR-4);
    ``rolled`` whether it rolled one at all (R-X-REC-1).
    """
    record = replace(record, version=max(record.version, position))
    if isinstance(event, RecordEvent):
        return _fold(event, record)
    if starts_scene:
        record = replace(record, scene_start=position)
    return replace(record, undoable=_track(record.undoable, position, seat, command_start,
                                           rolled),
                   game_version=position, rolls=max(record.rolls, draw))


def _track(undoable: tuple[Span, ...], position: int, seat: int | None,
           command_start: int, rolled: bool) -> tuple[Span, ...]:
    """R-REC-1: the tail run of one seat's commands; another seat's command starts it anew."""
    if undoable and command_start <= undoable[-1].last:
        # Another event of the command already being tracked.
        last = undoable[-1]
        return (*undoable[:-1], replace(last, last=position, rolled=last.rolled or rolled))
    if seat is None:
        return ()
    span = Span(seat=seat, first=position, last=position, rolled=rolled)
    if undoable and undoable[-1].seat == seat:
        return (*undoable, span)
    return (span,)


@singledispatch
def _fold(event: RecordEvent, record: Record) -> Record:
    raise TypeError(f"no fold for {type(event).__name__}")


@_fold.register
def _(event: TableOptionsSet, record: Record) -> Record:
    return replace(record, options=event.options)


def _scene_start_after_revert(record: Record, first: int) -> int | None:
    """Reverting back past the event that framed the scene leaves no scene being played."""
    start = record.scene_start
    return None if start is not None and first <= start else start


@_fold.register
def _(event: Undone, record: Record) -> Record:
    return replace(record, undoable=record.undoable[:-1],
                   reverted=(*record.reverted, (event.first, event.last)),
                   scene_start=_scene_start_after_revert(record, event.first))


@_fold.register
def _(event: DisputeOpened, record: Record) -> Record:
    dispute = Dispute(
        id=event.dispute, seat=event.seat, position=event.position, actor=event.actor,
        reason=event.reason, voters=event.voters, needed=event.needed, expires=event.expires,
    )
    return replace(record, dispute=dispute, disputes=event.dispute)


@_fold.register
def _(event: DisputeVoted, record: Record) -> Record:
    d = record.dispute
    if d is None:  # pragma: no cover - never folded without its dispute
        return record
    return replace(record, dispute=replace(d, votes={**d.votes, event.seat: event.uphold}))


@_fold.register
def _(event: DisputeSettled, record: Record) -> Record:
    return replace(record, dispute=None)


@_fold.register
def _(event: Rewound, record: Record) -> Record:
    # R-REC-5: a rewind cannot be undone: nothing before it stays undoable.
    return replace(record, undoable=(), reverted=(*record.reverted, (event.first, event.last)),
                   scene_start=_scene_start_after_revert(record, event.first))


@_fold.register
def _(event: ForkMade, record: Record) -> Record:
    return replace(record, forks=(*record.forks, (event.fork, event.version)))


@_fold.register
def _(event: ForkedFrom, record: Record) -> Record:
    return replace(record, forked_from=(event.source, event.version))


@_fold.register
def _(event: DiceCommitted, record: Record) -> Record:
    return replace(record, dice=SceneDice(scene=event.scene, commitment=event.commitment))


@_fold.register
def _(event: SeatSeedAdded, record: Record) -> Record:
    d = record.dice
    if d is None:  # pragma: no cover - never folded without its commitment
        return record
    return replace(record, dice=replace(d, seeds=(*d.seeds, (event.seat, event.seed))))


@_fold.register
def _(event: SeedsClosed, record: Record) -> Record:
    d = record.dice
    return record if d is None else replace(record, dice=replace(d, closed=True))


@_fold.register
def _(event: DiceRevealed, record: Record) -> Record:
    return replace(record, dice=None)


@_fold.register
def _(event: SeatTokenIssued, record: Record) -> Record:
    return record


@_fold.register
def _(event: ImportedFrom, record: Record) -> Record:
    return replace(record, imported_from=(event.source, event.version))


__all__ = [
    "DisputePending",
    "DomainError",
    "awaited",
    "check_disputable",
    "decide",
    "evolve",
    "guard",
    "is_reverted",
    "may_dispute",
]
