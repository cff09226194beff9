"""What the CAPEES! page says happened: the log says what each move did (who used which
ability on which Complication's die, what it showed and shows now, where the Debt and the
Story Tokens went; it said "Ability used, Debt gained, Die rolled", "Claim made"), and a
ledger's stakes name the Complication they lie on, as the board's cards do (C-STAKE-1).

Each position (``tests/capees_positions.py``) is set up over HTTP by the seats' tokens, on a
real server with scripted dice; then a seat opens the table in Chromium (the ``reach`` fixture
of the pickers' tests).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from capees_positions import GIVING, SPLITTING
from helpers import open_campaign
from test_capees_pickers_in_browser import GIVE, dice, play, reach, run
from test_play_in_browser import click_and_wait
from test_table_page_in_browser import Opener, http, open_page

from cli.demo_capees import ALICE, JOE, ROBBERY, SCRIPT
from domain.capees import commands as c
from domain.capees.events import EVENT_TYPES

pytestmark = pytest.mark.browser

__all__ = ["dice", "http", "open_page", "reach", "run"]  # the fixtures this module's tests use


def test_a_ledgers_stake_names_the_complication_it_lies_on(reach: Any) -> None:
    """C-STAKE-1: given Night Maiden's 1 Justice Debt staked on Robbery (#1), then Alice's
    ledger says so by its name, as the card does (it said "on #1", and the player had to
    look the number up on the cards)."""
    alice = reach(GIVING, ALICE)
    ledger = alice.text_content(f'#ledgers article[data-seat="{ALICE}"]')
    assert "Staked: 1 Justice on #1 Robbery" in ledger, ledger
    assert not alice.errors, alice.errors


def log(page: Any) -> list[str]:
    """What each entry of the log on ``page`` says happened, oldest first, once it holds
    every event of the board drawn (the log may come after the board)."""
    page.wait_for_function("(() => { const li = document.querySelector('#log li:last-child');"
                           " return li && li.dataset.last === document.body.dataset.version; })()")
    return page.locator("#log li .what").all_text_contents()


def entry(page: Any, start: str) -> str:
    """The last entry of the log that begins with ``start``."""
    return [x for x in log(page) if x.startswith(start)][-1]


def terse(events: tuple[type[Any], ...] = EVENT_TYPES) -> set[str]:
    """How the page names an event it has no words for ("Die rolled"): an event of the
    edition (``events``, CAPEES!'s unless told) that carries more than its name must never be
    shown so."""
    return {re.sub(r"([a-z])([A-Z])", r"\1 \2", t.__name__).capitalize()
            for t in events if t.__struct_fields__}


def said_in_full(page: Any, events: tuple[type[Any], ...] = EVENT_TYPES) -> None:
    """No entry of the log names an event of ``events`` only (its events are joined by
    commas)."""
    for said in log(page):
        assert not terse(events) & set(said.split(", ")), said


def unhashed(said: str) -> str:
    """``said`` without the digits of the dice's commitment and seed, drawn anew each run
    (R-FAIR-1): "(SHA-256 …)"."""
    return re.sub(r"[0-9a-f]{8}\N{HORIZONTAL ELLIPSIS}", "\N{HORIZONTAL ELLIPSIS}", said)


def test_the_log_says_who_did_what_to_which_die_through_an_action(reach: Any) -> None:
    """Given scene 1 up to Night Maiden's split: then the log says what the setup gave
    (Story Tokens, Complications, Prominence, C-PROM-1, C-PROM-6), which abilities rolled
    which Complication's die, from what to what, the Debt and its Block (C-ABIL-3, C-ABIL-4),
    what was kept, and the stake and split that opened Night Maiden's own side (C-SPLIT-3)."""
    alice = reach(SPLITTING, ALICE)
    assert unhashed(entry(alice, "Scene 1")) == (
        "Scene 1 started (Story Tokens: Editor 1, Alice 1, Joe 2; Silverstar featured), "
        "Silverstar: 2 Prominence (Hero) for 2 Story Tokens, Step: Inspirations (Editor first), "
        "Editor passed to Alice, Alice passed to Joe, Joe passed to Editor, "
        "Step: Complications (Editor first), Dice of scene 1 committed (SHA-256 \u2026)")
    assert "Complication #2 Hostages added (Hero 1, Opponent 1)" in log(alice)
    assert "the robbers balanced with 1 Prominence (Opponent; narrated by Editor)" in log(alice)
    assert entry(alice, "Chief Mannelli used") == (
        "Chief Mannelli used Angry (2), Angry blocked (Chief Mannelli), "
        "Rolled die 2 of #1 Robbery: 1 \u2192 5")
    assert entry(alice, "Night Maiden used") == (
        "Night Maiden used Shadow Strike (3, super), Night Maiden gained 1 Debt on Justice, "
        "Rolled die 1 of #2 Hostages: 1 \u2192 4")
    assert "Kept 4 on die 1 of #2 Hostages" in log(alice)
    # A character's name may be plural: no "the robbers's".
    assert ["Action: the robbers", "Action of the robbers ended"] in [
        log(alice)[i:i + 2] for i in range(len(log(alice)))]
    assert log(alice)[-1] == (
        "Night Maiden staked 1 Justice Debt on #2 Hostages (Hero side), "
        "Night Maiden split die 1 of #2 Hostages into 2 + 2 (1 on a side of its own)")
    said_in_full(alice)
    assert not alice.errors, alice.errors


def test_the_log_says_how_a_claim_resolved_and_who_got_the_story_tokens(reach: Any) -> None:
    """C-RES-3, C-RES-4: given Joe's check of Silverstar's claim on Robbery, waiting for
    Night Maiden's Story Tokens, then the log says the claim holds, its replacement and whom
    it waits for; when Alice gives them to Joe, then it says so, and how Robbery resolved, the
    scene's end and the Complications discarded, each by its name though no card is left."""
    alice = reach(GIVING, ALICE)
    assert log(alice)[-1] == (
        "Claim of Silverstar on #1 Robbery holds (replacement: Getaway; waiting for Alice to "
        "give the Story Tokens of Night Maiden)")
    form = alice.locator(GIVE)
    form.get_by_label("Given to").select_option(label="Joe")
    click_and_wait(alice, form.locator("button[type=submit]"))
    alice.wait_for_function(f"!document.querySelector('{GIVE}')")
    assert unhashed(log(alice)[-1]) == (
        "Story Tokens of Night Maiden on #1 Robbery go to Joe, "
        "#1 Robbery resolved for Silverstar (Hero: 5 VP, Bonus 1; Inspiration #2 to Joe; "
        "Alice gave Joe 1 Story Token), Complication #4 Getaway added (Hero 1, Opponent 1), "
        "Victory Target reached: the scene ends, Step: Final claims (Editor first), "
        "Editor made no claim (none possible), Alice made no claim (none possible), "
        "Joe made no claim (none possible), #3 Police discarded, #4 Getaway discarded, "
        "Scene 1 ended (Hero 6 VP, Opponent 0 VP), Dice of scene 1 revealed (seed \u2026)")
    said_in_full(alice)
    assert not alice.errors, alice.errors


def test_a_complication_taken_back_and_its_number_given_again_is_named_as_each_entry_found_it(
        http: Any, open_page: Opener) -> None:
    """R-REC-1, C-RES-4: given Joe's check of Silverstar's claim on Robbery, which names its
    replacement Getaway (#4) and ends the scene, discarding it, and which Joe takes back while
    his table is open, then checks again naming Escape (#4 again): then each entry of the log
    names #4 as it was when that entry happened, the reverted one Getaway, the new one Escape,
    on the open table and on one opened now. The open table's new entry said "#4 Getaway
    discarded" (it kept the first #4 it had read), the new table's reverted one "#4 Escape
    discarded" (the last #4 of the log)."""
    table = open_campaign(http, "Millennium City", players=("Editor", "Alice", "Joe"),
                          edition="capees")
    play(table, SCRIPT)
    joe = open_page(table, table.tokens[JOE])
    log(joe)  # read: the page knows the first #4 before the undo
    table.play("", {"type": "undo", "seat": JOE})
    log(joe)
    table.play("The robbers surrender; they all got away",
               c.CheckClaim(seat=JOE, complication=ROBBERY, replacement="Escape"))
    alice = open_page(table, table.tokens[ALICE])
    for page in (joe, alice):
        page.wait_for_function(f"document.body.dataset.version === '{table.version()}'")
        said = [x for x in log(page) if x.startswith("#1 Robbery resolved")]
        assert [re.findall(r"#4 [A-Z][a-z]+", x) for x in said] == [
            ["#4 Getaway", "#4 Getaway"], ["#4 Escape", "#4 Escape"]], said
        assert not page.errors, page.errors
