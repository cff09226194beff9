"""What a fork's log says (R-REC-6): where the fork came from, and its moves in words, the
Conflicts and Complications they name included, though those were made before the fork and
their creation is in the source's log only (the fork's starts with the game as it was then).

Each campaign is played over HTTP by the seats' tokens on a real server with scripted dice,
forked by its owner in the middle of a scene, played on in the fork; then a seat of the fork
opens its table in Chromium and reads the log.
"""

from __future__ import annotations

from typing import Any

import pytest
from capees_positions import GIVING
from helpers import Table, open_campaign
from test_capees_log_in_browser import log, said_in_full, unhashed
from test_capees_pickers_in_browser import play as play_capees
from test_capes_moves_in_browser import BEN, SHIP, play, the_ship_to_resolve
from test_record_log_in_browser import dice, no_bare_record_event, ok, run
from test_table_page_in_browser import Opener, http, open_page

from cli.demo_capees import ALICE, DEMO_DICE, JOE, NIGHT_MAIDEN, ROBBERY
from domain.capees import commands as cc
from domain.capes import commands as c
from domain.capes.events import EVENT_TYPES as CAPES_EVENT_TYPES

pytestmark = pytest.mark.browser

__all__ = ["dice", "http", "open_page", "run"]  # the fixtures this module's tests use


def forked(table: Table, name: str, *seats: int) -> Table:
    """The owner's fork of ``table`` as it is now (R-REC-6), named ``name``, with new links
    for ``seats``."""
    made = ok(table.client.post(table.url("/forks"), headers=table.as_owner(),
                                json={"version": table.version(), "name": name}))
    fork = Table(table.client, made["campaign_id"], made["owner_token"])
    for seat in seats:
        fork.tokens[seat] = ok(table.client.post(fork.url(f"/seats/{seat}/token"),
                                                 headers=fork.as_owner()))["token"]
    return fork


def test_a_capes_fork_from_mid_scene_names_its_source_and_the_conflicts_made_before_it(
    http: Any, open_page: Opener
) -> None:
    """R-REC-6: given a page of two Conflicts forked just before Ben resolves the ship, and
    Ben resolving it in the fork: then the fork's log starts with its name and its source's
    name, id and version (it gave the id alone, which told a player nothing), and names the
    ship and its winning side by what they were created as, though the ship was made before
    the fork and is on no board since."""
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    the_ship_to_resolve(table)
    at = table.version()
    fork = forked(table, "What if", BEN)
    play(fork, c.Resolve(seat=BEN, conflict=SHIP, pairs=((1, 2),)))
    ben = open_page(fork, fork.tokens[BEN])
    said = log(ben)
    # The scene goes on in the fork with dice of its own (R-FAIR-1).
    assert unhashed(said[0]) == (
        f"Forked as \u201cWhat if\u201d, Forked from \u201cHarbor City\u201d (campaign "
        f"{table.campaign_id}) after its event #{at}, "
        f"Dice of scene 1 committed (SHA-256 \u2026)"), said
    assert "Link for seat 2 (Ben) issued by the owner: the old one no longer works" in said
    assert said[-1].startswith(
        "#2 \u201cThe ship sails\u201d resolved: \u201cSails\u201d won; Debt spent: "), said
    no_bare_record_event(ben)
    said_in_full(ben, CAPES_EVENT_TYPES)
    assert not ben.errors, ben.errors


@pytest.mark.parametrize("dice", [DEMO_DICE])
def test_a_capees_fork_names_its_source_and_the_complications_made_before_it(
    http: Any, open_page: Opener
) -> None:
    """R-REC-6, C-RES-3: given Joe's check of Silverstar's claim on Robbery, waiting for
    Night Maiden's Story Tokens, forked then, and Alice giving them to Joe in the fork: then
    the fork's log names its source by its name and id, and Robbery and Police, made before
    the fork and discarded in it, by their names, as the source's log does."""
    table = open_campaign(http, "Millennium City", players=("Editor", "Alice", "Joe"),
                          edition="capees")
    play_capees(table, GIVING)
    at = table.version()
    fork = forked(table, "Another ending", ALICE)
    fork.play("", cc.GiveTokens(seat=ALICE, complication=ROBBERY, character=NIGHT_MAIDEN,
                                to=JOE))
    alice = open_page(fork, fork.tokens[ALICE])
    said = log(alice)
    assert unhashed(said[0]) == (
        f"Forked as \u201cAnother ending\u201d, Forked from \u201cMillennium City\u201d "
        f"(campaign {table.campaign_id}) after its event #{at}, "
        f"Dice of scene 1 committed (SHA-256 \u2026)"), said
    gave = unhashed(said[-1])
    assert gave.startswith("Story Tokens of Night Maiden on #1 Robbery go to Joe, "
                           "#1 Robbery resolved for Silverstar (Hero: 5 VP, "), gave
    assert "#3 Police discarded, #4 Getaway discarded" in gave, gave
    no_bare_record_event(alice)
    said_in_full(alice)
    assert not alice.errors, alice.errors
