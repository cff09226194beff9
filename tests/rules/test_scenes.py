"""Scenes: framing, choosing characters, unblocking, the end of a scene (R-SCENE-1..4)."""

from __future__ import annotations

from play_helpers import AURORA, BRUTE, MIA, a_scene, next_page, play_on, take_turn
from rulebook import given
from scenes_helpers import (
    an_empty_scene,
    characters_built,
    claiming_on_page,
    created,
    framed,
    the_last_conflict_in_resolution,
)

from domain.capes import commands as c
from domain.capes.events import (
    CharacterChosen,
    FramingPassed,
    PageEnded,
    PageStarted,
    SceneEnded,
    SceneFramed,
)

# -- R-SCENE-1: who frames ----------------------------------------------------------------------


def test_any_volunteer_frames_the_first_scene() -> None:
    """R-SCENE-1: seat 3 may frame the first scene."""
    t = characters_built()
    given(t.events).when(c.FrameScene(seat=3, text="Docks")).then(
        SceneFramed(scene=1, framer=3, text="Docks"),
        PageStarted(scene=1, page=1, starter=3),
    )


def test_the_next_scene_is_framed_by_the_player_left_of_the_previous_framer() -> None:
    """R-SCENE-1: after seat 3 framed, seat 1 (to its left, round the table) frames next."""
    t = an_empty_scene(characters_built(), framer=3)
    given(t.events).when(c.FrameScene(seat=2)).refused("R-SCENE-1")
    given(t.events).when(c.FrameScene(seat=1)).then(
        SceneFramed(scene=2, framer=1), PageStarted(scene=2, page=1, starter=1)
    )


def test_the_framer_may_pass_the_framing_to_the_left() -> None:
    """R-SCENE-1: seat 2 should frame; it passes to seat 3, who may then frame."""
    t = an_empty_scene(characters_built(), framer=1)
    given(t.events).when(c.PassFraming(seat=2)).then(FramingPassed(seat=2, to=3))
    t(c.PassFraming(seat=2))
    given(t.events).when(c.FrameScene(seat=2)).refused("R-SCENE-1")
    given(t.events).when(c.FrameScene(seat=3)).then(
        SceneFramed(scene=2, framer=3), PageStarted(scene=2, page=1, starter=3)
    )


def test_framing_may_be_passed_on_again_round_the_table() -> None:
    """R-SCENE-1: seat 3, handed the framing, may pass it on to seat 1 in turn."""
    t = an_empty_scene(characters_built(), framer=1)
    t(c.PassFraming(seat=2))
    given(t.events).when(c.PassFraming(seat=3)).then(FramingPassed(seat=3, to=1))


def test_only_the_next_framer_may_pass_the_framing() -> None:
    """R-SCENE-1: seat 3 cannot pass on a framing that is seat 2's."""
    t = an_empty_scene(characters_built(), framer=1)
    given(t.events).when(c.PassFraming(seat=3)).refused("R-SCENE-1")


def test_there_is_no_framing_to_pass_before_the_first_scene() -> None:
    """R-SCENE-1: the first scene is any volunteer's, so nothing is passed."""
    given(characters_built().events).when(c.PassFraming(seat=1)).refused("R-SCENE-1")


def test_framing_is_not_passed_during_a_scene() -> None:
    """R-SCENE-1: framing is passed between scenes."""
    given(framed().events).when(c.PassFraming(seat=2)).refused("R-SCENE-1")


# -- R-SCENE-2: choosing characters ----------------------------------------------------------


def test_characters_are_chosen_starting_with_the_framer() -> None:
    """R-SCENE-2: seat 2 cannot choose before seat 1, the framer, has had its go."""
    t = framed(framer=1)
    given(t.events).when(c.ChooseCharacter(seat=2, character=BRUTE)).refused("R-SCENE-2")
    given(t.events).when(c.ChooseCharacter(seat=1, character=AURORA)).then(
        CharacterChosen(seat=1, character=AURORA, cost=0)
    )


def test_players_choose_clockwise_after_the_framer() -> None:
    """R-SCENE-2: after the framer (seat 2) ends its go, seat 3 chooses, not seat 1."""
    t = framed(framer=2)
    t(c.ChooseCharacter(seat=2, character=BRUTE), c.PassClaiming(seat=2))
    given(t.events).when(c.ChooseCharacter(seat=1, character=AURORA)).refused("R-SCENE-2")
    given(t.events).when(c.ChooseCharacter(seat=3, character=MIA)).then(
        CharacterChosen(seat=3, character=MIA, cost=0)
    )


def test_a_further_character_costs_one_story_token() -> None:
    """R-SCENE-2: the first character is free, the second costs 1 Story Token."""
    t = framed(tokens=2)
    t(c.ChooseCharacter(seat=1, character=AURORA))
    given(t.events).when(c.ChooseCharacter(seat=1, character=MIA)).then(
        CharacterChosen(seat=1, character=MIA, cost=1)
    )


def test_a_character_is_played_by_one_player_per_scene() -> None:
    """R-SCENE-2: Aurora, chosen by seat 1, cannot also be chosen by seat 2."""
    t = framed()
    t(c.ChooseCharacter(seat=1, character=AURORA), c.PassClaiming(seat=1))
    given(t.events).when(c.ChooseCharacter(seat=2, character=AURORA)).refused("R-SCENE-2")


def test_a_player_cannot_choose_the_same_character_twice() -> None:
    """R-SCENE-2: Aurora is already seat 1's in this scene."""
    t = framed(tokens=1)
    t(c.ChooseCharacter(seat=1, character=AURORA))
    given(t.events).when(c.ChooseCharacter(seat=1, character=AURORA)).refused("R-SCENE-2")


def test_characters_may_be_chosen_at_the_start_of_a_later_page_first_one_free() -> None:
    """R-SCENE-2: seat 3 chose nobody on page 1; on page 2 its first character is free."""
    t = framed()
    t(c.ChooseCharacter(seat=1, character=AURORA), c.PassClaiming(seat=1))
    t(c.ChooseCharacter(seat=2, character=BRUTE), c.PassClaiming(seat=2))
    play_on(t, until=lambda s: s.page is not None and s.page.phase == "free_play")
    take_turn(t, 1, c.CreateConflict(seat=1, text="The warehouse burns"))
    play_on(t, until=claiming_on_page(2))  # Starter seat 2
    t(c.PassClaiming(seat=2))
    given(t.events).when(c.ChooseCharacter(seat=3, character=MIA)).then(
        CharacterChosen(seat=3, character=MIA, cost=0)
    )


def test_characters_are_not_chosen_after_claiming() -> None:
    """R-SCENE-2: once free play begins, nobody picks up a character until the next page."""
    t = a_scene(framer=1, tokens=1)
    dawn = t.mundane(1, "Dawn")
    given(t.events).when(c.ChooseCharacter(seat=1, character=dawn)).refused("R-SCENE-2")


# -- R-SCENE-3: what a new scene restores ----------------------------------------------------


def test_mundane_abilities_unblock_when_a_new_scene_starts() -> None:
    """R-SCENE-3: Mia's skill, Blocked by her Reaction in scene 1, is usable in scene 2."""
    t = the_last_conflict_in_resolution()
    t(c.Resolve(seat=1, conflict=1))
    assert t.state.scene is None
    assert t.state.characters[MIA].blocked == ("Mia skill 3",)
    state = given(t.events).when(c.FrameScene(seat=1)).then(
        SceneFramed(scene=2, framer=1), PageStarted(scene=2, page=1, starter=1)
    )
    assert state.characters[MIA].blocked == ()


def test_free_conflicts_are_available_again_in_a_new_scene() -> None:
    """R-SCENE-3: the Exemplar pair used its Free Conflict in scene 1 (vetoed at once); in
    scene 2 it may be added again."""
    t = characters_built()
    t(c.LinkExemplar(seat=1, character=AURORA, exemplar=BRUTE, drive="Justice"))
    free = c.CreateConflict(seat=2, text="Rivals", free_for=(AURORA, BRUTE))
    t(c.FrameScene(seat=1), c.ChooseCharacter(seat=1, character=AURORA), c.PassClaiming(seat=1))
    t(c.ChooseCharacter(seat=2, character=BRUTE), free, c.Veto(seat=2, conflict=1))
    given(t.events).when(free).refused("R-CHAR-6")
    play_on(t, until=lambda s: s.scene is None)
    t(c.FrameScene(seat=2), c.ChooseCharacter(seat=2, character=BRUTE))
    t(c.PassClaiming(seat=2), c.PassClaiming(seat=3))
    t(c.ChooseCharacter(seat=1, character=AURORA))
    again = c.CreateConflict(seat=1, text="Rivals", free_for=(AURORA, BRUTE))
    given(t.events).when(again).then(
        created(again, t.state.next_conflict, free_for=(AURORA, BRUTE))
    )


# -- R-SCENE-4: the end of a scene -----------------------------------------------------------


def test_a_scene_ends_when_a_page_ends_with_no_conflict_left() -> None:
    """R-SCENE-4: resolving the only Conflict ends page 2 and with it scene 1; seat 1, left
    of the framer (seat 3), frames next."""
    t = the_last_conflict_in_resolution()
    given(t.events).when(c.Resolve(seat=1, conflict=1)).then_includes(
        PageEnded(scene=1, page=2), SceneEnded(scene=1, next_framer=1)
    )


def test_a_page_that_ends_with_a_conflict_left_does_not_end_the_scene() -> None:
    """R-SCENE-4: Event 1 stays on the table, so page 2 follows page 1."""
    t = a_scene(framer=1)
    take_turn(t, 1, c.CreateConflict(seat=1, text="The warehouse burns"))
    next_page(t)
    events = [e for e in t.events if isinstance(e, PageEnded | SceneEnded | PageStarted)]
    assert events[-2:] == [PageEnded(scene=1, page=1), PageStarted(scene=1, page=2, starter=2)]
    assert t.state.scene is not None


def test_a_scene_without_conflicts_ends_after_its_first_page() -> None:
    """R-SCENE-4: nobody leaves a Conflict on the table: one page and the scene is over."""
    t = an_empty_scene(characters_built(), framer=2)
    assert t.events[-2:] == [PageEnded(scene=1, page=1), SceneEnded(scene=1, next_framer=3)]


def test_a_new_scene_cannot_be_framed_while_one_is_played() -> None:
    """R-SCENE-4: the scene goes on until a page ends with no Conflict left."""
    given(framed().events).when(c.FrameScene(seat=2)).refused("R-SCENE-4")
