"""Conflicts: Goals and Events, control, vetoes, alliances, failed Goals
(R-CONF-1..5, R-X-CONF-1, R-X-CONF-2)."""

from __future__ import annotations

from play_helpers import (
    AURORA,
    BRUTE,
    MIA,
    a_roll,
    a_scene,
    a_turn_with_a_roll,
    end_turn,
    next_page,
    play_on,
    power,
    start_turn,
    take_turn,
    to_resolution,
)
from rulebook import Table, given, state_of
from scenes_helpers import (
    claiming_on_page,
    created,
    the_goal_failed,
    the_warehouse_contested,
    two_events,
)

from domain.capes import commands as c
from domain.capes.events import (
    CharacterAllied,
    ClaimMade,
    ConflictCreated,
    ConflictResolved,
    ConflictVetoed,
    InspirationMade,
    TurnEnded,
)
from domain.capes.model import Conflict, Die, Side
from domain.capes.views import board

# -- R-CONF-1, R-X-CONF-1: what a Conflict is -------------------------------------------------


def test_a_conflict_starts_with_two_sides_each_one_die_showing_one_and_no_allies() -> None:
    """R-CONF-1: an Event created in a turn: two sides, one die at 1 on each, no allies."""
    t = a_scene(framer=1)
    start_turn(t, 1)
    event = c.CreateConflict(seat=1, text="The warehouse burns", sides=("Burns", "Saved"))
    state = given(t.events).when(event).then(created(event, in_turn=True))
    new = state.conflicts[1]
    assert [s.label for s in new.sides] == ["Burns", "Saved"]
    assert [[d.value for d in s.dice] for s in new.sides] == [[1], [1]]
    assert new.allies == {} and new.once_allied == {}


def test_a_goal_names_the_characters_pursuing_it() -> None:
    """R-CONF-1 and R-X-CONF-1: a Goal with a text, naming Aurora."""
    t = a_scene(framer=1)
    start_turn(t, 1)
    goal = c.CreateConflict(seat=1, kind="goal", text="Save the mayor", names=(AURORA,))
    state = given(t.events).when(goal).then(created(goal, in_turn=True))
    assert state.conflicts[1].kind == "goal" and state.conflicts[1].names == (AURORA,)


def test_a_goal_that_names_nobody_is_refused() -> None:
    """R-X-CONF-1: a Goal names at least one character."""
    t = a_scene(framer=1)
    start_turn(t, 1)
    given(t.events).when(
        c.CreateConflict(seat=1, kind="goal", text="Save the mayor")
    ).refused("R-X-CONF-1")


def test_an_event_that_names_characters_is_refused() -> None:
    """R-X-CONF-1: only a Goal names characters."""
    t = a_scene(framer=1)
    start_turn(t, 1)
    given(t.events).when(
        c.CreateConflict(seat=1, kind="event", text="The storm", names=(AURORA,))
    ).refused("R-X-CONF-1")


# -- R-CONF-2: totals and control -------------------------------------------------------------


def conflict_of(*sides: tuple[int, ...]) -> Conflict:
    dice = iter(range(1, 99))
    return Conflict(
        id=1,
        kind="event",
        text="x",
        creator=1,
        created_on=(1, 1),
        sides=tuple(
            Side(label=f"s{i}", dice=tuple(Die(id=next(dice), value=v) for v in values))
            for i, values in enumerate(sides)
        ),
    )


def test_a_sides_total_is_the_sum_of_its_dice() -> None:
    """R-CONF-2: two dice of 3 (6) beat one die of 5."""
    x = conflict_of((3, 3), (5,))
    assert [s.total for s in x.sides] == [6, 5]
    assert x.controlling_side == 0


def test_a_tie_for_the_highest_total_means_nobody_controls() -> None:
    """R-CONF-2: 5, 5 and 3: the two fives tie, so no side controls."""
    assert conflict_of((5,), (5,), (3,)).controlling_side is None
    assert conflict_of((1,), (1,)).controlling_side is None
    assert conflict_of((2,), (5,), (4,)).controlling_side == 1


def test_the_side_with_the_strictly_highest_total_controls_after_a_roll() -> None:
    """R-CONF-2: Brute's 5 on "For" beats Aurora's 3 on "Against"."""
    t = the_warehouse_contested()
    assert t.state.conflicts[1].controlling_side == 0


# -- R-CONF-3: vetoes -------------------------------------------------------------------------


def test_any_player_may_veto_an_event() -> None:
    """R-CONF-3: seat 3 vetoes seat 1's Event before the next turn; it leaves the table."""
    t = a_scene(framer=1)
    take_turn(t, 1, c.CreateConflict(seat=1, text="The warehouse burns"))
    state = given(t.events).when(c.Veto(seat=3, conflict=1)).then(
        ConflictVetoed(conflict=1, seat=3)
    )
    assert state.conflicts == {}


def goal_naming_brute() -> list[object]:
    """Seat 1's free turn has created a Goal that names Brute (seat 2's character)."""
    t = a_scene(framer=1)
    start_turn(t, 1)
    t(c.CreateConflict(seat=1, kind="goal", text="Win the mayor's trust", names=(BRUTE,)))
    return list(t.events)


def test_a_goal_is_vetoed_only_by_a_player_of_a_character_it_names() -> None:
    """R-CONF-3: the Goal names Brute: seat 3 and even its creator, seat 1, may not veto it."""
    history = goal_naming_brute()
    given(history).when(c.Veto(seat=3, conflict=1)).refused("R-CONF-3")
    given(history).when(c.Veto(seat=1, conflict=1)).refused("R-CONF-3")


def test_the_player_of_a_character_a_goal_names_may_veto_it() -> None:
    """R-CONF-3: seat 2 plays Brute, whom the Goal names."""
    given(goal_naming_brute()).when(c.Veto(seat=2, conflict=1)).then(
        ConflictVetoed(conflict=1, seat=2)
    )


def test_the_board_names_who_may_veto_each_conflict() -> None:
    """R-CONF-3: a Goal naming Brute, by seat 2 only; an Event, by anyone. The table page
    says who may veto what (it listed a veto as a move the table waited for)."""
    assert board(state_of(goal_naming_brute())).vetoers == {1: (2,)}
    t = a_scene(framer=1)
    take_turn(t, 1, c.CreateConflict(seat=1, text="The warehouse burns"))
    assert board(t.state).vetoers == {1: (1, 2, 3)}
    start_turn(t, 2)
    assert board(t.state).vetoers == {}


def test_a_veto_comes_before_the_next_turn_starts() -> None:
    """R-CONF-3: once seat 2's turn has started, seat 1's Event stands."""
    t = a_scene(framer=1)
    take_turn(t, 1, c.CreateConflict(seat=1, text="The warehouse burns"))
    start_turn(t, 2)
    given(t.events).when(c.Veto(seat=3, conflict=1)).refused("R-CONF-3")


def test_a_vetoed_conflict_still_spends_the_turn() -> None:
    """R-CONF-3 with R-TURN-1: after the veto seat 1 cannot create another Conflict in the
    same turn, but may end it."""
    t = a_scene(framer=1)
    start_turn(t, 1)
    t(c.CreateConflict(seat=1, text="The warehouse burns"), c.Veto(seat=2, conflict=1))
    given(t.events).when(c.CreateConflict(seat=1, text="Something else")).refused("R-TURN-1")
    given(t.events).when(c.EndTurn(seat=1)).then(TurnEnded(seat=1))


def test_a_conflict_created_in_the_last_turn_of_a_page_may_be_vetoed_before_the_next_turn(
) -> None:
    """R-CONF-3: Brute's turn creates Event 3 and ends page 1 by itself; page 2's claiming
    comes before any turn, so Event 3 may still be vetoed."""
    t = two_events()
    take_turn(t, 2, c.CreateConflict(seat=2, text="The dam breaks"))
    assert t.state.page is not None and t.state.page.number == 2
    given(t.events).when(c.Veto(seat=3, conflict=3)).then(ConflictVetoed(conflict=3, seat=3))
    next_page(t)
    start_turn(t, 1)
    given(t.events).when(c.Veto(seat=3, conflict=3)).refused("R-CONF-3")


def test_a_conflict_added_while_claiming_may_be_vetoed_until_the_first_turn() -> None:
    """R-CONF-3: an Event added in the claiming phase can be vetoed during free play."""
    t = the_warehouse_contested(tokens=1)
    t(c.CreateConflict(seat=1, text="The roof caves in"))
    next_page(t)
    given(t.events).when(c.Veto(seat=2, conflict=2)).then(ConflictVetoed(conflict=2, seat=2))


# -- R-CONF-4: alliances ----------------------------------------------------------------------


def test_a_roll_decision_allies_the_character_and_its_player() -> None:
    """R-CONF-4: Brute, allied to side 0 of Event 1, makes seat 2 allied to it."""
    t = the_warehouse_contested()
    x = t.state.conflicts[1]
    assert x.allies == {AURORA: 1, BRUTE: 0}
    assert x.allies_of(0) == (BRUTE,) and x.allies_of(1) == (AURORA,)


def brute_rolls_against() -> Table:
    """Page 2 of the contested warehouse: Brute (allied to side 0) has rolled the "Against"
    die (die 2, showing 3) to 4 and waits to decide."""
    t = the_warehouse_contested()
    next_page(t)
    take_turn(t, 1, c.CreateConflict(seat=1, text="Sirens"))
    return a_turn_with_a_roll(t, 2, power("Brute", 3), die=2, value=4)


def test_allying_to_another_side_ends_the_old_alliance_but_it_is_remembered() -> None:
    """R-CONF-4: Brute keeps the higher "Against" die, so he joins side 1 and leaves side 0;
    he is remembered as once allied to both."""
    t = brute_rolls_against()
    events = given(t.events).when(c.AcceptRoll(seat=2)).then_includes(
        CharacterAllied(character=BRUTE, conflict=1, side=1)
    )
    x = state_of([*t.events, *events]).conflicts[1]
    assert x.allies[BRUTE] == 1 and x.allies_of(0) == ()
    assert x.once_allied[BRUTE] == frozenset({0, 1})


def test_a_player_is_allied_through_their_characters() -> None:
    """R-CONF-4: after Brute switches to side 1, seat 2 may claim side 1 and not side 0."""
    t = brute_rolls_against()
    t(c.AcceptRoll(seat=2))
    end_turn(t, 2)
    play_on(t, until=claiming_on_page(3))  # Starter seat 2
    given(t.events).when(c.Claim(seat=2, conflict=1, side=0)).refused("R-PAGE-4")
    given(t.events).when(c.Claim(seat=2, conflict=1, side=1)).then(
        ClaimMade(seat=2, conflict=1, side=1, cost=0)
    )


# -- R-CONF-5, R-X-CONF-2: failed Goals -------------------------------------------------------


def test_a_goal_fails_when_a_side_other_than_its_first_wins() -> None:
    """R-X-CONF-2: side 1 of "Save the mayor" wins: Aurora, whom it names, has failed it."""
    t = the_goal_failed()
    given(t.events).when(c.Resolve(seat=2, conflict=1)).then_includes(
        ConflictResolved(
            conflict=1,
            seat=2,
            side=1,
            debt_returned=(),
            debt_spent=(),
            tokens=(),
            inspirations=(InspirationMade(inspiration=1, seat=2, value=4, dice=(1, 2)),),
            goal_failed_by=(AURORA,),
        )
    )


def test_a_character_whose_goal_failed_may_not_attempt_it_again_in_the_scene() -> None:
    """R-CONF-5 and R-X-CONF-2: on page 3 a Goal with the same text (any case, any spacing)
    naming Aurora is refused."""
    t = the_goal_failed()
    t(c.Resolve(seat=2, conflict=1))  # page 3 begins, Starter seat 2
    again = c.CreateConflict(seat=2, kind="goal", text="save the  MAYOR", names=(AURORA,))
    given(t.events).when(again).refused("R-CONF-5")


def test_another_character_may_still_pursue_a_goal_someone_failed() -> None:
    """R-CONF-5: only the characters who failed it are barred; Brute may take it up."""
    t = the_goal_failed()
    t(c.Resolve(seat=2, conflict=1))
    other = c.CreateConflict(seat=2, kind="goal", text="Save the mayor", names=(BRUTE,))
    (created,) = given(t.events).when(other).decide()
    assert isinstance(created, ConflictCreated) and created.names == (BRUTE,)


def test_a_goal_whose_first_side_wins_has_not_failed() -> None:
    """R-X-CONF-2: the Goal's first side winning records no failure, and it may be set
    again."""
    t = a_scene(tokens=1)
    goal = c.CreateConflict(seat=3, kind="goal", text="Save the mayor", names=(MIA,))
    take_turn(t, 3, goal)
    take_turn(t, 1, c.CreateConflict(seat=1, text="The city floods"))
    a_roll(t, 2, power("Brute", 5), die=1, value=5)
    next_page(t, claims={2: [(1, 0)]})
    to_resolution(t)
    (resolved, *_) = given(t.events).when(c.Resolve(seat=2, conflict=1)).decide()
    assert isinstance(resolved, ConflictResolved) and resolved.goal_failed_by == ()


def test_a_goal_may_be_attempted_again_in_a_later_scene() -> None:
    """R-CONF-5: the bar lasts for the scene only. Page 3: seat 2 claims Event 2, Brute rolls
    it to 5 and seat 2 resolves it, ending scene 1; in scene 2 Aurora may pursue the Goal."""
    t = the_goal_failed()
    t(c.Resolve(seat=2, conflict=1))
    next_page(t, claims={2: [(2, 0)]})
    a_roll(t, 2, power("Brute", 5), die=1, value=5, conflict=2)
    to_resolution(t)
    t(c.Resolve(seat=2, conflict=2))
    assert t.state.scene is None
    t(c.FrameScene(seat=1), c.ChooseCharacter(seat=1, character=AURORA))
    again = c.CreateConflict(seat=1, kind="goal", text="Save the mayor", names=(AURORA,))
    (created,) = given(t.events).when(again).decide()
    assert isinstance(created, ConflictCreated) and created.cost == 1
