"""What the log says of the record's events, the same in both editions: who was issued a link,
the table's options, who undid which events, who disputed which move and why, who voted which
way, how each dispute ended and what it reverted, which scene's dice were committed, seeded,
closed and revealed, where a fork was made (R-REC-1…R-REC-6, R-FAIR-1…R-FAIR-5, R-X-REC-4).
The log showed them by their bare names ("Dispute voted", "Dice committed"): whose vote, which
way, on which dispute? The dispute form's moves and its preview's reverted events are named in
the log's words too.

Each campaign is played over HTTP by the seats' and the owner's tokens, on a real server with
scripted dice; then a seat opens the table in Chromium and reads its log.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from capees_positions import SPLITTING
from helpers import Table, open_campaign
from test_capees_log_in_browser import log, said_in_full, terse
from test_capees_pickers_in_browser import play as play_capees
from test_capes_moves_in_browser import (
    ANA,
    BEN,
    a_page_with_two_conflicts,
    bens_roll_on_the_claimed_ship,
    bens_roll_on_the_ship,
)
from test_play_in_browser import Run, serving
from test_table_page_in_browser import Opener, http, open_page

from cli.demo_capees import ALICE, DEMO_DICE, JOE
from domain.capes.events import EVENT_TYPES as CAPES_EVENT_TYPES
from domain.record.events import RECORD_EVENT_TYPES

pytestmark = pytest.mark.browser

__all__ = ["http", "open_page"]  # the fixtures this module's tests use, with its own run

#: How the log names a record's event it has no words for ("Dispute voted").
BARE = {re.sub(r"([a-z])([A-Z])", r"\1 \2", t.__name__).capitalize()
        for t in RECORD_EVENT_TYPES}


@pytest.fixture
def dice() -> tuple[int, ...]:
    """The server's scripted dice: every die rolls a 3 (CAPEES!'s test gives the demo's)."""
    return (3,) * 60


@pytest.fixture
def run(tmp_path: Path, dice: tuple[int, ...]) -> Iterator[Run]:
    with serving(tmp_path, dice) as started:
        yield started


def ok(response: Any) -> Any:
    assert response.status_code in (200, 201), response.text
    return response.json()


def disputed_thrice_and_forked(table: Table, opener: int) -> None:
    """The owner lets itself settle disputes and issues seat 3 a new link; ``opener`` disputes
    the last move it may and withdraws, disputes it again and the other voters reject it,
    and a third time, which the owner upholds (R-REC-3, R-REC-4, R-REC-5); the owner forks
    the campaign as it is then (R-REC-6)."""
    owner = table.as_owner()
    ok(table.client.post(table.url("/options"), headers=owner, json={
        "dispute_threshold": "majority", "owner_settles": True, "dispute_minutes": 90}))
    table.tokens[3] = ok(table.client.post(table.url("/seats/3/token"), headers=owner))["token"]

    def dispute(reason: str) -> Any:
        position = table.query("record", seat=opener)["disputable"][-1]
        table.play("", {"type": "open_dispute", "seat": opener, "position": position,
                        "reason": reason})
        return table.query("record", seat=opener)["dispute"]

    dispute("Wrong table")
    table.play("", {"type": "withdraw_dispute", "seat": opener})
    opened = dispute("Not as narrated")
    for voter in opened["voters"]:
        if voter != opener and table.query("record", seat=opener)["dispute"]:
            table.play("", {"type": "vote", "seat": voter, "uphold": False})
    dispute("Out of turn")
    ok(table.client.post(table.url("/disputes/settle"), headers=owner, json={"uphold": True}))
    ok(table.client.post(table.url("/forks"), headers=owner,
                         json={"version": table.version(), "name": "What if"}))


def record_said(page: Any) -> list[str]:
    """What the log says of each event, the game's and the record's, oldest first."""
    return [part for said in log(page) for part in said.split(", ")]


def said_of_links_and_disputes(said: list[str], third: str) -> None:
    """What the log of :func:`disputed_thrice_and_forked` says of it, seat 3 being ``third``."""
    assert f"Link for seat 3 ({third}) issued by the owner: the old one no longer works" in said
    assert "Disputes: open 90 minutes; upheld by a majority vote or the owner" in said
    assert "Dispute #1 withdrawn" in said
    assert "Dispute #2 rejected by vote" in said
    assert "Dispute #3 upheld by the owner" in said
    rewound = r"Rewound: events? #\d+(\N{EN DASH}#\d+)? reverted"
    assert any(re.fullmatch(rewound, x) for x in said), said


def no_bare_record_event(page: Any) -> None:
    """No entry of the log names a record's event by its type alone."""
    for said in log(page):
        assert not BARE & set(said.split(", ")), said


def test_the_capes_log_says_what_each_record_event_did(http: Any, open_page: Opener) -> None:
    """Given Ana, Ben and Cleo's page of two Conflicts, Ana's seed in the scene's dice, Ben's
    roll on the ship, which he keeps and then undoes, three disputes of Ana's about it
    (withdrawn, rejected by Cleo's vote, upheld by the owner) and a fork: then Ben's log says
    who did what to which event and dispute, and how each ended, in words, and no event of
    the log, the edition's or the record's, is named by its type alone."""
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    a_page_with_two_conflicts(table)
    table.play("", {"type": "add_seed", "seat": ANA, "seed": "the harbor at midnight"})
    bens_roll_on_the_claimed_ship(table)
    kept = table.version()
    table.play("", {"type": "undo", "seat": BEN})
    disputed_thrice_and_forked(table, ANA)
    ben = open_page(table, table.tokens[BEN])
    said = record_said(ben)
    assert "Link for seat 1 (Ana) issued" in said, said
    assert any(re.fullmatch(r"Dice of scene 1 committed \(SHA-256 [0-9a-f]{8}…\)", x)
               for x in said), said
    assert "Ana added a seed to the dice" in said
    assert "Seeds of scene 1\u2019s dice closed" in said
    undone = [x for x in said if x.startswith("Ben undid events #")]
    assert undone and undone[0].endswith(f"\N{EN DASH}#{kept}"), said
    opened = [x for x in said if x.startswith("Dispute #")]
    assert opened[0].startswith("Dispute #1 opened by Ana about event #"), opened
    assert opened[0].endswith("(Ben\u2019s move): \u201cWrong table\u201d "
                              "(2 of 2 votes to uphold)"), opened
    assert "Cleo voted against dispute #2" in said
    said_of_links_and_disputes(said, "Cleo")
    assert f"Fork made after event #{table.version() - 1}" in said
    no_bare_record_event(ben)
    said_in_full(ben, CAPES_EVENT_TYPES)
    assert not ben.errors, ben.errors


@pytest.mark.parametrize("dice", [DEMO_DICE])
def test_the_capees_log_says_what_each_record_event_did(http: Any, open_page: Opener) -> None:
    """Given CAPEES!'s scene 1 up to Night Maiden's split, which Alice undoes, and three
    disputes of Joe's about the move before (withdrawn, rejected by vote, upheld by the
    owner) and a fork: then Alice's log says so in the same words as the first edition's, and
    no event of the log, the edition's or the record's, is named by its type alone."""
    table = open_campaign(http, "Millennium City", players=("Editor", "Alice", "Joe"),
                          edition="capees")
    play_capees(table, SPLITTING)
    table.play("", {"type": "undo", "seat": ALICE})
    disputed_thrice_and_forked(table, JOE)
    alice = open_page(table, table.tokens[ALICE])
    said = record_said(alice)
    assert "Link for seat 1 (Editor) issued" in said, said
    assert any(x.startswith("Alice undid events #") for x in said), said
    said_of_links_and_disputes(said, "Joe")
    assert any(x.startswith("Dispute #3 opened by Joe about event #") for x in said), said
    assert "Seeds of scene 1\u2019s dice closed" in said
    no_bare_record_event(alice)
    said_in_full(alice)
    assert not alice.errors, alice.errors


def test_the_dispute_form_and_its_preview_name_the_moves_in_the_logs_words(
    http: Any, open_page: Opener
) -> None:
    """Given Ben's roll on the ship, which he keeps: then Ana's *Dispute a move* lists his
    moves as the log says them, and *Preview without it* names the events upholding it would
    revert so too (R-REC-2). Both said "Ability used, Debt gained, Die rolled"."""
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    bens_roll_on_the_ship(table)
    ana = open_page(table, table.tokens[ANA])
    rolled = "Tempest used Lightning (5), Tempest gained 1 Debt on Undifferentiated, " \
        "Rolled die 1 of #2: 1 \N{RIGHTWARDS ARROW} 3"
    kept = "Kept 3 on die 1 of #2, Tempest allied with \u201cSails\u201d of #2, " \
        "Reactions to die 1 of #2 opened (Ben, Cleo, Ana)"
    moves = ana.get_by_label("Dispute a move")
    moves.locator("option").first.wait_for(state="attached")  # the record comes after the board
    offered = [re.sub(r"^#\d+ ", "", x) for x in moves.locator("option").all_text_contents()]
    assert offered[:2] == [f"Ben: {kept}", f"Ben: {rolled}"], offered
    named = {x for said in offered for x in said.split(": ", 1)[1].split(", ")}
    assert not terse(CAPES_EVENT_TYPES) & named, offered
    moves.select_option(index=1)
    ana.get_by_role("button", name="Preview without it").click()
    ana.locator("#preview").wait_for()
    preview = ana.text_content("#preview")
    assert f"6 events undone ({rolled}, {kept})." in preview, preview
    assert not ana.errors, ana.errors
