"""What an imported campaign's log says (R-FAIR-7): ``capes import`` of a campaign's export
stores its events under a new id, and its table's log reads as the original's, entry for
entry (who, what, the narration, what was reverted), followed by the import's own.

The original is played over HTTP on a real server with scripted dice, exported by its owner
over HTTP and imported by ``capes import`` into the server's store as it runs; then the same
seat opens both tables in Chromium.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Any

import pytest
from capees_positions import GIVING
from helpers import ROOT, Table, open_campaign
from test_capees_log_in_browser import log, unhashed
from test_capees_pickers_in_browser import play as play_capees
from test_capes_moves_in_browser import ANA, BEN, SHIP, play, the_ship_to_resolve
from test_play_in_browser import Run
from test_record_log_in_browser import dice, disputed_thrice_and_forked, run
from test_table_page_in_browser import Opener, http, open_page

from cli.demo_capees import ALICE, DEMO_DICE, JOE
from domain.capes import commands as c

pytestmark = pytest.mark.browser

__all__ = ["dice", "http", "open_page", "run"]  # the fixtures this module's tests use


def imported(table: Table, run: Run) -> Table:
    """``table``'s campaign exported by its owner (NDJSON) and imported by ``capes import``
    into the running server's store: the copy, with the tokens the import printed."""
    export = run.folder / f"{table.campaign_id}.ndjson"
    answer = table.client.get(table.url("/export"), params={"format": "ndjson"},
                              headers=table.as_owner())
    assert answer.status_code == 200, answer.text
    export.write_bytes(answer.content)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")}
    env.update(run.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "cli.main", "import", str(export)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    campaign = re.search(r"imported as campaign (\S+)", done.stdout)
    owner = re.search(r"owner:\s+(\S+)", done.stdout)
    assert campaign and owner, done.stdout
    copy = Table(table.client, campaign[1], owner[1])
    for seat, token in re.findall(r"seat (\d+) \([^)]*\):\s+(\S+)", done.stdout):
        copy.tokens[int(seat)] = token
    return copy


def entries(page: Any) -> list[str]:
    """Each entry of the log on ``page`` as a player reads it: its event's number, who, what,
    the narration and whether it was reverted."""
    log(page)  # every event of the board in it
    return [" ".join(x.split()) for x in page.locator("#log li").all_text_contents()]


def reads_as_the_original(table: Table, copy: Table, seat: int,
                          open_page: Opener) -> tuple[list[str], list[str]]:
    """The log of ``copy`` on ``seat``'s page begins with every entry of ``table``'s, each
    saying the same: the original's entries, and what the copy's says after them."""
    original = entries(open_page(table, table.tokens[seat]))
    page = open_page(copy, copy.tokens[seat])
    said = entries(page)
    assert said[:len(original)] == original, (original, said)
    assert not page.errors, page.errors
    return original, said[len(original):]


def test_an_imported_capes_campaigns_log_reads_as_the_original(
    http: Any, open_page: Opener, run: Run
) -> None:
    """R-FAIR-7: given Ben's resolution of the ship, disputed thrice by Ana (withdrawn,
    rejected, upheld by the owner: reverted) and forked, exported and imported: then Ben's
    log of the copy says what the original's says, entry for entry, and then that it was
    imported, from which campaign, and the copy's new links."""
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    the_ship_to_resolve(table)
    play(table, c.Resolve(seat=BEN, conflict=SHIP, pairs=((1, 2),)))
    disputed_thrice_and_forked(table, ANA)
    version = table.version()
    copy = imported(table, run)
    original, after = reads_as_the_original(table, copy, BEN, open_page)
    resolved = [x for x in original if "\u201cThe ship sails\u201d resolved" in x]
    assert resolved and resolved[0].endswith("(reverted)"), original
    # The scene in progress gets fresh dice: its seed stayed with the original (R-FAIR-7).
    assert unhashed(after[0]) == (
        f"#{version + 1} table \u00b7 Imported: events #1\u2013#{version} of campaign "
        f"{table.campaign_id}, Dice of scene 1 committed (SHA-256 \u2026)"), after
    assert any("Link for seat 2 (Ben) issued by the owner" in x for x in after), after


@pytest.mark.parametrize("dice", [DEMO_DICE])
def test_an_imported_capees_campaigns_log_reads_as_the_original(
    http: Any, open_page: Opener, run: Run
) -> None:
    """R-FAIR-7: given CAPEES!'s scene 1 up to Joe's check of Silverstar's claim on Robbery,
    waiting for Night Maiden's Story Tokens, exported and imported mid-scene: then Alice's
    log of the copy says what the original's says, then the import and its fresh dice (the
    seed stayed with the original server)."""
    table = open_campaign(http, "Millennium City", players=("Editor", "Alice", "Joe"),
                          edition="capees")
    play_capees(table, GIVING)
    version = table.version()
    copy = imported(table, run)
    original, after = reads_as_the_original(table, copy, ALICE, open_page)
    assert any("Claim of Silverstar on #1 Robbery holds" in x for x in original), original
    assert unhashed(after[0]) == (
        f"#{version + 1} table \u00b7 Imported: events #1\u2013#{version} of campaign "
        f"{table.campaign_id}, Dice of scene 1 committed (SHA-256 \u2026)"), after
    assert JOE in copy.tokens
