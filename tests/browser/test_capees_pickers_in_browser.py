"""CAPEES!'s move forms list only what the rules accept: Buy Prominence and Balance list the
characters the seat may give Prominence to, Claim the Complications a character may claim,
Stake's "Whose Debt" the absent opponents the Editor may stake for (C-PROM-3, C-PROM-6,
C-CLAIM-1, C-STAKE-5).

Each position (``tests/capees_positions.py``) is set up over HTTP by the seats' tokens, on a
real server with scripted dice; then the seat whose move it is opens the table in Chromium,
and the test reads the lists its form offers. A list of every character (or Complication)
would hold a choice the server refuses, so each position has one. Last, C-RES-3's *Give Story
Tokens* form: another player's winning staker gives its tokens (``GIVING``). And what the
board shows of a split-off side, and a reaction's stake on another Complication (C-SPLIT-3,
C-REACT-3).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from capees_positions import (
    BALANCING,
    BALANCING_AT_ZERO,
    BALANCING_NARRATED,
    BUYING,
    CLAIMING,
    CLAIMING_AFTER_SILVERSTAR,
    GIVING,
    REACTING,
    RESOLVING,
    ROLLING,
    SPLITTING,
    STAKING,
    STAKING_DICE,
    Script,
)
from helpers import Table, client, open_campaign
from playwright.sync_api import expect
from test_play_in_browser import (
    WAIT,
    Run,
    click_and_wait,
    new_context,
    open_table,
    serving,
    watch,
)

from cli.demo_capees import (
    ALICE,
    DEMO_DICE,
    EDITOR,
    HOSTAGES,
    JOE,
    NIGHT_MAIDEN,
    PASS_REACTIONS,
    ROBBERY,
)
from domain.capees import commands as c

pytestmark = pytest.mark.browser


@pytest.fixture
def dice() -> tuple[int, ...]:
    """The server's scripted dice (a test parametrizes ``dice`` for others)."""
    return DEMO_DICE


@pytest.fixture
def run(tmp_path: Path, dice: tuple[int, ...]) -> Iterator[Run]:
    with serving(tmp_path, dice) as started:
        yield started


@pytest.fixture
def reach(browser: Any, run: Run) -> Iterator[Any]:
    """``reach(script, seat)``: a CAPEES! campaign of the Editor, Alice and Joe played over
    HTTP through ``script``; the table's page of ``seat``, showing its moves."""
    contexts: list[Any] = []
    with client(run.base) as http:

        def reached(script: Script, seat: int) -> Any:
            table = open_campaign(http, "Millennium City", players=("Editor", "Alice", "Joe"),
                                  edition="capees")
            play(table, script)
            contexts.append(new_context(browser, run))
            page = watch(contexts[-1].new_page())
            open_table(page, f"{run.base}/play/{table.campaign_id}#token={table.tokens[seat]}")
            page.locator("#moves form").first.wait_for()
            return page

        yield reached
    for context in contexts:
        context.close()


def play(table: Table, script: Script) -> None:
    """Every step of ``script`` by its seat's token (each must be accepted)."""
    for narration, command in script:
        if isinstance(command, c.SeatPlayer):
            continue
        if command == PASS_REACTIONS:
            while (action := table.query("board")["action"]) and action["reacting"]:
                table.play("", c.PassReaction(seat=action["reacting"]))
        else:
            table.play(narration, command)


def listed(page: Any, move: str, field: str, **chosen: str) -> list[str]:
    """What the form of ``move`` lists for ``field``, once ``chosen`` fields are chosen (by
    their labels)."""
    form = page.locator(f'form[data-move="{move}"]')
    for name, label in chosen.items():
        form.locator(f"[name={name}]").select_option(label=label)
    return form.locator(f"[name={field}] option").all_text_contents()


def test_buy_prominence_lists_my_hero_and_the_non_heroes_nobody_else_narrates(
        reach: Any) -> None:
    alice = reach(BUYING, ALICE)
    # Not Silverstar (Joe's hero), not the robbers (the Editor's this scene), not the
    # characters known by name only (C-PROM-3, C-NPC-1).
    assert listed(alice, "capees.buy_prominence", "character") == [
        "Chief Mannelli", "Night Maiden"]
    assert not alice.errors, alice.errors


def test_balance_lists_the_non_heroes_with_a_sheet(reach: Any) -> None:
    editor = reach(BALANCING, EDITOR)
    # Not the heroes, not the characters known by name only (C-PROM-6, C-NPC-1).
    assert listed(editor, "capees.balance", "character") == ["the robbers", "Chief Mannelli"]
    assert not editor.errors, editor.errors


def test_balance_lists_the_editors_additions_and_no_character_another_seat_brought(
        reach: Any) -> None:
    editor = reach(BALANCING_NARRATED, EDITOR)
    # The Minion, though Joe narrates it (the Editor handed it over); not Chief Mannelli
    # (Alice bought his Prominence), not the robbers (on the higher side) (C-PROM-6).
    assert listed(editor, "capees.balance", "character") == ["Minion"]
    assert not editor.errors, editor.errors


#: The Balance Prominence form.
BALANCE = 'form[data-move="capees.balance"]'


def balance(page: Any, character: str, side: str | None = None) -> None:
    """The Editor balances with 1 point for ``character`` (on ``side``, chosen in the form
    if given); no picker may ask anything more."""
    form = page.locator(BALANCE)
    form.get_by_label("Character").select_option(label=character)
    if side:
        form.get_by_label("Side").select_option(label=side)
    click_and_wait(page, form.locator("button[type=submit]"))
    assert not page.is_visible("#picker"), page.text_content("#picker")
    page.wait_for_function("+document.body.dataset.version >= +document.body.dataset.applied")


def names_the_opponent_side_and_asks_none(page: Any) -> None:
    """The Balance form's move says where the points go, and the form has no Side to show."""
    form = page.locator(BALANCE)
    assert form.locator("button[type=submit]").text_content() == \
        "Balance Prominence (Opponent side)"
    assert not form.locator("[name=side]").is_visible()


def test_balance_gives_its_points_to_the_lower_side_without_asking_which(reach: Any) -> None:
    """C-PROM-6: given Hero 3, Opponent 0 at balancing, then the form names the side the
    points go to, the Opponent side, and asks no side (the server refuses any other); when the
    Editor balances with the robbers, then no picker asks for a side either (it offered only
    "Opponent") and the robbers are Opponents."""
    editor = reach(BALANCING, EDITOR)
    names_the_opponent_side_and_asks_none(editor)
    balance(editor, "the robbers")
    present = editor.text_content("#scene-line")
    assert "the robbers: Prominence 1 (Opponent, Editor)" in present, present
    assert not editor.errors, editor.errors


@pytest.mark.parametrize("dice", [STAKING_DICE])
def test_balance_asks_the_side_only_with_both_sides_at_0(reach: Any) -> None:
    """C-PROM-6: given both sides at 0 at balancing, then the form asks for the side, Hero or
    Opponent (not "as declared": nobody is); when the Editor gives the robbers a Hero point,
    then the Opponent side is the lower one: the form names it and asks no side, and the Chief
    goes there without a picker."""
    editor = reach(BALANCING_AT_ZERO, EDITOR)
    form = editor.locator(BALANCE)
    assert form.locator("[name=side] option").all_text_contents() == ["Hero", "Opponent"]
    assert form.locator("button[type=submit]").text_content() == "Balance Prominence"
    balance(editor, "the robbers", "Hero")
    names_the_opponent_side_and_asks_none(editor)
    balance(editor, "Chief Mannelli")
    present = editor.text_content("#scene-line")
    assert "the robbers: Prominence 1 (Hero, Editor)" in present, present
    assert "Chief Mannelli: Prominence 1 (Opponent, Editor)" in present, present
    assert editor.locator(BALANCE).count() == 0  # balanced: play begins
    assert not editor.errors, editor.errors


def test_claim_lists_the_complications_the_claimers_side_controls(reach: Any) -> None:
    alice = reach(CLAIMING, ALICE)
    assert listed(alice, "capees.claim", "character") == ["Night Maiden"]
    # Not Traffic, a tie that nobody Controls (C-CLAIM-1).
    assert listed(alice, "capees.claim", "complication", character="Night Maiden") == [
        "#1 Robbery", "#2 Hostages"]
    assert not alice.errors, alice.errors


def test_claim_lists_no_complication_a_character_as_prominent_holds(reach: Any) -> None:
    alice = reach(CLAIMING_AFTER_SILVERSTAR, ALICE)
    # Not Hostages: Silverstar holds it with Prominence 2, Night Maiden has 1 (C-CLAIM-2).
    assert listed(alice, "capees.claim", "complication", character="Night Maiden") == [
        "#1 Robbery"]
    assert not alice.errors, alice.errors


@pytest.mark.parametrize("dice", [STAKING_DICE])
def test_whose_debt_lists_the_absent_opponents_for_the_editor_only(reach: Any) -> None:
    editor = reach(STAKING, EDITOR)
    # The robbers are absent with Debt; not Chief Mannelli (present), not the heroes, not the
    # characters known by name only (C-STAKE-5, C-X-STAKE-1), not the driver (absent, but
    # with no Debt: C-STAKE-1).
    assert listed(editor, "capees.stake", "character") == [
        "(the acting character)", "the robbers"]
    assert not editor.errors, editor.errors


@pytest.mark.parametrize("dice", [STAKING_DICE])
def test_whose_debt_offers_nobody_else_in_a_heroes_action(reach: Any) -> None:
    """In Night Maiden's action Alice stakes her own Debt only (C-STAKE-5: the Editor, in an
    opponent's action)."""
    alice = reach([*STAKING, ("", c.EndAction(seat=EDITOR)),
                   ("", c.StartAction(seat=ALICE, character=NIGHT_MAIDEN))], ALICE)
    assert listed(alice, "capees.stake", "character") == ["(the acting character)"]
    assert not alice.errors, alice.errors


# -- C-RES-3: another player's winning staker gives its Story Tokens -------------------------

#: The Give Story Tokens form.
GIVE = 'form[data-move="capees.give_tokens"]'


def tokens(page: Any, seat: int) -> int:
    """The Story Tokens seat ``seat``'s ledger shows on ``page``."""
    shown = page.text_content(f'#ledgers article[data-seat="{seat}"] .tokens')
    return int(shown.split()[0])


def test_another_players_staker_gives_its_story_tokens_from_the_page(reach: Any) -> None:
    """C-RES-3: given Joe checked Silverstar's claim on Robbery, where Night Maiden staked 1
    Justice on the winning Hero side, then the resolution waits for Alice, her form offering
    Night Maiden's stake; when she gives its token to Joe (the picker asks whom), then it
    completes: Robbery is resolved and replaced, Joe has a token more, the log shows the gift
    and the resolution."""
    alice = reach(GIVING, ALICE)
    # The resolution waits: Robbery still on the table, Alice's the move, Joe none the richer.
    assert "#1 Robbery" in alice.text_content("#conflicts")
    assert "It\u2019s your move." in alice.text_content("#status")
    form = alice.locator(GIVE)
    assert form.locator("[name=complication] option").all_text_contents() == ["#1 Robbery"]
    assert form.locator("[name=character] option").all_text_contents() == ["Night Maiden"]
    joe_before = tokens(alice, JOE)

    # "(ask me)": the server asks for the recipient, never Alice herself (C-RES-3).
    click_and_wait(alice, form.locator("button[type=submit]"))
    assert alice.is_visible("#picker"), "the server did not ask who gets the tokens"
    offered = alice.locator("#picker-choices button").all_text_contents()
    assert any("Joe" in x for x in offered) and not any("Alice" in x for x in offered), offered
    click_and_wait(alice, alice.locator("#picker-choices button").filter(has_text="Joe").first)
    assert not alice.is_visible("#picker"), alice.text_content("#picker")

    # The board waits no more: no gift left to give, Robbery resolved and replaced.
    alice.wait_for_function(f"!document.querySelector('{GIVE}')")
    assert "#1 Robbery" not in alice.text_content("#conflicts")
    assert tokens(alice, JOE) == joe_before + 1
    # The log: Joe's check waited; Alice's gift completed the resolution (and, the heroes'
    # Victory Points reaching the Target, the scene).
    moves = alice.locator("#log li")
    checked = moves.filter(has_text="Claim of Silverstar on #1 Robbery holds").last.text_content()
    assert checked.startswith("#") and "Joe" in checked and "resolved" not in checked
    # The log may be drawn after the board: its last entry is waited for, then read.
    expect(moves.last).to_contain_text("Story Tokens of Night Maiden on #1 Robbery go to Joe, "
                                       "#1 Robbery resolved for Silverstar", timeout=WAIT)
    given = moves.last.text_content()
    assert "Alice" in given, given
    assert "Between scenes" in alice.text_content("#scene-line")
    assert not alice.errors, alice.errors


def test_a_staker_gives_its_story_tokens_to_the_player_chosen_in_the_forms_own_list(
        reach: Any) -> None:
    """C-RES-3: given the same wait for Alice's gift, when she chooses the Editor in the
    form's "Given to" list (which offers the other players, not her) and sends it, then no
    picker asks again, and the token goes to the Editor, not to Joe."""
    alice = reach(GIVING, ALICE)
    form = alice.locator(GIVE)
    given_to = form.get_by_label("Given to")
    assert given_to.locator("option").all_text_contents() == ["(ask me)", "Editor", "Joe"]
    editor_before, joe_before = tokens(alice, EDITOR), tokens(alice, JOE)

    given_to.select_option(label="Editor")
    click_and_wait(alice, form.locator("button[type=submit]"))
    assert not alice.is_visible("#picker"), alice.text_content("#picker")

    alice.wait_for_function(f"!document.querySelector('{GIVE}')")
    assert tokens(alice, EDITOR) == editor_before + 1
    assert tokens(alice, JOE) == joe_before
    last = alice.locator("#log li").last
    expect(last).to_contain_text("Night Maiden on #1 Robbery go to Editor", timeout=WAIT)
    given = last.text_content()
    assert "Alice" in given, given
    assert not alice.errors, alice.errors


# -- C-SPLIT-3, C-REACT-3: a split-off side, a reaction's stake elsewhere -----------------------


def test_a_split_off_side_is_shown_as_its_characters_own(reach: Any) -> None:
    """C-SPLIT-3: given Night Maiden split Hostages' Hero die and opened a side of her own,
    then the page names her as that side's owner (the board's ``owner`` is a character; it
    was shown as a seat, "opened by seat 7")."""
    alice = reach(SPLITTING, ALICE)
    side = alice.locator(f'[data-complication="{HOSTAGES}"] .side').nth(2)
    assert "Night Maiden" in side.locator(".meta").first.text_content(), side.text_content()
    assert "seat" not in side.text_content(), side.text_content()
    assert not alice.errors, alice.errors


@pytest.mark.parametrize("dice", [(*DEMO_DICE[:2], 3)])
def test_a_reaction_stakes_on_the_complication_chosen_in_its_form(reach: Any) -> None:
    """C-REACT-3: given Alice's chance to react to her own 4 on Hostages (where the Hero side
    Controls), when she reacts with Last word, staking 1 Justice just before on Robbery (which
    the Opponents Control), then the stake lies on Robbery. The form had no field for the
    stake's Complication, so a reaction could stake only on the die's own, where here the
    rules refuse it (C-STAKE-3)."""
    alice = reach(REACTING, ALICE)
    form = alice.locator('form[data-move="capees.react"]')
    form.get_by_label("Ability").select_option("Last word")
    form.get_by_label("Debt staked just before (optional)").fill("1")
    form.get_by_label("Drive staking it").select_option("Justice")
    form.get_by_label("Staked on").select_option(label="#1 Robbery")
    click_and_wait(alice, form.locator("button[type=submit]"))
    alice.wait_for_function("!document.querySelector('form[data-move=\"capees.react\"]')")
    robbery = alice.text_content(f'[data-complication="{ROBBERY}"]')
    assert "1 Justice (Night Maiden)" in robbery, robbery
    assert not alice.errors, alice.errors


def test_react_offers_only_the_tropes_rated_for_the_die_the_page_names(reach: Any) -> None:
    """C-REACT-1: given Alice's chance to react to Night Maiden's 4 on Hostages, then the page
    says which die the round is about, and React's list lets her choose Last word (4) and Cold
    fury (5) only: Vanish, Glare venomously and Dramatic entrance, rated below 4, are listed
    but cannot be chosen (every one was offered, and always refused)."""
    alice = reach(REACTING, ALICE)
    line = alice.text_content("#scene-line")
    assert "Alice may react to die 1 on #2 Hostages, showing 4" in line, line
    abilities = alice.locator('form[data-move="capees.react"] [name=ability] option')
    enabled = [o.text_content() for o in abilities.all() if not o.is_disabled()]
    assert enabled == ["Last word (trope 4)", "Cold fury (trope 5, super)"], \
        abilities.all_text_contents()
    assert abilities.count() == 5
    assert not alice.errors, alice.errors


def test_a_claim_is_resolved_only_with_its_replacement_named_and_the_form_says_so(
        reach: Any) -> None:
    """C-RES-4: given Alice's claim on Hostages to resolve, then the form asks for the
    replacement's name as a required field (it said "optional", and the server refused it
    left out); sent empty, it is not sent, and the focus goes to that field."""
    alice = reach(RESOLVING, ALICE)
    form = alice.locator('form[data-move="capees.check_claim"]')
    field = form.locator("[name=replacement]")
    label = form.locator('label[for="mv-capees.check_claim-replacement"]').text_content()
    assert "optional" not in label, label
    assert field.evaluate("e => e.required")
    before = alice.get_attribute("body", "data-applied")
    form.locator("button[type=submit]").click()
    alice.wait_for_function("document.activeElement && document.activeElement.name === "
                            "'replacement'")
    assert alice.get_attribute("body", "data-applied") == before
    assert alice.text_content("#move-error") == ""
    assert not alice.errors, alice.errors


def test_roll_an_ability_lets_me_choose_only_the_abilities_rated_for_the_chosen_die(
        reach: Any) -> None:
    """C-ABIL-6: given Night Maiden's action, when Alice chooses Robbery's Opponent die, which
    shows 5, then none of her abilities (rated 1 to 4) can be chosen; when she chooses its
    Hero die, showing 1, then all seven can (every one was offered for the 5, and refused)."""
    alice = reach(ROLLING, ALICE)
    form = alice.locator('form[data-move="capees.roll_ability"]')
    form.locator("[name=complication]").select_option(label="#1 Robbery")
    abilities = form.locator("[name=ability] option")

    def choosable() -> list[str]:
        return [o.text_content() for o in abilities.all() if not o.is_disabled()]

    form.locator("[name=die]").select_option(label="die 2: 5 (Opponent)")
    assert choosable() == [], abilities.all_text_contents()
    assert abilities.count() == 7
    form.locator("[name=die]").select_option(label="die 1: 1 (Hero)")
    assert len(choosable()) == 7, abilities.all_text_contents()
    assert not alice.errors, alice.errors
