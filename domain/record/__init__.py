"""The record of play, whatever the edition: undo, disputes and rewinds, forks.

A campaign is an edition's *game* state plus this *record*. Nothing is ever deleted: an undo
or an upheld dispute appends an event (``Undone``, ``Rewound``) naming the stretch of the log
it reverts, and the game state becomes what it was just before that stretch. The record itself
is never rewound, so who undid what, every dispute and every vote stay known.

Rule ids of this layer are ``R-REC-*`` (docs/rules.md).
"""

from .commands import RECORD_COMMAND_TYPES, OpenDispute, RecordCommand, SettleDispute, Undo, Vote
from .decider import decide, evolve, is_reverted
from .events import RECORD_EVENT_TYPES, RecordEvent
from .model import Record, TableOptions

__all__ = [
    "RECORD_COMMAND_TYPES",
    "RECORD_EVENT_TYPES",
    "OpenDispute",
    "Record",
    "RecordCommand",
    "RecordEvent",
    "SettleDispute",
    "TableOptions",
    "Undo",
    "Vote",
    "decide",
    "evolve",
    "is_reverted",
]
