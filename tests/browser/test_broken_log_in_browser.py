"""A campaign whose log does not verify says so on its table page (issue 13, item 7).

The server marks every answer about such a campaign (``Capes-Log-Broken``) and refuses its
commands (423); the page must not look playable: it shows a banner naming the first event
found wrong. Real Chromium, a real server on a store edited behind its back (R-FAIR-6).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
from helpers import TIMEOUT, server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "audit"))

from fair_play import blob, write

pytestmark = pytest.mark.browser


def test_the_table_of_a_campaign_whose_log_does_not_verify_shows_a_banner(
    browser: Any, tmp_path: Path
) -> None:
    db = tmp_path / "broken.sqlite"
    environ = {"CAPES_DB": str(db), "CAPES_RATE_LIMIT": "0"}
    with server(environ, tmp_path / "before.log") as base, httpx.Client(base_url=base) as http:
        opened = http.post("/campaigns", json={"name": "Harbor"}).json()
        campaign = opened["campaign_id"]
        token = http.post(f"/campaigns/{campaign}/seats", json={"name": "Ana"}).json()["token"]
    # The server is stopped: the host (or an intruder) edits the player's name in the log.
    topic, state = blob(db, UUID(campaign), 2)
    write(db, UUID(campaign), 2, topic, state.replace(b'"Ana"', b'"Eve"'))

    with server(environ, tmp_path / "after.log") as base:
        context = browser.new_context(bypass_csp=True)
        context.set_default_timeout(int(TIMEOUT * 1000))
        try:
            page = context.new_page()
            page.goto(f"{base}/play/{campaign}#token={token}")
            banner = page.locator("#broken")
            banner.wait_for(state="visible")
            assert page.locator("#broken-at").inner_text() == "2"
            assert "does not verify" in banner.inner_text()
        finally:
            context.close()
