"""The registry of editions by name, and what the application needs of each beyond its Decider.

:data:`EDITIONS` holds each edition's Decider (:class:`~domain.edition.Edition`); :data:`PLAYS`
holds, for the same names, how the application plays it: the commands that create, seat and
close, the seat commands a client may send, and the board, ledgers, diff and moves views with
their types (for typed HTTP answers). The application dispatches on a campaign's edition name
through both, never on an event or command class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from . import capees, capes
from .capees import diff as capees_diff
from .capees import moves as capees_moves
from .capees import views as capees_views
from .capes import diff as capes_diff
from .capes import moves as capes_moves
from .capes import views as capes_views
from .edition import Edition
from .record import Record
from .record.decider import awaited

EDITIONS: dict[str, Edition] = {capes.EDITION.name: capes.EDITION,
                                capees.EDITION.name: capees.EDITION}


@dataclass(frozen=True)
class Play:
    """How the application plays one edition: its commands and views, by role."""

    name: str
    #: The command creating a campaign: (name, starting tokens) -> command.
    create: Callable[[str, int], Any]
    #: The command seating a player: name -> command.
    seat: Callable[[str], Any]
    #: The owner's command closing the campaign.
    close: Callable[[], Any]
    #: The commands a seated player sends (the API fills in their ``seat``).
    seat_command_types: Sequence[type[Any]]
    #: The event class that creates a campaign of this edition.
    created_event: type[Any]
    board: Callable[[Any], Any]
    ledgers: Callable[[Any], tuple[Any, ...]]
    diff: Callable[[Any, Any], Any]
    waiting_for: Callable[[Any], dict[int, tuple[str, ...]]]
    candidates: Callable[[Any], list[Any]]
    board_type: type[Any]
    ledger_type: type[Any]
    diff_type: type[Any]


def _seat_commands(module: Any) -> tuple[type[Any], ...]:
    return tuple(t for t in module.COMMAND_TYPES if issubclass(t, module.SeatCommand))


PLAYS: dict[str, Play] = {
    "capes": Play(
        name="capes",
        create=lambda name, tokens: capes.commands.CreateCampaign(name=name,
                                                                  starting_tokens=tokens),
        seat=lambda name: capes.commands.SeatPlayer(name=name),
        close=capes.commands.CloseCampaign,
        seat_command_types=_seat_commands(capes.commands),
        created_event=capes.events.CampaignCreated,
        board=capes_views.board, ledgers=capes_views.ledgers, diff=capes_diff.diff,
        waiting_for=capes_moves.waiting_for, candidates=capes_moves.candidates,
        board_type=capes_views.Board, ledger_type=capes_views.Ledger,
        diff_type=capes_diff.Diff,
    ),
    "capees": Play(
        name="capees",
        # C-TABLE-3: CAPEES! has no starting tokens; each scene hands them out (C-PROM-1).
        create=lambda name, tokens: capees.commands.CreateCampaign(name=name),
        seat=lambda name: capees.commands.SeatPlayer(name=name),
        close=capees.commands.CloseCampaign,
        seat_command_types=_seat_commands(capees.commands),
        created_event=capees.events.CampaignCreated,
        board=capees_views.board, ledgers=capees_views.ledgers, diff=capees_diff.diff,
        waiting_for=capees_moves.waiting_for, candidates=capees_moves.candidates,
        board_type=capees_views.Board, ledger_type=capees_views.Ledger,
        diff_type=capees_diff.Diff,
    ),
}


def get_edition(name: str) -> Edition:
    """The edition called ``name``; KeyError names the known ones."""
    try:
        return EDITIONS[name]
    except KeyError:
        raise KeyError(f"unknown edition {name!r}; known: {', '.join(EDITIONS)}") from None


def board_of(edition: str, state: Any, record: Record) -> Any:
    """The board of a campaign of ``edition``: its game's, except that while a dispute is open
    ``waiting_for`` offers only what ends it (R-REC-2: the game waits; the board never offers
    what the rules refuse)."""
    shown = play_of(edition).board(state)
    waiting = awaited(record)
    return shown if waiting is None else msgspec.structs.replace(shown, waiting_for=waiting)


def play_of(name: str) -> Play:
    """How the application plays the edition called ``name``."""
    get_edition(name)
    return PLAYS[name]


#: Every event class of every edition -> its edition's name (each class belongs to one).
EDITION_OF_EVENT: dict[type[Any], str] = {}
for _edition in EDITIONS.values():
    for _event_type in _edition.event_types:
        if _event_type in EDITION_OF_EVENT:
            raise TypeError(f"{_event_type.__qualname__} belongs to two editions")
        EDITION_OF_EVENT[_event_type] = _edition.name
