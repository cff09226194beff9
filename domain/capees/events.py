"""Events of the edition ``capees``: past tense, frozen, self-contained.

Each records every value the rules needed (dice, costs, who got what), so ``evolve`` only
folds and a replay never re-decides. The application's envelope adds the seat, the time and
the narration (C-SRV-1).
"""

from __future__ import annotations

import msgspec

from .model import Ability, CampaignState, DriveSlot, Exemplar, Faction, Stake, Step


def _tag(name: str) -> str:
    return f"capees.{name}"


class Event(msgspec.Struct, frozen=True, gc=False, tag_field="type", tag=_tag,
            forbid_unknown_fields=True):
    """Base of the edition's events; the tag is ``capees.`` and the class name, so a union of
    both editions' events stays unambiguous (``capees.DieRolled`` beside ``DieRolled``)."""


class Part(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """Base of records inside events."""


# -- table -----------------------------------------------------------------------------------


class CampaignCreated(Event, frozen=True):
    name: str
    edition: str
    rules_version: str


class PlayerSeated(Event, frozen=True):
    seat: int
    name: str


class CampaignClosed(Event, frozen=True):
    pass


class CampaignForked(Event, frozen=True):
    """The first event of a fork (R-REC-6): the game as it was in the source campaign."""

    name: str
    state: CampaignState


# -- characters ------------------------------------------------------------------------------


class CharacterCreated(Event, frozen=True):
    character: int
    name: str
    hero: bool
    created_by: int
    drives: tuple[DriveSlot, ...] = ()
    abilities: tuple[Ability, ...] = ()
    exemplars: tuple[Exemplar, ...] = ()


class SheetCompleted(Event, frozen=True):
    character: int
    drives: tuple[DriveSlot, ...]
    abilities: tuple[Ability, ...]


# -- stories and setup -----------------------------------------------------------------------


class StoryBegun(Event, frozen=True):
    story: int
    editor: int
    victory_total: int


class TokensGiven(Part, frozen=True):
    seat: int
    count: int


class SceneStarted(Event, frozen=True):
    scene: int
    #: C-PROM-1, C-PROM-2: the Story Tokens each player receives.
    tokens: tuple[TokensGiven, ...]
    featured: int | None = None


class SetupStepBegan(Event, frozen=True):
    step: Step
    seat: int


class SetupPassed(Event, frozen=True):
    seat: int
    to: int


class ComplicationCreated(Event, frozen=True):
    complication: int
    name: str
    seat: int
    hero_die: int = 1
    opponent_die: int = 1
    #: The Inspiration it was made from, used up (C-INSP-2).
    inspiration: int | None = None


class ProminenceBought(Event, frozen=True):
    seat: int
    character: int
    points: int
    faction: Faction
    cost: int


class ProminenceBalanced(Event, frozen=True):
    character: int
    points: int
    faction: Faction
    narrator: int


class PlayBegan(Event, frozen=True):
    """Setup is over: the Victory Target is fixed and every Block cleared (C-SCENE-1)."""

    target: int


# -- pages -----------------------------------------------------------------------------------


class PageStarted(Event, frozen=True):
    page: int
    seat: int


class ClaimMade(Event, frozen=True):
    seat: int
    character: int
    complication: int
    #: The character whose claim was taken over (C-CLAIM-2).
    displaced: int | None = None


class ClaimPassed(Event, frozen=True):
    seat: int
    to: int
    #: The seat had no legal claim: the server passed for it (C-SRV-3).
    forced: bool = False


class OverdrawnStepBegan(Event, frozen=True):
    drives: tuple[tuple[int, str], ...]


class OverdrawnRolled(Event, frozen=True):
    character: int
    drive: str
    complication: int
    die: int
    before: int
    rolled: int
    kept: bool
    draw: int = 0


class TurnBegan(Event, frozen=True):
    turn: int


class ActionStarted(Event, frozen=True):
    seat: int
    character: int


class DebtStaked(Event, frozen=True):
    character: int
    drive: str
    complication: int
    side: int
    amount: int


class AbilityUsed(Event, frozen=True):
    character: int
    ability: str
    rating: int
    super: bool
    reaction: bool = False


class DebtGained(Event, frozen=True):
    character: int
    drive: str
    amount: int = 1


class AbilityBlocked(Event, frozen=True):
    character: int
    ability: str


class DieRolled(Event, frozen=True):
    complication: int
    die: int
    before: int
    rolled: int
    character: int
    seat: int
    reaction: bool = False
    draw: int = 0


class RollKept(Event, frozen=True):
    complication: int
    die: int
    value: int
    #: C-REACT-2: the seats asked to react, in order, from the roller's.
    order: tuple[int, ...]


class RollTurnedBack(Event, frozen=True):
    complication: int
    die: int
    value: int


class ReactionPassed(Event, frozen=True):
    seat: int
    forced: bool = False


class ReactionsClosed(Event, frozen=True):
    complication: int
    die: int


class DieSplit(Event, frozen=True):
    complication: int
    side: int
    die: int
    #: The value the split die keeps and the new dice as (id, value).
    value: int
    new_dice: tuple[tuple[int, int], ...]
    character: int
    #: The dice that open the splitter's new side (C-SPLIT-3), if any.
    moved: tuple[int, ...] = ()


class ActionEnded(Event, frozen=True):
    character: int


# -- resolution ------------------------------------------------------------------------------


class ResolutionBegan(Event, frozen=True):
    pass


class ClaimFailed(Event, frozen=True):
    character: int
    complication: int


class DebtBack(Part, frozen=True):
    character: int
    drive: str
    amount: int


class Gift(Part, frozen=True):
    giver: int
    recipient: int
    count: int


class ComplicationResolved(Event, frozen=True):
    complication: int
    character: int
    seat: int
    faction: Faction
    vp: int
    bonus: int
    inspiration: int
    #: Losing stakes, back doubled (C-RES-2).
    returned: tuple[DebtBack, ...] = ()
    #: Winning stakes, gone (C-RES-3).
    spent: tuple[Stake, ...] = ()
    gifts: tuple[Gift, ...] = ()


class ClaimChecked(Event, frozen=True):
    """A claim's side still Controls, but other players choose who gets the Story Tokens of
    their winning stakes (C-RES-3): the resolution waits for them."""

    complication: int
    character: int
    seat: int
    replacement: str
    inspiration: int | None = None
    #: (staking character, recipient) named with the check or filled in by the server.
    gifts: tuple[tuple[int, int], ...] = ()
    #: (staking character, the seat whose player chooses its recipient).
    givers: tuple[tuple[int, int], ...] = ()


class StoryTokensGiven(Event, frozen=True):
    """A staker's player chose who gets its Story Tokens (C-RES-3); they move when the
    resolution completes."""

    complication: int
    character: int
    seat: int
    to: int


class ComplicationDiscarded(Event, frozen=True):
    complication: int
    #: Stakes back, not doubled (C-SCENE-3).
    returned: tuple[DebtBack, ...] = ()


class PageEnded(Event, frozen=True):
    page: int


class SceneEnding(Event, frozen=True):
    """The Victory Target is reached or the Editor ends the scene (C-VP-3, C-SCENE-2)."""

    reason: str
    seat: int


class SceneEnded(Event, frozen=True):
    scene: int
    hero_vp: int
    opponent_vp: int


class StoryEnded(Event, frozen=True):
    story: int
    hero_vp: int
    opponent_vp: int


EVENT_TYPES: tuple[type[Event], ...] = tuple(
    cls
    for cls in list(globals().values())
    if isinstance(cls, type) and issubclass(cls, Event) and cls is not Event
)
