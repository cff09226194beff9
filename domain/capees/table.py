"""The table: campaign, seats, Story Tokens, and the checks every rule area shares
(C-TABLE-*, C-COMP-3, C-COMP-4, C-PROM-4)."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..errors import InvalidReference, NotPermitted, RuleViolation
from ..shared import controlling
from .commands import CloseCampaign, CreateCampaign, SeatCommand, SeatPlayer
from .decider import apply, handle
from .events import CampaignClosed, CampaignCreated, CampaignForked, Event, PlayerSeated
from .model import FACTIONS, CampaignState, Character, Complication, Faction, Player, Scene

replace = msgspec.structs.replace

MAX_PLAYERS = 12


def require_open(state: CampaignState) -> None:
    if not state.created:
        raise InvalidReference("no campaign: create it first")
    if state.closed:
        raise NotPermitted("the campaign is closed")


def require_seat(state: CampaignState, command: SeatCommand) -> Player:
    require_open(state)
    if not 1 <= command.seat <= len(state.players):
        raise InvalidReference(f"no seat {command.seat} at this table")
    return state.player(command.seat)


def require_editor(state: CampaignState, seat: int, what: str) -> None:
    """C-EDITOR-2: some moves are the Editor's alone."""
    if state.editor != seat:
        raise RuleViolation("C-EDITOR-2", f"only the Editor {what}")


def require_scene(state: CampaignState, *steps: str) -> Scene:
    if state.scene is None:
        raise RuleViolation("C-PAGE-1", "no scene is being played")
    if steps and state.scene.step not in steps:
        raise RuleViolation(
            "C-PAGE-1", f"not now: the scene is at its {state.scene.step} step, not "
            + " or ".join(steps))
    return state.scene


def require_cursor(scene: Scene, seat: int) -> None:
    """C-TABLE-2: a going-round step takes moves in seat order from the Editor."""
    if scene.cursor != seat:
        raise RuleViolation("C-TABLE-2", f"it is seat {scene.cursor}'s chance, not seat {seat}'s")


def character(state: CampaignState, character_id: int) -> Character:
    try:
        return state.characters[character_id]
    except KeyError:
        raise InvalidReference(f"no character {character_id}") from None


def complication(state: CampaignState, complication_id: int) -> Complication:
    try:
        return state.complications[complication_id]
    except KeyError:
        raise InvalidReference(f"no Complication {complication_id} on the table") from None


def narrated(state: CampaignState, seat: int, character_id: int) -> Character:
    """C-PROM-4, C-EDITOR-1: a present character, narrated by ``seat``."""
    who = character(state, character_id)
    scene = state.scene
    if scene is None or scene.prominence.get(who.id, 0) < 1:
        raise RuleViolation("C-PROM-4", f"{who.name} is not present in this scene")
    if scene.narrator.get(who.id) != seat:
        raise NotPermitted(f"seat {seat} does not narrate {who.name} this scene")
    return who


def rank(state: CampaignState, seat: int) -> int:
    """C-TABLE-2: the seat's place in the order from the Editor."""
    return state.order().index(seat)


def control(c: Complication) -> int | None:
    """C-COMP-3: the side with the strictly highest total Controls; a tie, nobody."""
    return controlling([s.total for s in c.sides])


def faction_of(state: CampaignState, character_id: int) -> Faction:
    """C-COMP-4: the scene faction; an absent character counts as an opponent."""
    if state.scene is not None and character_id in state.scene.faction:
        return state.scene.faction[character_id]
    return "opponent"


def side_of(state: CampaignState, c: Complication, character_id: int) -> int:
    """C-COMP-4: the side a character split off there, or its faction's original side."""
    for index, side in enumerate(c.sides):
        if side.owner == character_id:
            return index
    return FACTIONS.index(faction_of(state, character_id))


def with_player(state: CampaignState, seat: int, **changes: object) -> CampaignState:
    players = list(state.players)
    players[seat - 1] = replace(players[seat - 1], **changes)
    return replace(state, players=tuple(players))


def add_tokens(state: CampaignState, seat: int, delta: int) -> CampaignState:
    return with_player(state, seat, tokens=state.player(seat).tokens + delta)


def with_character(state: CampaignState, ch: Character) -> CampaignState:
    return replace(state, characters={**state.characters, ch.id: ch})


def with_complication(state: CampaignState, c: Complication) -> CampaignState:
    return replace(state, complications={**state.complications, c.id: c})


def with_scene(state: CampaignState, **changes: object) -> CampaignState:
    assert state.scene is not None
    return replace(state, scene=replace(state.scene, **changes))


def add_debt(state: CampaignState, character_id: int, drive: str, delta: int) -> CampaignState:
    who = state.characters[character_id]
    drives = tuple(replace(d, debt=d.debt + delta) if d.name == drive else d for d in who.drives)
    return with_character(state, replace(who, drives=drives))


# -- campaign and seats ----------------------------------------------------------------------


@handle.register
def _create(command: CreateCampaign, state: CampaignState) -> Iterable[Event]:
    from . import RULES_VERSION

    if state.created:
        raise NotPermitted("the campaign exists already")
    return (CampaignCreated(name=command.name, edition=command.edition,
                            rules_version=RULES_VERSION),)


@handle.register
def _seat(command: SeatPlayer, state: CampaignState) -> Iterable[Event]:
    require_open(state)
    if len(state.players) >= MAX_PLAYERS:
        raise RuleViolation("C-TABLE-1", f"the table is full ({MAX_PLAYERS} seats)")
    if state.story is not None:
        # C-X-SEAT-1: players join between stories, so the order never shifts under one.
        raise RuleViolation("C-X-SEAT-1", "players join between stories, not during one")
    if any(p.name == command.name for p in state.players):
        raise RuleViolation("C-X-SEAT-1", f"a player called {command.name!r} is seated already")
    return (PlayerSeated(seat=len(state.players) + 1, name=command.name),)


@handle.register
def _close(command: CloseCampaign, state: CampaignState) -> Iterable[Event]:
    require_open(state)
    return (CampaignClosed(),)


@apply.register
def _created(event: CampaignCreated, state: CampaignState) -> CampaignState:
    return replace(state, created=True, name=event.name, edition=event.edition,
                   rules_version=event.rules_version)


@apply.register
def _seated(event: PlayerSeated, state: CampaignState) -> CampaignState:
    return replace(state, players=(*state.players, Player(seat=event.seat, name=event.name)))


@apply.register
def _forked(event: CampaignForked, state: CampaignState) -> CampaignState:
    return replace(event.state, name=event.name, closed=False)


@apply.register
def _closed(event: CampaignClosed, state: CampaignState) -> CampaignState:
    return replace(state, closed=True)
