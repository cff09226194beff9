"""The Decider of the edition ``capees``: dispatch of commands and events to the rule modules.

As in edition ``capes``: each rule module registers its command handlers on :func:`handle` and
its folds on :func:`apply`; ``decide`` runs the handler, then the registered progressions add
the forced moves (C-SRV-3: a pass for a seat with no legal choice, the next step, the end of a
scene on its Target) until the table waits for a player again.
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
    """Register a forced move, checked after every command until none applies."""
    _progressions.append(func)
    return func


def evolve(state: CampaignState, event: Event) -> CampaignState:
    return apply(event, state)


def after(state: CampaignState, events: Iterable[Event]) -> CampaignState:
    for event in events:
        state = apply(event, state)
    return state


def decide(state: CampaignState, command: Command) -> tuple[Event, ...]:
    checked(command)
    events = list(handle(command, state))
    state = after(state, events)
    while True:
        more: list[Event] = []
        for p in _progressions:
            more = list(p(state))
            if more:
                break
        if not more:
            return tuple(events)
        state = after(state, more)
        events.extend(more)


def checked(command: Command) -> Command:
    """The command's own constraints hold, however it was built (HTTP 400 otherwise)."""
    try:
        msgspec.convert(msgspec.to_builtins(command), type(command))
    except msgspec.ValidationError as e:
        raise Malformed(f"{type(command).__name__}: {in_words(str(e))}") from None
    return command


def with_dice(command: Command, draw: Callable[[], int], counter: int = 0) -> Command:
    """The command with its die drawn by ``draw`` and numbered ``counter`` (C-TABLE-4)."""
    if type(command).rolls:
        return msgspec.structs.replace(command, value=draw(), draw=counter)
    return command
