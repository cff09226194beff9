"""Events of the edition ``capes``: past tense, frozen, self-contained.

An event records what happened, with every value the rules needed (dice values, costs, who got
what), so ``evolve`` only folds and a replay never re-decides or re-rolls anything. The
application wraps each event in an envelope with the acting seat, the time and the narration
(R-SRV-1); those are not repeated here.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from .model import (
    Ability,
    CampaignState,
    Conflict,
    ConflictKind,
    DriveName,
    DriveSlot,
    OverdrawnDrive,
    Phase,
    Stake,
)


class Event(msgspec.Struct, frozen=True, gc=False, tag_field="type",
            forbid_unknown_fields=True):
    """Base of the edition's events; the tag is the class name."""


class DebtReturned(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    character: int
    drive: DriveName
    amount: int


# -- table (R-TABLE-*) ----------------------------------------------------------------------


class CampaignCreated(Event, frozen=True, tag=True):
    name: str
    edition: str
    rules_version: str
    starting_tokens: int = 0


class PlayerSeated(Event, frozen=True, tag=True):
    seat: int
    name: str
    tokens: int


class CampaignClosed(Event, frozen=True, tag=True):
    pass


class CampaignForked(Event, frozen=True, tag=True):
    """The first event of a fork (R-REC-6): the game as it was in the source campaign."""

    name: str
    state: CampaignState


# -- characters (R-CHAR-*) ------------------------------------------------------------------


class CharacterCreated(Event, frozen=True, tag=True):
    character: int
    name: str
    abilities: tuple[Ability, ...]
    drives: tuple[DriveSlot, ...]
    created_by: int
    method: Literal["freeform", "click-and-lock"] = "freeform"


class ExemplarLinked(Event, frozen=True, tag=True):
    character: int
    exemplar: int
    drive: DriveName


class ExemplarRequested(Event, frozen=True, tag=True):
    """One player asked for a shared Exemplar; it is linked once the other asks too
    (R-CHAR-6)."""

    character: int
    exemplar: int
    drive: DriveName
    seat: int


class CharacterEdited(Event, frozen=True, tag=True):
    """A character changed between scenes (R-CHAR-8): its whole new build. The Debt on its
    Drives is carried over as it was (``drives`` holds it)."""

    character: int
    name: str
    abilities: tuple[Ability, ...]
    drives: tuple[DriveSlot, ...]
    method: Literal["freeform", "click-and-lock"] = "freeform"


# -- scenes (R-SCENE-*) ---------------------------------------------------------------------


class FramingPassed(Event, frozen=True, tag=True):
    seat: int
    to: int


class SceneFramed(Event, frozen=True, tag=True):
    scene: int
    framer: int
    text: str = ""


class CharacterChosen(Event, frozen=True, tag=True):
    seat: int
    character: int
    cost: int


class SceneEnded(Event, frozen=True, tag=True):
    scene: int
    next_framer: int


# -- pages (R-PAGE-*) -----------------------------------------------------------------------


class PageStarted(Event, frozen=True, tag=True):
    scene: int
    page: int
    starter: int
    overdrawn: tuple[OverdrawnDrive, ...] = ()


class OverdrawnDieRolled(Event, frozen=True, tag=True):
    character: int
    drive: DriveName
    conflict: int
    die: int
    before: int
    rolled: int
    kept: bool
    #: The roll counter the value was derived with (R-FAIR-4); 0: not derived.
    draw: int = 0


class PhaseBegan(Event, frozen=True, tag=True):
    phase: Phase
    #: The seat whose move it is first in the new phase, if the phase takes moves in order.
    seat: int | None = None


class ClaimTurnPassed(Event, frozen=True, tag=True):
    """The seat finished its go in the claiming phase; ``idle``: it did nothing in it."""

    seat: int
    idle: bool
    to: int


class ClaimMade(Event, frozen=True, tag=True):
    seat: int
    conflict: int
    side: int
    cost: int


class PageEnded(Event, frozen=True, tag=True):
    scene: int
    page: int


# -- conflicts (R-CONF-*) -------------------------------------------------------------------


class ConflictCreated(Event, frozen=True, tag=True):
    conflict: int
    kind: ConflictKind
    text: str
    creator: int
    sides: tuple[str, ...]
    names: tuple[int, ...] = ()
    cost: int = 0
    #: Created as the one thing of a turn (R-TURN-1), not in the claiming phase.
    in_turn: bool = False
    #: The exemplar pair whose Free Conflict this is (R-CHAR-6), if any.
    free_for: tuple[int, int] | None = None


class ConflictVetoed(Event, frozen=True, tag=True):
    conflict: int
    seat: int


class CharacterAllied(Event, frozen=True, tag=True):
    character: int
    conflict: int
    side: int


# -- turns (R-TURN-1, R-PAGE-6) -------------------------------------------------------------


class TurnStarted(Event, frozen=True, tag=True):
    seat: int
    character: int
    bought: bool = False
    cost: int = 0


class TurnEnded(Event, frozen=True, tag=True):
    seat: int


class ProvisionalStakesReturned(Event, frozen=True, tag=True):
    """R-STAKE-4: the turn ends without its character using an Ability, so the Debt it staked
    before the Ability goes back to its Drives and the Conflicts are put back as they were
    before those stakes (``conflicts``: each as it is now, Inspirations' raises kept)."""

    character: int
    returned: tuple[DebtReturned, ...]
    conflicts: tuple[Conflict, ...]


class TurnPassed(Event, frozen=True, tag=True):
    seat: int
    to: int


# -- abilities and rolls (R-ABIL-*, R-ROLL-*, R-REACT-1) ------------------------------------


class AbilityUsed(Event, frozen=True, tag=True):
    character: int
    ability: str
    rating: int
    super: bool
    reaction: bool = False


class DebtGained(Event, frozen=True, tag=True):
    character: int
    drive: DriveName
    amount: int = 1


class AbilityBlocked(Event, frozen=True, tag=True):
    character: int
    ability: str


class DieRolled(Event, frozen=True, tag=True):
    conflict: int
    die: int
    before: int
    rolled: int
    character: int
    seat: int
    reaction: bool = False
    #: The roll counter the value was derived with (R-FAIR-4); 0: not derived.
    draw: int = 0


class RollAccepted(Event, frozen=True, tag=True):
    conflict: int
    die: int
    value: int


class RollRejected(Event, frozen=True, tag=True):
    conflict: int
    die: int
    value: int


class ReactionsOpened(Event, frozen=True, tag=True):
    conflict: int
    die: int
    order: tuple[int, ...]


class ReactionPassed(Event, frozen=True, tag=True):
    seat: int


class ReactionsClosed(Event, frozen=True, tag=True):
    conflict: int
    die: int


class AndThenRequired(Event, frozen=True, tag=True):
    conflict: int
    side: int
    seats: tuple[int, ...]


class Narrated(Event, frozen=True, tag=True):
    seat: int
    text: str
    and_then: bool = False


# -- staking, splitting, schisms (R-STAKE-*, R-SPLIT-1, R-SCHISM-1) -------------------------


class DebtStaked(Event, frozen=True, tag=True):
    character: int
    drive: DriveName
    conflict: int
    die: int
    amount: int


class DieSplit(Event, frozen=True, tag=True):
    conflict: int
    die: int
    #: The value the split die keeps.
    value: int
    #: The new dice as (id, value); the Debt under them follows as DebtStaked events.
    new_dice: tuple[tuple[int, int], ...]
    character: int


class SideSchismed(Event, frozen=True, tag=True):
    conflict: int
    side: int
    #: The index of the new side once the Schism is done (after ``removed`` is gone).
    new_side: int
    label: str
    dice: tuple[int, ...]
    character: int
    #: The side the dice left, when it is not an original side and is left with no dice: it
    #: disappears, and the sides after it move down one (R-SCHISM-1). Schema version 2.
    removed: int | None = None


# -- inspirations (R-INSP-1, R-ABIL-2) ------------------------------------------------------


class InspirationRaised(Event, frozen=True, tag=True):
    seat: int
    inspiration: int
    value: int


class InspirationSpent(Event, frozen=True, tag=True):
    seat: int
    inspiration: int
    conflict: int
    die: int
    before: int
    value: int


# -- resolution (R-RES-*, R-GLOAT-1, R-DEAD-1) ----------------------------------------------


class TokenGift(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    giver: int
    recipient: int
    count: int


class InspirationMade(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    inspiration: int
    seat: int
    value: int
    #: The dice it was made from: a pair, or one leftover die.
    dice: tuple[int, ...]


class ConflictResolved(Event, frozen=True, tag=True):
    conflict: int
    seat: int
    side: int
    #: Debt staked on losing sides, back doubled to its Drive (R-RES-2).
    debt_returned: tuple[DebtReturned, ...]
    #: Debt staked on the winning side, which leaves its character (R-RES-3).
    debt_spent: tuple[Stake, ...]
    tokens: tuple[TokenGift, ...]
    inspirations: tuple[InspirationMade, ...]
    #: Characters whose Goal failed here (R-CONF-5).
    goal_failed_by: tuple[int, ...] = ()


class Gloated(Event, frozen=True, tag=True):
    conflict: int
    seat: int
    dice: tuple[int, ...]
    tokens: int


class ConflictDeadlocked(Event, frozen=True, tag=True):
    conflict: int
    seat: int
    debt_returned: tuple[DebtReturned, ...]
    inspirations: tuple[InspirationMade, ...]


EVENT_TYPES: tuple[type[Event], ...] = tuple(
    cls
    for cls in list(globals().values())
    if isinstance(cls, type) and issubclass(cls, Event) and cls is not Event
)
