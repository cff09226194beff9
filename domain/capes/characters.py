"""Building characters: abilities, Drives, Exemplars (R-CHAR-*)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import msgspec

from ..errors import DomainError, NotPermitted, RuleViolation
from ..shared import is_overdrawn
from .commands import (
    AbilitySpec,
    ClickAndLock,
    CreateCharacter,
    EditCharacter,
    Freeform,
    LinkExemplar,
)
from .decider import apply, handle
from .events import CharacterCreated, CharacterEdited, Event, ExemplarLinked, ExemplarRequested
from .model import (
    HEROIC_DRIVES,
    UNDIFFERENTIATED,
    VILLAINOUS_DRIVES,
    Ability,
    CampaignState,
    Category,
    Character,
    DriveName,
    DriveSlot,
    Exemplar,
    ExemplarRequest,
)
from .table import character, require_seat, with_character

replace = msgspec.structs.replace

#: R-CHAR-5: an undifferentiated character is Overdrawn above 5 Debt and stakes at most 3.
UNDIFFERENTIATED_LIMIT = 5
UNDIFFERENTIATED_STAKE = 3


def _abilities_from_freeform(specs: Sequence[AbilitySpec]) -> tuple[Ability, ...]:
    for s in specs:
        if s.super and s.category in ("skill", "attitude"):
            # R-CHAR-4: only a Style is chosen super; a Skill or an Attitude sent as super is a
            # mistake, said, not made mundane in silence (R-SRV-2).
            kind = "a Skill" if s.category == "skill" else "an Attitude"
            raise RuleViolation("R-CHAR-4", f"super: {s.name} is {kind}, always mundane; only "
                                "a Style is chosen super")
    # R-CHAR-4: Powers are super, Skills and Attitudes mundane, each Style as chosen.
    return tuple(
        Ability(
            name=s.name,
            category=s.category,
            rating=s.rating,
            super=s.category == "power" or (s.category == "style" and s.super),
        )
        for s in specs
    )


def _abilities_from_click_and_lock(build: ClickAndLock) -> tuple[Ability, ...]:
    """R-CHAR-3: combine a set and a Persona into 15 abilities and cross out 3."""
    if len(build.set.styles) != 3:
        raise RuleViolation("R-CHAR-3", "a Power Set or Skill Set has 5 abilities and 3 styles")
    if len(build.persona.styles) != 2:
        raise RuleViolation("R-CHAR-3", "a Persona has 5 attitudes and 2 styles")
    set_super = build.set_kind == "power"
    # Abilities of a Power Set are super; a Skill Set's and a Persona's are mundane (003).
    columns: dict[Category, list[tuple[str, bool]]] = {
        build.set_kind: [(n, set_super) for n in build.set.abilities],
        "style": [(n, set_super) for n in build.set.styles]
        + [(n, False) for n in build.persona.styles],
        "attitude": [(n, False) for n in build.persona.abilities],
    }
    names = [n for column in columns.values() for n, _ in column]
    _unique_names(names, "R-CHAR-3")
    crossed = set(build.crossed_out)
    if len(crossed) != 3 or not crossed <= set(names):
        raise RuleViolation(
            "R-CHAR-3", "cross out exactly 3 different abilities of the 15", choices=names
        )
    if any(len({n for n, _ in column} & crossed) == 3 for column in columns.values()):
        raise RuleViolation(
            "R-CHAR-3", "the 3 crossed-out abilities may not all be from one column"
        )
    kept = [n for n in names if n not in crossed]
    missing = [n for n in kept if n not in build.ratings]
    extra = [n for n in build.ratings if n not in kept]
    if missing or extra:
        raise RuleViolation(
            "R-CHAR-3",
            "give a rating to each of the 12 kept abilities and no other"
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + (f"; not kept: {', '.join(extra)}" if extra else ""),
        )
    return tuple(
        Ability(name=n, category=category, rating=build.ratings[n], super=sup)
        for category, column in columns.items()
        for n, sup in column
        if n not in crossed
    )


def _unique_names(names: Iterable[str], rule: str) -> None:
    doubled = [n for n, k in Counter(names).items() if k > 1]
    if doubled:
        raise RuleViolation(rule, f"ability names must differ: {', '.join(doubled)} repeated")


def check_abilities(abilities: Sequence[Ability]) -> None:
    """R-CHAR-1 and R-CHAR-2: the shape every character's abilities must have."""
    categories = Counter(a.category for a in abilities)
    if categories["power"] and categories["skill"]:
        raise RuleViolation("R-CHAR-1", "a character has Powers or Skills, never both")
    expected = {"attitude", "style", "power" if categories["power"] else "skill"}
    if set(categories) != expected:
        raise RuleViolation(
            "R-CHAR-1",
            "abilities come in three categories: Attitudes, Styles, and Powers or Skills",
        )
    for category, count in categories.items():
        if not 3 <= count <= 5:
            raise RuleViolation(
                "R-CHAR-2", f"each category has 3 to 5 abilities; {category}s have {count}"
            )
    if len(abilities) > 12:
        raise RuleViolation("R-CHAR-2", f"at most 12 abilities in all, not {len(abilities)}")
    for category in categories:
        ratings = sorted(a.rating for a in abilities if a.category == category)
        if ratings != list(range(1, len(ratings) + 1)):
            raise RuleViolation(
                "R-CHAR-2",
                f"{category} ratings must be exactly 1..{len(ratings)}, each once; got {ratings}",
            )
    _unique_names((a.name for a in abilities), "R-CHAR-2")


def drives_from(spec: Mapping[DriveName, int] | None) -> tuple[DriveSlot, ...]:
    """R-CHAR-5: five Drives, strengths 1-5 summing to 9, or undifferentiated."""
    if spec is None:
        return (DriveSlot(name=UNDIFFERENTIATED, strength=UNDIFFERENTIATED_LIMIT),)
    legal = HEROIC_DRIVES + VILLAINOUS_DRIVES
    unknown = [d for d in spec if d not in legal]
    if unknown:
        raise RuleViolation("R-CHAR-5", f"not a Drive: {', '.join(unknown)}", choices=legal)
    if len(spec) != 5:
        raise RuleViolation("R-CHAR-5", f"choose exactly 5 of the 10 Drives, not {len(spec)}")
    if any(not 1 <= s <= 5 for s in spec.values()):
        raise RuleViolation("R-CHAR-5", "each Drive's strength is 1 to 5")
    if sum(spec.values()) != 9:
        raise RuleViolation(
            "R-CHAR-5", f"Drive strengths must sum to exactly 9, not {sum(spec.values())}"
        )
    return tuple(DriveSlot(name=d, strength=s) for d, s in spec.items())


def abilities_of(build: Freeform | ClickAndLock) -> tuple[Ability, ...]:
    """The abilities a build makes, once they satisfy R-CHAR-1..4."""
    if isinstance(build, Freeform):
        abilities = _abilities_from_freeform(build.abilities)
    else:
        abilities = _abilities_from_click_and_lock(build)
    check_abilities(abilities)
    return abilities


def _method(build: Freeform | ClickAndLock) -> Literal["freeform", "click-and-lock"]:
    return "freeform" if isinstance(build, Freeform) else "click-and-lock"


def _unique_name(state: CampaignState, name: str, other_than: int = 0) -> None:
    if any(c.name == name and c.id != other_than for c in state.characters.values()):
        raise RuleViolation("R-X-CHAR-1", f"a character called {name!r} exists already")


@handle.register
def _create(command: CreateCharacter, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    _unique_name(state, command.name)
    build = command.build
    abilities = abilities_of(build)
    return (
        CharacterCreated(
            character=state.next_character,
            name=command.name,
            abilities=abilities,
            drives=drives_from(command.drives),
            created_by=command.seat,
            method=_method(build),
        ),
    )


@handle.register
def _edit(command: EditCharacter, state: CampaignState) -> Iterable[Event]:
    """R-CHAR-8: between scenes, the player who created a character may change it."""
    require_seat(state, command)
    who = character(state, command.character)
    if who.created_by != command.seat:
        raise NotPermitted(f"{who.name} was created by seat {who.created_by}, who changes it")
    if state.scene is not None and who.id in state.scene.cast:
        raise RuleViolation(
            "R-CHAR-8", f"{who.name} is in the current scene: change it between scenes"
        )
    name = command.name if command.name is not None else who.name
    _unique_name(state, name, other_than=who.id)
    abilities = who.abilities if command.build is None else abilities_of(command.build)
    method = who.method if command.build is None else _method(command.build)
    if command.drives is None:
        drives = who.drives
    else:
        new = drives_from(None if command.drives == "undifferentiated" else command.drives)
        held = {d.name: d.debt for d in who.drives if d.debt}
        gone = [n for n in held if not any(d.name == n for d in new)]
        if gone:
            raise RuleViolation(
                "R-CHAR-8", f"a Drive that holds Debt cannot be removed: {', '.join(gone)}"
            )
        # R-CHAR-8: the Debt on the character never changes by an edit.
        drives = tuple(replace(d, debt=held.get(d.name, 0)) for d in new)
    names = {d.name for d in drives}
    lost = [e for e in who.exemplars if e.drive not in names]
    if lost or (who.exemplars and len(drives) == 1 and drives[0].name == UNDIFFERENTIATED):
        raise RuleViolation(
            "R-CHAR-6",
            f"{who.name}'s Exemplars are linked through its Drives "
            f"({', '.join(sorted({e.drive for e in who.exemplars}))}): keep them",
        )
    return (
        CharacterEdited(character=who.id, name=name, abilities=abilities, drives=drives,
                        method=method),
    )


@handle.register
def _link(command: LinkExemplar, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    who = character(state, command.character)
    character(state, command.exemplar)
    if command.exemplar == command.character:
        raise RuleViolation("R-CHAR-6", "a character cannot be its own Exemplar")
    if who.drive(command.drive) is None or who.undifferentiated:
        raise RuleViolation(
            "R-CHAR-6",
            f"{who.name} has no Drive {command.drive}",
            choices=[d.name for d in who.drives if not who.undifferentiated],
        )
    if any(e.other == command.exemplar for e in who.exemplars):
        raise RuleViolation("R-CHAR-6", f"{who.name} is linked to that Exemplar already")
    linked = ExemplarLinked(
        character=command.character, exemplar=command.exemplar, drive=command.drive
    )
    if not who.exemplars:
        # R-CHAR-6: a character with Drives has one Exemplar free, linked by its creator.
        if command.seat != who.created_by:
            raise NotPermitted(f"{who.name}'s player (seat {who.created_by}) links its Exemplar")
        return (linked,)
    # R-CHAR-6: a further Exemplar is shared with the player who created the other character.
    partner = state.characters[command.exemplar].created_by
    if partner == who.created_by:
        raise RuleViolation(
            "R-CHAR-6",
            f"{who.name} has its free Exemplar; a further one is shared: it must be a "
            "character another player created",
        )
    if command.seat not in (who.created_by, partner):
        raise NotPermitted(
            f"a shared Exemplar is asked for by seats {who.created_by} and {partner} only"
        )
    request = ExemplarRequest(character=who.id, exemplar=command.exemplar,
                              drive=command.drive, seat=command.seat)
    waiting = [r for r in state.exemplar_requests
               if (r.character, r.exemplar, r.drive) == (who.id, command.exemplar, command.drive)]
    if any(r.seat != command.seat for r in waiting):
        return (linked,)
    if waiting:
        raise RuleViolation(
            "R-CHAR-6", f"asked already: waiting for seat "
            f"{partner if command.seat == who.created_by else who.created_by} to agree"
        )
    return (ExemplarRequested(character=request.character, exemplar=request.exemplar,
                              drive=request.drive, seat=request.seat),)


def awaited(state: CampaignState, request: ExemplarRequest) -> int | None:
    """R-CHAR-6, R-X-CHAR-2: the seat whose agreement a shared Exemplar request waits for, or
    None when that agreement would now be refused (a character changed since it was asked)."""
    who = state.characters.get(request.character)
    other = state.characters.get(request.exemplar)
    if who is None or other is None:
        return None
    seat = other.created_by if request.seat == who.created_by else who.created_by
    agree = LinkExemplar(seat=seat, character=request.character, exemplar=request.exemplar,
                         drive=request.drive)
    try:
        _link(agree, state)
    except DomainError:
        return None
    return seat


@apply.register
def _created(event: CharacterCreated, state: CampaignState) -> CampaignState:
    new = Character(
        id=event.character,
        name=event.name,
        abilities=event.abilities,
        drives=event.drives,
        created_by=event.created_by,
        method=event.method,
    )
    return replace(with_character(state, new), next_character=event.character + 1)


@apply.register
def _linked(event: ExemplarLinked, state: CampaignState) -> CampaignState:
    who = state.characters[event.character]
    link = Exemplar(other=event.exemplar, drive=event.drive)
    state = with_character(state, replace(who, exemplars=(*who.exemplars, link)))
    requests = tuple(r for r in state.exemplar_requests
                     if (r.character, r.exemplar) != (event.character, event.exemplar))
    return replace(state, exemplar_requests=requests)


@apply.register
def _requested(event: ExemplarRequested, state: CampaignState) -> CampaignState:
    request = ExemplarRequest(character=event.character, exemplar=event.exemplar,
                              drive=event.drive, seat=event.seat)
    return replace(state, exemplar_requests=(*state.exemplar_requests, request))


@apply.register
def _edited(event: CharacterEdited, state: CampaignState) -> CampaignState:
    who = state.characters[event.character]
    return with_character(state, replace(who, name=event.name, abilities=event.abilities,
                                         drives=event.drives, method=event.method))


# -- Debt on Drives, used by several areas ---------------------------------------------------


def overdrawn(who: Character, drive: DriveSlot) -> bool:
    """R-CHAR-7: unstaked Debt above the Drive's strength (5 when undifferentiated)."""
    return is_overdrawn(drive.debt, drive.strength)


def stake_limit(who: Character, drive: DriveSlot) -> int:
    """R-STAKE-1: at most the Drive's strength on one Conflict; 3 when undifferentiated."""
    return UNDIFFERENTIATED_STAKE if who.undifferentiated else drive.strength


def add_debt(who: Character, drive: str, delta: int) -> Character:
    drives = tuple(replace(d, debt=d.debt + delta) if d.name == drive else d for d in who.drives)
    return replace(who, drives=drives)
