"""A turn: one thing, with staking, splitting, schisms and Inspirations around it (R-TURN-1).

Unless a test says otherwise the table is page 1 of scene 1 (framer seat 3): Mia has created
Event 1 and it is Aurora's (seat 1) free turn; Aurora carries 2 Debt on Hope from earlier play.
"""

from __future__ import annotations

import pytest
from play_helpers import (
    AURORA,
    BRUTE,
    a_scene_with_a_conflict,
    a_turn_with_a_roll,
    decide,
    next_page,
    pass_reactions,
    power,
    start_turn,
)
from rulebook import Table, given
from scenes_helpers import the_goal_failed

from domain.capes import commands as c
from domain.capes.events import (
    DebtStaked,
    DieSplit,
    InspirationSpent,
    TurnEnded,
)


def auroras_turn() -> Table:
    """Aurora's free turn has started; she has done nothing yet."""
    t = a_scene_with_a_conflict(debt={AURORA: {"Hope": 2}})
    return start_turn(t, 1)


def auroras_roll() -> Table:
    """In her turn Aurora rolls Event 1's "For" die (die 1) to 4, Debt on Hope; she has not
    yet accepted or rejected it."""
    t = a_scene_with_a_conflict(debt={AURORA: {"Hope": 2}})
    return a_turn_with_a_roll(t, 1, power("Aurora", 1), die=1, value=4, drive="Hope")


ROLL = c.RollDie(seat=1, ability=power("Aurora", 2), conflict=1, die=2, drive="Hope", value=3)
CREATE = c.CreateConflict(seat=1, text="Another thing")
STAKE = c.StakeDebt(seat=1, conflict=1, die=1, amount=1, drive="Hope")

# -- one thing per turn -----------------------------------------------------------------------


def test_a_turn_that_created_a_conflict_uses_no_ability_and_creates_no_other() -> None:
    """R-TURN-1: the turn's one thing was creating a Conflict."""
    t = auroras_turn()
    t(c.CreateConflict(seat=1, text="The bridge falls"))
    given(t.events).when(ROLL).refused("R-TURN-1")
    given(t.events).when(CREATE).refused("R-TURN-1")


def test_a_turn_that_used_an_ability_uses_no_other_and_creates_no_conflict() -> None:
    """R-TURN-1: the turn's one thing was Aurora's roll."""
    t = decide(auroras_roll(), 1)
    given(t.events).when(ROLL).refused("R-TURN-1")
    given(t.events).when(CREATE).refused("R-TURN-1")


def test_a_turn_may_end_before_its_one_thing() -> None:
    """R-STAKE-4 / R-X-TURN-2: a turn can always end; ended empty, it is spent."""
    given(auroras_turn().events).when(c.EndTurn(seat=1)).then(TurnEnded(seat=1))


def test_a_turn_ends_once_its_one_thing_is_done() -> None:
    """R-TURN-1: after the roll and its reactions, Aurora's player ends the turn."""
    t = decide(auroras_roll(), 1)
    given(t.events).when(c.EndTurn(seat=1)).then(TurnEnded(seat=1))


def test_no_turn_starts_while_another_is_in_progress() -> None:
    """R-TURN-1: Brute's turn waits until Aurora's is over."""
    given(auroras_turn().events).when(
        c.StartTurn(seat=2, character=BRUTE)
    ).refused("R-TURN-1")


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(c.CreateConflict(seat=2, text="Mine"), id="create a Conflict"),
        pytest.param(
            c.RollDie(seat=2, ability=power("Brute", 1), conflict=1, die=1, value=3), id="roll"
        ),
        pytest.param(c.StakeDebt(seat=2, conflict=1, die=1), id="stake"),
        pytest.param(c.EndTurn(seat=2), id="end the turn"),
    ],
)
def test_only_the_player_whose_turn_it_is_acts_in_it(command: c.Command) -> None:
    """R-TURN-1: in Aurora's turn seat 2 can do none of the turn's things."""
    given(auroras_turn().events).when(command).refused("R-TURN-1")


# -- before and after, never during -----------------------------------------------------------


def test_debt_may_be_staked_before_the_action() -> None:
    """R-TURN-1: before using an Ability Aurora stakes Hope Debt under die 1."""
    given(auroras_turn().events).when(STAKE).then(
        DebtStaked(character=AURORA, drive="Hope", conflict=1, die=1, amount=1)
    )


def test_nothing_is_staked_while_a_roll_awaits_its_decision() -> None:
    """R-TURN-1: the action is not over until the roll is accepted or rejected."""
    given(auroras_roll().events).when(STAKE).refused("R-TURN-1")


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(STAKE, id="stake"),
        pytest.param(c.SplitDie(seat=1, conflict=1, die=1, drive="Hope"), id="split"),
        pytest.param(c.Schism(seat=1, conflict=1, side=0, dice=(1,)), id="schism"),
    ],
)
def test_nothing_is_staked_split_or_schismed_during_the_reactions(command: c.Command) -> None:
    """R-TURN-1: Aurora accepted her roll; while players may React she waits."""
    t = auroras_roll()
    t(c.AcceptRoll(seat=1))
    assert t.state.page is not None and t.state.page.turn is not None
    assert t.state.page.turn.reactions is not None
    given(t.events).when(command).refused("R-TURN-1")


def test_after_the_action_debt_may_be_staked_and_dice_split_as_often_as_affordable() -> None:
    """R-TURN-1: once the reactions are over, Aurora stakes under die 1 and then splits it."""
    t = decide(auroras_roll(), 1)
    given(t.events).when(STAKE).then(
        DebtStaked(character=AURORA, drive="Hope", conflict=1, die=1, amount=1)
    )
    t(STAKE)
    given(t.events).when(c.SplitDie(seat=1, conflict=1, die=1, drive="Hope")).then_includes(
        DieSplit(conflict=1, die=1, value=2, new_dice=((3, 2),), character=AURORA)
    )


# -- Inspirations ------------------------------------------------------------------------------


def brutes_roll_on_page_3() -> Table:
    """After "Save the mayor" failed, seat 2 holds an Inspiration of 4 (id 1). Page 3 (Starter
    seat 2): Brute's turn rolls Event 2's "For" die (die 1) to 3 and accepts."""
    t = the_goal_failed()
    t(c.Resolve(seat=2, conflict=1))
    next_page(t)
    a_turn_with_a_roll(t, 2, power("Brute", 1), die=1, value=3, conflict=2)
    t(c.AcceptRoll(seat=2))
    return t


SPEND = c.SpendInspiration(seat=2, inspiration=1, conflict=2, die=2)


def test_an_inspiration_is_not_spent_during_the_reactions() -> None:
    """R-TURN-1: Brute's roll is open to Reactions; seat 2 keeps its Inspiration for now."""
    given(brutes_roll_on_page_3().events).when(SPEND).refused("R-TURN-1")


def test_an_inspiration_is_spent_after_the_action() -> None:
    """R-TURN-1: once the reactions close, seat 2 raises the "Against" die to 4."""
    t = pass_reactions(brutes_roll_on_page_3())
    given(t.events).when(SPEND).then(
        InspirationSpent(seat=2, inspiration=1, conflict=2, die=2, before=1, value=4)
    )


def test_only_the_player_whose_turn_it_is_spends_inspirations() -> None:
    """R-TURN-1: seat 2 holds an Inspiration but it is seat 3's turn."""
    t = the_goal_failed()
    t(c.Resolve(seat=2, conflict=1))
    next_page(t)
    t(c.StartTurn(seat=2, character=BRUTE), c.CreateConflict(seat=2, text="Smoke"))
    t(c.EndTurn(seat=2), c.StartTurn(seat=3, character=3))
    given(t.events).when(SPEND).refused("R-TURN-1")
