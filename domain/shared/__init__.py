"""What the editions share: dice, sides, splits, Drives and Debt, stakes, abilities' costs.

Plain functions on numbers, with no edition's state in them, so ``domain.capes`` and
``domain.capees`` can both use them without importing each other (RULES-CAPEES.md, "Shared
with edition capes"). Each edition cites its own rule ids where it calls them.
"""

from .abilities import can_roll, is_blocking
from .dice import FACES, is_fair, overdrawn_result
from .drives import is_overdrawn, stake_room
from .sides import controlling
from .splits import split_values
from .stakes import losing_return

__all__ = [
    "FACES",
    "can_roll",
    "controlling",
    "is_blocking",
    "is_fair",
    "is_overdrawn",
    "losing_return",
    "overdrawn_result",
    "split_values",
    "stake_room",
]
