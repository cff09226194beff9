"""The table: seats, Story Tokens, Inspirations and Debt (R-TABLE-1..4, R-X-SEAT-1)."""

from __future__ import annotations

from play_helpers import (
    AURORA,
    BRUTE,
    UNDIFFERENTIATED,
    a_scene_with_a_conflict,
    power,
    start_turn,
    take_turn,
)
from rulebook import Table, given
from scenes_helpers import (
    an_empty_scene,
    characters_built,
    framed,
    the_last_conflict_in_resolution,
)

from domain.capes import commands as c
from domain.capes.events import (
    CharacterChosen,
    DebtGained,
    PageStarted,
    PlayerSeated,
    SceneFramed,
)
from domain.capes.model import Inspiration

# -- R-TABLE-1: two or more players in numbered seats -----------------------------------------


def test_players_are_seated_in_numbered_seats_in_the_order_they_join() -> None:
    """R-TABLE-1: each new player takes the next seat number."""
    t = Table(players=2)
    given(t.events).when(c.SeatPlayer(name="Chris")).then(
        PlayerSeated(seat=3, name="Chris", tokens=0)
    )


def test_a_scene_cannot_be_framed_with_a_single_player() -> None:
    """R-TABLE-1: a table needs at least two players."""
    t = Table(players=1)
    given(t.events).when(c.FrameScene(seat=1)).refused("R-TABLE-1")


def test_two_players_are_enough_to_frame_a_scene() -> None:
    """R-TABLE-1: two players make a table."""
    t = Table(players=2)
    given(t.events).when(c.FrameScene(seat=2, text="Rooftops")).then(
        SceneFramed(scene=1, framer=2, text="Rooftops"),
        PageStarted(scene=1, page=1, starter=2),
    )


def test_the_server_seats_at_most_twelve_players() -> None:
    """R-TABLE-1: this server's tables have at most twelve seats."""
    t = Table(players=12)
    given(t.events).when(c.SeatPlayer(name="Thirteenth")).refused("R-TABLE-1")


# -- R-TABLE-2: Story Tokens, never below zero ------------------------------------------------


def test_players_start_with_no_story_tokens_by_default() -> None:
    """R-TABLE-2: the campaign's starting Story Tokens default to 0."""
    t = Table(players=2)
    assert [p.tokens for p in t.state.players] == [0, 0]


def test_the_campaign_option_sets_the_story_tokens_each_player_starts_with() -> None:
    """R-TABLE-2: a campaign created with 3 starting tokens seats every player with 3."""
    t = Table(players=2, tokens=3)
    given(t.events).when(c.SeatPlayer(name="Chris")).then(
        PlayerSeated(seat=3, name="Chris", tokens=3)
    )


def test_buying_a_further_character_with_no_story_token_is_refused() -> None:
    """R-TABLE-2: tokens never go below 0, so a player cannot pay what they do not hold."""
    t = framed()
    t(c.ChooseCharacter(seat=1, character=1))
    given(t.events).when(c.ChooseCharacter(seat=1, character=2)).refused("R-TABLE-2")


def test_adding_a_conflict_while_claiming_with_no_story_token_is_refused() -> None:
    """R-TABLE-2: a Conflict added outside a turn costs a token the player does not have."""
    t = framed()
    given(t.events).when(c.CreateConflict(seat=1, text="A storm")).refused("R-TABLE-2")


def test_a_player_may_spend_their_last_story_token_but_no_more() -> None:
    """R-TABLE-2: paying the last token leaves 0; the next purchase is refused."""
    t = framed(tokens=1)
    t(c.ChooseCharacter(seat=1, character=1))
    given(t.events).when(c.ChooseCharacter(seat=1, character=2)).then(
        CharacterChosen(seat=1, character=2, cost=1)
    )
    t(c.ChooseCharacter(seat=1, character=2))
    assert t.state.player(1).tokens == 0
    given(t.events).when(c.ChooseCharacter(seat=1, character=3)).refused("R-TABLE-2")


# -- R-TABLE-3: Inspirations belong to players ------------------------------------------------


def test_an_inspiration_belongs_to_a_player_and_remembers_its_conflict() -> None:
    """R-TABLE-3: resolving Event 1 (3 against 1) gives the resolver, seat 1, an Inspiration
    of 2 that remembers it came from Conflict 1."""
    t = the_last_conflict_in_resolution()
    t(c.Resolve(seat=1, conflict=1))
    assert t.state.player(1).inspirations == (Inspiration(id=1, value=2, source=1),)
    assert t.state.player(2).inspirations == t.state.player(3).inspirations == ()


# -- R-TABLE-4: Debt belongs to characters, on a Drive ----------------------------------------


def test_debt_goes_on_the_drive_the_player_chooses() -> None:
    """R-TABLE-4: Aurora's super power puts its Debt on Hope, the Drive her player names."""
    t = a_scene_with_a_conflict()
    start_turn(t, 1)
    given(t.events).when(
        c.RollDie(seat=1, ability=power("Aurora", 1), conflict=1, die=1, drive="Hope", value=4)
    ).then_includes(DebtGained(character=AURORA, drive="Hope"))


def test_an_undifferentiated_character_keeps_its_debt_in_a_single_stack() -> None:
    """R-TABLE-4: Brute has no Drives; his Debt goes on his one stack."""
    t = a_scene_with_a_conflict()
    take_turn(t, 1, c.CreateConflict(seat=1, text="Sirens"))
    start_turn(t, 2)
    given(t.events).when(
        c.RollDie(seat=2, ability=power("Brute", 2), conflict=1, die=2, value=4)
    ).then_includes(DebtGained(character=BRUTE, drive=UNDIFFERENTIATED))
    assert [d.name for d in t.state.characters[BRUTE].drives] == [UNDIFFERENTIATED]


def test_the_central_pile_of_debt_never_runs_out() -> None:
    """R-TABLE-4: a character already carrying 40 Debt on a Drive still takes more."""
    t = a_scene_with_a_conflict(debt={AURORA: {"Hope": 40}})
    start_turn(t, 1)
    t.roll(4)
    t(c.RollDie(seat=1, ability=power("Aurora", 1), conflict=1, die=1, drive="Hope"))
    hope = t.state.characters[AURORA].drive("Hope")
    assert hope is not None and hope.debt == 41


# -- R-X-SEAT-1: seats are taken between scenes, under distinct names -----------------------


def test_a_player_cannot_take_a_seat_during_a_scene() -> None:
    """R-X-SEAT-1: seating mid-scene would change the turn order."""
    t = framed()
    given(t.events).when(c.SeatPlayer(name="Late")).refused("R-X-SEAT-1")


def test_a_player_may_take_a_seat_between_scenes() -> None:
    """R-X-SEAT-1: once a scene is over a new player takes the next seat."""
    t = an_empty_scene(characters_built(), framer=1)
    given(t.events).when(c.SeatPlayer(name="Late")).then(
        PlayerSeated(seat=4, name="Late", tokens=0)
    )


def test_two_players_cannot_share_a_name() -> None:
    """R-X-SEAT-1: player names are unique at the table."""
    t = Table(players=2)
    given(t.events).when(c.SeatPlayer(name="P2")).refused("R-X-SEAT-1")
