"""C-RES-3 in the browser: when a Complication resolves, each winning staker's own player
gives that staker's Story Tokens, with the CAPEES! page's *Give Story Tokens* form
(``capees.give_tokens``, C-X-RES-1).

The position (``GIVING`` in ``tests/capees_positions.py``) is played over HTTP by the seats'
tokens, on a real server with the demo's scripted dice, as the pickers' tests do: Night Maiden
(Alice's) staked on Robbery's Hero side, Silverstar (Joe's) won it, and Joe has checked his
claim. Then Alice's page, in Chromium, gives her stake's token.
"""

from __future__ import annotations

from typing import Any

import pytest
import test_capees_pickers_in_browser as pickers
from capees_positions import GIVING
from test_play_in_browser import click_and_wait

from cli.demo_capees import ALICE, JOE

pytestmark = pytest.mark.browser

#: The pickers' tests' fixtures: a server with the demo's dice, ``reach(script, seat)``.
dice, run, reach = pickers.dice, pickers.run, pickers.reach
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
    checked = moves.filter(has_text="Claim checked").last.text_content()
    assert checked.startswith("#") and "Joe" in checked and "Complication resolved" not in checked
    given = moves.last.text_content()
    assert "Alice" in given and "Story tokens given, Complication resolved, Complication created" \
        in given, given
    assert "Between scenes" in alice.text_content("#scene-line")
    assert not alice.errors, alice.errors
