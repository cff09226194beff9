"""Staking Debt, splitting dice and schisms.

Rules: R-STAKE-1, R-STAKE-2, R-X-STAKE-1, R-STAKE-3, R-SPLIT-1, R-X-SPLIT-1, R-SCHISM-1,
R-X-SCHISM-1. The cast and the set-ups are in ``play_helpers``.
"""

from __future__ import annotations

import pytest
from play_helpers import (
    AURORA,
    BRUTE,
    MIA,
    a_roll,
    a_scene_with_a_conflict,
    a_turn_with_an_inspiration,
    conflict,
    earlier_debt,
    end_turn,
    inspiration_of,
    last_conflict,
    power,
    roll,
    skill,
    start_turn,
    take_turn,
)
from rulebook import Table, given

from domain.capes import commands as c
from domain.capes.events import (
    CharacterAllied,
    DebtStaked,
    DieSplit,
    SideSchismed,
)
from domain.capes.model import Conflict, DriveName, DriveSlot
from domain.capes.views import board
from domain.errors import ChoiceRequired

# -- set-ups ---------------------------------------------------------------------------------


def aurora_rolled(
    value: int = 4, *, die: int = 1, drive: DriveName = "Justice", **debt: int
) -> Table:
    """Mia created Event 1. Aurora, with ``debt`` from earlier play, rolled ``die`` to
    ``value`` (its Debt on ``drive``) and accepted it; her turn goes on."""
    t = a_scene_with_a_conflict(debt={AURORA: debt})
    return a_roll(t, AURORA, power("Aurora", 1), die=die, value=value, drive=drive, end=False)


def auroras_turn_before_rolling(**debt: int) -> Table:
    """Mia created Event 1; Aurora, with ``debt`` from earlier play, has started her turn."""
    return start_turn(a_scene_with_a_conflict(debt={AURORA: debt}), AURORA)


def a_controlled_five() -> Table:
    """Aurora rolled die 1 ("For") to 5, accepted, and staked 1 Justice under it: she
    controls it, and 2 Justice Debt is left (Justice 3: 2 more may go on this Conflict)."""
    t = aurora_rolled(5, Justice=2)
    t(c.StakeDebt(seat=AURORA, conflict=1, die=1, drive="Justice"))
    return t


def a_split_five() -> Table:
    """:func:`a_controlled_five`, split in two: side 0 holds die 1 (3) and die 3 (2), both
    Aurora's, with 1 Debt under each."""
    t = a_controlled_five()
    t(c.SplitDie(seat=AURORA, conflict=1, die=1, into=2))
    return t


def stake(
    die: int, amount: int = 1, drive: DriveName | None = "Justice", seat: int = AURORA
) -> c.StakeDebt:
    return c.StakeDebt(seat=seat, conflict=1, die=die, amount=amount, drive=drive)


def dice_within_debt(x: Conflict) -> bool:
    """R-SPLIT-1: no side holds more dice than Debt staked on it (an uncontrolled original die
    excepted)."""
    return all(len(s.dice) - any(d.controller is None for d in s.dice) <= s.staked for s in x.sides)


# -- R-STAKE-1 -------------------------------------------------------------------------------


def test_debt_is_staked_from_the_character_whose_ability_was_used() -> None:
    """R-STAKE-1: Aurora's player stakes Aurora's Debt, after her ability was used."""
    t = aurora_rolled()
    state = (
        given(t.events)
        .when(stake(die=1))
        .then(DebtStaked(character=AURORA, drive="Justice", conflict=1, die=1, amount=1))
    )
    assert state.characters[AURORA].drives[0] == DriveSlot(name="Justice", strength=3, debt=0)


def test_only_the_player_whose_turn_it_is_stakes() -> None:
    """R-STAKE-1: Brute's player cannot stake in Aurora's turn (R-TURN-1)."""
    t = aurora_rolled()
    earlier_debt(t, BRUTE, "Undifferentiated", 1)
    given(t.events).when(stake(die=1, drive=None, seat=BRUTE)).refused("R-TURN-1")


def test_debt_is_not_staked_in_a_turn_that_created_a_conflict() -> None:
    """R-STAKE-1: only a turn that uses an ability stakes Debt."""
    t = auroras_turn_before_rolling(Justice=1)
    t(c.CreateConflict(seat=AURORA, kind="event", text="The bridge collapses"))
    given(t.events).when(stake(die=1)).refused("R-STAKE-1")


def test_a_turn_that_staked_cannot_create_a_conflict() -> None:
    """R-STAKE-1 / R-X-STAKE-1: once Debt is staked the turn must use an ability."""
    t = auroras_turn_before_rolling(Justice=1)
    t(stake(die=1))
    given(t.events).when(
        c.CreateConflict(seat=AURORA, kind="event", text="The bridge collapses")
    ).refused("R-STAKE-1")


def test_a_character_stakes_from_one_drive_per_conflict() -> None:
    """R-STAKE-1: Justice Debt is under die 1, so a Split there cannot be paid with Hope."""
    t = aurora_rolled(5, Hope=1)
    t(stake(die=1))
    given(t.events).when(c.SplitDie(seat=AURORA, conflict=1, die=1, into=2, drive="Hope")).refused(
        "R-STAKE-1"
    )


def test_at_most_the_drives_strength_is_staked_on_one_conflict() -> None:
    """R-STAKE-1: Love (strength 1) holds 3 Debt, yet only 1 of it goes on this Conflict."""
    t = aurora_rolled(5, drive="Love", Love=2)
    given(t.events).when(stake(die=1, amount=2, drive="Love")).refused("R-STAKE-1")
    t(stake(die=1, drive="Love"))
    given(t.events).when(c.SplitDie(seat=AURORA, conflict=1, die=1, into=2, drive="Love")).refused(
        "R-STAKE-1"
    )


def test_an_undifferentiated_character_stakes_at_most_three_on_one_conflict() -> None:
    """R-STAKE-1: Brute holds 4 Debt on his one stack and may stake 3 of it here."""
    t = a_scene_with_a_conflict(framer=1, debt={BRUTE: {"Undifferentiated": 3}})
    a_roll(t, BRUTE, power("Brute", 5), die=1, value=5, end=False)
    undifferentiated = stake(die=1, amount=4, drive=None, seat=BRUTE)
    given(t.events).when(undifferentiated).refused("R-STAKE-1")
    t(stake(die=1, amount=3, drive=None, seat=BRUTE))
    given(t.events).when(c.SplitDie(seat=BRUTE, conflict=1, die=1, into=2)).refused("R-STAKE-1")


def test_only_debt_the_drive_holds_is_staked() -> None:
    """R-STAKE-1: Justice holds the 1 Debt of the roll, not 2."""
    given(aurora_rolled().events).when(stake(die=1, amount=2)).refused("R-STAKE-1")


def test_the_player_names_the_drive_when_several_hold_debt() -> None:
    """R-STAKE-1: Justice and Hope both hold Debt: which one is the player's choice."""
    error = given(aurora_rolled(Hope=1).events).when(stake(die=1, drive=None)).refused("R-STAKE-1")
    assert isinstance(error, ChoiceRequired)
    assert error.choices == ("Justice", "Hope")


def test_a_drive_whose_strength_is_below_the_stake_is_not_offered() -> None:
    """R-STAKE-1: Justice (3), Hope (2) and Love (1) each hold 2 Debt; 2 may be staked from
    Justice or Hope but not from Love, so Love is no choice."""
    t = aurora_rolled(5, Justice=1, Hope=2, Love=2)
    error = given(t.events).when(stake(die=1, amount=2, drive=None)).refused("R-STAKE-1")
    assert isinstance(error, ChoiceRequired)
    assert error.choices == ("Justice", "Hope")


def test_when_one_drive_may_stake_that_much_it_is_staked_from() -> None:
    """R-STAKE-1: Justice (3) and Love (1) each hold 2 Debt; only Justice may put 2 on one
    Conflict, so there is no choice to make."""
    t = aurora_rolled(5, Justice=1, Love=2)
    given(t.events).when(stake(die=1, amount=2, drive=None)).then(
        DebtStaked(character=AURORA, drive="Justice", conflict=1, die=1, amount=2)
    )


def test_a_stake_no_drive_may_make_is_refused_for_the_limit() -> None:
    """R-STAKE-1: only Love (strength 1) holds 2 Debt, and 2 exceeds its strength."""
    t = aurora_rolled(5, drive="Love", Love=1)
    error = given(t.events).when(stake(die=1, amount=2, drive=None)).refused("R-STAKE-1")
    assert not isinstance(error, ChoiceRequired)
    assert "at most 1" in error.reason


def test_when_one_drive_holds_debt_it_is_staked_from() -> None:
    """R-STAKE-1: no choice to make when only Justice holds Debt."""
    given(aurora_rolled().events).when(stake(die=1, drive=None)).then(
        DebtStaked(character=AURORA, drive="Justice", conflict=1, die=1, amount=1)
    )


# -- R-STAKE-2 and R-X-STAKE-1 ---------------------------------------------------------------


def test_debt_goes_only_on_a_side_the_character_is_allied_to() -> None:
    """R-STAKE-2: after accepting on "For", Aurora cannot stake on "Against"."""
    given(aurora_rolled().events).when(stake(die=2)).refused("R-STAKE-2")


def test_debt_staked_before_the_roll_binds_the_decision_to_that_side() -> None:
    """R-STAKE-2 / R-X-STAKE-1: Debt under "Against" promises that side; accepting a higher
    roll on "For" would break the promise, rejecting it keeps it."""
    t = auroras_turn_before_rolling(Justice=1)
    t(stake(die=2))
    roll(t, AURORA, power("Aurora", 1), die=1, value=4)
    given(t.events).when(c.AcceptRoll(seat=AURORA)).refused("R-STAKE-2")
    state = (
        given(t.events)
        .when(c.RejectRoll(seat=AURORA))
        .then_includes(CharacterAllied(character=AURORA, conflict=1, side=1))
    )
    assert state  # the decision is taken


def test_a_turn_promises_one_side_only() -> None:
    """R-X-STAKE-1: one ability allies with one side, so Debt cannot be promised to two."""
    t = auroras_turn_before_rolling(Justice=2)
    t(stake(die=2))
    given(t.events).when(stake(die=1)).refused("R-STAKE-2")


def test_a_promise_binds_the_roll_to_its_conflict() -> None:
    """R-X-STAKE-1: Debt promised on Event 1 means the roll is on Event 1, not Event 2."""
    t = a_scene_with_a_conflict(framer=2, debt={AURORA: {"Justice": 1}})
    take_turn(t, MIA, c.CreateConflict(seat=MIA, kind="event", text="The tide comes in"))
    start_turn(t, AURORA)
    t(stake(die=2))
    given(t.events).when(
        c.RollDie(seat=AURORA, ability=power("Aurora", 1), conflict=2, die=1, drive="Hope", value=3)
    ).refused("R-STAKE-2")


def test_a_promise_forbids_raising_an_inspiration() -> None:
    """R-X-STAKE-1: only a roll can ally the character with the promised side."""
    t = a_turn_with_an_inspiration(2)
    earlier_debt(t, BRUTE, "Undifferentiated", 1)
    t(c.StakeDebt(seat=BRUTE, conflict=last_conflict(t), die=1))
    given(t.events).when(
        c.RaiseInspiration(seat=BRUTE, ability=power("Brute", 2), inspiration=inspiration_of(t, 2))
    ).refused("R-STAKE-2")


# -- R-STAKE-3 -------------------------------------------------------------------------------


def test_debt_under_an_uncontrolled_die_gives_control_of_it() -> None:
    """R-STAKE-3: the Debt goes under the die and the character controls it."""
    t = aurora_rolled()
    t(stake(die=1))
    die = conflict(t).sides[0].dice[0]
    assert die.controller == AURORA
    assert die.staked == 1


def test_debt_cannot_go_under_a_controlled_die() -> None:
    """R-STAKE-3: a controlled die takes no more Debt, whoever controls it."""
    t = a_controlled_five()
    given(t.events).when(stake(die=1)).refused("R-STAKE-3")
    t(c.EndTurn(seat=AURORA))
    a_roll(t, BRUTE, power("Brute", 5), die=1, value=6, end=False)
    given(t.events).when(stake(die=1, drive=None, seat=BRUTE)).refused("R-STAKE-3")


# -- R-SPLIT-1 and R-X-SPLIT-1 ---------------------------------------------------------------


def test_a_five_splits_in_two_into_three_and_two() -> None:
    """R-SPLIT-1: as even as possible, 5 = 3 + 2; the new die has 1 Debt under it."""
    given(a_controlled_five().events).when(c.SplitDie(seat=AURORA, conflict=1, die=1, into=2)).then(
        DieSplit(conflict=1, die=1, value=3, new_dice=((3, 2),), character=AURORA),
        DebtStaked(character=AURORA, drive="Justice", conflict=1, die=3, amount=1),
    )


def test_a_five_splits_in_three_into_two_two_and_one() -> None:
    """R-SPLIT-1 / R-X-SPLIT-1: 5 = 2 + 2 + 1; the split die keeps the largest share."""
    given(a_controlled_five().events).when(c.SplitDie(seat=AURORA, conflict=1, die=1, into=3)).then(
        DieSplit(conflict=1, die=1, value=2, new_dice=((3, 2), (4, 1)), character=AURORA),
        DebtStaked(character=AURORA, drive="Justice", conflict=1, die=3, amount=1),
        DebtStaked(character=AURORA, drive="Justice", conflict=1, die=4, amount=1),
    )


@pytest.mark.parametrize("into", [1, 6])
def test_a_die_splits_into_at_least_two_and_at_most_its_value(into: int) -> None:
    """R-SPLIT-1: 2 <= n <= v, so a 5 splits into 2 to 5 dice."""
    given(a_controlled_five().events).when(
        c.SplitDie(seat=AURORA, conflict=1, die=1, into=into, debt=2)
    ).refused("R-SPLIT-1")


def test_a_split_into_n_dice_stakes_at_least_n_minus_one_debt() -> None:
    """R-SPLIT-1: one new Debt under each new die; three dice need two."""
    given(a_controlled_five().events).when(
        c.SplitDie(seat=AURORA, conflict=1, die=1, into=3, debt=1)
    ).refused("R-SPLIT-1")


def test_extra_debt_of_a_split_goes_under_the_first_new_die() -> None:
    """R-X-SPLIT-1: at least n - 1 Debt; more is allowed and goes under the first new die."""
    given(a_controlled_five().events).when(
        c.SplitDie(seat=AURORA, conflict=1, die=1, into=2, debt=2)
    ).then_includes(DebtStaked(character=AURORA, drive="Justice", conflict=1, die=3, amount=2))


def test_only_the_character_controlling_a_die_splits_it() -> None:
    """R-SPLIT-1 / R-X-SPLIT-1: nobody controls die 1 yet, so nobody may split it."""
    given(aurora_rolled(5, Justice=1).events).when(
        c.SplitDie(seat=AURORA, conflict=1, die=1, into=2)
    ).refused("R-SPLIT-1")


def test_a_side_never_holds_more_dice_than_debt_staked_on_it() -> None:
    """R-SPLIT-1: staking, splitting twice and a Schism keep dice within the Debt staked
    (the uncontrolled "Against" die is its side's original one)."""
    t = a_controlled_five()
    assert dice_within_debt(conflict(t))
    for command in (
        c.SplitDie(seat=AURORA, conflict=1, die=1, into=2),
        c.SplitDie(seat=AURORA, conflict=1, die=1, into=2),
        c.Schism(seat=AURORA, conflict=1, side=0, dice=(3,)),
    ):
        t(command)
        assert dice_within_debt(conflict(t))
    assert [[d.value for d in s.dice] for s in conflict(t).sides] == [[2, 1], [1], [2]]


def brute_beside_auroras_split() -> Table:
    """Aurora rolled "For" (die 1) to 5, controls it with 1 Justice and split it: dice 1 (3)
    and 3 (2), both hers. In his turn Brute rolled die 1 to 4 and accepted: he is allied to
    "For" too and holds the roll's Debt, but controls no die there."""
    t = a_scene_with_a_conflict(debt={AURORA: {"Justice": 1}})
    a_roll(t, AURORA, power("Aurora", 1), die=1, value=5, drive="Justice", stake=1, end=False)
    t(c.SplitDie(seat=AURORA, conflict=1, die=1, into=2, drive="Justice"))
    end_turn(t, AURORA)
    return a_roll(t, BRUTE, power("Brute", 3), die=1, value=4, end=False)


def test_a_character_splits_no_die_another_controls() -> None:
    """R-SPLIT-1 / R-X-SPLIT-1: die 1 is Aurora's; Brute, allied to its side and holding
    Debt, still may not split it."""
    t = brute_beside_auroras_split()
    assert t.state.characters[BRUTE].drives[0].debt == 1
    given(t.events).when(c.SplitDie(seat=BRUTE, conflict=1, die=1, into=2)).refused("R-SPLIT-1")


# -- R-SCHISM-1 and R-X-SCHISM-1 -------------------------------------------------------------


def test_a_schism_moves_controlled_dice_to_a_brand_new_side() -> None:
    """R-SCHISM-1 / R-X-SCHISM-1: die 3 leaves "For" for a new side, and Aurora with it."""
    state = (
        given(a_split_five().events)
        .when(c.Schism(seat=AURORA, conflict=1, side=0, dice=(3,), label="Rogue"))
        .then(
            SideSchismed(
                conflict=1, side=0, new_side=2, label="Rogue", dice=(3,), character=AURORA
            ),
            CharacterAllied(character=AURORA, conflict=1, side=2),
        )
    )
    sides = state.conflicts[1].sides
    assert [(s.label, [d.id for d in s.dice]) for s in sides] == [
        ("For", [1]),
        ("Against", [2]),
        ("Rogue", [3]),
    ]


def test_a_schism_may_not_leave_an_original_side_without_dice() -> None:
    """R-SCHISM-1: moving both of "For"'s dice would empty an original side."""
    given(a_split_five().events).when(
        c.Schism(seat=AURORA, conflict=1, side=0, dice=(1, 3))
    ).refused("R-SCHISM-1")


@pytest.mark.parametrize(
    ("side", "dice"),
    [
        pytest.param(1, (2,), id="an uncontrolled die"),
        pytest.param(0, (2,), id="a die of another side"),
        pytest.param(0, (), id="no die at all"),
    ],
)
def test_a_schism_moves_dice_the_character_controls_on_that_side(
    side: int, dice: tuple[int, ...]
) -> None:
    """R-SCHISM-1: only dice the character controls, all from the side named, at least one."""
    given(a_split_five().events).when(
        c.Schism(seat=AURORA, conflict=1, side=side, dice=dice)
    ).refused("R-SCHISM-1")


def test_a_schism_moves_no_die_another_character_controls() -> None:
    """R-SCHISM-1: "For" holds Aurora's dice 1 and 3; Brute, allied to "For", may not take
    die 3 to a side of his own."""
    given(brute_beside_auroras_split().events).when(
        c.Schism(seat=BRUTE, conflict=1, side=0, dice=(3,))
    ).refused("R-SCHISM-1")


def test_the_board_names_the_dice_a_schism_may_take() -> None:
    """R-SCHISM-1: the dice the turn's character controls, on a side a Schism may leave. After
    the split "For" holds Aurora's dice 1 and 3, "Against" the uncontrolled die 2: a Schism
    takes 1 or 3, never 2 (the table page offered every die of the side, and the uncontrolled
    one was refused). Before the split, die 1 is "For"'s only die, which no Schism may take
    (an original side keeps a die); Brute controls no die at all."""
    assert board(a_split_five().state).schism_dice == {1: (1, 3)}
    assert board(a_controlled_five().state).schism_dice == {}
    assert board(brute_beside_auroras_split().state).schism_dice == {}


def test_the_board_names_the_sides_a_schism_may_leave() -> None:
    """R-SCHISM-1: after the split, a Schism leaves "For" (Aurora's dice 1 and 3), never
    "Against" (nothing of hers there); before it, "For"'s only die stays, and no Schism is
    offered. The table page offered every Conflict and every side, and the server refused."""
    assert board(a_split_five().state).schism_sides == {1: (0,)}
    assert board(a_controlled_five().state).schism_sides == {}
    assert board(brute_beside_auroras_split().state).schism_sides == {}


def test_the_board_names_the_sides_whose_uncontrolled_die_a_schism_may_split_first() -> None:
    """R-SCHISM-1 / R-SPLIT-1 / R-STAKE-2: Aurora, allied to "For", may split its
    uncontrolled 5 and leave with the new dice. Allied to "Against" after her roll, she may
    not split Mia's 3 on "For" (its Debt would go on a side she is not allied to), though its
    value allows it, which is all the page judged by; "Against"'s 4 she may."""
    split_for = board(aurora_rolled(5, Justice=1).state)
    assert (split_for.schism_sides, split_for.schism_splits) == ({1: (0,)}, {1: (0,)})
    t = a_scene_with_a_conflict(framer=2)
    a_roll(t, MIA, skill(3), die=1, value=3)
    a_roll(t, AURORA, power("Aurora", 1), die=2, value=4, drive="Justice", end=False)
    assert [d.value for d in conflict(t).sides[0].dice] == [3]
    assert board(t.state).schism_splits == {1: (1,)}
    assert board(t.state).schism_sides == {1: (1,)}
    assert board(a_split_five().state).schism_splits == {}


def test_a_schism_moves_each_die_once() -> None:
    """R-SCHISM-1: "For" holds Aurora's dice 1 (2), 3 (2) and 4 (1); naming die 3 twice is
    refused, though one die would still be left behind."""
    t = a_split_five()
    t(c.SplitDie(seat=AURORA, conflict=1, die=1, into=2))
    assert [d.id for d in conflict(t).sides[0].dice] == [1, 3, 4]
    given(t.events).when(c.Schism(seat=AURORA, conflict=1, side=0, dice=(3, 3))).refused(
        "R-SCHISM-1"
    )


def test_a_schisms_drive_comes_only_with_the_split_before_it() -> None:
    """R-SCHISM-1: ``drive`` names the Drive of the Debt staked to split the uncontrolled die
    before a Schism; a Schism that splits nothing (no ``split_uncontrolled``) and names one is
    refused, naming it, not carried out with the Drive dropped."""
    t = a_split_five()
    error = given(t.events).when(
        c.Schism(seat=AURORA, conflict=1, side=0, dice=(3,), drive="Justice")
    ).refused("R-SCHISM-1")
    assert "drive" in error.reason and "split_uncontrolled" in error.reason, error.reason
    given(t.events).when(c.Schism(seat=AURORA, conflict=1, side=0, dice=(3,))).then_includes(
        CharacterAllied(character=AURORA, conflict=1, side=2))


def test_before_a_schism_the_uncontrolled_die_is_split_and_left_behind() -> None:
    """R-SCHISM-1 / R-X-SPLIT-1: the 5 nobody controls splits into 2 + 2 + 1; it keeps its 2
    and stays on "For", the new 2 and 1 go to the new side with 1 Debt each."""
    t = aurora_rolled(5, Justice=1)
    state = (
        given(t.events)
        .when(c.Schism(seat=AURORA, conflict=1, side=0, split_uncontrolled=3, label="Rogue"))
        .then(
            DieSplit(conflict=1, die=1, value=2, new_dice=((3, 2), (4, 1)), character=AURORA),
            DebtStaked(character=AURORA, drive="Justice", conflict=1, die=3, amount=1),
            DebtStaked(character=AURORA, drive="Justice", conflict=1, die=4, amount=1),
            SideSchismed(
                conflict=1, side=0, new_side=2, label="Rogue", dice=(3, 4), character=AURORA
            ),
            CharacterAllied(character=AURORA, conflict=1, side=2),
        )
    )
    left = state.conflicts[1].sides[0].dice
    assert [(d.id, d.value, d.controller) for d in left] == [(1, 2, None)]
    assert dice_within_debt(state.conflicts[1])


def test_after_a_schism_the_character_is_no_longer_allied_to_the_side_it_left() -> None:
    """R-X-SCHISM-1: allied to the new side only (remembered as once allied to both)."""
    t = a_split_five()
    t(c.Schism(seat=AURORA, conflict=1, side=0, dice=(3,)))
    assert conflict(t).allies[AURORA] == 2
    assert conflict(t).once_allied[AURORA] == frozenset({0, 2})
    given(t.events).when(c.SplitDie(seat=AURORA, conflict=1, die=1, into=2)).refused("R-STAKE-2")


def test_the_uncontrolled_die_is_split_for_a_schism_only_by_a_character_of_its_side() -> None:
    """R-SCHISM-1 / R-STAKE-2: the split's Debt is staked on "For" first; Aurora, allied to
    "Against" after her roll, cannot carve Mia's 3 off "For" with a Schism."""
    t = a_scene_with_a_conflict(framer=2)
    a_roll(t, MIA, skill(3), die=1, value=3)
    a_roll(t, AURORA, power("Aurora", 1), die=2, value=4, drive="Justice", end=False)
    given(t.events).when(c.Schism(seat=AURORA, conflict=1, side=0, split_uncontrolled=2)).refused(
        "R-STAKE-2"
    )


def test_a_schism_settles_the_turns_promise() -> None:
    """R-X-SCHISM-1 / R-X-STAKE-1: Debt staked before the ability to split the uncontrolled
    die for a Schism leaves no promise behind: the roll may then ally anywhere."""
    t = a_scene_with_a_conflict(framer=2, debt={AURORA: {"Justice": 1}})
    a_roll(t, MIA, skill(3), die=1, value=3)
    start_turn(t, AURORA)
    t(c.Schism(seat=AURORA, conflict=1, side=0, split_uncontrolled=2))
    assert t.state.page is not None and t.state.page.turn is not None
    assert t.state.page.turn.promised == ()
    roll(t, AURORA, power("Aurora", 1), die=2, value=4)
    given(t.events).when(c.AcceptRoll(seat=AURORA)).then_includes(
        CharacterAllied(character=AURORA, conflict=1, side=1)
    )
