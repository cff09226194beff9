"""Commands of the record. ``seat`` 0 is the campaign's owner (the API sets it from the token).

Values the application supplies, never the client: ``OpenDispute.actor`` and ``disputable``
(looked up in the log) and every ``at`` (the server's clock).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, ClassVar

import msgspec

from ..text import MAX_INT, prose
from .model import DisputeMinutes, TableOptions, Threshold

_EPOCH = datetime.fromisoformat("1970-01-01T00:00:00+00:00")

#: The most characters a dispute's reason may have.
REASON_LENGTH = 1000
#: Why a move is disputed (R-REC-2): never blanks alone (R-X-SRV-1).
Reason = Annotated[str, prose(1, REASON_LENGTH)]


class RecordCommand(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", forbid_unknown_fields=True,
):
    """Base of the record's commands."""

    rolls: ClassVar[bool] = False
    #: The acting seat; 0: the owner.
    seat: Annotated[int, msgspec.Meta(ge=0, le=64)] = 0


class Undo(RecordCommand, frozen=True, kw_only=True, tag="undo"):
    """Take back your own last command (R-REC-1)."""


class OpenDispute(RecordCommand, frozen=True, kw_only=True, tag="open_dispute"):
    """Dispute an event of the current scene (R-REC-2)."""

    position: Annotated[int, msgspec.Meta(ge=1, le=MAX_INT)]
    reason: Reason
    actor: int | None = None
    #: Whether the disputed move is the game's: its first event is not one of the record's
    #: own (any of its events may be named, the record's that follow it included).
    disputable: bool = True
    at: datetime = _EPOCH


class Vote(RecordCommand, frozen=True, kw_only=True, tag="vote"):
    """Vote on the open dispute (R-REC-3)."""

    uphold: bool


class SettleDispute(RecordCommand, frozen=True, kw_only=True, tag="settle_dispute"):
    """The owner settles the open dispute alone, if the table allows it (R-REC-4)."""

    uphold: bool


class WithdrawDispute(RecordCommand, frozen=True, kw_only=True, tag="withdraw_dispute"):
    """The seat that opened the dispute withdraws it, changing nothing."""


class ExpireDispute(RecordCommand, frozen=True, kw_only=True, tag="expire_dispute"):
    """Issued by the server when the open dispute's time is up (R-REC-4)."""

    at: datetime = _EPOCH


class SetTableOptions(RecordCommand, frozen=True, kw_only=True, tag="set_table_options"):
    """The owner sets how the table settles disputes."""

    options: TableOptions


class ChangeTableOptions(RecordCommand, frozen=True, kw_only=True, tag="change_table_options"):
    """The owner changes some of the table's options: those given (not None) change, the
    others keep the values they have when the command is decided, whatever was set since the
    owner last looked (``SetTableOptions`` sets them all)."""

    dispute_threshold: Threshold | None = None
    owner_settles: bool | None = None
    dispute_minutes: DisputeMinutes | None = None


class AddSeed(RecordCommand, frozen=True, kw_only=True, tag="add_seed"):
    """Add your own seed to the dice of the scene, before its first roll (R-FAIR-2)."""

    seed: Annotated[str, prose(1, 256)]


class IssueToken(RecordCommand, frozen=True, kw_only=True, tag="issue_token"):
    """Issued by the server when a token for seat ``holder`` is made (R-X-REC-4): by the seat
    itself as it sits down (``seat`` = ``holder``), or by the owner (``seat`` 0)."""

    holder: Annotated[int, msgspec.Meta(ge=1, le=64)]


RECORD_COMMAND_TYPES: tuple[type[RecordCommand], ...] = (
    Undo, OpenDispute, Vote, SettleDispute, WithdrawDispute, ExpireDispute, SetTableOptions,
    ChangeTableOptions, AddSeed, IssueToken,
)
