"""The table: campaign, seats, Story Tokens (R-TABLE-*), and checks every area shares."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..errors import InvalidReference, NotPermitted, RuleViolation
from .commands import CloseCampaign, CreateCampaign, SeatCommand, SeatPlayer
from .decider import apply, handle
from .events import CampaignClosed, CampaignCreated, CampaignForked, Event, PlayerSeated
from .model import CampaignState, Character, Conflict, Player

replace = msgspec.structs.replace

#: R-TABLE-1: a table needs at least this many players to play a scene.
MIN_PLAYERS = 2
MAX_PLAYERS = 12


# -- shared checks ---------------------------------------------------------------------------


def require_open(state: CampaignState) -> None:
    if not state.created:
        raise InvalidReference("no campaign: create it first")
    if state.closed:
        raise NotPermitted("the campaign is closed")


def require_seat(state: CampaignState, command: SeatCommand) -> Player:
    """The acting player; the seat must exist."""
    require_open(state)
    if not 1 <= command.seat <= len(state.players):
        raise InvalidReference(f"no seat {command.seat} at this table")
    return state.player(command.seat)


def character(state: CampaignState, character_id: int) -> Character:
    try:
        return state.characters[character_id]
    except KeyError:
        raise InvalidReference(f"no character {character_id}") from None


def conflict(state: CampaignState, conflict_id: int) -> Conflict:
    try:
        return state.conflicts[conflict_id]
    except KeyError:
        raise InvalidReference(f"no conflict {conflict_id} on the table") from None


def pay(state: CampaignState, seat: int, cost: int, what: str) -> None:
    """R-TABLE-2: Story Tokens never go below 0, so a player must afford what they buy."""
    tokens = state.player(seat).tokens
    if tokens < cost:
        raise RuleViolation(
            "R-TABLE-2", f"{what} costs {cost} Story Token(s); seat {seat} has {tokens}"
        )


def with_player(state: CampaignState, seat: int, **changes: object) -> CampaignState:
    players = list(state.players)
    players[seat - 1] = replace(players[seat - 1], **changes)
    return replace(state, players=tuple(players))


def add_tokens(state: CampaignState, seat: int, delta: int) -> CampaignState:
    return with_player(state, seat, tokens=state.player(seat).tokens + delta)


def with_conflict(state: CampaignState, c: Conflict) -> CampaignState:
    return replace(state, conflicts={**state.conflicts, c.id: c})


def changed(state: CampaignState, c: Conflict) -> CampaignState:
    """The state with ``c``, stamped as changed on this page (for R-X-DEAD-2)."""
    page = state.page
    if page is not None:
        c = replace(c, changed_on=(page.scene, page.number))
    return with_conflict(state, c)


def with_character(state: CampaignState, c: Character) -> CampaignState:
    return replace(state, characters={**state.characters, c.id: c})


# -- campaign and seats ----------------------------------------------------------------------


@handle.register
def _create(command: CreateCampaign, state: CampaignState) -> Iterable[Event]:
    from . import RULES_VERSION

    if state.created:
        raise NotPermitted("the campaign exists already")
    return (
        CampaignCreated(
            name=command.name,
            edition=command.edition,
            rules_version=RULES_VERSION,
            starting_tokens=command.starting_tokens,
        ),
    )


@handle.register
def _seat(command: SeatPlayer, state: CampaignState) -> Iterable[Event]:
    require_open(state)
    if len(state.players) >= MAX_PLAYERS:
        raise RuleViolation("R-TABLE-1", f"the table is full ({MAX_PLAYERS} seats)")
    if state.scene is not None:
        # R-X-SEAT-1: seats are taken between scenes, so turn order never shifts mid-scene.
        raise RuleViolation("R-X-SEAT-1", "players join between scenes, not during one")
    if any(p.name == command.name for p in state.players):
        raise RuleViolation("R-X-SEAT-1", f"a player called {command.name!r} is seated already")
    return (
        PlayerSeated(seat=len(state.players) + 1, name=command.name, tokens=state.starting_tokens),
    )


@handle.register
def _close(command: CloseCampaign, state: CampaignState) -> Iterable[Event]:
    require_open(state)
    return (CampaignClosed(),)


@apply.register
def _created(event: CampaignCreated, state: CampaignState) -> CampaignState:
    return replace(
        state,
        created=True,
        name=event.name,
        edition=event.edition,
        rules_version=event.rules_version,
        starting_tokens=event.starting_tokens,
    )


@apply.register
def _seated(event: PlayerSeated, state: CampaignState) -> CampaignState:
    player = Player(seat=event.seat, name=event.name, tokens=event.tokens)
    return replace(state, players=(*state.players, player))


@apply.register
def _forked(event: CampaignForked, state: CampaignState) -> CampaignState:
    # R-REC-6: a fork starts as the source was, under its own name, open for play.
    return replace(event.state, name=event.name, closed=False)


@apply.register
def _closed(event: CampaignClosed, state: CampaignState) -> CampaignState:
    return replace(state, closed=True)
