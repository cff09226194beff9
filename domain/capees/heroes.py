"""Building heroes and other characters (C-HERO-*, C-NPC-*, C-ABIL-1, C-ABIL-2)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import permutations

import msgspec

from ..errors import InvalidReference, NotPermitted, RuleViolation
from .commands import AbilitySpec, CompleteSheet, CreateCharacter
from .decider import apply, handle
from .events import CharacterCreated, Event, SheetCompleted
from .model import HEROIC_DRIVES, Ability, CampaignState, Character, DriveSlot, Exemplar
from .table import character, require_seat, with_character

replace = msgspec.structs.replace

#: C-HERO-1: five Drives, each at least 1, together 9.
DRIVE_TOTAL = 9
#: C-ABIL-1: the three ladders of ratings.
LADDERS = (3, 4, 5)


def drives_from(spec: Mapping[str, int], hero: bool) -> tuple[DriveSlot, ...]:
    """C-HERO-1 (a hero's five heroic Drives) or C-NPC-2 (five of its creator's naming)."""
    rule = "C-HERO-1" if hero else "C-NPC-2"
    if hero and set(spec) != set(HEROIC_DRIVES):
        raise RuleViolation(rule, "a hero has exactly the Drives " + ", ".join(HEROIC_DRIVES))
    if len(spec) != len(HEROIC_DRIVES):
        raise RuleViolation(rule, "a character has exactly five Drives, with distinct names")
    if any(v < 1 for v in spec.values()) or sum(spec.values()) != DRIVE_TOTAL:
        raise RuleViolation(rule, f"Drives are each at least 1 and together {DRIVE_TOTAL}, "
                            f"not {sum(spec.values())}")
    names = HEROIC_DRIVES if hero else tuple(spec)
    return tuple(DriveSlot(name=n, strength=spec[n]) for n in names)


def abilities_from(specs: Sequence[AbilitySpec], hero: bool) -> tuple[Ability, ...]:
    """C-ABIL-1: three types on the 3/4/5 ladders, 12 abilities; C-ABIL-2: their marks."""
    types = sorted({s.type for s in specs})
    if "power" in types and "skill" in types:
        raise RuleViolation("C-ABIL-1", "a character has Powers or Skills, never both")
    if hero and "skill" in types:
        raise RuleViolation("C-ABIL-1", "a hero's abilities are Powers, Attitudes and Tropes")
    if len(types) != 3 or not {"attitude", "trope"} <= set(types):
        raise RuleViolation("C-ABIL-1", "three ability types: Attitudes, Tropes, and Powers "
                            "(or Skills for a non-hero)")
    ladders = sorted(len([s for s in specs if s.type == t]) for t in types)
    for t in types:
        ratings = sorted(s.rating for s in specs if s.type == t)
        if ratings != list(range(1, len(ratings) + 1)):
            raise RuleViolation("C-ABIL-1", f"each rating 1..k exactly once within {t}s")
    if tuple(ladders) != LADDERS:
        raise RuleViolation("C-ABIL-1", "one type rated 1-3, one 1-4, one 1-5: 12 abilities")
    if len({s.name for s in specs}) != len(specs):
        raise RuleViolation("C-ABIL-1", "every ability has its own name")
    for s in specs:
        if s.super and s.type in ("attitude", "skill"):
            # C-ABIL-2: only a Trope carries a mark; an Attitude or a Skill sent as super is a
            # mistake, said, not read as blocking in silence (C-SRV-2).
            kind = "an Attitude" if s.type == "attitude" else "a Skill"
            raise RuleViolation("C-ABIL-2", f"super: {s.name} is {kind}, blocking by its "
                                "type; only a Trope is marked super")
    # C-ABIL-2: Powers super, Attitudes and Skills blocking, each Trope as marked.
    return tuple(Ability(name=s.name, type=s.type, rating=s.rating,
                         super=s.type == "power" or (s.type == "trope" and s.super))
                 for s in specs)


def _exemplars(state: CampaignState, spec: Mapping[str, int]) -> tuple[Exemplar, ...]:
    """C-HERO-2: at least three Drives, one each, each a different non-hero."""
    if len(spec) < 3:
        raise RuleViolation("C-HERO-2", "a hero names an Exemplar for at least three Drives")
    if any(d not in HEROIC_DRIVES for d in spec):
        raise RuleViolation("C-HERO-2", "Exemplars stand for the hero's own Drives")
    if len(set(spec.values())) != len(spec):
        raise RuleViolation("C-HERO-2", "each Exemplar is a different character")
    for other in spec.values():
        if character(state, other).hero:
            raise RuleViolation("C-HERO-2", "an Exemplar is a non-hero character")
    return tuple(Exemplar(drive=d, character=spec[d]) for d in HEROIC_DRIVES if d in spec)


def sharing_fails(state: CampaignState) -> list[str]:
    """C-HERO-3: the heroes who do not share Exemplars as they must."""
    heroes = [ch for ch in state.characters.values() if ch.hero]
    if len(heroes) < 2:
        return []
    of = {h.id: {e.character for e in h.exemplars} for h in heroes}
    failing = []
    for h in heroes:
        shared = [(e, g.id) for g in heroes if g.id != h.id for e in of[h.id] & of[g.id]]
        if len(heroes) == 2:
            ok = bool(shared)
        else:
            ok = any(e1 != e2 and g1 != g2 for (e1, g1), (e2, g2) in permutations(shared, 2))
        if not ok:
            failing.append(h.name)
    return failing


@handle.register
def _create(command: CreateCharacter, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    if any(ch.name == command.name for ch in state.characters.values()):
        # C-X-CHAR-1: the players tell characters apart by name (the board, every picker).
        raise RuleViolation("C-X-CHAR-1", f"a character called {command.name!r} exists already")
    drives: tuple[DriveSlot, ...] = ()
    abilities: tuple[Ability, ...] = ()
    exemplars: tuple[Exemplar, ...] = ()
    if command.hero:
        if state.editor == command.seat:
            raise RuleViolation("C-TABLE-1", "the Editor has no hero")
        if any(ch.hero and ch.created_by == command.seat for ch in state.characters.values()):
            raise RuleViolation("C-TABLE-1", "a player has one hero, and no more")
        drives = drives_from(command.drives, hero=True)
        abilities = abilities_from(command.abilities, hero=True)
        exemplars = _exemplars(state, command.exemplars)
    else:
        if command.exemplars:
            raise RuleViolation("C-HERO-2", "only heroes name Exemplars")
        # C-NPC-1: a name alone, or a full sheet (C-NPC-2).
        if command.drives or command.abilities:
            drives = drives_from(command.drives, hero=False)
            abilities = abilities_from(command.abilities, hero=False)
    return (CharacterCreated(character=state.next_character, name=command.name,
                             hero=command.hero, created_by=command.seat, drives=drives,
                             abilities=abilities, exemplars=exemplars),)


@handle.register
def _complete(command: CompleteSheet, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    who = character(state, command.character)
    if who.hero or who.full_sheet:
        raise InvalidReference(f"{who.name} has a full sheet already")
    if who.created_by != command.seat:
        # C-X-NPC-1: only its creator completes a non-hero's sheet.
        raise NotPermitted(f"{who.name} is seat {who.created_by}'s to complete")
    return (SheetCompleted(character=who.id, drives=drives_from(command.drives, hero=False),
                           abilities=abilities_from(command.abilities, hero=False)),)


@apply.register
def _created(event: CharacterCreated, state: CampaignState) -> CampaignState:
    ch = Character(id=event.character, name=event.name, hero=event.hero,
                   created_by=event.created_by, drives=event.drives,
                   abilities=event.abilities, exemplars=event.exemplars)
    return replace(with_character(state, ch), next_character=event.character + 1)


@apply.register
def _completed(event: SheetCompleted, state: CampaignState) -> CampaignState:
    who = state.characters[event.character]
    return with_character(state, replace(who, drives=event.drives, abilities=event.abilities))
