"""A dispute whose time runs out (R-REC-4) expires, changing nothing; the vote that comes after
is answered with the expiry, recorded then (R-X-REC-7). The page must say so: the log said
"Dispute #1 rejected when its time ran out", though nobody rejected it.

The campaign is played over HTTP on a real server with scripted dice and a clock the test
moves on (``CAPES_TEST_CLOCK``, tests/browser/scripted_server.py); then a voter votes from
the table's page in Chromium.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from helpers import open_campaign
from test_capees_log_in_browser import entry, log
from test_capes_moves_in_browser import ANA, BEN, CLEO, bens_roll_on_the_ship
from test_play_in_browser import Run
from test_record_log_in_browser import ok
from test_table_page_in_browser import Opener, http, open_page

pytestmark = pytest.mark.browser

__all__ = ["http", "open_page"]  # the fixtures this module's tests use, with its own run


@pytest.fixture
def clock(tmp_path: Path) -> Path:
    """The file of how many seconds the server's clock runs ahead (none yet)."""
    path = tmp_path / "clock"
    path.write_text("")
    return path


@pytest.fixture
def run(tmp_path: Path, clock: Path) -> Iterator[Run]:
    """A real server on a fresh SQLite file, every die a 3, its clock read from ``clock``."""
    environ = {"CAPES_DB": str(tmp_path / "table.sqlite"), "CAPES_TEST_DICE": "3," * 59 + "3",
               "CAPES_TEST_CLOCK": str(clock)}
    with ExitStack() as stack:
        started = Run(tmp_path, environ, stack)
        started.start()
        yield started


def test_a_dispute_whose_time_ran_out_is_said_to_have_expired_and_changed_nothing(
    http: Any, open_page: Opener, clock: Path
) -> None:
    """R-REC-4, R-X-REC-7: given Ana's dispute of Ben's roll at a table whose disputes stay
    open one minute, and two minutes gone by: when Cleo votes to uphold it from her page,
    then the vote is answered with the expiry: her log says the dispute expired (not that it
    was rejected, nor her vote), the record panel that it expired and the move stands, and
    nothing of Ben's roll is reverted."""
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    ok(table.client.patch(table.url("/options"), headers=table.as_owner(),
                          json={"dispute_minutes": 1}))
    bens_roll_on_the_ship(table)
    position = table.query("record", seat=ANA)["disputable"][-1]
    table.play("", {"type": "open_dispute", "seat": ANA, "position": position,
                    "reason": "Too lucky"})
    board, version = table.query("board", seat=BEN), table.version()
    clock.write_text("120")
    cleo = open_page(table, table.tokens[CLEO])
    assert "then it expires, changing nothing" in cleo.text_content("#dispute-news")
    cleo.get_by_role("button", name="Vote to uphold (rewind)").click()
    cleo.wait_for_function(f"+document.body.dataset.version > {version}")
    said = entry(cleo, "Dispute #1")
    assert said == "Dispute #1 expired (its time ran out)", log(cleo)
    assert not [x for x in log(cleo) if "Cleo voted" in x], log(cleo)
    news = cleo.locator("#dispute-news")
    news.filter(has_text="expired").wait_for()
    assert news.text_content() == "Dispute #1 expired (its time ran out): the move stands."
    assert cleo.locator("#log li.reverted").count() == 0
    assert table.query("board", seat=BEN)["conflicts"] == board["conflicts"]
    assert not cleo.errors, cleo.errors
