"""The action phase: free turns, bought turns, passing (R-PAGE-6, R-TURN-1).

Whose turn it is is derived, not stored: in the free round it is the first seat clockwise from
the Starter with a character that has not had its free turn; in the bought round it is the
first seat from the cursor that can buy a turn (R-X-TURN-1).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..errors import NotPermitted, RuleViolation
from .characters import add_debt
from .commands import EndTurn, PassTurn, StartTurn
from .decider import after, apply, handle, progression
from .events import (
    DebtReturned,
    Event,
    PhaseBegan,
    ProvisionalStakesReturned,
    TurnEnded,
    TurnPassed,
    TurnStarted,
)
from .model import CampaignState, Conflict, Turn
from .scenes import require_page
from .table import add_tokens, character, pay, require_seat, with_character

replace = msgspec.structs.replace


def free_turn_seat(state: CampaignState) -> int | None:
    """R-PAGE-6: clockwise from the Starter, each player takes their free turns in a row."""
    page, scene = state.page, state.scene
    assert page is not None and scene is not None
    for seat in state.clockwise_from(page.starter):
        if any(scene.cast[ch] == seat for ch in page.free_turns_left):
            return seat
    return None


def can_buy(state: CampaignState, seat: int) -> bool:
    """R-X-TURN-1: a seat with no character or no Story Token cannot buy a turn."""
    assert state.scene is not None
    return bool(state.scene.characters_of(seat)) and state.player(seat).tokens >= 1


def bought_turn_seat(state: CampaignState) -> int | None:
    """The seat whose chance it is to buy a turn or pass, from the cursor on."""
    page = state.page
    assert page is not None
    return next((s for s in state.clockwise_from(page.cursor) if can_buy(state, s)), None)


def turn_seat(state: CampaignState) -> int | None:
    """The seat that may start a turn now, if any."""
    page = state.page
    if page is None or page.phase != "actions" or page.turn is not None:
        return None
    return free_turn_seat(state) if page.round == "free" else bought_turn_seat(state)


def require_turn(state: CampaignState, seat: int) -> Turn:
    """The turn in progress, which must be ``seat``'s."""
    page = require_page(state)
    if page.turn is None:
        raise RuleViolation("R-TURN-1", "no turn is in progress")
    if page.turn.seat != seat:
        raise RuleViolation("R-TURN-1", f"it is seat {page.turn.seat}'s turn")
    return page.turn


@handle.register
def _start(command: StartTurn, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    page = require_page(state)
    events: list[Event] = []
    if page.phase == "free_play":
        # R-PAGE-5: free play ends when the Starter takes the first action.
        if command.seat != page.starter:
            raise RuleViolation(
                "R-PAGE-5",
                f"free play goes on until the Starter (seat {page.starter}) takes the first action",
            )
        events.append(PhaseBegan(phase="actions", seat=page.starter))
        state = after(state, events)
        page = require_page(state)
    if page.phase != "actions":
        raise RuleViolation("R-PAGE-6", "turns are taken in the action phase")
    if page.turn is not None:
        raise RuleViolation("R-TURN-1", f"seat {page.turn.seat}'s turn is not over")
    who = character(state, command.character)
    assert state.scene is not None
    if state.scene.cast.get(who.id) != command.seat:
        raise NotPermitted(f"seat {command.seat} does not play {who.name} in this scene")
    expected = turn_seat(state)
    if expected != command.seat:
        raise RuleViolation(
            "R-PAGE-6",
            f"it is seat {expected}'s turn, clockwise from the Starter"
            if expected
            else "no one may take a turn now",
        )
    if page.round == "free":
        left = [ch for ch in page.free_turns_left if state.scene.cast[ch] == command.seat]
        if who.id not in left:
            raise RuleViolation(
                "R-PAGE-6", f"{who.name} has had its free turn this page", sorted(left)
            )
        cost = 0
    else:
        cost = 1  # R-PAGE-6: a further turn costs a Story Token
        pay(state, command.seat, cost, "a bought turn")
    events.append(TurnStarted(seat=command.seat, character=who.id, bought=cost > 0, cost=cost))
    return events


@handle.register
def _end(command: EndTurn, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    turn = require_turn(state, command.seat)
    # R-STAKE-4: a turn can always end, done or not (R-X-TURN-2); only a roll's decision, the
    # reactions to it and an And Then must come first, and each of those is always possible.
    if turn.roll is not None:
        raise RuleViolation("R-ROLL-2", f"seat {turn.roll.seat} must accept or reject the roll")
    if turn.reactions is not None:
        raise RuleViolation("R-REACT-1", "players are still reacting to the roll")
    if turn.and_then is not None:
        raise RuleViolation(
            "R-ROLL-4",
            "And Then: a player allied to the controlling side "
            f"(seat {', '.join(map(str, turn.and_then.seats))}) must complete "
            "the narration first",
        )
    return (*provisional_returned(state, turn), TurnEnded(seat=command.seat))


def provisional_returned(state: CampaignState, turn: Turn) -> tuple[Event, ...]:
    """R-STAKE-4: a turn ending without its character using an Ability gives back the Debt
    staked before it: each Conflict it staked on is put back as it was before the turn's
    first stake there, except that a die keeps a higher value an Inspiration gave it since,
    and dice the Splits made go away (R-X-STAKE-2)."""
    if turn.used_ability or not turn.provisional:
        return ()
    returned: list[DebtReturned] = []
    restored: list[Conflict] = []
    page = state.page
    assert page is not None
    for before in turn.provisional:
        now = state.conflicts.get(before.id)
        if now is None:
            continue
        values = {d.id: d.value for s in now.sides for d in s.dice}
        sides = tuple(
            replace(s, dice=tuple(replace(d, value=max(d.value, values.get(d.id, 0)))
                                  for d in s.dice))
            for s in before.sides
        )
        restored.append(replace(before, sides=sides, next_die=now.next_die,
                                changed_on=(page.scene, page.number)))
        for who, total in sorted(now.stake_total.items()):
            amount = total - before.stake_total.get(who, 0)
            if amount > 0:
                returned.append(DebtReturned(character=who, drive=now.stake_drive[who],
                                             amount=amount))
    return (ProvisionalStakesReturned(character=turn.character, returned=tuple(returned),
                                      conflicts=tuple(restored)),)


@handle.register
def _pass(command: PassTurn, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    page = require_page(state)
    if page.phase != "actions" or page.round != "bought" or page.turn is not None:
        raise RuleViolation(
            "R-PAGE-6", "passing is a choice of the bought-turn round, between turns"
        )
    expected = bought_turn_seat(state)
    if expected != command.seat:
        raise RuleViolation("R-PAGE-6", f"it is seat {expected}'s chance to buy a turn")
    return (TurnPassed(seat=command.seat, to=state.left_of(command.seat)),)


@progression
def _actions_end(state: CampaignState) -> Iterable[Event]:
    # R-PAGE-6: the action phase ends when every player has passed in a row.
    page = state.page
    if page is None or page.phase != "actions" or page.round != "bought" or page.turn:
        return ()
    able = [s for s in state.clockwise_from(page.starter) if can_buy(state, s)]
    if page.passes >= len(able):
        return (PhaseBegan(phase="resolution", seat=page.starter),)
    return ()


@apply.register
def _started(event: TurnStarted, state: CampaignState) -> CampaignState:
    page = state.page
    assert page is not None
    page = replace(
        page,
        turn=Turn(seat=event.seat, character=event.character, bought=event.bought),
        free_turns_left=page.free_turns_left - {event.character},
        # R-CONF-3: a veto comes before the next turn starts.
        vetoable=frozenset(),
    )
    return replace(add_tokens(state, event.seat, -event.cost), page=page)


@apply.register
def _ended(event: TurnEnded, state: CampaignState) -> CampaignState:
    page = state.page
    assert page is not None
    page = replace(page, turn=None)
    if page.round == "free":
        if not page.free_turns_left:
            # R-PAGE-6: then, clockwise from the Starter again, turns may be bought.
            page = replace(page, round="bought", cursor=page.starter, passes=0)
    else:
        page = replace(page, cursor=state.left_of(event.seat), passes=0)
    return replace(state, page=page)


@apply.register
def _returned(event: ProvisionalStakesReturned, state: CampaignState) -> CampaignState:
    for r in event.returned:
        state = with_character(state, add_debt(state.characters[r.character], r.drive, r.amount))
    state = replace(state, conflicts={**state.conflicts, **{c.id: c for c in event.conflicts}})
    page = state.page
    if page is not None and page.turn is not None:
        turn = replace(page.turn, provisional=(), promised=(), staked=False)
        state = replace(state, page=replace(page, turn=turn))
    return state


@apply.register
def _passed(event: TurnPassed, state: CampaignState) -> CampaignState:
    page = state.page
    assert page is not None
    return replace(state, page=replace(page, cursor=event.to, passes=page.passes + 1))
