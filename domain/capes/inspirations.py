"""Inspirations: raising them with an ability, spending them on dice (R-ABIL-2, R-INSP-1)."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..errors import InvalidReference, RuleViolation
from ..shared import can_roll
from .commands import RaiseInspiration, SpendInspiration
from .decider import apply, handle
from .events import Event, InspirationMade, InspirationRaised, InspirationSpent
from .model import Ability, CampaignState, Inspiration
from .pages import set_die
from .rolls import require_turn_to_act, use_ability
from .staking import require_between
from .table import character, conflict, require_seat, with_player

replace = msgspec.structs.replace

MAX_VALUE = 6


def _inspiration(state: CampaignState, seat: int, inspiration_id: int) -> Inspiration:
    found = state.player(seat).inspiration(inspiration_id)
    if found is None:
        raise InvalidReference(f"seat {seat} has no Inspiration {inspiration_id}")
    return found


@handle.register
def _raise(command: RaiseInspiration, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    turn = require_turn_to_act(state, command.seat)
    if turn.promised:
        raise RuleViolation(
            "R-STAKE-2",
            "Debt was staked on a side the character is not "
            "allied to: only a roll there can keep that promise",
        )
    insp = _inspiration(state, command.seat, command.inspiration)
    who = character(state, turn.character)
    if insp.value >= MAX_VALUE:
        raise RuleViolation("R-ABIL-2", "an Inspiration is raised to at most 6")

    def check(ability: Ability) -> None:
        if not can_roll(ability.rating, insp.value):
            raise RuleViolation(
                "R-ABIL-2",
                f"{ability.name} (rating {ability.rating}) cannot raise an Inspiration of "
                f"{insp.value}",
            )

    # R-ABIL-2 is checked before the Drive is asked for (choices come last).
    _, events = use_ability(state, who, command.ability, command.drive, reaction=False,
                            check=check)
    events.append(InspirationRaised(seat=command.seat, inspiration=insp.id, value=insp.value + 1))
    return events


@handle.register
def _spend(command: SpendInspiration, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    require_between(state, command.seat)
    insp = _inspiration(state, command.seat, command.inspiration)
    c = conflict(state, command.conflict)
    found = c.die(command.die)
    if found is None:
        raise InvalidReference(f"conflict {c.id} has no die {command.die}")
    die = found[1]
    if insp.value <= die.value:
        raise RuleViolation(
            "R-INSP-1",
            f"an Inspiration raises a die, never lowers it: "
            f"{insp.value} would not raise a die showing {die.value}",
        )
    return (
        InspirationSpent(
            seat=command.seat,
            inspiration=insp.id,
            conflict=c.id,
            die=die.id,
            before=die.value,
            value=insp.value,
        ),
    )


@apply.register
def _raised(event: InspirationRaised, state: CampaignState) -> CampaignState:
    player = state.player(event.seat)
    kept = tuple(
        replace(i, value=event.value) if i.id == event.inspiration else i
        for i in player.inspirations
    )
    return with_player(state, event.seat, inspirations=kept)


@apply.register
def _spent(event: InspirationSpent, state: CampaignState) -> CampaignState:
    player = state.player(event.seat)
    kept = tuple(i for i in player.inspirations if i.id != event.inspiration)
    state = with_player(state, event.seat, inspirations=kept)
    return set_die(state, event.conflict, event.die, event.value)


def give_inspirations(
    state: CampaignState, made: Iterable[InspirationMade], source: int
) -> CampaignState:
    """Fold Inspirations made at a resolution or deadlock; they remember the Conflict."""
    for m in made:
        player = state.player(m.seat)
        new = Inspiration(id=m.inspiration, value=m.value, source=source)
        state = with_player(state, m.seat, inspirations=(*player.inspirations, new))
        state = replace(state, next_inspiration=max(state.next_inspiration, m.inspiration + 1))
    return state
