"""The Decider of the edition ``capes``: dispatch of commands and events to the rule modules.

Each rule module registers its command handlers on :func:`handle` and its event folds on
:func:`apply`. ``decide`` runs the handler, then lets :func:`progress` append the automatic
consequences (a phase ends when everyone has passed, a page ends when nothing is left to
resolve, …) so that every state the table can be in is a state waiting for a player.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import singledispatch

import msgspec

from ..errors import InvalidReference, Malformed
from ..text import in_words
from .commands import Command
from .events import Event
from .model import CampaignState

Progression = Callable[[CampaignState], Iterable[Event]]
_progressions: list[Progression] = []


@singledispatch
def handle(command: Command, state: CampaignState) -> Iterable[Event]:
    """The events a command causes; raises a DomainError when refused."""
    raise InvalidReference(f"unknown command {type(command).__name__}")


@singledispatch
def apply(event: Event, state: CampaignState) -> CampaignState:
    """The state after an event."""
    raise TypeError(f"no fold registered for {type(event).__name__}")


def progression(func: Progression) -> Progression:
    """Register an automatic consequence, checked after every command until none applies."""
    _progressions.append(func)
    return func


def evolve(state: CampaignState, event: Event) -> CampaignState:
    return apply(event, state)


def decide(state: CampaignState, command: Command) -> tuple[Event, ...]:
    checked(command)
    events = list(handle(command, state))
    for event in events:
        state = apply(event, state)
    # Automatic consequences, to a fixed point; each progression returns nothing once done.
    while True:
        more = [e for p in _progressions for e in _first(p(state))]
        if not more:
            return tuple(events)
        for event in more:
            state = apply(event, state)
        events.extend(more)


def _first(events: Iterable[Event]) -> list[Event]:
    return list(events)


def after(state: CampaignState, events: Iterable[Event]) -> CampaignState:
    """The state after ``events``: for handlers that decide in steps."""
    for event in events:
        state = apply(event, state)
    return state


def checked(command: Command) -> Command:
    """The command's own constraints (ranges, lengths) hold, however it was built.

    The API decodes bodies with these checks already; a command built in code (the CLI, a
    script) gets the same ones here, as a Malformed error (HTTP 400).
    """
    try:
        msgspec.convert(msgspec.to_builtins(command), type(command))
    except msgspec.ValidationError as e:
        raise Malformed(f"{type(command).__name__}: {in_words(str(e))}") from None
    return command


def with_dice(command: Command, draw: Callable[[], int], counter: int = 0) -> Command:
    """The command with its die drawn by ``draw`` and numbered ``counter`` (R-ROLL-1, R-FAIR-4).

    A command of this edition rolls one die at most.
    """
    if type(command).rolls:
        return msgspec.structs.replace(command, value=draw(), draw=counter)
    return command
