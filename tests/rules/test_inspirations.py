"""Inspirations: what they remember, and spending them on dice.

Rules: R-INSP-1, R-TABLE-3 (raising an Inspiration with an ability, R-ABIL-2, is in
``test_rolls``). The cast and the set-ups are in ``play_helpers``.
"""

from __future__ import annotations

import pytest
from play_helpers import (
    BRUTE,
    a_deadlocked_warehouse,
    a_table_in_resolution,
    a_turn_with_an_inspiration,
    decide,
    die_value,
    last_conflict,
    power,
    roll,
)
from rulebook import given

from domain.capes import commands as c
from domain.capes.events import InspirationSpent
from domain.capes.model import Inspiration
from domain.errors import InvalidReference


def spend(t_conflict: int, die: int = 1, inspiration: int = 1) -> c.SpendInspiration:
    """Seat 2 spends its Inspiration on ``die`` of the scene-2 Event."""
    return c.SpendInspiration(seat=BRUTE, inspiration=inspiration, conflict=t_conflict, die=die)


# -- R-INSP-1 --------------------------------------------------------------------------------


@pytest.mark.parametrize("die", [1, 2])
def test_spending_an_inspiration_raises_any_die_to_its_value(die: int) -> None:
    """R-INSP-1: the die, on whichever side, now shows the Inspiration's value."""
    t = a_turn_with_an_inspiration(4)
    event = last_conflict(t)
    state = (
        given(t.events)
        .when(spend(event, die))
        .then(
            InspirationSpent(seat=BRUTE, inspiration=1, conflict=event, die=die, before=1, value=4)
        )
    )
    found = state.conflicts[event].die(die)
    assert found is not None and found[1].value == 4


def test_a_spent_inspiration_is_used_up() -> None:
    """R-INSP-1: it leaves its player's hand and cannot be spent twice."""
    t = a_turn_with_an_inspiration(4)
    t(spend(last_conflict(t)))
    assert t.state.player(BRUTE).inspirations == ()
    given(t.events).when(spend(last_conflict(t), die=2)).refused(
        "no Inspiration", kind=InvalidReference
    )


@pytest.mark.parametrize("shown", [4, 5], ids=["equal", "higher"])
def test_an_inspiration_never_lowers_a_die(shown: int) -> None:
    """R-INSP-1: a die already showing the Inspiration's value or more is not lowered (nor
    spent on for nothing)."""
    t = a_turn_with_an_inspiration(4)
    roll(t, BRUTE, power("Brute", 1), die=1, value=shown, conflict=last_conflict(t))
    decide(t, BRUTE)
    assert die_value(t, 1, last_conflict(t)) == shown
    given(t.events).when(spend(last_conflict(t))).refused("R-INSP-1")


def test_an_inspiration_may_be_spent_before_the_ability() -> None:
    """R-INSP-1 / R-TURN-1: before the action, the die is raised; the roll then needs a rating
    of at least the new value (R-ABIL-2)."""
    t = a_turn_with_an_inspiration(4)
    t(spend(last_conflict(t)))
    given(t.events).when(
        c.RollDie(seat=BRUTE, ability=power("Brute", 3), conflict=last_conflict(t), die=1, value=2)
    ).refused("R-ABIL-2")


def test_an_inspiration_is_not_spent_while_a_roll_waits_for_its_decision() -> None:
    """R-INSP-1 / R-TURN-1: never in the middle of the action."""
    t = a_turn_with_an_inspiration(4)
    roll(t, BRUTE, power("Brute", 1), die=1, value=2, conflict=last_conflict(t))
    given(t.events).when(spend(last_conflict(t), die=2)).refused("R-TURN-1")


# -- R-TABLE-3 -------------------------------------------------------------------------------


def test_a_resolution_makes_inspirations_that_remember_their_conflict() -> None:
    """R-TABLE-3: the Inspiration of the 5-against-3 pair is worth 2 and came from Event 1."""
    t = a_table_in_resolution()
    t(c.Resolve(seat=BRUTE, conflict=1))
    assert t.state.player(BRUTE).inspirations == (Inspiration(id=1, value=2, source=1),)


def test_a_deadlock_makes_inspirations_that_remember_their_conflict() -> None:
    """R-TABLE-3: each six of the Deadlocked Event 1 becomes an Inspiration from it."""
    t = a_deadlocked_warehouse()
    t(c.DeclareDeadlock(seat=3, conflict=1))
    assert t.state.player(1).inspirations == (Inspiration(id=2, value=6, source=1),)
    assert t.state.player(2).inspirations == (Inspiration(id=1, value=6, source=1),)


def test_an_inspiration_outlives_its_conflict_and_its_scene() -> None:
    """R-TABLE-3: in scene 2, with Event 1 long gone, the Inspiration still names it."""
    t = a_turn_with_an_inspiration(3)
    assert 1 not in t.state.conflicts
    assert t.state.player(BRUTE).inspirations == (Inspiration(id=1, value=3, source=1),)
