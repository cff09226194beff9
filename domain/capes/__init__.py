"""Edition ``capes``: the released game (Capes, 2005), as consolidated in docs/rules.md.

Rule modules, one per rule area, each registering its command handlers and event folds:
``table``, ``characters``, ``scenes``, ``pages``, ``conflicts``, ``turns``, ``rolls``,
``staking``, ``inspirations``, ``resolution``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import (  # noqa: F401 - importing registers the handlers
    characters,
    conflicts,
    inspirations,
    pages,
    resolution,
    rolls,
    scenes,
    staking,
    table,
    turns,
)
from .commands import COMMAND_TYPES, Command
from .decider import decide, evolve, with_dice
from .events import EVENT_TYPES, CampaignForked, Event, SceneFramed
from .model import CampaignState

RULES_VERSION = "capes-1.0"


class CapesEdition:
    name = "capes"
    rules_version = RULES_VERSION
    event_types: Sequence[type[Any]] = EVENT_TYPES
    command_types: Sequence[type[Any]] = COMMAND_TYPES

    def initial_state(self) -> CampaignState:
        return CampaignState()

    def decide(self, state: CampaignState, command: Command) -> tuple[Event, ...]:
        return decide(state, command)

    def evolve(self, state: CampaignState, event: Event) -> CampaignState:
        return evolve(state, event)

    def with_dice(self, command: Command, draw: Callable[[], int]) -> Command:
        return with_dice(command, draw)

    def seats(self, state: CampaignState) -> tuple[int, ...]:
        return tuple(p.seat for p in state.players)

    def starts_scene(self, event: Event) -> bool:
        return isinstance(event, SceneFramed)

    def fork_event(self, state: CampaignState, name: str) -> Event:
        return CampaignForked(name=name, state=state)


EDITION = CapesEdition()

__all__ = ["EDITION", "RULES_VERSION", "CampaignState", "Command", "Event"]
