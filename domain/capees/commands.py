"""Commands of the edition ``capees``: imperative, one per thing a player can do.

Tagged msgspec Structs like edition ``capes``'s (``type`` field, snake_case tags); the acting
``seat`` comes from the seat's token over HTTP (C-SRV-1). Rolling commands carry ``value`` and
``draw``, overwritten by the server's dice before ``decide`` sees them (C-TABLE-4).
"""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal

import msgspec

from ..text import Name, NameRef
from .model import AbilityType, Faction

Seat = Annotated[int, msgspec.Meta(ge=1, le=64, description="A seat number (1 is the first)")]
Id = Annotated[int, msgspec.Meta(ge=1, le=2**31)]
Count = Annotated[int, msgspec.Meta(ge=1, le=99)]
DieValue = Annotated[int, msgspec.Meta(description="Drawn by the server (C-TABLE-4)")]
RollCounter = Annotated[int, msgspec.Meta(ge=0, description="The campaign's roll counter, "
                                          "set by the server (R-FAIR-4)")]


def _snake(name: str) -> str:
    """``capees.`` and the snake_case name: unique beside edition ``capes``'s tags, so one
    union of every edition's commands decodes a request (``capees.claim`` beside ``claim``)."""
    return "capees." + re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Command(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag=_snake,
              forbid_unknown_fields=True):
    """Base of the edition's commands."""

    #: True on commands that roll a die: the application fills ``value`` (C-TABLE-4).
    rolls: ClassVar[bool] = False


class SeatCommand(Command, frozen=True, kw_only=True):
    """A command made by a seated player."""

    seat: Annotated[int, msgspec.Meta(ge=0, le=64)] = 0


# -- table -----------------------------------------------------------------------------------


class CreateCampaign(Command, frozen=True, kw_only=True):
    name: Name
    edition: Literal["capees"] = "capees"


class SeatPlayer(Command, frozen=True, kw_only=True):
    name: Name


class CloseCampaign(Command, frozen=True, kw_only=True):
    pass


# -- characters ------------------------------------------------------------------------------


class AbilitySpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Name
    type: AbilityType
    rating: int
    #: Only for Tropes, marked super or blocking at creation (C-ABIL-2). A Power is super
    #: whatever it says; ``true`` on an Attitude or a Skill is refused (C-ABIL-2).
    super: bool = False


class CreateCharacter(SeatCommand, frozen=True, kw_only=True):
    """A hero (C-HERO-1, C-HERO-2) or a non-hero, by name alone or with a full sheet (C-NPC-1)."""

    name: Name
    hero: bool = False
    #: Drive name -> strength: a hero's five heroic Drives; a non-hero's five of its own.
    drives: Annotated[dict[Name, int], msgspec.Meta(max_length=5)] = {}
    abilities: Annotated[tuple[AbilitySpec, ...], msgspec.Meta(max_length=12)] = ()
    #: A hero's Drive -> the non-hero character who is its Exemplar (C-HERO-2).
    exemplars: Annotated[dict[Name, Id], msgspec.Meta(max_length=5)] = {}


class CompleteSheet(SeatCommand, frozen=True, kw_only=True):
    """Give a non-hero known by name its full sheet (C-NPC-1, C-NPC-2)."""

    character: Id
    drives: Annotated[dict[Name, int], msgspec.Meta(max_length=5)]
    abilities: Annotated[tuple[AbilitySpec, ...], msgspec.Meta(max_length=12)]


# -- stories and setup -----------------------------------------------------------------------


class BeginStory(SeatCommand, frozen=True, kw_only=True):
    """The Editor begins a story (C-EDITOR-2): the sending seat is the Editor."""

    #: Left out: the sending seat; another seat is refused (C-EDITOR-2).
    editor: Seat | None = None
    #: C-VP-4: the story's Victory Total.
    victory_total: Annotated[int, msgspec.Meta(ge=1, le=999)] = 24


class StartScene(SeatCommand, frozen=True, kw_only=True):
    """The Editor sets up the next scene; in a story's first, names the two-token hero."""

    featured: Id | None = None


class UseInspiration(SeatCommand, frozen=True, kw_only=True):
    """Turn one of your Inspirations into a Complication at setup (C-COMP-2, C-INSP-3)."""

    inspiration: Id
    name: Name


class AddComplication(SeatCommand, frozen=True, kw_only=True):
    name: Name


class PassSetup(SeatCommand, frozen=True, kw_only=True):
    pass


class BuyProminence(SeatCommand, frozen=True, kw_only=True):
    character: Id
    points: Count = 1
    #: Declared with the first point bought for the character this scene (C-PROM-5).
    side: Faction | None = None


class Balance(SeatCommand, frozen=True, kw_only=True):
    """The Editor's free Prominence for the lower side (C-PROM-6)."""

    character: Id
    points: Count = 1
    side: Faction | None = None
    #: Hand the character to this seat for the scene (C-EDITOR-1).
    narrator: Seat | None = None


class EndScene(SeatCommand, frozen=True, kw_only=True):
    """The Editor's ruling ending the scene after a Victory check (C-SCENE-2)."""


# -- pages -----------------------------------------------------------------------------------


class Claim(SeatCommand, frozen=True, kw_only=True):
    character: Id
    complication: Id


class PassClaim(SeatCommand, frozen=True, kw_only=True):
    pass


class RollOverdrawn(SeatCommand, frozen=True, kw_only=True):
    rolls: ClassVar[bool] = True
    character: Id
    drive: NameRef | None = None
    #: (complication, die) when several of the character's dice share the highest value.
    die: tuple[Id, Id] | None = None
    value: DieValue = 0
    draw: RollCounter = 0


class StartAction(SeatCommand, frozen=True, kw_only=True):
    character: Id | None = None


class Stake(SeatCommand, frozen=True, kw_only=True):
    complication: Id
    amount: Count = 1
    drive: NameRef | None = None
    #: C-STAKE-5: an absent opponent's Debt, staked by the Editor; left out: the actor.
    character: Id | None = None


class RollAbility(SeatCommand, frozen=True, kw_only=True):
    rolls: ClassVar[bool] = True
    ability: NameRef
    complication: Id
    die: Id
    #: The Drive that takes a super ability's Debt (C-ABIL-3); refused for a blocking one.
    drive: NameRef | None = None
    value: DieValue = 0
    draw: RollCounter = 0


class KeepRoll(SeatCommand, frozen=True, kw_only=True):
    pass


class TurnBack(SeatCommand, frozen=True, kw_only=True):
    pass


class React(SeatCommand, frozen=True, kw_only=True):
    rolls: ClassVar[bool] = True
    character: Id
    ability: NameRef
    #: The Drive that takes a super Trope's Debt (C-ABIL-3); refused for a blocking one.
    drive: NameRef | None = None
    #: C-REACT-3: ``stake`` Debt staked just before the reaction roll, on ``stake_on`` (left
    #: out: the Complication of the die), from ``stake_drive``; both refused with no stake.
    stake_on: Id | None = None
    stake: Annotated[int, msgspec.Meta(ge=0, le=99)] = 0
    stake_drive: NameRef | None = None
    value: DieValue = 0
    draw: RollCounter = 0


class PassReaction(SeatCommand, frozen=True, kw_only=True):
    pass


class Split(SeatCommand, frozen=True, kw_only=True):
    complication: Id
    die: Id
    into: int = 2
    #: How many of the new dice open a new side (C-SPLIT-3); 0: none.
    move: Annotated[int, msgspec.Meta(ge=0, le=6)] = 0
    #: New Debt staked just before (C-SPLIT-4), from ``drive`` (refused with no stake).
    stake: Annotated[int, msgspec.Meta(ge=0, le=99)] = 0
    drive: NameRef | None = None


class EndAction(SeatCommand, frozen=True, kw_only=True):
    pass


class CheckClaim(SeatCommand, frozen=True, kw_only=True):
    """Resolve a claim whose side still Controls (C-RES-1..4)."""

    complication: Id
    #: staking character -> the player given its Story Tokens (C-RES-3): only for the
    #: characters the claimer's player stakes for; other players give with GiveTokens.
    gifts: dict[Id, Seat] = {}
    #: The replacement: a new Complication of this name...
    replacement: Name | None = None
    #: ...made from this Inspiration of yours (C-INSP-3), else at 1 and 1.
    inspiration: Id | None = None


class GiveTokens(SeatCommand, frozen=True, kw_only=True):
    """Choose who gets the Story Tokens of your character's winning stake on a Complication
    whose resolution waits for it (C-RES-3)."""

    complication: Id
    character: Id
    #: The player given the tokens; asked for when left out.
    to: Seat | None = None


COMMAND_TYPES: tuple[type[Command], ...] = tuple(
    cls
    for cls in list(globals().values())
    if isinstance(cls, type) and issubclass(cls, Command) and cls not in (Command, SeatCommand)
)
