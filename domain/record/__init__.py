"""The record of play, whatever the edition: undo, disputes and rewinds, forks.

A campaign is an edition's *game* state plus this *record*. Nothing is ever deleted: an undo
or an upheld dispute appends an event (``Undone``, ``Rewound``) naming the stretch of the log
it reverts, and the game state becomes what it was just before that stretch. The record itself
is never rewound, so who undid what, every dispute and every vote stay known.

The record also holds the commit-reveal dice of the scene being played (``DiceCommitted``,
``SeatSeedAdded``, ``SeedsClosed``, ``DiceRevealed``) and the campaign's roll counter.

Rule ids of this layer are ``R-REC-*`` and ``R-FAIR-*`` (docs/rules.md).
"""

from .commands import (
    RECORD_COMMAND_TYPES,
    AddSeed,
    OpenDispute,
    RecordCommand,
    SettleDispute,
    Undo,
    Vote,
)
from .decider import decide, evolve, is_reverted
from .events import RECORD_EVENT_TYPES, RecordEvent
from .model import Record, SceneDice, TableOptions

__all__ = [
    "RECORD_COMMAND_TYPES",
    "RECORD_EVENT_TYPES",
    "AddSeed",
    "OpenDispute",
    "Record",
    "RecordCommand",
    "RecordEvent",
    "SceneDice",
    "SettleDispute",
    "TableOptions",
    "Undo",
    "Vote",
    "decide",
    "evolve",
    "is_reverted",
]
