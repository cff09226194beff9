"""Pages: the Starter, the Overdrawn check, claiming, free play, the page's end (R-PAGE-*).

A page moves through phases: ``overdrawn`` (only when a Drive must be rolled for), ``claiming``,
``free_play``, ``actions`` (see ``turns``) and ``resolution`` (see ``resolution``).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..errors import ChoiceRequired, InvalidReference, NotPermitted, RuleViolation
from ..shared import is_fair, overdrawn_result
from .characters import overdrawn
from .commands import Claim, EndFreePlay, PassClaiming, RollOverdrawn
from .conflicts import sides_of_seat
from .decider import apply, handle, progression
from .events import (
    ClaimMade,
    ClaimTurnPassed,
    Event,
    OverdrawnDieRolled,
    PageEnded,
    PageStarted,
    PhaseBegan,
    SceneEnded,
)
from .model import CampaignState, Conflict, OverdrawnDrive, Page
from .scenes import require_page
from .table import add_tokens, changed, character, conflict, pay, require_seat, with_conflict

replace = msgspec.structs.replace


def allied_dice(state: CampaignState, character_id: int) -> list[tuple[int, int, int]]:
    """(value, conflict, die) of every die on a side the character is allied with."""
    return [
        (d.value, c.id, d.id)
        for c in state.conflicts.values()
        if character_id in c.allies
        for d in c.sides[c.allies[character_id]].dice
    ]


def _overdrawn_drives(state: CampaignState) -> tuple[OverdrawnDrive, ...]:
    """R-PAGE-2: every Overdrawn Drive of a character in the scene with a die to roll.

    R-X-PAGE-2: each is then rolled by a command of the character's player, in any order.
    """
    assert state.scene is not None
    return tuple(
        OverdrawnDrive(character=ch, drive=d.name)
        for ch in sorted(state.scene.cast)
        for d in state.characters[ch].drives
        if overdrawn(state.characters[ch], d) and allied_dice(state, ch)
    )


@progression
def _next_page(state: CampaignState) -> Iterable[Event]:
    """R-SCENE-4 / R-PAGE-1: after a page, the scene ends or the next page starts."""
    scene = state.scene
    if scene is None or state.page is not None:
        return ()
    if scene.pages and not state.conflicts:
        return (SceneEnded(scene=scene.number, next_framer=state.left_of(scene.framer)),)
    # R-PAGE-1: the framer starts page 1; each later Starter sits left of the previous one.
    starter = state.clockwise_from(scene.framer)[scene.pages % len(state.players)]
    return (
        PageStarted(
            scene=scene.number,
            page=scene.pages + 1,
            starter=starter,
            overdrawn=_overdrawn_drives(state),
        ),
    )


@progression
def _claiming_opens(state: CampaignState) -> Iterable[Event]:
    page = state.page
    if page is not None and page.phase == "overdrawn" and not page.overdrawn:
        return (PhaseBegan(phase="claiming", seat=page.starter),)
    return ()


@progression
def _claiming_closes(state: CampaignState) -> Iterable[Event]:
    # R-PAGE-3: the claiming phase ends when every player has passed in a row.
    page = state.page
    if page is not None and page.phase == "claiming" and page.passes >= len(state.players):
        return (PhaseBegan(phase="free_play", seat=page.starter),)
    return ()


# -- the Overdrawn check (R-PAGE-2) ----------------------------------------------------------


@handle.register
def _roll_overdrawn(command: RollOverdrawn, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    page = require_page(state)
    who = character(state, command.character)
    if page.phase != "overdrawn":
        raise RuleViolation("R-PAGE-2", "the Overdrawn check is made first thing in a page")
    assert state.scene is not None
    if state.scene.cast.get(who.id) != command.seat:
        raise NotPermitted(f"seat {command.seat} does not play {who.name}")
    pending = [o.drive for o in page.overdrawn if o.character == who.id]
    if not pending:
        raise RuleViolation("R-PAGE-2", f"{who.name} has no Overdrawn Drive to roll for")
    drive = command.drive
    if drive is None:
        if len(pending) > 1:
            raise ChoiceRequired("R-PAGE-2", "which Overdrawn Drive?", pending, "drive")
        drive = pending[0]
    if drive not in pending:
        raise RuleViolation("R-PAGE-2", f"{drive} is not Overdrawn", pending)
    dice = allied_dice(state, who.id)
    top = max(v for v, _, _ in dice)
    highest = [(c, d) for v, c, d in dice if v == top]
    target = command.die
    if target is None:
        if len(highest) > 1:
            raise ChoiceRequired(
                "R-PAGE-2", "several dice are highest: choose one (conflict, die)", highest, "die"
            )
        target = highest[0]
    if tuple(target) not in highest:
        raise RuleViolation(
            "R-PAGE-2", "roll the highest die on a side the character is allied with", highest
        )
    if not is_fair(command.value):
        raise RuleViolation("R-ROLL-1", "dice are rolled by the server")
    return (
        OverdrawnDieRolled(
            character=who.id,
            drive=drive,
            conflict=target[0],
            die=target[1],
            before=top,
            rolled=command.value,
            # R-PAGE-2: the new value is kept only if lower.
            kept=overdrawn_result(top, command.value) < top,
            draw=command.draw,
        ),
    )


@apply.register
def _overdrawn_rolled(event: OverdrawnDieRolled, state: CampaignState) -> CampaignState:
    assert state.page is not None
    pending = tuple(
        o for o in state.page.overdrawn if (o.character, o.drive) != (event.character, event.drive)
    )
    state = replace(state, page=replace(state.page, overdrawn=pending))
    if event.kept:
        state = set_die(state, event.conflict, event.die, event.rolled)
    return state


def set_die(state: CampaignState, conflict_id: int, die_id: int, value: int) -> CampaignState:
    """The state with one die showing ``value``."""
    c = state.conflicts[conflict_id]
    sides = tuple(
        replace(s, dice=tuple(replace(d, value=value) if d.id == die_id else d for d in s.dice))
        for s in c.sides
    )
    return changed(state, replace(c, sides=sides))


# -- claiming (R-PAGE-3, R-PAGE-4) -----------------------------------------------------------


def _require_claiming_go(page: Page, seat: int) -> None:
    """R-X-PAGE-1: claiming moves are made on one's go, clockwise from the Starter."""
    if page.phase != "claiming":
        raise RuleViolation("R-PAGE-3", "claims are made in the claiming phase")
    if page.cursor != seat:
        raise RuleViolation(
            "R-PAGE-3", f"it is seat {page.cursor}'s go, clockwise from the Starter"
        )


def claimable(state: CampaignState, c: Conflict, seat: int) -> list[int]:
    """The sides of ``c`` that ``seat`` may claim now (R-PAGE-4, R-X-CLAIM-1)."""
    assert state.page is not None
    if c.created_on == (state.page.scene, state.page.number) or seat in c.claims.values():
        return []
    mine = sides_of_seat(state, c, seat)
    return [i for i in range(len(c.sides)) if i not in c.claims and (i in mine or not mine)]


@handle.register
def _claim(command: Claim, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    page = require_page(state)
    _require_claiming_go(page, command.seat)
    c = conflict(state, command.conflict)
    if command.side >= len(c.sides):
        raise InvalidReference(f"conflict {c.id} has sides 0..{len(c.sides) - 1}")
    if c.created_on == (page.scene, page.number):
        raise RuleViolation(
            "R-PAGE-4", "a Conflict created during this page cannot be claimed this page"
        )
    if command.side in c.claims:
        raise RuleViolation("R-PAGE-4", f"that side is claimed by seat {c.claims[command.side]}")
    if command.seat in c.claims.values():
        raise RuleViolation("R-X-CLAIM-1", "a player claims at most one side of a Conflict")
    if command.side not in claimable(state, c, command.seat):
        raise RuleViolation(
            "R-PAGE-4",
            "a player may claim a side one of their characters is allied to, or any side of a "
            "Conflict none of their characters is allied to",
            claimable(state, c, command.seat),
        )
    # R-PAGE-3: the first Claim of a page is free, each further one costs a Story Token.
    cost = 1 if command.seat in page.free_claims_used else 0
    pay(state, command.seat, cost, "a further Claim")
    return (ClaimMade(seat=command.seat, conflict=c.id, side=command.side, cost=cost),)


@handle.register
def _pass_claiming(command: PassClaiming, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    page = require_page(state)
    _require_claiming_go(page, command.seat)
    return (ClaimTurnPassed(seat=command.seat, idle=not page.busy, to=state.left_of(command.seat)),)


@handle.register
def _end_free_play(command: EndFreePlay, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    page = require_page(state)
    if page.phase != "free_play":
        raise RuleViolation("R-PAGE-5", "free play is not going on")
    if command.seat != page.starter:
        raise RuleViolation(
            "R-PAGE-5", f"free play ends when the Starter (seat {page.starter}) acts"
        )
    return (PhaseBegan(phase="actions", seat=page.starter),)


@apply.register
def _claimed(event: ClaimMade, state: CampaignState) -> CampaignState:
    page = state.page
    assert page is not None
    c = state.conflicts[event.conflict]
    state = with_conflict(state, replace(c, claims={**c.claims, event.side: event.seat}))
    page = replace(page, busy=True, free_claims_used=page.free_claims_used | {event.seat})
    return replace(add_tokens(state, event.seat, -event.cost), page=page)


@apply.register
def _claim_passed(event: ClaimTurnPassed, state: CampaignState) -> CampaignState:
    assert state.page is not None
    page = state.page
    passes = page.passes + 1 if event.idle else 0
    return replace(state, page=replace(page, cursor=event.to, passes=passes, busy=False))


# -- page start, phases, end -----------------------------------------------------------------


@apply.register
def _page_started(event: PageStarted, state: CampaignState) -> CampaignState:
    assert state.scene is not None
    page = Page(
        scene=event.scene,
        number=event.page,
        starter=event.starter,
        phase="overdrawn" if event.overdrawn else "claiming",
        overdrawn=event.overdrawn,
        cursor=event.starter,
        # R-CONF-3: a Conflict created in the last turn of a page may be vetoed until the
        # next turn starts, on this page.
        vetoable=state.scene.vetoable,
    )
    scene = replace(state.scene, pages=event.page, vetoable=frozenset())
    return replace(state, page=page, scene=scene)


@apply.register
def _phase(event: PhaseBegan, state: CampaignState) -> CampaignState:
    assert state.page is not None and state.scene is not None
    page = replace(
        state.page, phase=event.phase, passes=0, busy=False, cursor=event.seat or state.page.starter
    )
    if event.phase == "actions":
        # R-PAGE-6: one free turn for each character each player plays.
        free = frozenset(state.scene.cast)
        page = replace(page, free_turns_left=free, round="free" if free else "bought")
    return replace(state, page=page)


@apply.register
def _page_ended(event: PageEnded, state: CampaignState) -> CampaignState:
    # R-PAGE-7: all remaining Claims are removed when the page ends.
    conflicts = {i: replace(c, claims={}) for i, c in state.conflicts.items()}
    scene = state.scene
    if scene is not None and state.page is not None:
        # R-CONF-3: the veto window outlives the page; it closes when the next turn starts.
        scene = replace(scene, vetoable=state.page.vetoable.intersection(conflicts))
    return replace(state, page=None, conflicts=conflicts, scene=scene)


__all__ = ["PageEnded", "allied_dice", "claimable", "set_die"]
