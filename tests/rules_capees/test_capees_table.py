"""CAPEES! table and resources: seats, the Editor, counts, fair dice, the log and refusals
(C-TABLE-*, C-SRV-1, C-SRV-2, C-X-SEAT-1)."""

from __future__ import annotations

import pytest
from capees_helpers import EDITOR, JOE, ZIPS, CTable, first_scene, hero, the_cast

from domain.capees import EDITION
from domain.capees import commands as c
from domain.capees import events as e
from domain.capees.moves import waiting_for
from domain.edition import fold
from domain.errors import RuleViolation
from scripts import liveness_capees as liveness


def test_a_story_needs_two_players_and_an_editor_without_a_hero() -> None:
    """C-TABLE-1; C-X-STORY-1: the Editor begins the story from his own seat."""
    alone = CTable(players=("Solo",))
    alone.refused(c.BeginStory(seat=1, editor=1), "C-TABLE-1")
    t = the_cast(CTable())
    t.refused(c.BeginStory(seat=ZIPS, editor=ZIPS), "C-TABLE-1")
    t.refused(c.BeginStory(seat=ZIPS, editor=EDITOR), "C-EDITOR-2")
    t(c.BeginStory(seat=EDITOR))
    assert t.state.editor == EDITOR


def test_a_story_begins_only_once_there_is_a_hero_and_the_board_offers_only_what_moves_on() -> None:
    """C-X-STORY-2, C-PROM-2, C-SRV-4: with no hero, beginning a story is refused (its first
    scene could never start) and not offered; the board offers creating a character, which is
    accepted. Once a player has a hero the story begins and the scene it offers starts."""
    t = CTable(players=("Editor", "P"))
    for name in ("Officer Kelly", "Mayor Grant", "Aunt Bea"):
        t.new(EDITOR, name)
    t.refused(c.BeginStory(seat=EDITOR, editor=EDITOR), "C-X-STORY-2")
    offered = waiting_for(t.state)
    assert all("capees.begin_story" not in tags for tags in offered.values())
    assert offered and all("capees.create_character" in tags for tags in offered.values())
    liveness.check_offers(t.state)
    hero(t, "Zip")  # seat 2 is P's
    t(c.BeginStory(seat=EDITOR, editor=EDITOR))
    assert waiting_for(t.state) == {EDITOR: ("capees.start_scene",)}
    liveness.check_offers(t.state)
    t(c.StartScene(seat=EDITOR, featured=t["Zip"]))
    assert t.state.scene is not None


def test_a_player_has_one_hero_and_the_editor_none() -> None:
    """C-TABLE-1."""
    t = the_cast(CTable())
    t.refused(c.CreateCharacter(seat=ZIPS, name="Zip II", hero=True,
                                drives={"Justice": 1, "Truth": 2, "Love": 2, "Hope": 2,
                                        "Duty": 2}), "C-TABLE-1")
    t(c.BeginStory(seat=EDITOR, editor=EDITOR))
    t.refused(c.CreateCharacter(seat=EDITOR, name="Editor's own", hero=True), "C-TABLE-1")


def test_every_ordered_step_starts_at_the_editor_and_goes_clockwise() -> None:
    """C-TABLE-2: the Editor acts first in turn 1; then seat 2, 3…"""
    t = first_scene()
    assert t.state.scene is not None and t.state.scene.action is None
    t.refused(c.StartAction(seat=ZIPS, character=t["Zip"]), "C-TURN-1")
    t(c.StartAction(seat=EDITOR))
    assert t.state.scene.action is not None and t.state.scene.action.character == \
        t["Chief Mannelli"]


def test_a_player_with_several_characters_picks_which_acts_first() -> None:
    """C-TABLE-2: Joe narrates the robbers and the driver and chooses their order."""
    t = first_scene()
    for seat, name in ((EDITOR, "Chief Mannelli"), (ZIPS, "Zip"), (3, "Night Maiden"),
                       (4, "Captain Liberty")):
        t(c.StartAction(seat=seat, character=t[name]), c.EndAction(seat=seat))
    error = t.refused(c.StartAction(seat=JOE), "C-TABLE-2")
    assert sorted(error.choices) == sorted([t["the robbers"], t["the driver"]])  # type: ignore[attr-defined]
    t(c.StartAction(seat=JOE, character=t["the driver"]))


def test_no_count_goes_below_zero() -> None:
    """C-TABLE-3: a player without tokens cannot buy Prominence."""
    t = the_cast(CTable())
    t(c.BeginStory(seat=EDITOR, editor=EDITOR),
      c.StartScene(seat=EDITOR, featured=t["Captain Liberty"]),
      c.AddComplication(seat=EDITOR, name="Robbery"), c.PassSetup(seat=EDITOR))
    t(c.BuyProminence(seat=EDITOR, character=t["Minions"], side="opponent"))
    t.refused(c.BuyProminence(seat=ZIPS, character=t["Zip"], points=2, side="hero"),
              "C-TABLE-3")


def test_every_die_is_drawn_by_the_server() -> None:
    """C-TABLE-4: a value outside 1-6 is refused; the client's value never counts."""
    t = first_scene()
    t(c.StartAction(seat=EDITOR))
    rx = t.complication("Robbery")
    command = c.RollAbility(seat=EDITOR, ability="Chief Mannelli skill 1", complication=rx,
                            die=1, value=9)
    with pytest.raises(RuleViolation) as caught:
        EDITION.decide(t.state, command)
    assert caught.value.rule == "C-TABLE-4"
    assert EDITION.with_dice(command, lambda: 4).value == 4


def test_players_join_between_stories() -> None:
    """C-X-SEAT-1."""
    t = first_scene()
    t.refused(c.SeatPlayer(name="Latecomer"), "C-X-SEAT-1")


def test_every_change_is_an_event_and_a_refusal_changes_nothing() -> None:
    """C-SRV-1, C-SRV-2: state comes only from events; a refused command appends nothing."""
    t = first_scene()
    assert fold(EDITION, t.events) == t.state
    t.refused(c.Claim(seat=ZIPS, character=t["Zip"], complication=1), "C-PAGE-1")
    assert isinstance(t.events[0], e.CampaignCreated)
