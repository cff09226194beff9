"""Edition ``capes``: the released game (Capes, 2005), as consolidated in docs/rules.md.

Rule modules, one per rule area, each registering its command handlers and event folds:
``table``, ``characters``, ``scenes``, ``pages``, ``conflicts``, ``turns``, ``rolls``,
``staking``, ``inspirations``, ``resolution``.
"""

from __future__ import annotations

from ..edition import RulesEdition
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

RULES_VERSION = "capes-1.3"

#: The edition as the application runs it (domain.edition.Edition).
EDITION: RulesEdition[CampaignState, Command, Event] = RulesEdition(
    name="capes", rules_version=RULES_VERSION, event_types=EVENT_TYPES,
    command_types=COMMAND_TYPES, initial_state=CampaignState, decide=decide, evolve=evolve,
    dice=with_dice, scene_starts=SceneFramed, scene_ends=SceneEnded,
    rolls=(DieRolled, OverdrawnDieRolled),
    forked=CampaignForked, schema_version=upcasts.schema_version, upcast=upcasts.upcast)

__all__ = ["EDITION", "RULES_VERSION", "CampaignState", "Command", "Event"]
