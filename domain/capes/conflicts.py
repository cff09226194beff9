"""Conflicts: Goals and Events, vetoes, sides, control and alliances (R-CONF-*)."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..errors import RuleViolation
from .commands import CreateConflict, Veto
from .decider import apply, handle
from .events import CharacterAllied, ConflictCreated, ConflictVetoed, Event
from .model import CampaignState, Conflict, Die, Scene, Side
from .scenes import require_page, require_scene
from .table import add_tokens, changed, character, conflict, pay, require_seat, with_conflict

replace = msgspec.structs.replace


# -- alliances, shared by claims, staking, And Then and resolution --------------------------


def seats_allied(state: CampaignState, c: Conflict, side: int) -> tuple[int, ...]:
    """R-CONF-4: players are allied to a side through the characters they play."""
    cast = state.scene.cast if state.scene else {}
    return tuple(sorted({cast[ch] for ch in c.allies_of(side) if ch in cast}))


def sides_of_seat(state: CampaignState, c: Conflict, seat: int) -> frozenset[int]:
    """The sides a player is allied to now, through their characters in this scene."""
    cast = state.scene.cast if state.scene else {}
    return frozenset(s for ch, s in c.allies.items() if cast.get(ch) == seat)


def goal_key(text: str) -> str:
    """Goals are the same Goal when their texts match, ignoring case and spacing (R-CONF-5)."""
    return " ".join(text.lower().split())


def _exemplar_pair(state: CampaignState, scene: Scene, seat: int, pair: tuple[int, int]) -> None:
    """R-CHAR-6: the Free Conflict of an exemplar pair, once a scene, when both appear."""
    a, b = (character(state, i) for i in pair)
    if not any(e.other == b.id for e in a.exemplars) and not any(
        e.other == a.id for e in b.exemplars
    ):
        raise RuleViolation("R-CHAR-6", f"{a.name} and {b.name} are not linked as Exemplars")
    if a.id not in scene.cast or b.id not in scene.cast:
        raise RuleViolation("R-CHAR-6", "the Free Conflict needs both characters in the scene")
    if seat not in (scene.cast[a.id], scene.cast[b.id]):
        raise RuleViolation(
            "R-CHAR-6", "only the player of either character may add their Free Conflict"
        )
    if (min(pair), max(pair)) in scene.free_conflicts_used:
        raise RuleViolation("R-CHAR-6", "their Free Conflict was added already this scene")


@handle.register
def _create(command: CreateConflict, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    scene = require_scene(state)
    page = require_page(state)
    turn = page.turn
    in_turn = turn is not None and page.phase == "actions"
    if in_turn:
        assert turn is not None
        if turn.seat != command.seat:
            raise RuleViolation("R-TURN-1", f"it is seat {turn.seat}'s turn")
        if turn.acted:
            raise RuleViolation(
                "R-TURN-1", "a turn either creates a Conflict or uses one Ability, once"
            )
        if turn.staked:
            raise RuleViolation(
                "R-STAKE-1", "Debt was staked this turn, so the turn must use an Ability"
            )
        if command.free_for is not None:
            # R-CHAR-6: a Free Conflict is added while claiming (R-PAGE-3); in a turn it would
            # be made an ordinary Conflict with free_for dropped in silence (R-SRV-2).
            raise RuleViolation(
                "R-CHAR-6", "free_for in a turn: an Exemplar pair's Free Conflict is added in "
                "the claiming phase; a turn's Conflict is made without free_for"
            )
        cost = 0
    elif page.phase == "claiming":
        if page.cursor != command.seat:
            raise RuleViolation("R-PAGE-3", f"it is seat {page.cursor}'s go in the claiming phase")
        if command.free_for is not None:
            _exemplar_pair(state, scene, command.seat, command.free_for)
            cost = 0
        else:
            cost = 1
            pay(state, command.seat, cost, "adding a Conflict outside a turn")
    else:
        raise RuleViolation(
            "R-PAGE-3", "Conflicts are added in the claiming phase or as the one thing of a turn"
        )
    if command.kind == "goal":
        if not command.names:
            raise RuleViolation("R-X-CONF-1", "a Goal names the characters pursuing it")
        for ch in command.names:
            who = character(state, ch)
            if (ch, goal_key(command.text)) in scene.failed_goals:
                raise RuleViolation(
                    "R-CONF-5",
                    f"{who.name} failed this Goal already this scene and may not attempt it again",
                )
    elif command.names:
        raise RuleViolation("R-X-CONF-1", "only a Goal names characters")
    return (
        ConflictCreated(
            conflict=state.next_conflict,
            kind=command.kind,
            text=command.text,
            creator=command.seat,
            sides=command.sides,
            names=command.names,
            cost=cost,
            in_turn=in_turn,
            free_for=command.free_for,
        ),
    )


@handle.register
def _veto(command: Veto, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    scene = require_scene(state)
    page = require_page(state)
    c = conflict(state, command.conflict)
    if c.id not in page.vetoable:
        raise RuleViolation(
            "R-CONF-3", "a veto comes before the next turn starts; too late for this Conflict"
        )
    if c.kind == "goal" and not any(scene.cast.get(ch) == command.seat for ch in c.names):
        raise RuleViolation(
            "R-CONF-3", "a Goal may be vetoed only by a player of a character it names"
        )
    return (ConflictVetoed(conflict=c.id, seat=command.seat),)


@apply.register
def _created(event: ConflictCreated, state: CampaignState) -> CampaignState:
    assert state.scene is not None and state.page is not None
    # R-CONF-1: two sides, each one die showing 1, no allies.
    sides = tuple(Side(label=label, dice=(Die(id=i + 1),)) for i, label in enumerate(event.sides))
    new = Conflict(
        id=event.conflict,
        kind=event.kind,
        text=event.text,
        creator=event.creator,
        sides=sides,
        created_on=(state.scene.number, state.page.number),
        names=event.names,
        next_die=len(sides) + 1,
    )
    page = state.page
    if event.in_turn and page.turn is not None:
        page = replace(page, turn=replace(page.turn, acted=True))
    else:
        page = replace(page, busy=True)
    page = replace(page, vetoable=page.vetoable | {event.conflict})
    scene = state.scene
    if event.free_for is not None:
        pair = (min(event.free_for), max(event.free_for))
        scene = replace(scene, free_conflicts_used=scene.free_conflicts_used | {pair})
    state = add_tokens(state, event.creator, -event.cost)
    state = with_conflict(state, new)
    return replace(state, page=page, scene=scene, next_conflict=event.conflict + 1)


@apply.register
def _vetoed(event: ConflictVetoed, state: CampaignState) -> CampaignState:
    conflicts = {i: c for i, c in state.conflicts.items() if i != event.conflict}
    page = state.page
    if page is not None:
        page = replace(page, vetoable=page.vetoable - {event.conflict})
    return replace(state, conflicts=conflicts, page=page)


@apply.register
def _allied(event: CharacterAllied, state: CampaignState) -> CampaignState:
    # R-CONF-4: one side per Conflict at a time; every side ever allied is remembered.
    c = state.conflicts[event.conflict]
    once = c.once_allied.get(event.character, frozenset()) | {event.side}
    c = replace(
        c,
        allies={**c.allies, event.character: event.side},
        once_allied={**c.once_allied, event.character: once},
    )
    return changed(state, c)
