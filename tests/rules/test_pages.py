"""Pages: Starters, the Overdrawn check, claiming, free play, actions, resolution
(R-PAGE-1..7, R-X-PAGE-1, R-X-PAGE-2, R-X-CLAIM-1, R-X-TURN-1)."""

from __future__ import annotations

import msgspec
import pytest
from play_helpers import (
    AURORA,
    BRUTE,
    MIA,
    UNDIFFERENTIATED,
    a_roll,
    a_scene,
    earlier_debt,
    next_page,
    play_on,
    power,
    take_turn,
    to_resolution,
)
from rulebook import Table, given, state_of
from scenes_helpers import (
    a_cast,
    claiming_on_page,
    created,
    framed,
    love_overdrawn,
    the_warehouse_contested,
    two_events,
)

from domain.capes import commands as c
from domain.capes.events import (
    ClaimMade,
    ClaimTurnPassed,
    OverdrawnDieRolled,
    PageEnded,
    PageStarted,
    PhaseBegan,
    TurnEnded,
    TurnPassed,
    TurnStarted,
)
from domain.capes.model import CampaignState, OverdrawnDrive
from domain.capes.views import Board, board
from domain.errors import InvalidReference, NotPermitted


def in_bought_round(s: CampaignState) -> bool:
    return s.page is not None and s.page.phase == "actions" and s.page.round == "bought"


# -- R-PAGE-1: Starters -----------------------------------------------------------------------


def test_the_framer_starts_the_first_page_and_each_later_starter_sits_to_the_left() -> None:
    """R-PAGE-1: scene framed by seat 2: pages are started by seats 2, 3, 1, 2."""
    t = a_scene(framer=2)
    take_turn(t, 2, c.CreateConflict(seat=2, text="The warehouse burns"))
    for page in (2, 3, 4):
        play_on(t, until=claiming_on_page(page))
    starters = [e.starter for e in t.events if isinstance(e, PageStarted)]
    assert starters == [2, 3, 1, 2]


# -- R-PAGE-2, R-X-PAGE-2: the Overdrawn check ------------------------------------------------


def overdrawn_check() -> Table:
    """Page 2 opens with Aurora's Love Overdrawn; her highest allied die is die 1 (5)."""
    t = love_overdrawn(stake=False)
    t(c.EndTurn(seat=2))
    return t


def test_the_overdrawn_check_is_the_first_thing_in_a_page() -> None:
    """R-PAGE-2: claiming waits until the Overdrawn Drive has been rolled for."""
    t = overdrawn_check()
    assert t.state.page is not None and t.state.page.phase == "overdrawn"
    given(t.events).when(c.Claim(seat=1, conflict=1, side=0)).refused("R-PAGE-3")


@pytest.mark.parametrize(
    ("rolled", "kept", "shows"),
    [
        pytest.param(2, True, 2, id="lower: kept"),
        pytest.param(6, False, 5, id="higher: discarded"),
        pytest.param(5, False, 5, id="equal: discarded"),
    ],
)
def test_an_overdrawn_roll_is_kept_only_if_lower_than_the_die(
    rolled: int, kept: bool, shows: int
) -> None:
    """R-PAGE-2 and R-X-PAGE-2: Aurora's player rolls her highest allied die (the 5); the
    new value is kept only if lower. No reactions, no alliance change; claiming begins."""
    state = given(overdrawn_check().events).when(
        c.RollOverdrawn(seat=1, character=AURORA, value=rolled)
    ).then(
        OverdrawnDieRolled(
            character=AURORA, drive="Love", conflict=1, die=1, before=5, rolled=rolled, kept=kept
        ),
        PhaseBegan(phase="claiming", seat=1),
    )
    found = state.conflicts[1].die(1)
    assert found is not None and found[1].value == shows
    assert state.conflicts[1].allies == {AURORA: 0, BRUTE: 1}


def test_the_overdrawn_roll_is_of_the_highest_allied_die_and_no_other() -> None:
    """R-PAGE-2: Aurora is allied to "For", whose one die shows 5; her player may not name
    "Against"'s die instead."""
    t = love_overdrawn()
    t(c.EndTurn(seat=2))
    given(t.events).when(
        c.RollOverdrawn(seat=1, character=AURORA, die=(1, 2), value=1)
    ).refused("R-PAGE-2")


def test_when_several_allied_dice_share_the_highest_value_the_player_chooses() -> None:
    """R-PAGE-2: Aurora's side holds two 2s (dice 1 and 3): her player must say which to
    roll, and the chosen one takes the lower value."""
    t = love_overdrawn(split=True)
    t(c.EndTurn(seat=2))
    given(t.events).when(c.RollOverdrawn(seat=1, character=AURORA, value=1)).refused("R-PAGE-2")
    given(t.events).when(
        c.RollOverdrawn(seat=1, character=AURORA, die=(1, 3), value=1)
    ).then(
        OverdrawnDieRolled(
            character=AURORA, drive="Love", conflict=1, die=3, before=2, rolled=1, kept=True
        ),
        PhaseBegan(phase="claiming", seat=1),
    )


def test_only_the_player_of_the_overdrawn_character_rolls_for_it() -> None:
    """R-PAGE-2: seat 2 does not play Aurora."""
    given(overdrawn_check().events).when(
        c.RollOverdrawn(seat=2, character=AURORA, value=2)
    ).refused("does not play", kind=NotPermitted)


def test_a_character_without_an_overdrawn_drive_does_not_roll() -> None:
    """R-PAGE-2: Brute is not Overdrawn."""
    given(overdrawn_check().events).when(
        c.RollOverdrawn(seat=2, character=BRUTE, value=2)
    ).refused("R-PAGE-2")


def test_there_is_no_overdrawn_roll_once_the_check_is_over() -> None:
    """R-PAGE-2: the check happens first thing in a page, once."""
    t = overdrawn_check()
    t.roll(2)
    t(c.RollOverdrawn(seat=1, character=AURORA))
    given(t.events).when(c.RollOverdrawn(seat=1, character=AURORA, value=1)).refused("R-PAGE-2")


def test_an_overdrawn_character_with_no_allied_die_is_not_checked() -> None:
    """R-X-PAGE-2: Mia, with 6 Debt on her one stack but allied to nothing, has no die to
    roll, so only Aurora is checked."""
    t = love_overdrawn(stake=False)
    earlier_debt(t, MIA, UNDIFFERENTIATED, 6)
    given(t.events).when(c.EndTurn(seat=2)).then_includes(
        PageStarted(
            scene=1, page=2, starter=1,
            overdrawn=(OverdrawnDrive(character=AURORA, drive="Love"),),
        )
    )


# -- R-PAGE-3, R-X-PAGE-1: claiming -----------------------------------------------------------


def test_claiming_goes_clockwise_from_the_starter() -> None:
    """R-PAGE-3: on page 2 (Starter seat 1) seat 2 waits for seat 1's go."""
    t = the_warehouse_contested()
    given(t.events).when(c.Claim(seat=2, conflict=1, side=0)).refused("R-PAGE-3")
    given(t.events).when(c.PassClaiming(seat=2)).refused("R-PAGE-3")


def test_the_first_claim_of_a_page_is_free_and_each_further_one_costs_a_token() -> None:
    """R-PAGE-3: seat 1 claims Event 1 for free, then Event 2 for 1 Story Token."""
    t = two_events(tokens=1)
    play_on(t, until=claiming_on_page(2))
    given(t.events).when(c.Claim(seat=1, conflict=1, side=0)).then(
        ClaimMade(seat=1, conflict=1, side=0, cost=0)
    )
    t(c.Claim(seat=1, conflict=1, side=0))
    given(t.events).when(c.Claim(seat=1, conflict=2, side=1)).then(
        ClaimMade(seat=1, conflict=2, side=1, cost=1)
    )


def test_the_board_names_the_seats_that_made_their_free_claim_of_the_page() -> None:
    """R-PAGE-3: after seat 1's free Claim the board says so (a further one costs a Story
    Token, which the table page shows); a board stored before it still decodes, with none."""
    t = two_events(tokens=1)
    play_on(t, until=claiming_on_page(2))
    assert board(t.state).free_claims_used == ()
    t(c.Claim(seat=1, conflict=1, side=0))
    shown = board(t.state)
    assert shown.free_claims_used == (1,)
    older = msgspec.json.decode(msgspec.json.encode(shown))
    del older["free_claims_used"]
    decoded = msgspec.json.decode(msgspec.json.encode(older), type=Board)
    assert decoded == msgspec.structs.replace(shown, free_claims_used=())


def test_a_further_claim_without_a_story_token_is_refused() -> None:
    """R-PAGE-3 with R-TABLE-2: the second Claim costs a token seat 1 does not have."""
    t = two_events()
    play_on(t, until=claiming_on_page(2))
    t(c.Claim(seat=1, conflict=1, side=0))
    given(t.events).when(c.Claim(seat=1, conflict=2, side=1)).refused("R-TABLE-2")


def test_adding_a_conflict_while_claiming_costs_a_story_token() -> None:
    """R-PAGE-3: a Conflict that is not a Free Conflict costs 1 when added in claiming."""
    storm = c.CreateConflict(seat=1, text="A storm")
    given(framed(tokens=1).events).when(storm).then(created(storm, cost=1))


def test_claiming_ends_when_every_player_has_passed_in_a_row() -> None:
    """R-PAGE-3: the third empty go in a row ends claiming; free play begins."""
    t = a_cast()
    t(c.PassClaiming(seat=1), c.PassClaiming(seat=2))
    given(t.events).when(c.PassClaiming(seat=3)).then(
        ClaimTurnPassed(seat=3, idle=True, to=1), PhaseBegan(phase="free_play", seat=1)
    )


def test_a_go_in_which_the_player_did_something_restarts_the_count() -> None:
    """R-X-PAGE-1: seat 1 chose a character on its go, so seats 2 and 3 passing is not yet
    everyone; seat 1's empty go then is."""
    t = framed()
    t(c.ChooseCharacter(seat=1, character=AURORA), c.PassClaiming(seat=1))
    t(c.PassClaiming(seat=2))
    given(t.events).when(c.PassClaiming(seat=3)).then(ClaimTurnPassed(seat=3, idle=True, to=1))
    t(c.PassClaiming(seat=3))
    given(t.events).when(c.PassClaiming(seat=1)).then(
        ClaimTurnPassed(seat=1, idle=True, to=2), PhaseBegan(phase="free_play", seat=1)
    )


def test_a_go_may_hold_several_things_as_long_as_they_are_paid_for() -> None:
    """R-X-PAGE-1: on one go seat 1 chooses two characters and adds a Conflict, paying 2."""
    t = framed(tokens=2)
    t(
        c.ChooseCharacter(seat=1, character=AURORA),
        c.ChooseCharacter(seat=1, character=MIA),
        c.CreateConflict(seat=1, text="A storm"),
    )
    assert t.state.player(1).tokens == 0
    given(t.events).when(c.CreateConflict(seat=1, text="A flood")).refused("R-TABLE-2")


# -- R-PAGE-4, R-X-CLAIM-1: what may be claimed -----------------------------------------------


def test_a_player_may_claim_the_side_their_character_is_allied_to() -> None:
    """R-PAGE-4: Aurora is allied to side 1, so seat 1 may claim it."""
    given(the_warehouse_contested().events).when(c.Claim(seat=1, conflict=1, side=1)).then(
        ClaimMade(seat=1, conflict=1, side=1, cost=0)
    )


def test_a_player_may_not_claim_a_side_their_characters_oppose() -> None:
    """R-PAGE-4: Aurora is allied to side 1, not side 0."""
    given(the_warehouse_contested().events).when(
        c.Claim(seat=1, conflict=1, side=0)
    ).refused("R-PAGE-4")


def test_a_player_with_no_allied_character_may_claim_any_side() -> None:
    """R-PAGE-4: Mia is allied to neither side, so seat 3 may claim either."""
    t = the_warehouse_contested()
    t(c.PassClaiming(seat=1), c.PassClaiming(seat=2))
    for side in (0, 1):
        given(t.events).when(c.Claim(seat=3, conflict=1, side=side)).then(
            ClaimMade(seat=3, conflict=1, side=side, cost=0)
        )


def test_a_claim_of_a_side_the_conflict_does_not_have_names_the_sides_it_has() -> None:
    """R-PAGE-4 / R-SRV-2: Event 1 has sides 0 and 1; side 2 is a reference to nothing (a
    400, as for a Schism), not a refusal of the rules."""
    given(the_warehouse_contested().events).when(c.Claim(seat=1, conflict=1, side=2)).refused(
        "has sides 0..1", kind=InvalidReference
    )


def test_a_claimed_side_cannot_be_claimed_again() -> None:
    """R-PAGE-4: seat 1 claimed side 1; seat 3 cannot claim it too."""
    t = the_warehouse_contested()
    t(c.Claim(seat=1, conflict=1, side=1), c.PassClaiming(seat=1), c.PassClaiming(seat=2))
    given(t.events).when(c.Claim(seat=3, conflict=1, side=1)).refused("R-PAGE-4")


def test_a_conflict_created_during_this_page_cannot_be_claimed_this_page() -> None:
    """R-PAGE-4: seat 1 adds Conflict 2 while claiming; it is claimable from the next page."""
    t = the_warehouse_contested(tokens=1)
    t(c.CreateConflict(seat=1, text="The roof caves in"))
    given(t.events).when(c.Claim(seat=1, conflict=2, side=0)).refused("R-PAGE-4")


def test_a_player_claims_at_most_one_side_of_a_conflict() -> None:
    """R-X-CLAIM-1: seat 3 (free to claim either side) claims side 0 and then not side 1."""
    t = the_warehouse_contested(tokens=1)
    t(c.PassClaiming(seat=1), c.PassClaiming(seat=2), c.Claim(seat=3, conflict=1, side=0))
    given(t.events).when(c.Claim(seat=3, conflict=1, side=1)).refused("R-X-CLAIM-1")


# -- R-PAGE-5: free play ----------------------------------------------------------------------


def test_free_play_ends_when_the_starter_takes_the_first_action() -> None:
    """R-PAGE-5: the Starter's first turn ends free play."""
    t = a_scene(framer=1)
    given(t.events).when(c.StartTurn(seat=1, character=AURORA)).then(
        PhaseBegan(phase="actions", seat=1), TurnStarted(seat=1, character=AURORA)
    )
    given(t.events).when(c.EndFreePlay(seat=1)).then(PhaseBegan(phase="actions", seat=1))


def test_only_the_starter_ends_free_play() -> None:
    """R-PAGE-5: seat 2 can neither end free play nor act first."""
    t = a_scene(framer=1)
    given(t.events).when(c.EndFreePlay(seat=2)).refused("R-PAGE-5")
    given(t.events).when(c.StartTurn(seat=2, character=BRUTE)).refused("R-PAGE-5")


def test_free_play_is_not_ended_when_it_is_not_going_on() -> None:
    """R-PAGE-5: during claiming there is no free play to end."""
    given(framed().events).when(c.EndFreePlay(seat=1)).refused("R-PAGE-5")


def test_nothing_is_put_on_the_table_during_free_play() -> None:
    """R-PAGE-5: free narration needs no rules, so no Conflict is added then (R-PAGE-3)."""
    t = a_scene(framer=1, tokens=1)
    given(t.events).when(c.CreateConflict(seat=1, text="A storm")).refused("R-PAGE-3")


# -- R-PAGE-6, R-X-TURN-1: actions ------------------------------------------------------------


def test_free_turns_go_clockwise_from_the_starter() -> None:
    """R-PAGE-6 and R-TABLE-1 (seat order is turn order): Starter seat 2 acts first, then
    seat 3, not seat 1."""
    t = a_scene(framer=2)
    take_turn(t, 2, c.CreateConflict(seat=2, text="The warehouse burns"))
    given(t.events).when(c.StartTurn(seat=1, character=AURORA)).refused("R-PAGE-6")
    given(t.events).when(c.StartTurn(seat=3, character=MIA)).then(
        TurnStarted(seat=3, character=MIA)
    )


def test_each_character_has_one_free_turn() -> None:
    """R-PAGE-6: a player with two characters takes a free turn for each; then it is the
    next player's go."""
    t = framed(tokens=1)
    dawn = t.mundane(1, "Dawn")
    t(c.ChooseCharacter(seat=1, character=AURORA), c.ChooseCharacter(seat=1, character=dawn))
    t(c.PassClaiming(seat=1), c.ChooseCharacter(seat=2, character=BRUTE), c.PassClaiming(seat=2))
    play_on(t, until=lambda s: s.page is not None and s.page.phase == "free_play")
    take_turn(t, 1, c.CreateConflict(seat=1, text="The warehouse burns"))
    given(t.events).when(c.StartTurn(seat=2, character=BRUTE)).refused("R-PAGE-6")
    given(t.events).when(c.StartTurn(seat=1, character=AURORA)).refused("R-PAGE-6")
    given(t.events).when(c.StartTurn(seat=1, character=dawn)).then(
        TurnStarted(seat=1, character=dawn)
    )


def test_after_the_free_turns_a_turn_is_bought_for_a_story_token() -> None:
    """R-PAGE-6: in the bought round seat 1 pays 1 Story Token for a turn."""
    t = play_on(a_scene(framer=1, tokens=1), until=in_bought_round)
    given(t.events).when(c.StartTurn(seat=1, character=AURORA)).then(
        TurnStarted(seat=1, character=AURORA, bought=True, cost=1)
    )


def test_passing_is_for_the_bought_round_only() -> None:
    """R-PAGE-6: a free turn is taken, not passed."""
    t = a_scene(framer=1, tokens=1)
    t(c.EndFreePlay(seat=1))
    given(t.events).when(c.PassTurn(seat=1)).refused("R-PAGE-6")


def test_the_action_phase_ends_when_every_player_has_passed_in_a_row() -> None:
    """R-PAGE-6: seats 1 and 2 pass; seat 3's pass ends the actions."""
    t = play_on(a_scene(framer=1, tokens=1), until=in_bought_round)
    t(c.PassTurn(seat=1), c.PassTurn(seat=2))
    given(t.events).when(c.PassTurn(seat=3)).then_includes(
        TurnPassed(seat=3, to=1), PhaseBegan(phase="resolution", seat=1)
    )


def test_a_bought_turn_restarts_the_passing() -> None:
    """R-PAGE-6: seat 1 passes, seat 2 buys a turn: seat 3 and seat 1 must pass again (seat
    2, out of tokens, is passed over by R-X-TURN-1)."""
    t = play_on(a_scene(framer=1, tokens=1), until=in_bought_round)
    t(c.PassTurn(seat=1))
    t(c.StartTurn(seat=2, character=BRUTE), c.CreateConflict(seat=2, text="More trouble"))
    t(c.EndTurn(seat=2), c.PassTurn(seat=3))
    assert t.state.page is not None and t.state.page.phase == "actions"
    given(t.events).when(c.PassTurn(seat=1)).then_includes(
        TurnPassed(seat=1, to=2), PhaseBegan(phase="resolution", seat=1)
    )


def test_a_seat_without_a_story_token_is_passed_over_in_the_bought_round() -> None:
    """R-X-TURN-1: seat 2 spent its token adding a Conflict; after seat 1 passes it is seat
    3's chance, and seat 3's pass ends the actions."""
    t = framed(tokens=1)
    t(c.ChooseCharacter(seat=1, character=AURORA), c.PassClaiming(seat=1))
    t(c.ChooseCharacter(seat=2, character=BRUTE), c.CreateConflict(seat=2, text="Fire"))
    t(c.PassClaiming(seat=2), c.ChooseCharacter(seat=3, character=MIA))
    play_on(t, until=in_bought_round)
    t(c.PassTurn(seat=1))
    given(t.events).when(c.PassTurn(seat=2)).refused("R-PAGE-6")
    given(t.events).when(c.PassTurn(seat=3)).then_includes(
        TurnPassed(seat=3, to=1), PhaseBegan(phase="resolution", seat=1)
    )


def test_a_seat_without_a_character_is_passed_over_in_the_bought_round() -> None:
    """R-X-TURN-1: seat 3 plays nobody; once seats 1 and 2 pass the actions are over."""
    t = framed(tokens=1)
    t(c.ChooseCharacter(seat=1, character=AURORA), c.PassClaiming(seat=1))
    t(c.ChooseCharacter(seat=2, character=BRUTE), c.PassClaiming(seat=2))
    play_on(t, until=in_bought_round)
    t(c.PassTurn(seat=1))
    given(t.events).when(c.PassTurn(seat=2)).then_includes(
        TurnPassed(seat=2, to=3), PhaseBegan(phase="resolution", seat=1)
    )


def test_when_no_one_can_buy_a_turn_the_actions_end_after_the_free_turns() -> None:
    """R-X-TURN-1: with no Story Tokens at the table the last free turn ends the actions."""
    t = a_scene(framer=1)
    take_turn(t, 1, c.CreateConflict(seat=1, text="The warehouse burns"))
    take_turn(t, 2, c.CreateConflict(seat=2, text="The bridge falls"))
    t(c.StartTurn(seat=3, character=MIA), c.CreateConflict(seat=3, text="The lights go out"))
    given(t.events).when(c.EndTurn(seat=3)).then_includes(
        TurnEnded(seat=3), PhaseBegan(phase="resolution", seat=1)
    )


# -- R-PAGE-7: resolution and the end of the page ---------------------------------------------


def test_remaining_claims_are_removed_when_the_page_ends() -> None:
    """R-PAGE-7: seat 1's Claim on the losing side of Event 1 is not resolved; it is taken
    off when page 2 ends."""
    t = the_warehouse_contested()
    next_page(t, claims={1: [(1, 1)]})
    assert t.state.conflicts[1].claims == {1: 1}
    take_turn(t, 1, c.CreateConflict(seat=1, text="Sirens"))
    take_turn(t, 2, c.CreateConflict(seat=2, text="Smoke"))
    t(c.StartTurn(seat=3, character=MIA), c.CreateConflict(seat=3, text="Rain"))
    events = given(t.events).when(c.EndTurn(seat=3)).then_includes(
        PhaseBegan(phase="resolution", seat=1),
        PageEnded(scene=1, page=2),
        PageStarted(scene=1, page=3, starter=2),
    )
    after = state_of([*t.events, *events])
    assert all(x.claims == {} for x in after.conflicts.values())


def resolutions_for_seats_2_and_3() -> Table:
    """Page 2 (Starter seat 1) in resolution: seat 2 claimed Event 1 (For: 5, Brute) and
    seat 3 Event 2 (For: 4, Aurora); both claimed sides control."""
    t = two_events()
    a_roll(t, 2, power("Brute", 5), die=1, value=5)
    next_page(t, claims={2: [(1, 0)], 3: [(2, 0)]})
    a_roll(t, 1, power("Aurora", 5), die=1, value=4, conflict=2, drive="Hope")
    return to_resolution(t)


def test_conflicts_are_resolved_clockwise_from_the_starter() -> None:
    """R-PAGE-7: seat 2 resolves before seat 3."""
    t = resolutions_for_seats_2_and_3()
    given(t.events).when(c.Resolve(seat=3, conflict=2)).refused("R-PAGE-7")
    t(c.Resolve(seat=2, conflict=1))
    given(t.events).when(c.Resolve(seat=3, conflict=2)).then_includes(
        PageEnded(scene=1, page=2)
    )


def test_conflicts_are_resolved_only_in_the_resolution_phase() -> None:
    """R-PAGE-7: resolution is the last phase of a page."""
    t = the_warehouse_contested()
    given(t.events).when(c.Resolve(seat=2, conflict=1)).refused("R-PAGE-7")
