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
    upcasts,
)
from .commands import COMMAND_TYPES, Command
from .decider import decide, evolve, with_dice
from .events import (
    EVENT_TYPES,
    CampaignForked,
    DieRolled,
    Event,
    OverdrawnDieRolled,
    SceneEnded,
    SceneFramed,
)
from .model import CampaignState

RULES_VERSION = "capes-1.1"


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

    def with_dice(self, command: Command, draw: Callable[[], int], counter: int = 0) -> Command:
        return with_dice(command, draw, counter)

    def seats(self, state: CampaignState) -> tuple[int, ...]:
        return tuple(p.seat for p in state.players)

    def starts_scene(self, event: Event) -> bool:
        return isinstance(event, SceneFramed)

    def ends_scene(self, event: Event) -> bool:
        return isinstance(event, SceneEnded)

    def scene_of(self, state: CampaignState) -> int | None:
        # A closed campaign plays no scene: closing it reveals the dice (R-FAIR-5).
        if state.scene is None or state.closed:
            return None
        return state.scene.number

    def rolled(self, event: Event) -> tuple[int, int] | None:
        if isinstance(event, (DieRolled, OverdrawnDieRolled)):
            return event.draw, event.rolled
        return None

    def fork_event(self, state: CampaignState, name: str) -> Event:
        return CampaignForked(name=name, state=state)

    def schema_version(self, event_type: type[Any]) -> int:
        return upcasts.schema_version(event_type)

    def upcast(self, type_name: str, schema: int, payload: dict[str, Any]) -> dict[str, Any]:
        return upcasts.upcast(type_name, schema, payload)


EDITION = CapesEdition()

__all__ = ["EDITION", "RULES_VERSION", "CampaignState", "Command", "Event"]
