"""Resolving, gloating and deadlocks, and the order of the resolution phase.

Rules: R-RES-1, R-RES-2, R-RES-3, R-X-TOKEN-1, R-RES-4, R-X-RES-1, R-GLOAT-1, R-DEAD-1,
R-X-GLOAT-1, R-X-DEAD-1, R-X-DEAD-3, R-PAGE-7. The cast and the set-ups are in
``play_helpers``: by default Mia created Event 1; "For" (side 0) is Brute's, "Against" (side
1) Aurora's; on page 2 seat 2 claimed "For" and seat 1 "Against".
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from play_helpers import (
    AURORA,
    BRUTE,
    MIA,
    UNDIFFERENTIATED,
    a_deadlocked_warehouse,
    a_roll,
    a_scene_with_a_conflict,
    a_table_in_resolution,
    a_turn_with_a_roll,
    a_won_warehouse,
    conflict,
    decide,
    end_turn,
    filler_turn,
    next_page,
    pass_reactions,
    play_on,
    power,
    skill,
    start_turn,
    take_turn,
    to_resolution,
    until_turn_of,
)
from rulebook import Table, given, state_of

from domain.capes import commands as c
from domain.capes.events import (
    ConflictDeadlocked,
    ConflictResolved,
    DebtReturned,
    Event,
    Gloated,
    InspirationMade,
    PageEnded,
    PageStarted,
    SceneEnded,
    SideSchismed,
    TokenGift,
)
from domain.capes.model import Stake
from domain.capes.moves import waiting_for
from domain.capes.views import board
from domain.errors import ChoiceRequired

# -- set-ups ---------------------------------------------------------------------------------


def resolved(events: tuple[Event, ...] | list[Event]) -> ConflictResolved:
    """The one ConflictResolved among ``events``."""
    (found,) = [e for e in events if isinstance(e, ConflictResolved)]
    return found


def resolve(t: Table, **choices: object) -> ConflictResolved:
    """Seat 2 resolves Event 1 with ``choices``; the ConflictResolved decided."""
    command = c.Resolve(seat=BRUTE, conflict=1, **choices)  # type: ignore[arg-type]
    return resolved(given(t.events).when(command).decide())


def mia_rolls_against(
    t: Table, value: int, *, accept: bool = True, ally: int | None = None
) -> Table:
    """On page 2, Mia's turn rolls "Against" (die 2, showing 3) to ``value`` with her 3, and
    accepts or rejects; then the resolution phase."""
    until_turn_of(t, MIA)
    a_roll(t, MIA, skill(3), die=2, value=value, accept=accept, ally=ally)
    return to_resolution(t)


def a_split_for(against: int = 3, *, aurora_joins_for: bool = False, bolt: bool = False) -> Table:
    """Page 1: Mia creates Event 1. Aurora rolls "Against" (die 2) to ``against`` and stakes
    1 Justice under it. Brute rolls "For" (die 1) to 5 — or, when ``aurora_joins_for``, to 3,
    and Aurora's Reaction takes it to 5, allying her with "For" — then stakes 1 under it and
    splits it: "For" holds die 1 (3) and die 3 (2), both Brute's. Page 2: seat 2 claims
    "For", seat 1 "Against" (unless she joined "For"). With ``bolt``, each seat starts with a
    Story Token and seat 2 pays its token to play a second hero, Bolt, from page 2 on."""
    t = a_scene_with_a_conflict(tokens=int(bolt), debt={BRUTE: {"Undifferentiated": 1}})
    a_roll(t, AURORA, power("Aurora", 1), die=2, value=against, drive="Justice", stake=1)
    if aurora_joins_for:
        a_turn_with_a_roll(t, BRUTE, power("Brute", 3), die=1, value=3)
        t(c.AcceptRoll(seat=BRUTE), c.PassReaction(seat=BRUTE), c.PassReaction(seat=MIA))
        react = c.React(seat=AURORA, character=AURORA, ability=power("Aurora", 3), drive="Hope")
        t.roll(5)(react, c.AcceptRoll(seat=AURORA))
        pass_reactions(t)
    else:
        a_turn_with_a_roll(t, BRUTE, power("Brute", 5), die=1, value=5)
        decide(t, BRUTE)
    t(
        c.StakeDebt(seat=BRUTE, conflict=1, die=1),
        c.SplitDie(seat=BRUTE, conflict=1, die=1, into=2),
    )
    end_turn(t, BRUTE)
    claims = {2: [(1, 0)]} if aurora_joins_for else {1: [(1, 1)], 2: [(1, 0)]}
    return next_page(t, claims, choose={BRUTE: [t.hero(BRUTE, "Bolt")]} if bolt else {})


def two_claimed_conflicts(*, second_controlled: bool) -> Table:
    """Page 1: Mia creates Event 1, Aurora creates Event 2, Brute rolls Event 1's "For" to 5.
    Page 2 (Starter seat 1): seat 1 claims Event 2's "For", seat 2 Event 1's "For"; Aurora's
    turn rolls Event 2's "For" to 4 when ``second_controlled`` (else it stays tied)."""
    t = a_scene_with_a_conflict()
    take_turn(t, AURORA, c.CreateConflict(seat=AURORA, kind="event", text="The storm breaks"))
    a_roll(t, BRUTE, power("Brute", 5), die=1, value=5)
    next_page(t, claims={1: [(2, 0)], 2: [(1, 0)]})
    if second_controlled:
        a_roll(t, AURORA, power("Aurora", 1), die=1, value=4, conflict=2)
    return to_resolution(t)


# -- R-RES-1 ---------------------------------------------------------------------------------


def test_the_claimant_of_the_controlling_side_resolves_the_conflict() -> None:
    """R-RES-1 / R-RES-4: seat 2 claimed "For" (5 against 3) and resolves; the Conflict
    leaves the table."""
    t = a_table_in_resolution()
    state = (
        given(t.events)
        .when(c.Resolve(seat=BRUTE, conflict=1))
        .then_includes(
            ConflictResolved(
                conflict=1,
                seat=BRUTE,
                side=0,
                debt_returned=(DebtReturned(character=AURORA, drive="Justice", amount=2),),
                debt_spent=(Stake(character=BRUTE, drive="Undifferentiated", amount=1),),
                tokens=(TokenGift(giver=BRUTE, recipient=MIA, count=1),),
                inspirations=(InspirationMade(inspiration=1, seat=BRUTE, value=2, dice=(1, 2)),),
            )
        )
    )
    assert state


@pytest.mark.parametrize("seat", [AURORA, MIA], ids=["the losing side's claimant", "no claim"])
def test_only_the_claimant_of_the_controlling_side_resolves(seat: int) -> None:
    """R-RES-1: neither the claimant of "Against" nor a player without a claim resolves."""
    t = a_table_in_resolution()
    given(t.events).when(c.Resolve(seat=seat, conflict=1)).refused("R-RES-1")
    given(t.events).when(c.Gloat(seat=seat, conflict=1)).refused("R-RES-1")


def test_a_tied_conflict_cannot_be_resolved() -> None:
    """R-RES-1: seat 1 claimed Event 2, still 1 against 1: nobody controls it."""
    t = two_claimed_conflicts(second_controlled=False)
    given(t.events).when(c.Resolve(seat=AURORA, conflict=2)).refused("R-RES-1")


def test_a_conflict_whose_controlling_side_nobody_claimed_is_not_resolved() -> None:
    """R-RES-1: "For" controls but nobody claimed it; page 2 ends with Event 1 on the table."""
    t = a_scene_with_a_conflict()
    filler_turn(t, AURORA)
    a_roll(t, BRUTE, power("Brute", 5), die=1, value=5)
    play_on(t, until=lambda s: s.page is not None and s.page.number == 3)
    assert not any(isinstance(e, ConflictResolved) for e in t.events)
    assert PageEnded(scene=1, page=2) in t.events
    assert conflict(t).sides[0].total == 5


def test_resolving_waits_for_the_resolution_phase() -> None:
    """R-RES-1 / R-PAGE-7: during the actions nothing is resolved."""
    t = a_won_warehouse()
    given(t.events).when(c.Resolve(seat=BRUTE, conflict=1)).refused("R-PAGE-7")


# -- R-RES-2 ---------------------------------------------------------------------------------


def test_debt_staked_on_a_losing_side_returns_doubled_to_its_drive() -> None:
    """R-RES-2: Aurora's 1 Justice on "Against" comes back as 2."""
    t = a_table_in_resolution()
    assert t.state.characters[AURORA].drives[0].debt == 0
    t(c.Resolve(seat=BRUTE, conflict=1))
    assert t.state.characters[AURORA].drives[0].debt == 2


def test_debt_staked_on_the_winning_side_leaves_its_character() -> None:
    """R-RES-3: Brute's staked Debt is spent, not returned."""
    t = a_table_in_resolution()
    t(c.Resolve(seat=BRUTE, conflict=1))
    assert t.state.characters[BRUTE].drives[0].debt == 0


# -- R-RES-3 and R-X-TOKEN-1 -----------------------------------------------------------------


def test_the_creator_with_no_allied_character_gets_the_first_story_token() -> None:
    """R-RES-3: Mia's player created Event 1 and sided with nobody: Brute's 1 Debt is her
    Story Token."""
    t = a_table_in_resolution()
    t(c.Resolve(seat=BRUTE, conflict=1))
    assert [p.tokens for p in t.state.players] == [0, 0, 1]


def test_the_other_tokens_go_to_players_allied_to_a_losing_side() -> None:
    """R-RES-3: of Brute's 2 Debt, 1 token goes to the creator, 1 to Aurora's player."""
    t = a_table_in_resolution(debt={BRUTE: {"Undifferentiated": 1}}, brute_stake=2)
    assert set(resolve(t).tokens) == {
        TokenGift(giver=BRUTE, recipient=MIA, count=1),
        TokenGift(giver=BRUTE, recipient=AURORA, count=1),
    }


def test_a_creator_who_sided_with_nobody_gets_one_token_only() -> None:
    """R-RES-3: of Brute's 2 Debt, Mia's player (the creator, allied to no side) is owed the
    first token, and no more: the second is for a player once allied to a losing side."""
    t = a_table_in_resolution(debt={BRUTE: {"Undifferentiated": 1}}, brute_stake=2)
    given(t.events).when(c.Resolve(seat=BRUTE, conflict=1, tokens={BRUTE: {MIA: 2}})).refused(
        "R-RES-3"
    )


def test_a_player_once_allied_to_a_losing_side_gets_tokens_too() -> None:
    """R-RES-3: Aurora went over to "For" on page 2 but was allied to "Against" once."""
    t = a_won_warehouse(debt={BRUTE: {"Undifferentiated": 1}}, brute_stake=2)
    a_roll(t, AURORA, power("Aurora", 5), die=1, value=6, drive="Hope")
    to_resolution(t)
    assert conflict(t).allies[AURORA] == 0
    assert TokenGift(giver=BRUTE, recipient=AURORA, count=1) in resolve(t).tokens


def test_a_creator_allied_only_to_the_winning_side_gets_no_first_token() -> None:
    """R-RES-3: Mia rejects a 5 on "Against" and so joins "For": the token goes to Aurora."""
    t = mia_rolls_against(a_won_warehouse(), 5, accept=False)
    assert conflict(t).allies[MIA] == 0
    assert resolve(t).tokens == (TokenGift(giver=BRUTE, recipient=AURORA, count=1),)


def test_a_creator_allied_to_a_losing_side_gets_the_first_token() -> None:
    """R-RES-3: Mia joins "Against"; the one token is hers, ahead of Aurora's player."""
    t = mia_rolls_against(a_won_warehouse(), 3, ally=1)
    assert resolve(t).tokens == (TokenGift(giver=BRUTE, recipient=MIA, count=1),)


def test_tokens_no_one_may_receive_are_not_given() -> None:
    """R-RES-3: nobody but Brute ever sided on Event 1; of his 2 Debt the creator gets 1
    and the other token is given to nobody."""
    t = a_scene_with_a_conflict(debt={BRUTE: {"Undifferentiated": 1}})
    filler_turn(t, AURORA)
    a_roll(t, BRUTE, power("Brute", 5), die=1, value=5, stake=2)
    to_resolution(next_page(t, claims={2: [(1, 0)]}))
    assert resolve(t).tokens == (TokenGift(giver=BRUTE, recipient=MIA, count=1),)
    given(t.events).when(
        c.Resolve(seat=BRUTE, conflict=1, tokens={BRUTE: {MIA: 1, AURORA: 1}})
    ).refused("R-RES-3")


def test_no_player_gives_a_story_token_to_themself() -> None:
    """R-RES-3: never to the giver, whatever the giver asks."""
    t = a_table_in_resolution()
    given(t.events).when(c.Resolve(seat=BRUTE, conflict=1, tokens={BRUTE: {BRUTE: 1}})).refused(
        "R-RES-3"
    )


def contested_tokens() -> Table:
    """Brute staked 3 on "For"; Mia, the creator, joined "Against" beside Aurora."""
    t = a_won_warehouse(debt={BRUTE: {"Undifferentiated": 2}}, brute_stake=3)
    return mia_rolls_against(t, 3, ally=1)


def test_the_resolver_names_the_recipients_when_there_is_a_choice() -> None:
    """R-X-TOKEN-1: after the creator's token, 2 tokens may go to Mia's or Aurora's player;
    the resolve must say how, and a legal split is taken."""
    t = contested_tokens()
    error = given(t.events).when(c.Resolve(seat=BRUTE, conflict=1)).refused("R-RES-3")
    assert isinstance(error, ChoiceRequired) and error.field == "tokens"
    gifts = resolve(t, tokens={BRUTE: {MIA: 2, AURORA: 1}}).tokens
    assert set(gifts) == {
        TokenGift(giver=BRUTE, recipient=MIA, count=2),
        TokenGift(giver=BRUTE, recipient=AURORA, count=1),
    }


def test_when_there_is_a_choice_of_recipients_every_legal_way_is_offered() -> None:
    """R-X-TOKEN-1: the creator's token first, then the other 2 every way between Mia's and
    Aurora's players: three ways, each of which the resolve accepts (a picker shows each)."""
    t = contested_tokens()
    error = given(t.events).when(c.Resolve(seat=BRUTE, conflict=1)).refused("R-RES-3")
    assert isinstance(error, ChoiceRequired)
    assert list(error.choices) == [
        {BRUTE: {AURORA: 2, MIA: 1}},
        {BRUTE: {AURORA: 1, MIA: 2}},
        {BRUTE: {MIA: 3}},
    ]
    for way in error.choices:
        gifts = resolve(t, tokens=way).tokens
        assert {(g.recipient, g.count) for g in gifts} == set(way[BRUTE].items())


@pytest.mark.parametrize(
    "tokens",
    [
        pytest.param({AURORA: 3}, id="the creator's first token left out"),
        pytest.param({AURORA: 1, MIA: 1}, id="fewer tokens than Debt"),
        pytest.param({AURORA: 2, MIA: 2}, id="more tokens than Debt"),
    ],
)
def test_named_token_recipients_must_follow_the_rules(tokens: Mapping[int, int]) -> None:
    """R-RES-3 / R-X-TOKEN-1: the creator first, and exactly the Debt staked."""
    t = contested_tokens()
    given(t.events).when(c.Resolve(seat=BRUTE, conflict=1, tokens={BRUTE: dict(tokens)})).refused(
        "R-RES-3"
    )


# -- R-RES-4 and R-X-RES-1 -------------------------------------------------------------------


def test_equal_dice_give_nothing_and_an_unpaired_die_gives_its_value() -> None:
    """R-RES-4: 3 pairs with 3 for nothing; the 2 left over is the resolver's 2."""
    t = to_resolution(a_split_for(3))
    assert resolve(t, pairs=((1, 2),)).inspirations == (
        InspirationMade(inspiration=1, seat=BRUTE, value=2, dice=(3,)),
    )


def test_a_higher_die_of_another_side_gives_its_inspiration_to_a_player_allied_to_it() -> None:
    """R-RES-4: 2 against "Against"'s 3: a 1 for Aurora's player; the 3 left over is the
    resolver's."""
    t = to_resolution(a_split_for(3))
    assert resolve(t, pairs=((3, 2),)).inspirations == (
        InspirationMade(inspiration=1, seat=AURORA, value=1, dice=(3, 2)),
        InspirationMade(inspiration=2, seat=BRUTE, value=3, dice=(1,)),
    )


def test_the_resolver_pairs_the_dice_when_there_is_a_choice() -> None:
    """R-RES-4: two dice against one can be paired two ways: the resolver says which."""
    t = to_resolution(a_split_for(3))
    error = given(t.events).when(c.Resolve(seat=BRUTE, conflict=1)).refused("R-RES-4")
    assert isinstance(error, ChoiceRequired) and error.field == "pairs"


@pytest.mark.parametrize(
    "pairs",
    [
        pytest.param(((1, 3),), id="two dice of one side"),
        pytest.param((), id="dice of two sides left unpaired"),
        pytest.param(((1, 2), (3, 2)), id="a die paired twice"),
    ],
)
def test_dice_pair_across_sides_until_no_more_pairs_can_be_made(
    pairs: tuple[tuple[int, int], ...],
) -> None:
    """R-RES-4: each pair takes dice of two sides, each die once, as long as two sides have
    dice left."""
    t = to_resolution(a_split_for(3))
    given(t.events).when(c.Resolve(seat=BRUTE, conflict=1, pairs=pairs)).refused("R-RES-4")


def test_the_resolver_chooses_among_players_allied_to_the_higher_die() -> None:
    """R-RES-4: Aurora and Mia are both on "Against": the resolver names who gets the 1,
    and may not keep it (no character of theirs is on "Against")."""
    t = mia_rolls_against(a_split_for(3), 3, ally=1)
    error = (
        given(t.events).when(c.Resolve(seat=BRUTE, conflict=1, pairs=((3, 2),))).refused("R-RES-4")
    )
    assert isinstance(error, ChoiceRequired)
    assert (error.field, error.choices) == ("inspirations.2", (AURORA, MIA))
    tokens = {BRUTE: {MIA: 1, AURORA: 1}}
    made = resolve(t, pairs=((3, 2),), inspirations={2: MIA}, tokens=tokens).inspirations
    assert made[0] == InspirationMade(inspiration=1, seat=MIA, value=1, dice=(3, 2))
    given(t.events).when(
        c.Resolve(seat=BRUTE, conflict=1, pairs=((3, 2),), inspirations={2: BRUTE}, tokens=tokens)
    ).refused("R-RES-4")


def test_a_resolver_with_characters_on_both_sides_may_keep_the_inspiration() -> None:
    """R-RES-4: seat 2 plays Brute on "For" and Bolt, who sided with "Against" on page 2, so
    the 1 of "Against"'s higher die may be seat 2's own."""
    t = a_split_for(3, bolt=True)
    filler_turn(until_turn_of(t, BRUTE), BRUTE)
    a_roll(t, BRUTE, power("Bolt", 3), die=2, value=2, accept=False)  # Bolt's turn
    to_resolution(t)
    error = (
        given(t.events).when(c.Resolve(seat=BRUTE, conflict=1, pairs=((3, 2),))).refused("R-RES-4")
    )
    assert isinstance(error, ChoiceRequired) and error.choices == (AURORA, BRUTE)
    made = resolve(t, pairs=((3, 2),), inspirations={2: BRUTE}).inspirations
    assert made[0] == InspirationMade(inspiration=1, seat=BRUTE, value=1, dice=(3, 2))


def test_a_higher_die_on_a_side_nobody_is_allied_to_makes_no_inspiration() -> None:
    """R-X-RES-1: Aurora reacted her way over to "For", so nobody is allied to "Against":
    its 4 against the 2 makes nothing, and no recipient may be named for it."""
    t = to_resolution(a_split_for(4, aurora_joins_for=True))
    assert conflict(t).allies_of(1) == ()
    assert resolve(t, pairs=((3, 2),)).inspirations == (
        InspirationMade(inspiration=1, seat=BRUTE, value=3, dice=(1,)),
    )
    given(t.events).when(
        c.Resolve(seat=BRUTE, conflict=1, pairs=((3, 2),), inspirations={2: AURORA})
    ).refused("R-RES-4")


# -- R-GLOAT-1 -------------------------------------------------------------------------------


def test_gloating_turns_the_highest_die_to_one_for_a_story_token() -> None:
    """R-GLOAT-1: "For"'s 5 becomes 1, seat 2 gains a token, and Event 1 stays."""
    t = a_table_in_resolution()
    events = (
        given(t.events)
        .when(c.Gloat(seat=BRUTE, conflict=1))
        .then_includes(Gloated(conflict=1, seat=BRUTE, dice=(1,), tokens=1))
    )
    assert not any(isinstance(e, ConflictResolved) for e in events)
    t(c.Gloat(seat=BRUTE, conflict=1))
    assert [d.value for d in conflict(t).sides[0].dice] == [1]
    assert t.state.player(BRUTE).tokens == 1


def test_gloating_again_takes_the_next_highest_die_above_one() -> None:
    """R-GLOAT-1: twice on 3 and 2: the 3 first, then the 2; two tokens."""
    t = to_resolution(a_split_for(3))
    given(t.events).when(c.Gloat(seat=BRUTE, conflict=1, times=2)).then_includes(
        Gloated(conflict=1, seat=BRUTE, dice=(1, 3), tokens=2)
    )


def test_gloating_stops_when_no_die_of_the_side_is_above_one() -> None:
    """R-GLOAT-1: "For" has one die above 1, so it gloats once at most."""
    t = a_table_in_resolution()
    given(t.events).when(c.Gloat(seat=BRUTE, conflict=1, times=2)).refused("R-GLOAT-1")


def test_a_gloat_that_hands_control_to_another_claimed_side_lets_its_claimant_resolve() -> None:
    """R-X-GLOAT-1 / R-PAGE-7: seat 2 gloats "For" from 5 to 1, so "Against" (3), which
    seat 1 claimed, now controls: the page waits for seat 1 to resolve it, and "Against"
    wins."""
    t = a_table_in_resolution()
    t(c.Gloat(seat=BRUTE, conflict=1))
    assert t.state.page is not None and t.state.page.number == 2
    assert "resolve" in waiting_for(t.state)[AURORA]
    given(t.events).when(c.EndPage(seat=AURORA)).refused("R-PAGE-7")
    assert resolved(given(t.events).when(c.Resolve(seat=AURORA, conflict=1)).decide()).side == 1


def test_a_claimant_who_gloated_is_not_asked_again_that_page() -> None:
    """R-X-GLOAT-1: "For" (3 + 2) gloats its 3 away and still controls 3 to 2; seat 2 has
    dealt with Event 1 for this page, which ends with Event 1 on the table."""
    t = to_resolution(a_split_for(2))
    events = t.do(c.Gloat(seat=BRUTE, conflict=1))
    assert PageEnded(scene=1, page=2) in events
    assert 1 in t.state.conflicts


def test_a_claimant_gloats_on_a_conflict_once_a_page() -> None:
    """R-X-GLOAT-1: seat 2 gloats, seat 1 then gloats "Against" back to 1, and "For" (1)
    and "Against" (1) tie; neither is asked again, and the page ends."""
    t = a_table_in_resolution()
    t(c.Gloat(seat=BRUTE, conflict=1))
    events = t.do(c.Gloat(seat=AURORA, conflict=1))
    assert PageEnded(scene=1, page=2) in events


# -- R-DEAD-1 and R-X-DEAD-1 -----------------------------------------------------------------


def test_any_player_may_declare_a_tie_of_sixes_deadlocked() -> None:
    """R-DEAD-1: Mia's player declares it; the Debt comes back doubled, each six becomes an
    Inspiration for its side's player, and the Conflict (the scene's last) goes."""
    t = a_deadlocked_warehouse()
    given(t.events).when(c.DeclareDeadlock(seat=MIA, conflict=1)).then(
        ConflictDeadlocked(
            conflict=1,
            seat=MIA,
            debt_returned=(
                DebtReturned(character=BRUTE, drive="Undifferentiated", amount=2),
                DebtReturned(character=AURORA, drive="Justice", amount=2),
            ),
            inspirations=(
                InspirationMade(inspiration=1, seat=BRUTE, value=6, dice=(1,)),
                InspirationMade(inspiration=2, seat=AURORA, value=6, dice=(2,)),
            ),
        ),
        PageEnded(scene=1, page=1),
        SceneEnded(scene=1, next_framer=1),
    )


def test_only_a_tie_of_sixes_is_deadlocked() -> None:
    """R-DEAD-1: 5 against 3 is no Deadlock."""
    t = a_table_in_resolution()
    given(t.events).when(c.DeclareDeadlock(seat=MIA, conflict=1)).refused("R-DEAD-1")


def test_a_deadlock_is_declared_at_resolution() -> None:
    """R-DEAD-1: six against six in the middle of Brute's turn is not yet a Deadlock."""
    t = a_scene_with_a_conflict()
    a_roll(t, AURORA, power("Aurora", 1), die=2, value=6)
    a_roll(t, BRUTE, power("Brute", 5), die=1, value=6, end=False)
    given(t.events).when(c.DeclareDeadlock(seat=MIA, conflict=1)).refused("R-DEAD-1")


def a_deadlock_with_two_on_one_side() -> Table:
    """Aurora rolled "Against" to 6, then reacted to Brute's 5 on "For" with a 6, which
    allied her with "For": two allies on "For", none on "Against". Both hold Debt they could
    stake (R-DEAD-1 does not apply); the tie stays through the whole of page 2 unchanged, so
    in page 3's claiming phase it may be declared Deadlocked (R-X-DEAD-2)."""
    t = a_scene_with_a_conflict()
    a_roll(t, AURORA, power("Aurora", 1), die=2, value=6)
    a_turn_with_a_roll(t, BRUTE, power("Brute", 5), die=1, value=5)
    t(c.AcceptRoll(seat=BRUTE), c.PassReaction(seat=BRUTE))
    react = c.React(seat=AURORA, character=AURORA, ability=power("Aurora", 5), drive="Hope")
    t.roll(6)(react, c.AcceptRoll(seat=AURORA))
    end_turn(t, BRUTE)
    return play_on(t, until=lambda s: s.page is not None and s.page.number == 3)


def test_the_declarer_picks_who_gets_a_die_of_a_side_with_several_allies() -> None:
    """R-DEAD-1 / R-X-RES-1: "For"'s six goes to the player the declarer names; "Against"
    has no ally, so its six makes nothing."""
    t = a_deadlock_with_two_on_one_side()
    error = given(t.events).when(c.DeclareDeadlock(seat=MIA, conflict=1)).refused("R-DEAD-1")
    assert isinstance(error, ChoiceRequired)
    assert (error.field, error.choices) == ("inspirations.1", (AURORA, BRUTE))
    given(t.events).when(
        c.DeclareDeadlock(seat=MIA, conflict=1, inspirations={1: AURORA})
    ).then_includes(
        ConflictDeadlocked(
            conflict=1,
            seat=MIA,
            debt_returned=(),
            inspirations=(InspirationMade(inspiration=1, seat=AURORA, value=6, dice=(1,)),),
        )
    )


@pytest.mark.parametrize("named", [{1: MIA}, {1: AURORA, 2: AURORA}], ids=["not allied", "none"])
def test_a_deadlocked_die_goes_only_to_a_player_allied_to_its_side(
    named: dict[int, int],
) -> None:
    """R-DEAD-1 / R-X-RES-1: Mia is allied to neither side; "Against" has no ally at all."""
    t = a_deadlock_with_two_on_one_side()
    given(t.events).when(c.DeclareDeadlock(seat=MIA, conflict=1, inspirations=named)).refused(
        "R-DEAD-1"
    )


def test_a_page_with_a_possible_deadlock_waits_for_the_starter_to_end_it() -> None:
    """R-X-DEAD-1: nothing to resolve, but a tie of sixes: the page does not end by itself;
    only its Starter (seat 3) ends it, and Event 1 stays for the next page."""
    t = a_deadlocked_warehouse()
    assert t.state.page is not None and t.state.page.phase == "resolution"
    given(t.events).when(c.EndPage(seat=AURORA)).refused("R-X-DEAD-1")
    given(t.events).when(c.EndPage(seat=MIA)).then_includes(
        PageEnded(scene=1, page=1), PageStarted(scene=1, page=2, starter=1)
    )


# -- R-X-DEAD-3 ------------------------------------------------------------------------------


def a_tie_of_split_sixes() -> Table:
    """Page 3's resolution phase, waiting for seat 2 to resolve Event 2, while Event 1 stands at
    "For" [6, 6] against "Against" [6, 6], and no ally could stake more Debt on it (R-DEAD-1).

    Page 1 (Mia, Aurora, Brute): Mia creates Event 1; Aurora rolls "For" (die 1) to 6, stakes
    1 Justice Debt under it and splits it 3 + 3 (dice 1 and 3): her last Justice Debt; Brute
    rolls "Against" (die 2) to 6, stakes 1 and splits it 3 + 3 (dice 2 and 4): his last Debt.
    Page 2 (Aurora, Brute, Mia): Aurora creates Event 2; Brute rolls die 4 to 6 with his style
    rated 3, Mia die 1 with her skill 3 (both mundane: no Debt). Page 3 (Brute, Mia, Aurora):
    seat 2 has claimed "For" of Event 2, and Brute rolls it up to 2 with an attitude; Mia rolls
    die 2 to 6 with her style 3, Aurora die 3 with a power (its Debt on Hope, a Drive she does
    not stake from on Event 1)."""
    t = a_scene_with_a_conflict(debt={AURORA: {"Justice": 1}, BRUTE: {UNDIFFERENTIATED: 1}})
    a_roll(t, AURORA, power("Aurora", 1), die=1, value=6, drive="Justice", stake=1, end=False)
    t(c.SplitDie(seat=AURORA, conflict=1, die=1, into=2, drive="Justice"))
    end_turn(t, AURORA)
    a_roll(t, BRUTE, power("Brute", 1), die=2, value=6, stake=1, end=False)
    t(c.SplitDie(seat=BRUTE, conflict=1, die=2, into=2))
    end_turn(t, BRUTE)
    next_page(t)
    take_turn(t, AURORA, c.CreateConflict(seat=AURORA, kind="event", text="The bank is robbed"))
    a_roll(t, BRUTE, "Brute style 3", die=4, value=6)
    a_roll(t, MIA, skill(3), die=1, value=6)
    next_page(t, claims={BRUTE: [(2, 0)]})
    a_roll(t, BRUTE, "Brute attitude 1", die=1, value=2, conflict=2)
    a_roll(t, MIA, "Mia style 3", die=2, value=6)
    a_roll(t, AURORA, power("Aurora", 3), die=3, value=6, drive="Hope")
    assert t.state.page is not None and t.state.page.phase == "resolution"
    return t


def a_tie_of_split_sixes_with_no_room() -> list[Event]:
    """:func:`a_tie_of_split_sixes`, had earlier Schisms (recorded before emptied sides were
    removed) left Event 1 with 30 more, empty, sides: the 32 a Conflict may have."""
    events = a_tie_of_split_sixes().events
    return [*events, *(SideSchismed(conflict=1, side=1, new_side=2 + n, label="Old",
                                    dice=(), character=AURORA) for n in range(30))]


def test_a_tie_of_sixes_a_schism_could_untie_is_not_deadlocked() -> None:
    """R-X-DEAD-3 / R-DEAD-1: Event 1 is tied at 12 in sixes and no ally holds Debt it could
    stake, but Aurora (or Brute) could Schism one of their sixes to a new side and leave the
    other side in control: the tie is not one no one can ever untie. Declaring the Deadlock is
    refused and not offered, and once Event 2 is resolved the page ends by itself, not waiting
    for a declaration (R-X-DEAD-1)."""
    t = a_tie_of_split_sixes()
    assert [[d.value for d in s.dice] for s in conflict(t).sides] == [[6, 6], [6, 6]]
    assert "declare_deadlock" not in waiting_for(t.state).get(MIA, ())
    given(t.events).when(c.DeclareDeadlock(seat=MIA, conflict=1)).refused("R-X-DEAD-3")
    given(t.events).when(c.Resolve(seat=BRUTE, conflict=2)).then_includes(
        PageEnded(scene=1, page=3), PageStarted(scene=1, page=4, starter=MIA)
    )


def test_a_page_an_older_release_kept_waiting_for_such_a_deadlock_ends_by_its_starter() -> None:
    """R-X-DEAD-3 / R-X-DEAD-1 / R-STAKE-4: under capes-1.2 the page stopped after Brute's
    resolution of Event 2 to wait for Event 1's Deadlock. Replayed now, nothing is left to
    resolve and no Deadlock may be declared: the board offers the Starter (seat 2) the end of
    the page, which the rules accept, so the upgraded table is not stuck."""
    t = a_tie_of_split_sixes()
    decided = given(t.events).when(c.Resolve(seat=BRUTE, conflict=2)).decide()
    waited = [*t.events, *decided[: decided.index(PageEnded(scene=1, page=3))]]
    assert waiting_for(state_of(waited)) == {BRUTE: ("end_page",)}
    given(waited).when(c.EndPage(seat=BRUTE)).then_includes(PageEnded(scene=1, page=3))


def test_a_schism_unties_a_tie_of_split_sixes() -> None:
    """R-X-DEAD-3 / R-SCHISM-1: on page 4 Aurora moves die 3 to a new side: "For" keeps 6,
    the new side has 6, and "Against" (12) controls."""
    t = a_tie_of_split_sixes()
    t(c.Resolve(seat=BRUTE, conflict=2))
    next_page(t)
    until_turn_of(t, AURORA)
    start_turn(t, AURORA)
    t(c.Schism(seat=AURORA, conflict=1, side=0, dice=(3,)))
    assert conflict(t).controlling_side == 1


def test_a_tie_of_split_sixes_with_no_room_for_a_new_side_is_deadlocked() -> None:
    """R-X-DEAD-3 / R-SCHISM-1: had earlier Schisms (recorded before emptied sides were
    removed) left Event 1 with 30 more, empty, sides, it would have the 32 sides a Conflict
    may have: no Schism could add one, and the tie of sixes is Deadlocked."""
    events = a_tie_of_split_sixes_with_no_room()
    assert len(state_of(events).conflicts[1].sides) == c.MAX_SIDES
    declared = c.DeclareDeadlock(seat=MIA, conflict=1, inspirations={2: MIA, 4: MIA})
    (deadlocked, *_) = given(events).when(declared).decide()
    assert isinstance(deadlocked, ConflictDeadlocked) and deadlocked.conflict == 1


def test_the_board_names_the_conflicts_that_may_be_declared_deadlocked() -> None:
    """R-DEAD-1 / R-X-DEAD-3: the warehouse's tie of sixes may be declared Deadlocked; 5
    against 3 may not; nor Event 1 of the split sixes, which a Schism could untie, nor Event
    2 beside it, which "For" controls, until no new side has room. The table page said anyone
    "may declare a deadlock", not of which Conflict, and offered every one."""
    assert board(a_deadlocked_warehouse().state).deadlockable == (1,)
    assert board(a_table_in_resolution().state).deadlockable == ()
    assert board(a_tie_of_split_sixes().state).deadlockable == ()
    assert board(state_of(a_tie_of_split_sixes_with_no_room())).deadlockable == (1,)


# -- R-PAGE-7 --------------------------------------------------------------------------------


def test_claimants_resolve_in_turn_order_from_the_starter() -> None:
    """R-PAGE-7: page 2's Starter is seat 1, so Event 2 (seat 1's) comes before Event 1."""
    t = two_claimed_conflicts(second_controlled=True)
    given(t.events).when(c.Resolve(seat=BRUTE, conflict=1)).refused("R-PAGE-7")
    given(t.events).when(c.Gloat(seat=BRUTE, conflict=1)).refused("R-PAGE-7")
    t(c.Resolve(seat=AURORA, conflict=2))
    events = given(t.events).when(c.Resolve(seat=BRUTE, conflict=1)).decide()
    assert resolved(events).conflict == 1
