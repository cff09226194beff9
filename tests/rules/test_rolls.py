"""Using abilities, rolling, the roll decision, reactions and And Then.

Rules: R-ABIL-1, R-ABIL-2, R-ROLL-1, R-ROLL-2, R-ROLL-3, R-REACT-1, R-X-REACT-1, R-ROLL-4,
R-X-ROLL-1, R-X-ROLL-2. The cast and the set-ups are in ``play_helpers``.
"""

from __future__ import annotations

import pytest
from play_helpers import (
    AURORA,
    AURORA_DRIVES,
    BRUTE,
    MIA,
    a_roll,
    a_scene_with_a_conflict,
    a_turn_with_a_roll,
    a_turn_with_an_inspiration,
    conflict,
    decide,
    die_value,
    end_turn,
    filler_turn,
    inspiration_of,
    last_conflict,
    next_page,
    pass_reactions,
    power,
    roll,
    skill,
    start_turn,
)
from rulebook import Table, given

from domain.capes import commands as c
from domain.capes.events import (
    AbilityBlocked,
    AbilityUsed,
    AndThenRequired,
    CharacterAllied,
    DebtGained,
    DebtStaked,
    DieRolled,
    Event,
    InspirationRaised,
    InspirationSpent,
    Narrated,
    ReactionPassed,
    ReactionsClosed,
    ReactionsOpened,
    RollAccepted,
    RollRejected,
    SideSchismed,
    TurnEnded,
)
from domain.capes.model import AndThen
from domain.capes.moves import waiting_for
from domain.capes.rolls import asked
from domain.errors import ChoiceRequired

# -- set-ups ---------------------------------------------------------------------------------


def auroras_turn() -> Table:
    """Mia has created Event 1 (both dice show 1); Aurora's turn has started."""
    return start_turn(a_scene_with_a_conflict(), AURORA)


def brutes_turn(aurora_rolled: int | None = None) -> Table:
    """Mia created Event 1; Aurora rolled its die 1 to ``aurora_rolled`` and accepted it (or
    let it be, when None); Brute's turn has started."""
    t = a_scene_with_a_conflict()
    if aurora_rolled is None:
        filler_turn(t, AURORA)
    else:
        a_roll(t, AURORA, power("Aurora", 1), die=1, value=aurora_rolled)
    return start_turn(t, BRUTE)


def brutes_roll(value: int) -> Table:
    """Aurora created Event 1; Brute rolled its die 1 (showing 1) to ``value``."""
    t = a_scene_with_a_conflict(framer=1)
    return a_turn_with_a_roll(t, BRUTE, power("Brute", 1), die=1, value=value)


def brute_accepted(value: int) -> Table:
    """:func:`brutes_roll`, accepted: reactions are open, asked in the order 2, 3, 1."""
    return brutes_roll(value)(c.AcceptRoll(seat=BRUTE))


def accepted_by_brute(value: int) -> tuple[Event, ...]:
    """The events of Brute accepting his roll of ``value`` on "For": he allies with it and
    the reactions open, from seat 2."""
    return (
        RollAccepted(conflict=1, die=1, value=value),
        CharacterAllied(character=BRUTE, conflict=1, side=0),
        ReactionsOpened(conflict=1, die=1, order=(2, 3, 1)),
    )


def auroras_chance_to_react(value: int) -> Table:
    """:func:`brute_accepted` with ``value``; Brute and Mia passed: Aurora is asked."""
    return brute_accepted(value)(c.PassReaction(seat=BRUTE), c.PassReaction(seat=MIA))


def aurora_reacts(rating: int, value: int = 0) -> c.React:
    """Aurora Reacts with her power rated ``rating`` (Debt on Hope); ``value`` is drawn."""
    ability = power("Aurora", rating)
    return c.React(seat=AURORA, character=AURORA, ability=ability, drive="Hope", value=value)


def aurora_reacted(rating: int, value: int, *, accept: bool = True) -> Table:
    """:func:`auroras_chance_to_react` with a 2; she Reacts, rolls ``value`` and decides."""
    t = auroras_chance_to_react(2).roll(value)
    return t(
        aurora_reacts(rating), c.AcceptRoll(seat=AURORA) if accept else c.RejectRoll(seat=AURORA)
    )


def the_roll(value: int, ability: str = power("Aurora", 1), die: int = 1) -> c.RollDie:
    """Aurora's roll of a die of Event 1, ``value`` drawn by the server, Debt on Justice."""
    return c.RollDie(
        seat=AURORA, ability=ability, conflict=1, die=die, drive="Justice", value=value
    )


# -- R-ABIL-1 --------------------------------------------------------------------------------


def test_a_super_ability_gives_one_debt_on_the_drive_the_player_chooses() -> None:
    """R-ABIL-1: a power puts 1 Debt on the Drive named by the player."""
    given(auroras_turn().events).when(
        c.RollDie(seat=1, ability=power("Aurora", 2), conflict=1, die=1, drive="Hope", value=4)
    ).then(
        AbilityUsed(character=AURORA, ability="Aurora Strength", rating=2, super=True),
        DebtGained(character=AURORA, drive="Hope"),
        DieRolled(conflict=1, die=1, before=1, rolled=4, character=AURORA, seat=1),
    )


def test_a_super_ability_asks_which_drive_takes_the_debt() -> None:
    """R-ABIL-1: the Drive is the player's choice, so with five Drives it must be named."""
    error = (
        given(auroras_turn().events)
        .when(c.RollDie(seat=1, ability=power("Aurora", 2), conflict=1, die=1, value=4))
        .refused("R-ABIL-1")
    )
    assert isinstance(error, ChoiceRequired)
    assert error.choices == tuple(AURORA_DRIVES)


def test_debt_cannot_go_on_a_drive_the_character_lacks() -> None:
    """R-ABIL-1: only one of the character's own Drives takes the Debt."""
    given(auroras_turn().events).when(
        c.RollDie(seat=1, ability=power("Aurora", 2), conflict=1, die=1, drive="Fear", value=4)
    ).refused("R-ABIL-1")


def test_an_undifferentiated_character_takes_the_debt_on_its_one_stack() -> None:
    """R-ABIL-1: with one Debt stack there is nothing to choose."""
    t = start_turn(a_scene_with_a_conflict(framer=1), BRUTE)
    given(t.events).when(
        c.RollDie(seat=2, ability=power("Brute", 1), conflict=1, die=2, value=3)
    ).then_includes(DebtGained(character=BRUTE, drive="Undifferentiated"))


def test_a_mundane_ability_is_blocked_and_gives_no_debt() -> None:
    """R-ABIL-1: a skill gives no Debt; it is Blocked until the scene ends."""
    t = start_turn(a_scene_with_a_conflict(framer=2), MIA)
    given(t.events).when(c.RollDie(seat=3, ability=skill(1), conflict=1, die=1, value=2)).then(
        AbilityUsed(character=MIA, ability="Mia skill 1", rating=1, super=False),
        AbilityBlocked(character=MIA, ability="Mia skill 1"),
        DieRolled(conflict=1, die=1, before=1, rolled=2, character=MIA, seat=3),
    )


def test_a_mundane_ability_takes_no_drive() -> None:
    """R-ABIL-1: a mundane ability puts no Debt on any Drive, so a ``drive`` sent with it is
    refused, naming the field and the ability, not dropped in silence: in a roll, a raised
    Inspiration and a Reaction alike."""
    t = start_turn(a_scene_with_a_conflict(framer=2), MIA)
    error = given(t.events).when(c.RollDie(seat=3, ability=skill(1), conflict=1, die=1,
                                           drive="Undifferentiated", value=2)).refused("R-ABIL-1")
    assert "drive" in error.reason and skill(1) in error.reason, error.reason
    t = a_turn_with_an_inspiration(2)
    error = given(t.events).when(c.RaiseInspiration(
        seat=2, ability="Brute style 2", inspiration=inspiration_of(t, 2),
        drive="Undifferentiated")).refused("R-ABIL-1")
    assert "drive" in error.reason and "Brute style 2" in error.reason, error.reason
    t = auroras_chance_to_react(3)
    error = given(t.events).when(c.React(seat=AURORA, character=AURORA, ability="Aurora style 3",
                                         drive="Hope", value=1)).refused("R-ABIL-1")
    assert "drive" in error.reason and "Aurora style 3" in error.reason, error.reason
    given(t.events).when(c.React(seat=AURORA, character=AURORA, ability="Aurora style 3",
                                 value=1)).then_includes(
        AbilityBlocked(character=AURORA, ability="Aurora style 3"))


def test_a_blocked_ability_cannot_be_used_again_later_in_the_scene() -> None:
    """R-ABIL-1: Blocked until the scene ends, so not on the next page either."""
    t = a_scene_with_a_conflict(framer=2)
    a_roll(t, MIA, skill(1), die=1, value=2)
    next_page(t)
    start_turn(t, MIA)
    given(t.events).when(c.RollDie(seat=3, ability=skill(1), conflict=1, die=2, value=2)).refused(
        "R-ABIL-1"
    )
    given(t.events).when(
        c.RollDie(seat=3, ability=skill(2), conflict=1, die=2, value=2)
    ).then_includes(AbilityBlocked(character=MIA, ability="Mia skill 2"))


# -- R-ABIL-2 --------------------------------------------------------------------------------


def test_a_roll_needs_an_ability_rated_at_least_the_die() -> None:
    """R-ABIL-2: a die showing 4 is rolled by a rating of 4 or more, not by a 3."""
    t = brutes_turn(aurora_rolled=4)
    given(t.events).when(
        c.RollDie(seat=2, ability=power("Brute", 3), conflict=1, die=1, value=2)
    ).refused("R-ABIL-2")
    given(t.events).when(
        c.RollDie(seat=2, ability=power("Brute", 4), conflict=1, die=1, value=2)
    ).then_includes(DieRolled(conflict=1, die=1, before=4, rolled=2, character=BRUTE, seat=2))


def test_an_ability_raises_an_inspiration_by_one() -> None:
    """R-ABIL-2: rated at least the Inspiration's value, an ability raises it by 1."""
    t = a_turn_with_an_inspiration(2)
    given(t.events).when(
        c.RaiseInspiration(seat=2, ability=power("Brute", 2), inspiration=inspiration_of(t, 2))
    ).then(
        AbilityUsed(character=BRUTE, ability="Brute Strength", rating=2, super=True),
        DebtGained(character=BRUTE, drive="Undifferentiated"),
        InspirationRaised(seat=2, inspiration=inspiration_of(t, 2), value=3),
    )


def test_an_ability_rated_below_the_inspiration_cannot_raise_it() -> None:
    """R-ABIL-2: the rating must be at least the Inspiration's value."""
    t = a_turn_with_an_inspiration(2)
    given(t.events).when(
        c.RaiseInspiration(seat=2, ability=power("Brute", 1), inspiration=inspiration_of(t, 2))
    ).refused("R-ABIL-2")


def test_an_inspiration_is_raised_to_six_at_most() -> None:
    """R-ABIL-2: a 5 can become a 6; a 6 goes no higher."""
    five = a_turn_with_an_inspiration(5)
    raise_it = c.RaiseInspiration(seat=2, ability=power("Brute", 5), inspiration=1)
    given(five.events).when(raise_it).then_includes(
        InspirationRaised(seat=2, inspiration=1, value=6)
    )
    six = a_turn_with_an_inspiration(6)
    raise_six = c.RaiseInspiration(
        seat=2, ability=power("Brute", 5), inspiration=inspiration_of(six, 2)
    )
    given(six.events).when(raise_six).refused("R-ABIL-2")


# -- R-ROLL-1 --------------------------------------------------------------------------------


def test_the_die_shows_the_value_the_server_drew() -> None:
    """R-ROLL-1: the rolled value is the one drawn for the command, not chosen by the client."""
    t = a_turn_with_a_roll(a_scene_with_a_conflict(), AURORA, power("Aurora", 1), 1, value=5)
    assert t.events[-1] == DieRolled(
        conflict=1, die=1, before=1, rolled=5, character=AURORA, seat=1
    )
    assert die_value(t, 1) == 5


@pytest.mark.parametrize("value", [0, 7, -1])
def test_a_roll_without_a_fair_drawn_value_is_refused(value: int) -> None:
    """R-ROLL-1: a value outside 1-6 (0: none was drawn) is never taken."""
    given(auroras_turn().events).when(the_roll(value)).refused("R-ROLL-1")


@pytest.mark.parametrize("value", [0, 7])
def test_a_reaction_without_a_fair_drawn_value_is_refused(value: int) -> None:
    """R-ROLL-1 holds for Reactions too."""
    t = brute_accepted(2)
    t(c.PassReaction(seat=BRUTE))
    react = c.React(seat=MIA, character=MIA, ability=skill(2), value=value)
    given(t.events).when(react).refused("R-ROLL-1")


# -- R-ROLL-2 --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decision", "decided"),
    [
        pytest.param(
            c.AcceptRoll(seat=AURORA),
            RollAccepted(conflict=1, die=1, value=4),
            id="accepting keeps the new value",
        ),
        pytest.param(
            c.RejectRoll(seat=AURORA),
            RollRejected(conflict=1, die=1, value=1),
            id="rejecting returns the die to its previous value",
        ),
    ],
)
def test_the_roller_keeps_the_new_value_or_returns_the_die_to_the_old(
    decision: c.AcceptRoll | c.RejectRoll, decided: RollAccepted | RollRejected
) -> None:
    """R-ROLL-2: a 4 is rolled on a die showing 1; the die shows what the decision kept."""
    t = a_turn_with_a_roll(a_scene_with_a_conflict(), AURORA, power("Aurora", 1), 1, value=4)
    assert die_value(t, 1) == 4
    events = given(t.events).when(decision).then_includes(decided)
    t(decision)
    assert die_value(t, 1) == decided.value
    assert events[0] == decided
    assert t.state.page is not None and t.state.page.turn is not None
    assert t.state.page.turn.roll is None


def test_only_the_roller_accepts_or_rejects() -> None:
    """R-ROLL-2: the decision is the roller's."""
    t = a_turn_with_a_roll(a_scene_with_a_conflict(), AURORA, power("Aurora", 1), 1, value=4)
    given(t.events).when(c.AcceptRoll(seat=BRUTE)).refused("R-ROLL-2")
    given(t.events).when(c.RejectRoll(seat=MIA)).refused("R-ROLL-2")


def test_there_is_nothing_to_accept_without_a_roll() -> None:
    """R-ROLL-2: accepting or rejecting needs a roll waiting for its decision."""
    given(auroras_turn().events).when(c.AcceptRoll(seat=AURORA)).refused("R-ROLL-2")


def test_the_turn_cannot_end_before_the_roll_is_decided() -> None:
    """R-ROLL-2: the roller must accept or reject before the turn goes on."""
    t = a_turn_with_a_roll(a_scene_with_a_conflict(), AURORA, power("Aurora", 1), 1, value=4)
    given(t.events).when(c.EndTurn(seat=AURORA)).refused("R-ROLL-2")


# -- R-ROLL-3 --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "rolled", "accept", "ally"),
    [
        pytest.param(1, 4, True, 0, id="accepting a higher roll: the die's own side"),
        pytest.param(1, 4, False, 1, id="rejecting a higher roll: an opposing side"),
        pytest.param(4, 2, True, 1, id="accepting a lower roll: an opposing side"),
        pytest.param(4, 2, False, 0, id="rejecting a lower roll: the die's own side"),
    ],
)
def test_the_roll_decision_allies_with_a_side_it_did_not_hurt(
    before: int, rolled: int, accept: bool, ally: int
) -> None:
    """R-ROLL-3: kept higher -> the die's side; kept lower -> the opposing side."""
    t = brutes_turn(aurora_rolled=before if before > 1 else None)
    roll(t, BRUTE, power("Brute", 5), die=1, value=rolled)
    decision = c.AcceptRoll(seat=BRUTE) if accept else c.RejectRoll(seat=BRUTE)
    given(t.events).when(decision).then_includes(
        CharacterAllied(character=BRUTE, conflict=1, side=ally)
    )


def test_rejecting_a_higher_roll_allies_with_an_opposing_side() -> None:
    """R-ROLL-3: the decision hurt the die's own side, so the character joins the other."""
    t = a_turn_with_a_roll(a_scene_with_a_conflict(), AURORA, power("Aurora", 1), 1, value=6)
    given(t.events).when(c.RejectRoll(seat=AURORA, ally=0)).refused("R-ROLL-3")
    given(t.events).when(c.RejectRoll(seat=AURORA)).then(
        RollRejected(conflict=1, die=1, value=1),
        CharacterAllied(character=AURORA, conflict=1, side=1),
    )


@pytest.mark.parametrize("side", [0, 1])
def test_an_equal_roll_allies_with_the_side_the_player_chooses(side: int) -> None:
    """R-ROLL-3: kept and thrown-away values equal: any side, the player's choice."""
    t = a_turn_with_a_roll(a_scene_with_a_conflict(), AURORA, power("Aurora", 1), 1, value=1)
    given(t.events).when(c.AcceptRoll(seat=AURORA, ally=side)).then_includes(
        CharacterAllied(character=AURORA, conflict=1, side=side)
    )


def test_an_equal_roll_asks_which_side() -> None:
    """R-ROLL-3: with several sides to choose from, the choice is required."""
    t = a_turn_with_a_roll(a_scene_with_a_conflict(), AURORA, power("Aurora", 1), 1, value=1)
    error = given(t.events).when(c.RejectRoll(seat=AURORA)).refused("R-ROLL-3")
    assert isinstance(error, ChoiceRequired)
    assert error.choices == (0, 1)


def test_with_several_opposing_sides_the_player_chooses_which() -> None:
    """R-ROLL-3: after a Schism made a third side, rejecting a higher roll on side 1 may ally
    with side 0 or side 2, and the player has to say which."""
    t = a_scene_with_a_conflict()
    a_roll(t, AURORA, power("Aurora", 5), die=1, value=5, end=False)
    t(
        c.Schism(seat=AURORA, conflict=1, side=0, split_uncontrolled=2, drive="Justice"),
        c.EndTurn(seat=AURORA),
    )
    assert [s.total for s in conflict(t).sides] == [3, 1, 2]
    a_turn_with_a_roll(t, BRUTE, power("Brute", 1), die=2, value=4)
    error = given(t.events).when(c.RejectRoll(seat=BRUTE)).refused("R-ROLL-3")
    assert isinstance(error, ChoiceRequired)
    assert error.choices == (0, 2)
    given(t.events).when(c.RejectRoll(seat=BRUTE, ally=2)).then_includes(
        CharacterAllied(character=BRUTE, conflict=1, side=2)
    )


# -- R-REACT-1 and R-X-REACT-1 ---------------------------------------------------------------


def test_an_accepted_roll_opens_reactions_from_the_acting_player_in_turn_order() -> None:
    """R-REACT-1: everyone may React, in turn order starting with the acting player."""
    t = brutes_roll(2)
    given(t.events).when(c.AcceptRoll(seat=BRUTE)).then(*accepted_by_brute(2))
    t(c.AcceptRoll(seat=BRUTE))
    assert asked(t.state) == BRUTE
    given(t.events).when(aurora_reacts(5, value=3)).refused("R-REACT-1")


def test_a_rejected_roll_opens_no_reactions() -> None:
    """R-REACT-1: only an accepted roll can be reacted to."""
    given(brutes_roll(2).events).when(c.RejectRoll(seat=BRUTE)).then(
        RollRejected(conflict=1, die=1, value=1),
        CharacterAllied(character=BRUTE, conflict=1, side=1),
    )


def test_a_reaction_needs_an_ability_rated_at_least_the_die() -> None:
    """R-REACT-1: the die shows 3, so a rating of 2 cannot React to it."""
    t = auroras_chance_to_react(3)
    given(t.events).when(aurora_reacts(2, value=5)).refused("R-REACT-1")


def test_a_reaction_rolls_the_die_with_debt_decision_and_alliance() -> None:
    """R-REACT-1: a Reaction follows R-ABIL-1 (Debt), R-ROLL-2 and R-ROLL-3 (alliance)."""
    t = auroras_chance_to_react(3)
    react = aurora_reacts(4, value=1)
    given(t.events).when(react).then(
        AbilityUsed(character=AURORA, ability="Aurora Speed", rating=4, super=True, reaction=True),
        DebtGained(character=AURORA, drive="Hope"),
        DieRolled(conflict=1, die=1, before=3, rolled=1, character=AURORA, seat=1, reaction=True),
    )
    t.roll(1)(react)
    # Accepting the lower value hurt side 0: Aurora allies with side 1 (R-ROLL-3).
    given(t.events).when(c.AcceptRoll(seat=AURORA)).then_includes(
        RollAccepted(conflict=1, die=1, value=1),
        CharacterAllied(character=AURORA, conflict=1, side=1),
    )


def test_an_accepted_reaction_gives_those_who_have_not_reacted_a_new_chance() -> None:
    """R-REACT-1: Brute and Mia passed; Aurora's accepted Reaction asks them again."""
    t = aurora_reacted(2, 3)
    assert asked(t.state) == BRUTE
    t(c.PassReaction(seat=BRUTE))
    assert asked(t.state) == MIA


def test_a_rejected_reaction_gives_no_new_chance() -> None:
    """R-REACT-1: the others passed and the only Reaction was rejected: reactions are over."""
    t = auroras_chance_to_react(2).roll(3)(aurora_reacts(2))
    given(t.events).when(c.RejectRoll(seat=AURORA)).then_includes(
        RollRejected(conflict=1, die=1, value=2), ReactionsClosed(conflict=1, die=1)
    )


def test_each_player_reacts_at_most_once_per_action() -> None:
    """R-REACT-1: Aurora reacted; when the others pass again she is not asked a second time."""
    t = aurora_reacted(2, 3)(c.PassReaction(seat=BRUTE))
    given(t.events).when(aurora_reacts(5, value=6)).refused("R-REACT-1")
    given(t.events).when(c.PassReaction(seat=MIA)).then(
        ReactionPassed(seat=MIA), ReactionsClosed(conflict=1, die=1)
    )


def test_reactions_close_when_everyone_who_has_not_reacted_passes_in_a_row() -> None:
    """R-REACT-1: the window closes with the last pass; the turn can then end."""
    t = auroras_chance_to_react(2)
    given(t.events).when(c.EndTurn(seat=BRUTE)).refused("R-REACT-1")
    t(c.PassReaction(seat=AURORA))
    assert t.events[-2:] == [ReactionPassed(seat=AURORA), ReactionsClosed(conflict=1, die=1)]
    given(t.events).when(c.EndTurn(seat=BRUTE)).then(TurnEnded(seat=BRUTE))


def test_a_seat_that_cannot_react_is_passed_over() -> None:
    """R-X-REACT-1: Mia has nothing rated 5, so after Brute passes Aurora is asked."""
    t = brute_accepted(5)
    t(c.PassReaction(seat=BRUTE))
    assert asked(t.state) == AURORA
    react = c.React(seat=MIA, character=MIA, ability=skill(3), value=2)
    given(t.events).when(react).refused("R-REACT-1")


def test_a_seat_whose_high_enough_abilities_are_all_blocked_is_passed_over() -> None:
    """R-X-REACT-1 / R-ABIL-1: only Mia's three abilities rated 3 (a skill, a style, an
    attitude) can roll a die showing 3. On page 1 she is asked when Brute's roll shows 3, and
    she uses all three in the scene (a Reaction, her own roll, a Reaction to it), so they are
    Blocked: on page 2, when Brute's roll shows 3 again, she is passed over."""
    t = a_scene_with_a_conflict(framer=1)  # Aurora created Event 1; Brute's turn comes next
    a_turn_with_a_roll(t, BRUTE, power("Brute", 3), die=1, value=3)
    t(c.AcceptRoll(seat=BRUTE), c.PassReaction(seat=BRUTE))
    assert asked(t.state) == MIA
    t.roll(3)(c.React(seat=MIA, character=MIA, ability="Mia style 3"),
              c.AcceptRoll(seat=MIA, ally=0))
    end_turn(t, BRUTE)
    a_turn_with_a_roll(t, MIA, skill(3), die=1, value=3)
    t(c.AcceptRoll(seat=MIA, ally=0))
    t.roll(3)(c.React(seat=MIA, character=MIA, ability="Mia attitude 3"),
              c.AcceptRoll(seat=MIA, ally=0))
    end_turn(t, MIA)
    assert set(t.state.characters[MIA].blocked) >= {skill(3), "Mia style 3", "Mia attitude 3"}
    next_page(t)  # page 2: Brute's seat starts
    a_turn_with_a_roll(t, BRUTE, power("Brute", 3), die=1, value=3)
    t(c.AcceptRoll(seat=BRUTE, ally=0), c.PassReaction(seat=BRUTE))
    assert die_value(t, 1) == 3
    assert asked(t.state) == AURORA
    assert waiting_for(t.state) == {AURORA: ("react", "pass_reaction")}
    react = c.React(seat=MIA, character=MIA, ability=skill(2), value=2)
    given(t.events).when(react).refused("R-REACT-1")


def test_no_one_can_react_to_a_six_so_reactions_close_at_once() -> None:
    """R-X-REACT-1: nobody has an ability rated 6; the window opens and closes at once."""
    given(brutes_roll(6).events).when(c.AcceptRoll(seat=BRUTE)).then(
        *accepted_by_brute(6), ReactionsClosed(conflict=1, die=1)
    )


# -- R-ROLL-4 and R-X-ROLL-1 -----------------------------------------------------------------


def brute_rolled_against_aurora(value: int) -> Table:
    """Aurora rolled "Against" (die 2) to 3 and allied with it; Brute, on his turn, rolls that
    die to ``value`` with a rating of 3."""
    t = a_scene_with_a_conflict()
    a_roll(t, AURORA, power("Aurora", 1), die=2, value=3)
    return a_turn_with_a_roll(t, BRUTE, power("Brute", 3), die=2, value=value)


def test_and_then_names_the_players_allied_to_the_controlling_side() -> None:
    """R-ROLL-4: Brute rejects a 5 and so allies with "For"; "Against" (3 to 1) still
    controls, allied to Aurora, and Brute narrated last: seat 1 must complete it."""
    t = brute_rolled_against_aurora(5)
    given(t.events).when(c.RejectRoll(seat=BRUTE)).then(
        RollRejected(conflict=1, die=2, value=3),
        CharacterAllied(character=BRUTE, conflict=1, side=0),
        AndThenRequired(conflict=1, side=1, seats=(AURORA,)),
    )


def test_and_then_comes_when_the_reactions_close() -> None:
    """R-ROLL-4: after an accepted roll, the And Then waits until the reactions are over."""
    t = brute_rolled_against_aurora(2)
    t(c.AcceptRoll(seat=BRUTE), c.PassReaction(seat=BRUTE), c.PassReaction(seat=MIA))
    assert t.state.page is not None and t.state.page.turn is not None
    assert t.state.page.turn.and_then is None
    given(t.events).when(c.PassReaction(seat=AURORA)).then(
        ReactionPassed(seat=AURORA),
        ReactionsClosed(conflict=1, die=2),
        AndThenRequired(conflict=1, side=1, seats=(AURORA,)),
    )


def test_the_turn_cannot_end_until_the_and_then_is_narrated() -> None:
    """R-ROLL-4 / R-X-ROLL-1: only a named seat completes the And Then; then the turn ends."""
    t = brute_rolled_against_aurora(5)
    t(c.RejectRoll(seat=BRUTE))
    given(t.events).when(c.EndTurn(seat=BRUTE)).refused("R-ROLL-4")
    given(t.events).when(
        c.Narrate(seat=MIA, text="And then the roof caves in", and_then=True)
    ).refused("R-ROLL-4")
    done = c.Narrate(seat=AURORA, text="...Aurora holds it up", and_then=True)
    given(t.events).when(done).then(
        Narrated(seat=AURORA, text="...Aurora holds it up", and_then=True)
    )
    t(done)
    given(t.events).when(c.EndTurn(seat=BRUTE)).then_includes(TurnEnded(seat=BRUTE))


def test_no_and_then_when_the_last_narrator_is_allied_to_the_controlling_side() -> None:
    """R-ROLL-4: Aurora's own roll made her side control; she narrated last: no And Then."""
    t = a_turn_with_a_roll(a_scene_with_a_conflict(), AURORA, power("Aurora", 1), 2, value=3)
    t(c.AcceptRoll(seat=AURORA))
    pass_reactions(t)
    assert not any(isinstance(e, AndThenRequired) for e in t.events)
    given(t.events).when(c.EndTurn(seat=AURORA)).then(TurnEnded(seat=AURORA))


def test_no_and_then_when_no_side_controls() -> None:
    """R-ROLL-4: a tie has no Controlling side."""
    t = brute_rolled_against_aurora(1)
    decide(t, BRUTE, accept=True)  # 1 against 1: tied
    assert not any(isinstance(e, AndThenRequired) for e in t.events)


def test_narrating_an_and_then_with_none_waiting_is_refused() -> None:
    """R-X-ROLL-1: an And Then narration needs an And Then waiting."""
    given(auroras_turn().events).when(
        c.Narrate(seat=AURORA, text="And then...", and_then=True)
    ).refused("R-ROLL-4")


# -- R-X-ROLL-2 ------------------------------------------------------------------------------


def auroras_own_and_then() -> Table:
    """Page 1: Mia created Event 1; Aurora rolled its "For" die (die 1) to 4, staked her 2
    Justice Debt (1 from earlier play) under it and split it 2 + 2 (dice 1 and 3). Page 2,
    Aurora's turn: she rolls die 1 up to 5 (Debt on Hope) and keeps it; Brute Reacts, rolling
    it down to 1, which allies him with "Against". "For" (1 + 2) still controls, allied to
    Aurora alone, and Brute narrated last: Aurora must complete the And Then of her own
    turn."""
    t = a_scene_with_a_conflict(debt={AURORA: {"Justice": 1}})
    a_roll(t, AURORA, power("Aurora", 4), die=1, value=4, drive="Justice", stake=1, end=False)
    t(c.SplitDie(seat=AURORA, conflict=1, die=1, into=2, drive="Justice"))
    end_turn(t, AURORA)
    next_page(t)
    a_turn_with_a_roll(t, AURORA, power("Aurora", 2), die=1, value=5, drive="Hope")
    t(c.AcceptRoll(seat=AURORA), c.PassReaction(seat=AURORA))
    t.roll(1)(c.React(seat=BRUTE, character=BRUTE, ability=power("Brute", 5)),
              c.AcceptRoll(seat=BRUTE))
    return pass_reactions(t)


def test_an_and_then_is_completed_before_the_turn_stakes() -> None:
    """R-X-ROLL-2 / R-TURN-1: Brute rejected a 5 and so allied with "For", whose die he could
    stake under. While Aurora's And Then waits, the stake is refused (the action is not over)
    and the board offers nothing but her narration; once she has narrated, Brute stakes."""
    t = brute_rolled_against_aurora(5)(c.RejectRoll(seat=BRUTE))
    stake = c.StakeDebt(seat=BRUTE, conflict=1, die=1, amount=1)
    given(t.events).when(stake).refused("R-X-ROLL-2")
    assert waiting_for(t.state) == {AURORA: ("narrate",)}
    t(c.Narrate(seat=AURORA, text="...Aurora holds it up", and_then=True))
    given(t.events).when(stake).then(
        DebtStaked(character=BRUTE, drive="Undifferentiated", conflict=1, die=1, amount=1)
    )


def test_a_named_seat_does_not_schism_off_the_controlling_side_before_its_and_then() -> None:
    """R-X-ROLL-2: moving die 3 to a new side would ally Aurora to it, and the new side (2)
    would control against "For" (1) and "Against" (1): the And Then would then be completed by
    a seat off the Controlling side, for a side that lost control. It waits for her narration;
    after it the Schism is hers to make."""
    t = auroras_own_and_then()
    assert t.state.page is not None and t.state.page.turn is not None
    assert t.state.page.turn.and_then == AndThen(conflict=1, side=0, seats=(AURORA,))
    schism = c.Schism(seat=AURORA, conflict=1, side=0, dice=(3,))
    given(t.events).when(schism).refused("R-X-ROLL-2")
    assert waiting_for(t.state) == {AURORA: ("narrate",)}
    t(c.Narrate(seat=AURORA, text="...and the flood parts around her", and_then=True))
    after = given(t.events).when(schism).then(
        SideSchismed(conflict=1, side=0, new_side=2, label="New side", dice=(3,),
                     character=AURORA),
        CharacterAllied(character=AURORA, conflict=1, side=2),
    )
    assert after.conflicts[1].controlling_side == 2


def test_an_inspiration_does_not_take_control_from_a_waiting_and_then() -> None:
    """R-X-ROLL-2 / R-INSP-1: in scene 2 Brute rolls "For" of the bank robbery up to 3 and
    keeps it; Aurora Reacts, rolling it down to 2, which allies her with "Against", so Brute
    must complete the And Then of his own turn. His Inspiration of 4 would first lift
    "Against" to 4 and take control from "For": refused until he has narrated."""
    t = a_turn_with_an_inspiration(4)
    bank = last_conflict(t)
    roll(t, BRUTE, power("Brute", 1), die=1, value=3, conflict=bank)
    t(c.AcceptRoll(seat=BRUTE), c.PassReaction(seat=BRUTE), c.PassReaction(seat=MIA))
    t.roll(2)(aurora_reacts(3), c.AcceptRoll(seat=AURORA))
    pass_reactions(t)
    assert t.state.page is not None and t.state.page.turn is not None
    assert t.state.page.turn.and_then == AndThen(conflict=bank, side=0, seats=(BRUTE,))
    spend = c.SpendInspiration(seat=BRUTE, inspiration=inspiration_of(t, BRUTE),
                               conflict=bank, die=2)
    given(t.events).when(spend).refused("R-X-ROLL-2")
    t(c.Narrate(seat=BRUTE, text="...and the getaway car stalls", and_then=True))
    given(t.events).when(spend).then(
        InspirationSpent(seat=BRUTE, inspiration=inspiration_of(t, BRUTE), conflict=bank,
                         die=2, before=1, value=4)
    )
