"""Moves of the first edition (Capes) that the page must let a player make, as the rules allow
them: a Reaction (to which die?), a Schism (which dice?), resolving and gloating (on which
Conflict?), an Exemplar pair's Free Conflict. Each campaign is played over HTTP up to the
move; the page of the player whose move it is makes it, by its form, as a player would.
Every die rolls a 3.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import Table, open_campaign
from test_capees_log_in_browser import log, said_in_full
from test_play_in_browser import APOS, Run, serving
from test_table_page_in_browser import Opener, commands_sent, http, open_page

from cli.demo import NIGHTJAR_BUILD, TEMPEST_BUILD
from domain.capes import commands as c
from domain.capes.events import EVENT_TYPES

pytestmark = pytest.mark.browser

__all__ = ["http", "open_page"]  # the fixtures this module's tests use, with its own run

ANA, BEN, CLEO = 1, 2, 3
#: Ben makes his character first: the character ids are not the seats' numbers.
TEMPEST, NIGHTJAR = 1, 2
CRANE, SHIP = 1, 2
NIGHTJAR_DRIVES = {"Justice": 3, "Hope": 2, "Truth": 2, "Love": 1, "Duty": 1}


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    with serving(tmp_path, (3,) * 60) as started:
        yield started


def play(table: Table, *commands: c.SeatCommand) -> None:
    for command in commands:
        table.play("", command)


def a_page_with_two_conflicts(table: Table) -> None:
    """Ben (Tempest, undifferentiated) and Ana (Nightjar, with Drives) play the first page:
    Ana creates the crane's Event (#1), Ben the ship's (#2); the second page is claiming,
    started by Ben (R-PAGE-1)."""
    play(table,
         c.CreateCharacter(seat=BEN, name="Tempest", build=TEMPEST_BUILD),
         c.CreateCharacter(seat=ANA, name="Nightjar", build=NIGHTJAR_BUILD,
                           drives=NIGHTJAR_DRIVES),
         c.FrameScene(seat=ANA, text="The docks"),
         c.ChooseCharacter(seat=ANA, character=NIGHTJAR), c.PassClaiming(seat=ANA),
         c.ChooseCharacter(seat=BEN, character=TEMPEST), c.PassClaiming(seat=BEN),
         c.PassClaiming(seat=CLEO), c.PassClaiming(seat=ANA), c.PassClaiming(seat=BEN),
         c.StartTurn(seat=ANA, character=NIGHTJAR),
         c.CreateConflict(seat=ANA, kind="event", text="The crane falls",
                          sides=("Falls", "Holds")),
         c.EndTurn(seat=ANA),
         c.StartTurn(seat=BEN, character=TEMPEST),
         c.CreateConflict(seat=BEN, kind="event", text="The ship sails",
                          sides=("Sails", "Stays")),
         c.EndTurn(seat=BEN))


def bens_roll_on_the_ship(table: Table) -> None:
    """Claimed (Ben the ship's "Sails", Ana the crane's "Falls"), Ben rolls the ship's first
    die with Lightning (5): it shows 3, he keeps it, and the chance to React opens."""
    a_page_with_two_conflicts(table)
    bens_roll_on_the_claimed_ship(table)


def bens_roll_on_the_claimed_ship(table: Table) -> None:
    """:func:`bens_roll_on_the_ship` after :func:`a_page_with_two_conflicts`."""
    play(table,
         c.Claim(seat=BEN, conflict=SHIP, side=0), c.PassClaiming(seat=BEN),
         c.PassClaiming(seat=CLEO),
         c.Claim(seat=ANA, conflict=CRANE, side=0), c.PassClaiming(seat=ANA),
         c.PassClaiming(seat=BEN), c.PassClaiming(seat=CLEO), c.PassClaiming(seat=ANA),
         c.StartTurn(seat=BEN, character=TEMPEST),
         c.RollDie(seat=BEN, ability="Lightning", conflict=SHIP, die=1),
         c.AcceptRoll(seat=BEN))


def bens_split_die(table: Table) -> None:
    """After :func:`bens_roll_on_the_ship`, Ben reacts to his own roll (Debt 2 on Tempest),
    stakes 1 under the die and splits it in two: "Sails" has dice 1 (2) and 3 (1)."""
    bens_roll_on_the_ship(table)
    play(table,
         c.React(seat=BEN, character=TEMPEST, ability="Thunderclap"),
         c.AcceptRoll(seat=BEN, ally=0), c.PassReaction(seat=ANA),
         c.StakeDebt(seat=BEN, conflict=SHIP, die=1, amount=1),
         c.SplitDie(seat=BEN, conflict=SHIP, die=1, into=2))


def the_ship_to_resolve(table: Table) -> None:
    """After :func:`bens_split_die`, Ben ends his turn; Ana rolls the crane's die with Sonic
    Cry (Justice), keeps 3, nobody reacts and she ends hers: Ben, the Starter, resolves the
    ship first (R-PAGE-7)."""
    bens_split_die(table)
    play(table, c.EndTurn(seat=BEN),
         c.StartTurn(seat=ANA, character=NIGHTJAR),
         c.RollDie(seat=ANA, ability="Sonic Cry", conflict=CRANE, die=1, drive="Justice"),
         c.AcceptRoll(seat=ANA), c.PassReaction(seat=ANA), c.PassReaction(seat=BEN),
         c.EndTurn(seat=ANA))


def bens_page(http: Any, open_page: Opener, setup: Callable[[Table], None]) -> tuple[Table, Any]:
    """A table of Ana, Ben and Cleo, played over HTTP by ``setup``; Ben's page."""
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    setup(table)
    return table, open_page(table, table.tokens[BEN])


def click_and_see(page: Any, button: Any, table: Table) -> None:
    """Click a move's button; wait for the move's board, and fail on a refusal."""
    before = page.get_attribute("body", "data-applied") or ""
    button.click()
    page.wait_for_function(
        """prev => !document.body.dataset.busy && ((document.body.dataset.applied || "") !== prev
            || document.querySelector('.error:not(:empty)'))""", arg=before)
    assert page.text_content("#move-error") == ""
    page.wait_for_function("v => +document.body.dataset.version >= v", arg=table.version())


def test_a_reaction_says_which_die_it_is_to_and_offers_the_abilities_rated_for_it(
    http: Any, open_page: Opener
) -> None:
    table, ben = bens_page(http, open_page, bens_roll_on_the_ship)
    # R-REACT-1: the die it is about, and what it shows (the ability must be rated as high).
    assert "reactions to die 1 of conflict #2, showing 3" in ben.text_content("#scene-line")
    # The log says what the roll was (it said "Ability used, Debt gained, Die rolled").
    assert ben.locator("#log li .what").filter(has_text="Lightning").last.text_content() == (
        "Tempest used Lightning (5), Tempest gained 1 Debt on Undifferentiated, "
        "Rolled die 1 of #2: 1 → 3")
    assert "Kept 3 on die 1 of #2" in ben.text_content("#log")
    form = ben.locator("form[data-move=react]")
    offered = {o.get_attribute("value"): o.is_disabled()
               for o in form.locator("[name=ability] option").all()}
    assert not offered["Thunderclap"] and not offered["Lightning"]  # rated 3 and 5
    assert offered["Fog"] and offered["Wind Wall"]  # rated 1 and 2: shown, not offered
    assert f"Fog (power 1, super) (rated below the die{APOS}s 3)" in form.text_content()
    form.locator("[name=ability]").select_option("Thunderclap")
    click_and_see(ben, form.get_by_role("button", name="React"), table)
    assert table.query("board")["turn"]["roll"] == [SHIP, 1, 3, 3]


def test_the_log_says_what_each_move_of_a_page_did_and_names_no_event_by_its_type_alone(
    http: Any, open_page: Opener
) -> None:
    """Given Ben's split die on the ship, Ana's roll on the crane and Ben resolving the ship:
    then Ben's log says who framed the scene, chose, claimed, allied with which side, which
    Conflict was created with which sides, who was to react in which order, how the die was
    split and how the ship was resolved. It said "Scene framed", "Character chosen",
    "Character allied", "Reactions opened"."""
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    the_ship_to_resolve(table)
    play(table, c.Resolve(seat=BEN, conflict=SHIP, pairs=((1, 2),)))
    ben = open_page(table, table.tokens[BEN])
    said = log(ben)
    assert any(x.startswith("Scene 1 framed by Ana: “The docks”") for x in said), said
    assert "Ana chose Nightjar" in said
    assert "Cleo passed to Ana (idle)" in said
    assert "Event #2 “The ship sails” created (Sails / Stays)" in said
    assert "Ben claimed “Sails” of #2" in said
    assert ("Kept 3 on die 1 of #2, Tempest allied with “Sails” of #2, "
            "Reactions to die 1 of #2 opened (Ben, Cleo, Ana)") in said
    assert ("Tempest split die 1 of #2 into die 1 (2) + die 3 (1), "
            "Tempest staked 1 Undifferentiated Debt under die 3 of #2") in said
    # R-RES-3, R-RES-4: the winning side's Debt leaves Tempest; a pair and a leftover die.
    assert said[-1] == (
        "#2 “The ship sails” resolved: “Sails” won; Debt spent: 1 Undifferentiated of Tempest, "
        "1 Undifferentiated of Tempest; Inspiration #1 (1) to Ben; Inspiration #2 (1) to Ben")
    said_in_full(ben, EVENT_TYPES)
    assert not ben.errors, ben.errors


def test_a_schisms_dice_are_chosen_from_the_sides_dice_each_named_by_its_controller(
    http: Any, open_page: Opener
) -> None:
    table, ben = bens_page(http, open_page, bens_split_die)
    # The dice are Tempest's, whose player is Ben: the page named the player of seat 1.
    sails = ben.locator("[data-conflict='2'] .side").first
    assert sails.get_by_role("img", name="die 1 showing 2, controlled by Tempest, 1 Debt "
                             "staked").count() == 1
    form = ben.locator("form[data-move=schism]")
    form.get_by_label("Conflict").select_option(label="#2 The ship sails")
    dice = form.get_by_label("Dice it takes")
    assert dice.locator("option").all_text_contents() == [
        "die 1: 2, controlled by Tempest", "die 3: 1, controlled by Tempest"]
    dice.select_option(label="die 3: 1, controlled by Tempest")
    form.get_by_label("New side's name").fill("Sinks")
    sent = commands_sent(ben)
    click_and_see(ben, form.get_by_role("button", name="Schism"), table)
    assert '"dice":[3]' in sent[0], sent
    ship = table.query("board")["conflicts"][SHIP - 1]
    assert [(s["label"], [d["id"] for d in s["dice"]]) for s in ship["sides"]] == [
        ("Sails", [1]), ("Stays", [2]), ("Sinks", [3])]


def test_a_schism_offers_only_the_dice_its_character_controls(
    http: Any, open_page: Opener
) -> None:
    """R-SCHISM-1: a Schism takes dice its character controls, as the board says: "Sails"
    holds Tempest's dice 1 and 3 (the page offered every die of a side, and the server refused
    the others)."""
    table, ben = bens_page(http, open_page, bens_split_die)
    assert table.query("board")["schism_dice"] == {str(SHIP): [1, 3]}
    form = ben.locator("form[data-move=schism]")
    form.get_by_label("Conflict").select_option(label="#2 The ship sails")
    form.get_by_label("Side it leaves").select_option(label="Sails")
    assert form.locator("[name=dice] option").all_text_contents() == [
        "die 1: 2, controlled by Tempest", "die 3: 1, controlled by Tempest"]


def test_a_schism_offers_only_the_conflicts_and_sides_it_may_leave_and_splits_as_the_board_says(
    http: Any, open_page: Opener
) -> None:
    """R-SCHISM-1 / R-STAKE-2: the Schism's Conflict and Side lists offer what the board's
    ``schism_sides`` says, and "Split its uncontrolled die first" shows where its
    ``schism_splits`` says (the split's Debt goes on the side: Tempest is allied to "Sails",
    whose dice are all his). The page offered every Conflict and side, the crane and the
    ship's "Stays" too, where Tempest has nothing to take, and the server refused them."""
    table, ben = bens_page(http, open_page, bens_split_die)
    board = table.query("board")
    assert (board["schism_sides"], board["schism_splits"]) == ({str(SHIP): [0]}, {})
    form = ben.locator("form[data-move=schism]")
    assert form.locator("[name=conflict] option").all_text_contents() == ["#2 The ship sails"]
    assert form.locator("[name=side] option").all_text_contents() == ["Sails"]
    assert form.locator("[name=split_uncontrolled] option").all_text_contents() == []
    assert not form.get_by_label("Split its uncontrolled die first").is_visible()


def test_each_die_shows_its_id_by_which_the_moves_and_the_log_name_it(
    http: Any, open_page: Opener
) -> None:
    """The forms' selects and the log name dice by id ("die 3: 1, controlled by Tempest"),
    which the board showed only in a die's tooltip: two dice showing the same value could not
    be told apart. Each die shows its id, small, in a corner."""
    _, ben = bens_page(http, open_page, bens_split_die)
    sails = ben.locator("[data-conflict='2'] .side").first
    ids = sails.locator(".die .die-id")
    assert ids.all_text_contents() == ["1", "3"]
    assert all(ids.nth(i).is_visible() for i in range(2))
    form = ben.locator("form[data-move=schism]")
    form.get_by_label("Conflict").select_option(label="#2 The ship sails")
    named = form.get_by_label("Dice it takes")
    assert named.locator("option").all_text_contents() == [
        "die 1: 2, controlled by Tempest", "die 3: 1, controlled by Tempest"]
    # The value is still what a screen reader reads, and the id with it, once.
    assert sails.get_by_role("img", name="die 3 showing 1, controlled by Tempest, 1 Debt "
                             "staked").count() == 1


def test_resolving_and_gloating_offer_the_conflict_the_resolution_waits_on(
    http: Any, open_page: Opener
) -> None:
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    bens_roll_on_the_ship(table)
    play(table, c.PassReaction(seat=BEN), c.PassReaction(seat=ANA), c.EndTurn(seat=BEN),
         c.StartTurn(seat=ANA, character=NIGHTJAR),
         c.RollDie(seat=ANA, ability="Sonic Cry", conflict=CRANE, die=1, drive="Justice"),
         c.AcceptRoll(seat=ANA), c.PassReaction(seat=ANA), c.PassReaction(seat=BEN),
         c.EndTurn(seat=ANA))
    # R-PAGE-7: clockwise from the Starter (Ben): his ship first, then Ana's crane. Both
    # were offered every Conflict, the crane first, and Ben's Resolve was refused (R-RES-1).
    ben = open_page(table, table.tokens[BEN])
    form = ben.locator("form[data-move=resolve]")
    assert form.locator("[name=conflict] option").all_text_contents() == ["#2 The ship sails"]
    click_and_see(ben, form.get_by_role("button", name="Resolve"), table)
    ana = open_page(table, table.tokens[ANA])
    gloat = ana.locator("form[data-move=gloat]")
    assert gloat.locator("[name=conflict] option").all_text_contents() == ["#1 The crane falls"]
    click_and_see(ana, gloat.get_by_role("button", name="Gloat"), table)
    assert table.query("ledgers")[ANA - 1]["tokens"] == 1  # R-GLOAT-1
    assert "Gloated on #1 for 1 Story Token" in ana.text_content("#log")


def test_the_status_and_the_deadlock_form_name_the_conflicts_that_may_be_deadlocked(
    http: Any, open_page: Opener
) -> None:
    """R-X-DEAD-2 / R-DEAD-1: nobody claims on page 2; Ben rolls the ship's "Sails" to 3 and
    the crane stays tied at 1 apiece, untouched through the page. In page 3's claiming phase
    anyone may declare the crane Deadlocked, not the ship, which "Sails" controls. The status
    said "Ana, Ben or Cleo may declare a deadlock." of no Conflict, and the form offered
    both."""
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    a_page_with_two_conflicts(table)
    play(table, c.PassClaiming(seat=BEN), c.PassClaiming(seat=CLEO), c.PassClaiming(seat=ANA),
         c.StartTurn(seat=BEN, character=TEMPEST),
         c.RollDie(seat=BEN, ability="Lightning", conflict=SHIP, die=1),
         c.AcceptRoll(seat=BEN), c.PassReaction(seat=BEN), c.PassReaction(seat=ANA),
         c.EndTurn(seat=BEN), c.StartTurn(seat=ANA, character=NIGHTJAR), c.EndTurn(seat=ANA))
    board = table.query("board")
    assert (board["page"], board["phase"], board["deadlockable"]) == (3, "claiming", [CRANE])
    ben = open_page(table, table.tokens[BEN])
    assert ben.locator("#status p").all_text_contents()[-1] == (
        "You, Ana or Cleo may declare #1 “The crane falls” deadlocked.")
    form = ben.locator("form[data-move=declare_deadlock]")
    assert form.get_by_label("Conflict").locator("option").all_text_contents() == [
        "#1 The crane falls"]
    click_and_see(ben, form.get_by_role("button", name="Declare a deadlock"), table)
    assert [x["id"] for x in table.query("board")["conflicts"]] == [SHIP]


def test_an_exemplar_pairs_free_conflict_is_added_while_claiming_without_a_story_token(
    http: Any, open_page: Opener
) -> None:
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    a_page_with_two_conflicts(table)
    play(table, c.LinkExemplar(seat=ANA, character=NIGHTJAR, exemplar=TEMPEST, drive="Justice"),
         c.PassClaiming(seat=BEN), c.PassClaiming(seat=CLEO))
    # Ana has no Story Token: the Conflict she may add is the pair's Free one (R-CHAR-6),
    # which the page had no way to ask for.
    ana = open_page(table, table.tokens[ANA])
    form = ana.locator("form[data-move=create_conflict]")
    paid = form.get_by_label("Paid with")
    assert paid.locator("option").all_text_contents() == [
        "the Free Conflict of Tempest and Nightjar", "1 Story Token"]
    form.get_by_label("What is at stake").fill("Old rivals race to the pier")
    click_and_see(ana, form.get_by_role("button", name="Create a conflict"), table)
    created = table.query("board")["conflicts"][-1]
    assert created["text"] == "Old rivals race to the pier"
    assert table.query("ledgers")[ANA - 1]["tokens"] == 0
    # In a turn a Conflict costs nothing, and there is nothing to pay with.
    play(table, c.PassClaiming(seat=ANA), c.PassClaiming(seat=BEN), c.PassClaiming(seat=CLEO),
         c.PassClaiming(seat=ANA), c.StartTurn(seat=BEN, character=TEMPEST))
    ben = open_page(table, table.tokens[BEN])
    assert not ben.locator("form[data-move=create_conflict]").get_by_label("Paid with") \
        .is_visible()


def test_the_dice_to_pair_at_resolution_are_asked_for_in_a_players_words(
    http: Any, open_page: Opener
) -> None:
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    the_ship_to_resolve(table)
    ben = open_page(table, table.tokens[BEN])
    ben.locator("form[data-move=resolve]").get_by_role("button", name="Resolve").click()
    picker = ben.get_by_role("dialog")
    picker.wait_for()
    # R-RES-4: the question and the dice as the board shows them (value and side).
    assert picker.locator("#picker-title").text_content() == (
        "R-RES-4: how do the dice pair off for Inspirations? Each die is paired with a die of "
        "another side until every die is used.")
    choice = picker.get_by_role("button", name="die 1 (2, “Sails”) with die 2 (1, “Stays”)")
    click_and_see(ben, choice, table)
    assert [x["id"] for x in table.query("board")["conflicts"]] == [CRANE]


def test_the_characters_a_goal_names_stay_chosen_while_another_player_moves(
    http: Any, open_page: Opener
) -> None:
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    play(table,
         c.CreateCharacter(seat=BEN, name="Tempest", build=TEMPEST_BUILD),
         c.CreateCharacter(seat=ANA, name="Nightjar", build=NIGHTJAR_BUILD),
         c.FrameScene(seat=ANA, text="The docks"),
         c.ChooseCharacter(seat=ANA, character=NIGHTJAR), c.PassClaiming(seat=ANA),
         c.ChooseCharacter(seat=BEN, character=TEMPEST), c.PassClaiming(seat=BEN),
         c.PassClaiming(seat=CLEO), c.PassClaiming(seat=ANA), c.PassClaiming(seat=BEN),
         c.StartTurn(seat=ANA, character=NIGHTJAR))
    ana = open_page(table, table.tokens[ANA])
    form = ana.locator("form[data-move=create_conflict]")
    form.get_by_label("Kind").select_option("goal")
    form.get_by_label("What is at stake").fill("Nightjar and Tempest corner the King")
    form.get_by_label("Names (a Goal)").select_option(["1", "2"])
    # Cleo talks meanwhile: the moves are drawn again, with what Ana chose as she left it.
    play(table, c.Narrate(seat=CLEO, text="The rain gets heavier"))
    ana.wait_for_function("v => +document.body.dataset.version >= v", arg=table.version())
    chosen = form.get_by_label("Names (a Goal)").evaluate(
        "s => [...s.selectedOptions].map(o => o.textContent)")
    assert chosen == ["Tempest", "Nightjar"]
    click_and_see(ana, form.get_by_role("button", name="Create a conflict"), table)
    assert table.query("board")["conflicts"][0]["names"] == [TEMPEST, NIGHTJAR]


def test_a_move_that_costs_a_story_token_says_so(http: Any, open_page: Opener) -> None:
    table = open_campaign(http, starting_tokens=1, players=("Ana", "Ben", "Cleo"))
    play(table,
         c.CreateCharacter(seat=BEN, name="Tempest", build=TEMPEST_BUILD),
         c.CreateCharacter(seat=ANA, name="Nightjar", build=NIGHTJAR_BUILD),
         c.FrameScene(seat=ANA, text="The docks"),
         c.ChooseCharacter(seat=ANA, character=NIGHTJAR))
    # R-SCENE-2: a further character costs a Story Token.
    ana = open_page(table, table.tokens[ANA])
    assert ana.locator("form[data-move=choose_character]").get_by_role(
        "button", name="Choose another character (1 Story Token)").is_visible()
    play(table, c.PassClaiming(seat=ANA),
         c.ChooseCharacter(seat=BEN, character=TEMPEST), c.PassClaiming(seat=BEN),
         c.PassClaiming(seat=CLEO), c.PassClaiming(seat=ANA), c.PassClaiming(seat=BEN),
         c.StartTurn(seat=ANA, character=NIGHTJAR), c.EndTurn(seat=ANA),
         c.StartTurn(seat=BEN, character=TEMPEST), c.EndTurn(seat=BEN))
    # R-PAGE-6: after the free turns, a turn is bought; the others see what Ana may do.
    ana.wait_for_function("v => +document.body.dataset.version >= v", arg=table.version())
    assert ana.get_by_role("button", name="Buy a turn (1 Story Token)").is_visible()
    ben = open_page(table, table.tokens[BEN])
    assert "Waiting for Ana (buy a turn (1 Story Token), pass the turn)." in \
        ben.text_content("#status")


def test_a_further_claim_of_the_page_says_it_costs_a_story_token(
    http: Any, open_page: Opener
) -> None:
    table = open_campaign(http, starting_tokens=1, players=("Ana", "Ben", "Cleo"))
    a_page_with_two_conflicts(table)
    play(table, c.PassTurn(seat=ANA), c.PassTurn(seat=BEN))  # no turn bought: page 2
    # R-PAGE-3: Ben's first Claim of the page is free, a further one costs a Story Token.
    ben = open_page(table, table.tokens[BEN])
    form = ben.locator("form[data-move=claim]")
    assert form.get_by_role("button").text_content() == "Claim a side"
    play(table, c.Claim(seat=BEN, conflict=SHIP, side=0))
    ben.wait_for_function("v => +document.body.dataset.version >= v", arg=table.version())
    assert form.get_by_role("button").text_content() == "Claim a side (1 Story Token)"
    ana = open_page(table, table.tokens[ANA])
    assert ana.locator("#status p").first.text_content() == (
        "Waiting for Ben (create a conflict, claim a side (1 Story Token), pass (claiming)).")


def test_a_claim_offers_the_sides_the_player_may_claim(http: Any, open_page: Opener) -> None:
    table = open_campaign(http, starting_tokens=1, players=("Ana", "Ben", "Cleo"))
    a_page_with_two_conflicts(table)
    play(table, c.PassTurn(seat=ANA), c.PassTurn(seat=BEN),  # no turn bought: page 2
         c.Claim(seat=BEN, conflict=SHIP, side=0), c.PassClaiming(seat=BEN),
         c.PassClaiming(seat=CLEO),
         c.CreateConflict(seat=ANA, kind="event", text="The storm breaks", sides=("Yes", "No")))
    # R-PAGE-4: not the Conflict created this page, nor the side Ben claimed.
    ana = open_page(table, table.tokens[ANA])
    form = ana.locator("form[data-move=claim]")
    assert form.get_by_label("Conflict").locator("option").all_text_contents() == [
        "#1 The crane falls", "#2 The ship sails"]
    form.get_by_label("Conflict").select_option(label="#2 The ship sails")
    assert form.get_by_label("Side").locator("option").all_text_contents() == ["Stays"]
    click_and_see(ana, form.get_by_role("button", name="Claim a side"), table)
    assert table.query("board")["conflicts"][SHIP - 1]["sides"][1]["claimed_by"] == ANA


def test_a_schism_that_first_splits_the_sides_uncontrolled_die_is_made_from_its_form(
    http: Any, open_page: Opener
) -> None:
    """R-SCHISM-1: before a Schism a player may split an uncontrolled die and leave it behind.
    Nightjar holds Debt on Justice and on Hope, so the Drive of the split's Debt is asked for
    (R-STAKE-1). The form had no field for the split: no such Schism could be made."""
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    bens_roll_on_the_ship(table)
    play(table, c.PassReaction(seat=BEN), c.PassReaction(seat=ANA), c.EndTurn(seat=BEN),
         c.StartTurn(seat=ANA, character=NIGHTJAR),
         c.RollDie(seat=ANA, ability="Sonic Cry", conflict=CRANE, die=1, drive="Justice"),
         c.AcceptRoll(seat=ANA),
         c.React(seat=ANA, character=NIGHTJAR, ability="Wing Glide", drive="Hope"),
         c.AcceptRoll(seat=ANA, ally=0), c.PassReaction(seat=BEN))
    board = table.query("board")
    assert (board["schism_sides"], board["schism_splits"]) == ({str(CRANE): [0]}, {str(CRANE): [0]})
    ana = open_page(table, table.tokens[ANA])
    form = ana.locator("form[data-move=schism]")
    assert form.locator("[name=side] option").all_text_contents() == ["Falls"]
    form.get_by_label("Conflict").select_option(label="#1 The crane falls")
    split = form.get_by_label("Split its uncontrolled die first")
    assert split.locator("option").all_text_contents() == [
        "no", "into 2 (1 Debt)", "into 3 (2 Debt)"]
    split.select_option(label="into 2 (1 Debt)")
    form.get_by_label("New side's name").fill("Twists")
    sent = commands_sent(ana)
    form.get_by_role("button", name="Schism").click()
    picker = ana.get_by_role("dialog")
    picker.wait_for()
    assert '"split_uncontrolled":2' in sent[0], sent
    click_and_see(ana, picker.get_by_role("button", name="Hope"), table)
    crane = table.query("board")["conflicts"][CRANE - 1]
    assert [(s["label"], [(d["id"], d["value"]) for d in s["dice"]])
            for s in crane["sides"]] == [
        ("Falls", [(1, 2)]), ("Holds", [(2, 1)]), ("Twists", [(3, 1)])]
    nightjar = table.query("ledgers")[ANA - 1]["characters"][0]
    assert nightjar["staked"] == [{"conflict": CRANE, "die": 3, "drive": "Hope", "amount": 1}]


def test_a_conflict_taken_back_and_its_number_given_again_is_named_as_each_entry_found_it(
    http: Any, open_page: Opener
) -> None:
    """R-REC-1, R-CONF-3, R-PAGE-4: given Ben's ship (#2), his claim of its "Sails" and his
    veto of it, all taken back while his table is open, then his storm (#2 again), his claim
    of its "Breaks" and his veto of it: then each entry of the log names #2 as it was when
    that entry happened, the reverted ones the ship, the new ones the storm, on the open
    table and on Ana's, opened now. Both named the last #2 of the log in every entry (the
    reverted claim said "Ben claimed “Breaks” of #2")."""
    table, ben = bens_page(http, open_page, a_page_with_two_conflicts)
    mine = (c.Claim(seat=BEN, conflict=SHIP, side=0), c.Veto(seat=BEN, conflict=SHIP))
    play(table, *mine)
    log(ben)  # read: the page knows the first #2 before the undo
    for _ in range(4):  # the veto, the claim, the end of his turn and the ship
        table.play("", {"type": "undo", "seat": BEN})
    log(ben)
    play(table, c.CreateConflict(seat=BEN, kind="event", text="The storm breaks",
                                 sides=("Breaks", "Passes")),
         c.EndTurn(seat=BEN), *mine)
    ana = open_page(table, table.tokens[ANA])
    for page in (ben, ana):
        page.wait_for_function(f"document.body.dataset.version === '{table.version()}'")
        said = [x for x in log(page) if x.startswith(("Ben claimed", "Ben vetoed"))]
        assert said == [
            "Ben claimed \u201cSails\u201d of #2", "Ben vetoed #2 \u201cThe ship sails\u201d",
            "Ben claimed \u201cBreaks\u201d of #2", "Ben vetoed #2 \u201cThe storm breaks\u201d",
        ], said
        assert not page.errors, page.errors
