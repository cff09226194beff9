"""Edition ``capees``: CAPEES!, the earlier edition of Capes (seed 004), with an Editor,
Complications, Prominence, Tropes and Victory Points, as ruled in docs/rules.md ("CAPEES!").

Rule modules, one per rule area, each registering its command handlers, folds and forced moves:
``table``, ``heroes``, ``setup``, ``pages``, ``actions``, ``staking``, ``resolution``. What it
shares with edition ``capes`` (dice, sides, splits, Drives, stakes, abilities' costs) comes
from ``domain.shared``.
"""

from __future__ import annotations

from ..edition import RulesEdition
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

RULES_VERSION = "capees-1.2"

#: The edition as the application runs it (domain.edition.Edition).
EDITION: RulesEdition[CampaignState, Command, Event] = RulesEdition(
    name="capees", rules_version=RULES_VERSION, event_types=EVENT_TYPES,
    command_types=COMMAND_TYPES, initial_state=CampaignState, decide=decide, evolve=evolve,
    dice=with_dice, scene_starts=SceneStarted, scene_ends=SceneEnded,
    rolls=(DieRolled, OverdrawnRolled),
    forked=CampaignForked, schema_version=upcasts.schema_version, upcast=upcasts.upcast)

__all__ = ["EDITION", "RULES_VERSION", "CampaignState", "Command", "Event"]
