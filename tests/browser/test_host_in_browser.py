"""A host who lets only themselves open campaigns (``CAPES_OPEN_CAMPAIGNS=host``) opens one from
the browser's lobby with the host key, which the page sends with that request alone; a wrong
key is refused with the server's words and opens nothing. Real Chromium, a real server."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import TIMEOUT, server

pytestmark = pytest.mark.browser

HOST = "the-host-key"


def directory(base: str) -> list[dict[str, Any]]:
    """The host's campaign directory, once its read model lists a campaign."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        found = httpx.get(f"{base}/campaigns", headers={"authorization": f"Bearer {HOST}"},
                          timeout=TIMEOUT)
        assert found.status_code == 200, found.text
        campaigns: list[dict[str, Any]] = found.json()["campaigns"]
        if campaigns or time.monotonic() > deadline:
            return campaigns
        time.sleep(0.1)


def test_the_host_opens_a_campaign_in_the_lobby_with_the_host_key(
    browser: Any, tmp_path: Path
) -> None:
    environ = {"CAPES_DB": str(tmp_path / "host.sqlite"), "CAPES_RATE_LIMIT": "0",
               "CAPES_HOST_KEY": HOST, "CAPES_OPEN_CAMPAIGNS": "host"}
    with server(environ, tmp_path / "server.log") as base:
        context = browser.new_context()
        context.set_default_timeout(int(TIMEOUT * 1000))
        try:
            page = context.new_page()
            page.goto(f"{base}/")
            page.fill("#campaign-name", "Harbor City")
            page.fill("#host-key", "a guess")
            page.click("button[type=submit]")
            error = page.locator("#open-error")
            error.filter(has_text="not the host key").wait_for()
            assert page.url == f"{base}/", "a refused key stays in the lobby"
            page.fill("#host-key", HOST)
            page.click("button[type=submit]")
            page.wait_for_url(f"{base}/play/**")
            campaign = page.url.split("/play/")[1].split("#")[0]
            # The table page opened as the owner's (it moves the token out of the address).
            page.get_by_text("Harbor City").first.wait_for()
            # The refused try opened nothing: the host's directory lists this one alone.
            listed = directory(base)
            assert [(c["campaign_id"], c["name"]) for c in listed] == [(campaign, "Harbor City")]
        finally:
            context.close()
