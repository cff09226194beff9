"""Edition ``capees``: CAPEES!, the earlier edition of Capes (seed 004), with an Editor,
Complications, Prominence, Tropes and Victory Points, as ruled in docs/rules.md ("CAPEES!").

Rule modules, one per rule area, each registering its command handlers, folds and forced moves:
``table``, ``heroes``, ``setup``, ``pages``, ``actions``, ``staking``, ``resolution``. What it
shares with edition ``capes`` (dice, sides, splits, Drives, stakes, abilities' costs) comes
from ``domain.shared``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import (  # noqa: F401 - importing registers the handlers
    actions,
    heroes,
    pages,
    resolution,
    setup,
    staking,
    table,
    upcasts,
)
from .commands import COMMAND_TYPES, Command
from .decider import decide, evolve, with_dice
from .events import (
    EVENT_TYPES,
    CampaignForked,
    DieRolled,
    Event,
    OverdrawnRolled,
    SceneEnded,
    SceneStarted,
)
from .model import CampaignState

RULES_VERSION = "capees-1.0"


class CapeesEdition:
    name = "capees"
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
        return isinstance(event, SceneStarted)

    def ends_scene(self, event: Event) -> bool:
        return isinstance(event, SceneEnded)

    def scene_of(self, state: CampaignState) -> int | None:
        if state.scene is None or state.closed:
            return None
        return state.scene.number

    def rolled(self, event: Event) -> tuple[int, int] | None:
        if isinstance(event, (DieRolled, OverdrawnRolled)):
            return event.draw, event.rolled
        return None

    def fork_event(self, state: CampaignState, name: str) -> Event:
        return CampaignForked(name=name, state=state)

    def schema_version(self, event_type: type[Any]) -> int:
        return upcasts.schema_version(event_type)

    def upcast(self, type_name: str, schema: int, payload: dict[str, Any]) -> dict[str, Any]:
        return upcasts.upcast(type_name, schema, payload)


EDITION = CapeesEdition()

__all__ = ["EDITION", "RULES_VERSION", "CampaignState", "Command", "Event"]
