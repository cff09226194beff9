"""Scenes: framing, choosing characters, the end of a scene (R-SCENE-*)."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..errors import RuleViolation
from .commands import ChooseCharacter, FrameScene, PassFraming
from .decider import apply, handle
from .events import CharacterChosen, Event, FramingPassed, SceneEnded, SceneFramed
from .model import CampaignState, Page, Scene
from .table import MIN_PLAYERS, add_tokens, character, pay, require_seat

replace = msgspec.structs.replace


def require_scene(state: CampaignState) -> Scene:
    if state.scene is None:
        raise RuleViolation("R-SCENE-1", "no scene is being played: frame one first")
    return state.scene


def require_page(state: CampaignState) -> Page:
    require_scene(state)
    if state.page is None:  # pragma: no cover - a scene always has a page between commands
        raise RuleViolation("R-PAGE-1", "no page is being played")
    return state.page


@handle.register
def _frame(command: FrameScene, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    if state.scene is not None:
        raise RuleViolation(
            "R-SCENE-4", "a scene is being played; it ends when a page ends with no Conflict left"
        )
    if len(state.players) < MIN_PLAYERS:
        raise RuleViolation("R-TABLE-1", f"a scene needs at least {MIN_PLAYERS} seated players")
    if state.next_framer is not None and command.seat != state.next_framer:
        raise RuleViolation(
            "R-SCENE-1",
            f"seat {state.next_framer} frames this scene (to the left of the last framer)",
            choices=[state.next_framer],
        )
    return (SceneFramed(scene=state.scenes_played + 1, framer=command.seat, text=command.text),)


@handle.register
def _pass_framing(command: PassFraming, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    if state.scene is not None:
        raise RuleViolation("R-SCENE-1", "framing is passed between scenes, not during one")
    if state.next_framer is None:
        raise RuleViolation(
            "R-SCENE-1", "the first scene is framed by any volunteer: there is nothing to pass"
        )
    if command.seat != state.next_framer:
        raise RuleViolation(
            "R-SCENE-1", f"only seat {state.next_framer}, the next framer, may pass the framing on"
        )
    return (FramingPassed(seat=command.seat, to=state.left_of(command.seat)),)


@handle.register
def _choose(command: ChooseCharacter, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    scene = require_scene(state)
    page = require_page(state)
    who = character(state, command.character)
    if page.phase != "claiming":
        raise RuleViolation(
            "R-SCENE-2", "characters are chosen at the start of a page, in the claiming phase"
        )
    if page.cursor != command.seat:
        raise RuleViolation(
            "R-SCENE-2", f"it is seat {page.cursor}'s go to choose, clockwise from the Starter"
        )
    if who.id in scene.cast:
        raise RuleViolation(
            "R-SCENE-2", f"{who.name} is played by seat {scene.cast[who.id]} in this scene"
        )
    # R-SCENE-2: the first character a player chooses in a scene is free; more cost 1 each.
    cost = 1 if scene.characters_of(command.seat) else 0
    pay(state, command.seat, cost, "a further character")
    return (CharacterChosen(seat=command.seat, character=who.id, cost=cost),)


@apply.register
def _framed(event: SceneFramed, state: CampaignState) -> CampaignState:
    # R-SCENE-3: mundane abilities unblock when a scene starts (Free Conflicts reset with the
    # new Scene record).
    characters = {i: replace(c, blocked=()) for i, c in state.characters.items()}
    scene = Scene(number=event.scene, framer=event.framer, text=event.text)
    return replace(state, scene=scene, characters=characters, next_framer=None)


@apply.register
def _passed(event: FramingPassed, state: CampaignState) -> CampaignState:
    return replace(state, next_framer=event.to)


@apply.register
def _chosen(event: CharacterChosen, state: CampaignState) -> CampaignState:
    assert state.scene is not None and state.page is not None
    scene = replace(state.scene, cast={**state.scene.cast, event.character: event.seat})
    page = replace(state.page, busy=True)
    return replace(add_tokens(state, event.seat, -event.cost), scene=scene, page=page)


@apply.register
def _ended(event: SceneEnded, state: CampaignState) -> CampaignState:
    return replace(
        state,
        scene=None,
        page=None,
        scenes_played=event.scene,
        next_framer=event.next_framer,
    )
