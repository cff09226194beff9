"""Commands of the edition ``capes``: imperative, one per thing a player can do.

Commands are msgspec Structs tagged by ``type`` (``roll_die``, ``stake_debt``, …) so the API
decodes a body straight into one, with the constraints below showing in the OpenAPI schema.
A command names its acting ``seat``; the API fills it from the seat's token, never from the body
(R-SRV-1). Choices the rules leave to a player are optional fields: left out, the engine takes
the only legal choice or refuses with the list of legal ones.

Dice are never chosen by a client (R-ROLL-1): the ``value`` of a rolling command is overwritten
by the application's dice source before ``decide`` sees it, and so is ``draw``, the roll counter
the value was derived with (R-FAIR-4).
"""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal

import msgspec

from ..text import MAX_INT, Name, NameRef, Small, prose
from .model import Category, ConflictKind, DriveName

Seat = Annotated[int, msgspec.Meta(ge=1, le=64, description="A seat number (1 is the first)")]
Id = Annotated[int, msgspec.Meta(ge=1, le=2**31)]
Text = Annotated[str, prose(0, 2000)]
Count = Annotated[int, msgspec.Meta(ge=1, le=99)]
#: R-SCHISM-1: every side a command may name can be named; a Conflict has at most this many.
MAX_SIDES = 32
#: A side of a Conflict, 0 the first.
SideIndex = Annotated[int, msgspec.Meta(ge=0, le=MAX_SIDES - 1)]
DieValue = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31,
                                       description="Drawn by the server (R-ROLL-1)")]
RollCounter = Annotated[int, msgspec.Meta(ge=0, le=MAX_INT,
                                          description="The campaign's roll counter, "
                                          "set by the server (R-FAIR-4)")]


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Command(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    tag_field="type",
    tag=_snake,
    forbid_unknown_fields=True,
):
    """Base of the edition's commands."""

    #: True on commands that roll a die: the application fills ``value`` (R-ROLL-1).
    rolls: ClassVar[bool] = False


class SeatCommand(Command, frozen=True, kw_only=True):
    """A command made by a seated player."""

    #: The acting seat. Over HTTP it comes from the seat's token (R-SRV-1).
    seat: Annotated[int, msgspec.Meta(ge=0, le=64)] = 0


# -- table ----------------------------------------------------------------------------------


class CreateCampaign(Command, frozen=True, kw_only=True):
    name: Name
    starting_tokens: Annotated[int, msgspec.Meta(ge=0, le=99)] = 0
    edition: Literal["capes"] = "capes"


class SeatPlayer(Command, frozen=True, kw_only=True):
    name: Name


class CloseCampaign(Command, frozen=True, kw_only=True):
    pass


# -- characters -----------------------------------------------------------------------------


class AbilitySpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Name
    category: Category
    #: 1..k within its category (R-CHAR-2, checked by the rules, 422 with the rule id).
    rating: Small
    #: Only for styles, which are chosen super or mundane (R-CHAR-4). A power is super whatever
    #: it says; ``true`` on a skill or an attitude is refused (R-CHAR-4).
    super: bool = False


class Freeform(
    msgspec.Struct, frozen=True, tag_field="method", tag="freeform", forbid_unknown_fields=True
):
    """R-CHAR-2: three categories of 3-5 abilities, rated 1..k."""

    abilities: Annotated[tuple[AbilitySpec, ...], msgspec.Meta(max_length=20)]


class Module(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Name
    #: Five powers or skills (a Power or Skill Set) or five attitudes (a Persona).
    abilities: Annotated[tuple[Name, ...], msgspec.Meta(min_length=5, max_length=5)]
    #: Three styles (a set) or two (a Persona).
    styles: Annotated[tuple[Name, ...], msgspec.Meta(min_length=2, max_length=3)]


class ClickAndLock(
    msgspec.Struct,
    frozen=True,
    tag_field="method",
    tag="click_and_lock",
    forbid_unknown_fields=True,
):
    """R-CHAR-3: a Power Set or Skill Set plus a Persona, three abilities crossed out."""

    set_kind: Literal["power", "skill"]
    set: Module
    persona: Module
    crossed_out: Annotated[tuple[Name, ...], msgspec.Meta(min_length=3, max_length=3)]
    #: ability name -> rating, 1..k within each column, for the twelve that remain.
    ratings: dict[Name, Small]


class CreateCharacter(SeatCommand, frozen=True, kw_only=True):
    name: Name
    build: Freeform | ClickAndLock
    #: Five Drives with strengths 1-5 summing to 9; left out: undifferentiated (R-CHAR-5).
    drives: dict[DriveName, Small] | None = None


class LinkExemplar(SeatCommand, frozen=True, kw_only=True):
    """Link ``exemplar`` to ``character`` through one of its Drives (R-CHAR-6).

    Sent by the player who created ``character``; a second or later Exemplar is shared: the
    player who created ``exemplar`` sends the same command too, and the link is made when both
    have."""

    character: Id
    exemplar: Id
    drive: DriveName


class EditCharacter(SeatCommand, frozen=True, kw_only=True):
    """Change a character you created, between scenes (R-CHAR-8); what is left out stays."""

    character: Id
    name: Name | None = None
    build: Freeform | ClickAndLock | None = None
    #: Five Drives with strengths summing to 9, or "undifferentiated" (R-CHAR-5).
    drives: dict[DriveName, int] | Literal["undifferentiated"] | None = None


# -- scenes and pages -----------------------------------------------------------------------


class FrameScene(SeatCommand, frozen=True, kw_only=True):
    text: Text = ""


class PassFraming(SeatCommand, frozen=True, kw_only=True):
    pass


class ChooseCharacter(SeatCommand, frozen=True, kw_only=True):
    character: Id


class RollOverdrawn(SeatCommand, frozen=True, kw_only=True):
    """R-PAGE-2: roll the highest allied die for an Overdrawn Drive."""

    rolls: ClassVar[bool] = True
    character: Id
    drive: DriveName | None = None
    #: Which die, when several share the highest value.
    die: tuple[Id, Id] | None = None
    value: DieValue = 0
    draw: RollCounter = 0


class Claim(SeatCommand, frozen=True, kw_only=True):
    conflict: Id
    side: SideIndex


class PassClaiming(SeatCommand, frozen=True, kw_only=True):
    pass


class EndFreePlay(SeatCommand, frozen=True, kw_only=True):
    pass


class EndPage(SeatCommand, frozen=True, kw_only=True):
    pass


# -- conflicts ------------------------------------------------------------------------------


class CreateConflict(SeatCommand, frozen=True, kw_only=True):
    kind: ConflictKind = "event"
    text: Annotated[str, prose(1, 500)]
    #: Labels of the two starting sides.
    sides: tuple[Name, Name] = ("For", "Against")
    #: For a Goal: the characters it names (R-CONF-3, R-CONF-5).
    names: Annotated[tuple[Id, ...], msgspec.Meta(max_length=12)] = ()
    #: Add the Free Conflict of this exemplar pair (character, exemplar) (R-CHAR-6): in the
    #: claiming phase only (R-PAGE-3), refused in a turn.
    free_for: tuple[Id, Id] | None = None


class Veto(SeatCommand, frozen=True, kw_only=True):
    conflict: Id


# -- turns ----------------------------------------------------------------------------------


class StartTurn(SeatCommand, frozen=True, kw_only=True):
    """Take a turn for one of your characters: free in the first round, 1 token after."""

    character: Id


class PassTurn(SeatCommand, frozen=True, kw_only=True):
    pass


class EndTurn(SeatCommand, frozen=True, kw_only=True):
    pass


class RollDie(SeatCommand, frozen=True, kw_only=True):
    """Use an Ability to roll a die of a Conflict (R-ABIL-2)."""

    rolls: ClassVar[bool] = True
    ability: NameRef
    conflict: Id
    die: Id
    #: The Drive that takes the Debt of a super ability (R-ABIL-1); refused for a mundane one.
    drive: DriveName | None = None
    value: DieValue = 0
    draw: RollCounter = 0


class RaiseInspiration(SeatCommand, frozen=True, kw_only=True):
    """Use an Ability to raise one of your Inspirations by 1 (R-ABIL-2)."""

    ability: NameRef
    inspiration: Id
    drive: DriveName | None = None


class AcceptRoll(SeatCommand, frozen=True, kw_only=True):
    ally: SideIndex | None = None


class RejectRoll(SeatCommand, frozen=True, kw_only=True):
    ally: SideIndex | None = None


class React(SeatCommand, frozen=True, kw_only=True):
    rolls: ClassVar[bool] = True
    character: Id
    ability: NameRef
    drive: DriveName | None = None
    value: DieValue = 0
    draw: RollCounter = 0


class PassReaction(SeatCommand, frozen=True, kw_only=True):
    pass


class Narrate(SeatCommand, frozen=True, kw_only=True):
    text: Annotated[str, prose(1, 2000)]
    #: Completing an "And Then" (R-ROLL-4).
    and_then: bool = False


class StakeDebt(SeatCommand, frozen=True, kw_only=True):
    conflict: Id
    die: Id
    amount: Count = 1
    drive: DriveName | None = None


class SplitDie(SeatCommand, frozen=True, kw_only=True):
    conflict: Id
    die: Id
    #: 2 to the die's value (R-SPLIT-1, checked by the rules).
    into: Small = 2
    #: New Debt staked, at least into-1 (one under each new die); extra goes under the first.
    debt: Count | None = None
    drive: DriveName | None = None


class Schism(SeatCommand, frozen=True, kw_only=True):
    conflict: Id
    #: The side the dice leave.
    side: SideIndex
    dice: Annotated[tuple[Id, ...], msgspec.Meta(max_length=36)] = ()
    label: Name = "New side"
    #: Split the side's uncontrolled die into this many first, leaving it behind (R-SCHISM-1).
    split_uncontrolled: Small | None = None
    #: The Drive of that split's Debt (refused without ``split_uncontrolled``).
    drive: DriveName | None = None


class SpendInspiration(SeatCommand, frozen=True, kw_only=True):
    inspiration: Id
    conflict: Id
    die: Id


# -- resolution -----------------------------------------------------------------------------


class Resolve(SeatCommand, frozen=True, kw_only=True):
    conflict: Id
    #: Pairs of dice from different sides (R-RES-4); left out: taken when only one way exists.
    pairs: Annotated[tuple[tuple[Id, Id], ...], msgspec.Meta(max_length=36)] | None = None
    #: die id -> seat: who gets the Inspiration of a pair (keyed by its higher die) or of a
    #: leftover die, where it is not the resolver's own.
    inspirations: dict[Id, Seat] = {}
    #: giver seat -> {recipient seat -> Story Tokens} (R-RES-3).
    tokens: dict[Seat, dict[Seat, Count]] = {}


class Gloat(SeatCommand, frozen=True, kw_only=True):
    conflict: Id
    times: Count = 1


class DeclareDeadlock(SeatCommand, frozen=True, kw_only=True):
    conflict: Id
    #: die id -> seat allied to its side (R-DEAD-1).
    inspirations: dict[Id, Seat] = {}


COMMAND_TYPES: tuple[type[Command], ...] = tuple(
    cls
    for cls in list(globals().values())
    if isinstance(cls, type) and issubclass(cls, Command) and cls not in (Command, SeatCommand)
)
