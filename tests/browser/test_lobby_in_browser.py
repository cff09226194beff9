"""The lobby, where a campaign is opened: one campaign for one press of its button, however
it is pressed. Real Chromium, a real server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_play_in_browser import Run, new_context, serving, watch
from test_table_page_in_browser import hand_double_click, posts_to

pytestmark = pytest.mark.browser


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    with serving(tmp_path, (3,)) as started:
        yield started


@pytest.mark.parametrize("hand", [False, True], ids=["at-once", "by-hand"])
def test_a_double_click_on_open_opens_one_campaign(browser: Any, run: Run, hand: bool) -> None:
    """A double click on *Open* sent two requests, each a campaign: the page went to the
    table of one, and the other stayed in the directory and this browser's list with nobody
    at it. At once (the second click while the first is on its way) or by hand (the second
    some 200 ms later), it opens one."""
    page = watch(new_context(browser, run).new_page())
    page.goto(f"{run.base}/")
    opened = posts_to(page, "/campaigns")
    page.fill("#campaign-name", "Harbor City")
    button = page.get_by_role("button", name="Open")
    if hand:
        hand_double_click(page, button)
    else:
        button.dblclick()
    page.wait_for_url(f"{run.base}/play/**")
    page.wait_for_timeout(300)  # a second request, if any, would be on its way by now
    assert len(opened) == 1, opened
    assert not page.errors, page.errors


def test_back_in_the_lobby_another_campaign_opens(browser: Any, run: Run) -> None:
    """Back from the table just opened, the lobby opens another. (A browser that keeps the
    lobby in its back-forward cache shows it with its script's state as it was, the campaign
    being opened: ``lobby.js`` clears that when the page is shown. Playwright's Chromium runs
    without that cache, so here the lobby is loaded anew.)"""
    page = watch(new_context(browser, run).new_page())
    page.goto(f"{run.base}/")
    opened = posts_to(page, "/campaigns")
    for name in ("Harbor City", "Night Market"):
        page.fill("#campaign-name", name)
        page.get_by_role("button", name="Open").click()
        page.wait_for_url(f"{run.base}/play/**")
        page.get_by_text(name).first.wait_for()
        if name == "Harbor City":
            page.go_back()
            page.wait_for_url(f"{run.base}/")
    assert len(opened) == 2, opened
    assert not page.errors, page.errors
