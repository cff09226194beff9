"""The table page, one behaviour at a time, where playing the demo's whole scene
(``test_play_in_browser.py``) would be the long way round: a move's button clicked twice, an
error that outlives its move, a keep-alive on the live stream, a new invitation link pasted
into the tab of the old one, a live stream that is down or silent; a player on the keyboard
alone (the focus kept as the table plays on), or with a screen reader (what is read out, and
when). Real Chromium, a real server; each campaign is set up over HTTP, and the page under test
does the rest. The page is found by role and label, as a screen reader finds it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import Table, a_scene_played_to_its_end, client, disputed_away, open_campaign
from playwright.sync_api import expect
from test_play_in_browser import APOS, WAIT, Run, new_context, open_table, see, serving, watch

from cli import demo_capees
from cli.demo import NIGHTJAR_BUILD
from domain.capes import commands as c

pytestmark = pytest.mark.browser

#: Opens a campaign's table with a token (a seat's, the owner's), in a browser context of its own.
Opener = Callable[..., Any]


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    with serving(tmp_path, (3,)) as started:
        yield started


@pytest.fixture
def http(run: Run) -> Iterator[httpx.Client]:
    with client(run.base) as opened:
        yield opened


@pytest.fixture
def open_page(browser: Any, run: Run) -> Iterator[Opener]:
    """``open_page(table, token)``: the table's page as its invitation link opens it (with
    ``prepare(page)`` done first, if given; on a phone's screen with ``phone=True``)."""
    contexts: list[Any] = []

    def opened(table: Table, token: str, prepare: Callable[[Any], None] | None = None,
               phone: bool = False) -> Any:
        contexts.append(new_context(browser, run, *((390, 844) if phone else ())))
        page = watch(contexts[-1].new_page())
        if prepare:
            prepare(page)
        open_table(page, f"{run.base}/play/{table.campaign_id}#token={token}")
        return page

    yield opened
    for context in contexts:
        context.close()


def posts_to(page: Any, *ends: str, take: Callable[[Any], Any] = lambda r: r.url) -> list[Any]:
    """What ``take`` makes of each POST the page sends from now on whose path ends with one
    of ``ends`` (default: its URL)."""
    posted: list[Any] = []
    page.on("request", lambda request: posted.append(take(request))
            if request.method == "POST" and request.url.endswith(ends) else None)
    return posted


def commands_sent(page: Any) -> list[str]:
    """The bodies of the commands the page sends from now on (its moves', the record's, the
    owner's invitations)."""
    return posts_to(page, "/commands", "/settle", "/seats", take=lambda r: r.post_data)


def double_click(page: Any, button: Any, table: Table) -> None:
    """Double-click ``button``, as a hurried player would; wait until the page is done with
    what it sent and shows the campaign as it is now."""
    before = page.get_attribute("body", "data-applied") or ""
    button.dblclick()
    page.wait_for_function(
        "prev => !document.body.dataset.busy && (document.body.dataset.applied || '') !== prev",
        arg=before)
    see([page], table.version())


#: Milliseconds between a hand's two clicks of a double click (a browser counts up to 500 as
#: one): far longer than the test server takes to answer the first.
HAND = 200


def hand_double_click(page: Any, button: Any) -> None:
    """Double-click ``button`` as a hand does: a click, then :data:`HAND` ms later a second,
    which the browser counts as the double click's second (``detail`` 2). Playwright's own
    ``dblclick`` sends both at once, while the first is still on its way; here the first is
    answered, and the page drawn again, before the second comes."""
    # The pointer over the button as a locator's click puts it: waited for until the button is
    # drawn and stays (the table draws its panels anew with each board), then pressed there.
    button.hover()
    for count in (1, 2):
        page.mouse.down(click_count=count)
        page.mouse.up(click_count=count)
        if count == 1:
            page.wait_for_timeout(HAND)
    page.wait_for_timeout(300)  # a second request, if any, would be on its way by now


#: Milliseconds a held key waits before it repeats, and between its repeats (as a desktop's
#: keyboard settings commonly have them).
REPEAT_DELAY, REPEAT_EVERY = 500, 33


def hold_enter(page: Any, control: Any, repeats: int = 3) -> None:
    """Hold Enter down on ``control`` as a hand does: pressed, then after
    :data:`REPEAT_DELAY` ms the key's repeats (Playwright sets ``repeat`` on every ``down``
    after the first), then let go. The first press is answered long before the first repeat."""
    control.focus()
    page.keyboard.down("Enter")
    page.wait_for_timeout(REPEAT_DELAY)
    for _ in range(repeats):
        page.keyboard.down("Enter")
        page.wait_for_timeout(REPEAT_EVERY)
    page.keyboard.up("Enter")
    page.wait_for_timeout(300)  # a request of a repeat, if any, would be on its way by now


def test_a_double_click_on_a_moves_button_sends_the_move_once(
    http: httpx.Client, open_page: Opener
) -> None:
    table = open_campaign(http, players=("Ana", "Ben"))
    ana = open_page(table, table.tokens[1])
    sent = commands_sent(ana)
    ana.locator("form[data-move=frame_scene] [name=text]").fill("The harbor at midnight")
    double_click(ana, ana.get_by_role("button", name="Frame the scene"), table)
    assert len(sent) == 1, sent
    ana.fill("#narration", "Rain hammers the docks")
    double_click(ana, ana.get_by_role("button", name="Say it (narration only)"), table)
    assert len(sent) == 2, sent
    assert ana.locator("#log q", has_text="Rain hammers the docks").count() == 1
    # The character form too (the edition's own form).
    ana.click("#new-character summary")
    ana.fill("#ch-name", "Nightjar")
    ana.fill("#ch-abilities", "\n".join(f"{a.name}, {a.category}, {a.rating}"
                                          for a in NIGHTJAR_BUILD.abilities))
    ana.get_by_label("Undifferentiated").check()
    double_click(ana, ana.get_by_role("button", name="Create the character"), table)
    assert len(sent) == 3, sent
    assert [x["name"] for x in table.query("characters")] == ["Nightjar"]
    # A hand's double click: the second click comes once the first move is answered and drawn.
    ana.fill("#narration", "Thunder rolls over the bay")
    hand_double_click(ana, ana.get_by_role("button", name="Say it (narration only)"))
    see([ana], table.version())
    assert len(sent) == 4, sent
    assert ana.text_content("#move-error") == ""
    assert not ana.errors, ana.errors


def test_a_double_click_on_vote_to_uphold_votes_once(
    http: httpx.Client, open_page: Opener
) -> None:
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    table.play("", c.FrameScene(seat=1, text="The harbor at midnight"))
    said = table.play("", c.Narrate(seat=3, text="A seagull steals Reyes' fries"))["version"]
    # The record's commands as JSON: their Structs hold fields the server fills in.
    opened = table.send({"type": "open_dispute", "seat": 1, "position": said,
                         "reason": "No seagull flies in a storm"})
    assert opened.status_code == 200, opened.text
    ben = open_page(table, table.tokens[2])
    # R-REC-4: the table sees how long the dispute stays open.
    assert "then it expires, changing nothing" in ben.text_content("#dispute-news")
    sent = commands_sent(ben)
    double_click(ben, ben.get_by_role("button", name="Vote to uphold (rewind)"), table)
    assert len(sent) == 1, sent
    assert ben.locator(f"#log li.reverted[data-position='{said}']").count() == 1
    assert ben.text_content("#move-error") == ""


def test_a_double_click_on_invite_seats_the_player_once(
    http: httpx.Client, open_page: Opener
) -> None:
    table = open_campaign(http, players=("Ana",))
    owner = open_page(table, table.owner_token)
    sent = commands_sent(owner)
    owner.get_by_label("Player's name").fill("Ben")
    owner.get_by_role("button", name="Invite").dblclick()
    owner.get_by_label(f"Ben{APOS}s invitation link").first.wait_for()
    see([owner], table.version())
    assert len(sent) == 1, sent
    assert table.query("board")["players"] == ["Ana", "Ben"]


def test_a_double_click_on_new_link_issues_one_link(
    http: httpx.Client, open_page: Opener
) -> None:
    """A new link revokes the one before it: a double click issued two, the first revoked at
    once. Forks are guarded the same way (``oneAtATime`` in table.js)."""
    table = open_campaign(http, players=("Ana",))
    owner = open_page(table, table.owner_token)
    issued = posts_to(owner, "/token")
    with owner.expect_response(lambda response: response.url.endswith("/seats/1/token")):
        owner.get_by_role("button", name="New link").first.dblclick()
    owner.wait_for_timeout(300)  # a second request, if any, would be on its way by now
    assert len(issued) == 1, issued


@pytest.mark.parametrize(("twice", "once"), [
    (hand_double_click, lambda button: button.click()),
    (hold_enter, lambda button: button.press("Enter")),
], ids=["a hands double click", "Enter held down"])
def test_a_hands_double_click_or_enter_held_down_on_new_link_issues_one_link(
    http: httpx.Client, open_page: Opener, twice: Callable[[Any, Any], None],
    once: Callable[[Any], None],
) -> None:
    """The second click of a hand's double click (some 200 ms after the first), or the
    keyboard's repeats of a held Enter (after half a second), come when the first link is
    issued and drawn: each was a press like any other, and issued a link that revoked the one
    before (the in-flight guard alone let it through). The owner's next press still issues a
    new one."""
    table = open_campaign(http, players=("Ana",))
    owner = open_page(table, table.owner_token)
    issued = posts_to(owner, "/token")
    twice(owner, owner.get_by_role("button", name="New link").first)
    assert len(issued) == 1, issued
    with owner.expect_response(lambda response: response.url.endswith("/seats/1/token")):
        once(owner.get_by_role("button", name="New link").first)
    assert len(issued) == 2, issued


def test_a_hands_double_click_on_fork_from_here_makes_one_fork(
    http: httpx.Client, open_page: Opener
) -> None:
    """R-REC-6: a fork is a campaign of its own; a double click made two of them."""
    table = open_campaign(http, players=("Ana", "Ben"))
    table.play("", c.FrameScene(seat=1, text="The harbor at midnight"))
    ana = open_page(table, table.tokens[1])
    ana.get_by_role("slider", name="Time").focus()
    ana.keyboard.press("Home")
    ana.wait_for_function("document.body.dataset.past === '1'")
    forks = posts_to(ana, "/forks")
    hand_double_click(ana, ana.get_by_role("button", name="Fork from here"))
    ana.locator("#fork-link").wait_for()
    assert len(forks) == 1, forks
    assert not ana.errors, ana.errors


def test_enter_held_down_on_say_it_sends_the_narration_once_and_a_new_line_is_still_written(
    http: httpx.Client, open_page: Opener
) -> None:
    """Held on *Say it*, Enter's repeats sent the emptied form again ("Write the narration
    first"); in the narration box a held Enter still writes its new lines."""
    table = open_campaign(http, players=("Ana", "Ben"))
    table.play("", c.FrameScene(seat=1, text="The harbor at midnight"))
    ana = open_page(table, table.tokens[1])
    sent = commands_sent(ana)
    box = ana.locator("#narration")
    box.fill("Rain hammers the docks")
    hold_enter(ana, box, repeats=2)
    assert box.input_value() == "Rain hammers the docks\n\n\n"
    hold_enter(ana, ana.get_by_role("button", name="Say it (narration only)"))
    see([ana], table.version())
    assert len(sent) == 1, sent
    assert ana.text_content("#move-error") == ""
    assert ana.locator("#log q", has_text="Rain hammers the docks").count() == 1
    assert not ana.errors, ana.errors


def test_enter_held_down_in_a_moves_field_sends_the_move_once(
    http: httpx.Client, open_page: Opener
) -> None:
    """Enter in a move's one-line field sends its form; held, its repeats sent the form again
    once the first was answered and the form, offered again, emptied."""
    table = open_campaign(http, players=("Ana", "Ben"), starting_tokens=2)
    table.play("", c.FrameScene(seat=1, text="The harbor at midnight"))
    ana = open_page(table, table.tokens[1])
    sent = commands_sent(ana)
    stake = ana.locator("form[data-move=create_conflict] [name=text]")
    stake.fill("Who holds the docks")
    hold_enter(ana, stake)
    see([ana], table.version())
    assert len(sent) == 1, sent
    assert [x["text"] for x in table.query("board")["conflicts"]] == ["Who holds the docks"]
    assert ana.text_content("#move-error") == ""
    assert not ana.errors, ana.errors


def test_an_error_from_an_earlier_move_goes_once_the_board_changes(
    http: httpx.Client, open_page: Opener
) -> None:
    table = open_campaign(http, players=("Ana", "Ben"))
    ana = open_page(table, table.tokens[1])
    ana.get_by_role("button", name="Say it (narration only)").click()
    assert ana.text_content("#move-error") == "Write the narration first."
    table.play("", c.FrameScene(seat=2, text="The harbor at midnight"))
    see([ana], table.version())
    assert ana.text_content("#move-error") == ""


def test_a_seat_that_may_only_veto_is_not_told_it_is_its_move(
    http: httpx.Client, open_page: Opener
) -> None:
    """R-CONF-3: after Ana's turn made an Event, anyone may veto it before Ben's turn starts;
    the table waits for Ben, and Ana's page says so, with the veto still among her moves. The
    status says who may veto what, apart: it read "Waiting for Ben (start a turn, veto a
    conflict)", as if the table waited for Ben's veto, of no Conflict in particular."""
    table = open_campaign(http, players=("Ana", "Ben"))
    for seat, name in ((1, "Nightjar"), (2, "Reyes")):
        table.play("", c.CreateCharacter(seat=seat, name=name, build=NIGHTJAR_BUILD))
    table.play("", c.FrameScene(seat=1, text="The harbor at midnight"))
    for move in (c.ChooseCharacter(seat=1, character=1), c.PassClaiming(seat=1),
                 c.ChooseCharacter(seat=2, character=2)):
        table.play("", move)
    for seat in (2, 1, 2):
        table.play("", c.PassClaiming(seat=seat))
    table.play("", c.StartTurn(seat=1, character=1))
    table.play("", c.CreateConflict(seat=1, kind="event", text="The bridge collapses"))
    table.play("", c.EndTurn(seat=1))
    assert table.query("board")["waiting_for"]["1"] == ["veto"]
    ana = open_page(table, table.tokens[1])
    assert ana.locator("#status p").all_text_contents() == [
        "Waiting for Ben (start a turn).",
        "You or Ben may veto #1 “The bridge collapses” before the next turn starts."]
    assert ana.locator("form[data-move=veto]").count() == 1
    ben = open_page(table, table.tokens[2])
    assert ben.locator("#status p").all_text_contents()[1:] == [
        "You or Ana may veto #1 “The bridge collapses” before the next turn starts."]


def test_the_tabs_title_says_when_it_is_the_players_move(
    http: httpx.Client, open_page: Opener
) -> None:
    """While the table waits for this player's move, the tab's title says so, for a player
    whose tab is in the background; otherwise it is the campaign's name and the edition's.
    Either may frame the scene; Ana frames it, and passes claiming to Ben."""
    table = open_campaign(http, players=("Ana", "Ben"))
    name = table.query("board")["name"]
    ana, ben = (open_page(table, table.tokens[seat]) for seat in (1, 2))
    mine, theirs = f"Your move · {name} · Capes", f"{name} · Capes"
    assert (ana.title(), ben.title()) == (mine, mine)
    table.play("", c.FrameScene(seat=1, text="The harbor at midnight"))
    see([ana, ben], table.version())
    assert (ana.title(), ben.title()) == (mine, theirs)
    table.play("", c.PassClaiming(seat=1))
    see([ana, ben], table.version())
    assert (ana.title(), ben.title()) == (theirs, mine)


def test_a_keep_alive_on_the_live_stream_leaves_no_error_in_the_page(
    http: httpx.Client, open_page: Opener
) -> None:
    table = open_campaign(http, players=("Ana",))
    console: list[str] = []

    def stream_first(page: Any) -> None:
        """The stream's first answer is a keep-alive as it used to reach the browser (a comment
        and an empty data line, which EventSource hands over as a message with empty data) and a
        message that is not JSON; then it ends, and the page reconnects to the real stream."""
        page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
        page.route("**/events/stream?*", lambda route: route.fulfill(
            status=200, content_type="text/event-stream",
            body="retry: 100\n\n: keep-alive\r\ndata: \r\n\r\ndata: not JSON\n\n"), times=1)

    ana = open_page(table, table.tokens[1], stream_first)
    ana.wait_for_function("document.body.dataset.reconnected"
                          " && document.getElementById('live').textContent === 'live'")
    assert not ana.errors, ana.errors
    assert not console, console


def test_a_new_link_pasted_into_the_tab_of_the_old_one_opens_the_table(
    run: Run, http: httpx.Client, open_page: Opener
) -> None:
    table = open_campaign(http, players=("Ana", "Ben"))
    ben = open_page(table, table.tokens[2])
    # Ben's link is lost: the owner gives him a new one, and his tab's stops working.
    issued = http.post(table.url("/seats/2/token"), headers=table.as_owner())
    assert issued.is_success, issued.text
    token = issued.json()["token"]
    ben.reload()
    ben.locator("#fatal").wait_for()
    assert "no longer works" in ben.text_content("#fatal")
    # He pastes the new link into that tab: the same address but for its fragment, so the
    # browser does not load the page again by itself.
    ben.goto(f"{run.base}/play/{table.campaign_id}#token={token}")
    ben.wait_for_function("document.getElementById('live').textContent === 'live'")
    assert not ben.is_visible("#fatal")
    assert ben.text_content("#who") == "You are Ben (seat 2)"
    assert ben.evaluate(
        "sessionStorage.getItem('capes:token:' + document.body.dataset.campaign)") == token
    assert "#token=" not in ben.url, "the token stays out of the address bar"
    # A fragment that holds no token (the "Go to your moves" link) loads nothing again.
    ben.evaluate("window.notReloaded = true")
    ben.get_by_role("link", name="Go to your moves").click()
    ben.wait_for_url("**#moves-title")
    assert ben.evaluate("window.notReloaded === true")
    assert not ben.errors, ben.errors


class Proxy:
    """The page's live stream through a proxy told when its server is away: while ``down``, a
    stream request is answered ``502 Bad Gateway`` (as nginx answers then), after which a
    browser's EventSource never tries again by itself; otherwise the request goes through."""

    def __init__(self, down: bool = False) -> None:
        self.down = down

    def __call__(self, page: Any) -> None:
        page.route("**/events/stream?*", self.route)

    def route(self, route: Any) -> None:
        if self.down:
            route.fulfill(status=502, content_type="text/html", body="<h1>502 Bad Gateway</h1>")
        else:
            route.continue_()


def move_done(page: Any, button: Any) -> None:
    """Click a button that sends a command; wait (a little longer than the page waits for the
    stream before it reads the board itself) until its buttons may be used again."""
    before = page.get_attribute("body", "data-applied") or ""
    button.click()
    page.wait_for_function(
        "prev => !document.body.dataset.busy && (document.body.dataset.applied || '') !== prev",
        arg=before, timeout=5000)


def test_a_narration_box_left_with_blanks_alone_sends_the_move_with_none(
    http: httpx.Client, open_page: Opener
) -> None:
    """R-X-SRV-1 refuses narration of blanks alone: a space or a line break left in the
    narration box then made every move a 400 ("narration: … not blanks alone"). The page
    sends it as none, as an empty box is."""
    table = open_campaign(http, players=("Ana", "Ben"))
    ana = open_page(table, table.tokens[1])
    before = table.version()
    ana.fill("#narration", " \n\t ")
    ana.locator("form[data-move=frame_scene] [name=text]").fill("The harbor at midnight")
    ana.get_by_role("button", name="Frame the scene").click()
    ana.wait_for_function("() => !document.body.dataset.busy")
    expect(ana.locator("#move-error")).to_have_text("")
    see([ana], before + 1)
    assert table.query("events")["events"][-1]["narration"] == ""
    assert ana.input_value("#narration") == ""
    assert not ana.errors, ana.errors


def test_a_move_made_while_the_live_stream_is_down_shows_and_the_buttons_work_again(
    http: httpx.Client, open_page: Opener
) -> None:
    """The stream brings the board a move made; when it cannot, the page reads that board
    itself after a moment, instead of keeping every button dimmed until the stream is back.
    It reads only: the move is sent once."""
    table = open_campaign(http, players=("Ana", "Ben"))
    ana = open_page(table, table.tokens[1], Proxy(down=True))
    sent = commands_sent(ana)
    ana.locator("form[data-move=frame_scene] [name=text]").fill("The harbor at midnight")
    move_done(ana, ana.get_by_role("button", name="Frame the scene"))
    assert "The harbor at midnight" in ana.text_content("#scene-line")
    ana.fill("#narration", "Rain hammers the docks")
    move_done(ana, ana.get_by_role("button", name="Say it (narration only)"))
    see([ana], table.version())
    assert len(sent) == 2, sent
    assert [x["type"] for x in table.query("events")["events"]].count("Narrated") == 1
    # The log shows both moves too, read with the board.
    assert ana.locator("#log q", has_text="Rain hammers the docks").count() == 1
    assert ana.is_visible("#offline"), "the page says it is not live"
    assert ana.text_content("#move-error") == ""
    assert not ana.errors, ana.errors


def test_the_page_says_when_its_live_connection_is_down_and_catches_up_when_it_is_back(
    run: Run, http: httpx.Client, open_page: Opener
) -> None:
    """The server restarts behind a proxy, which answers 502 until it is back: the page says
    it is reconnecting, keeps trying (the browser's EventSource gives up on a 502), and once
    the stream is back shows what was played meanwhile, without a reload."""
    table = open_campaign(http, players=("Ana", "Ben"))
    proxy = Proxy()
    ana = open_page(table, table.tokens[1], proxy)
    ana.wait_for_function("document.getElementById('live').textContent === 'live'")
    assert not ana.is_visible("#offline")
    proxy.down = True
    run.restart()
    ana.locator("#offline").wait_for(state="visible")
    assert ana.inner_text("#offline").startswith("Reconnecting…")
    framed = table.play("", c.FrameScene(seat=2, text="The harbor at midnight"))["version"]
    proxy.down = False
    ana.locator("#offline").wait_for(state="hidden", timeout=WAIT)
    see([ana], framed)
    assert "The harbor at midnight" in ana.text_content("#scene-line")
    assert ana.locator(f"#log li[data-last='{framed}']").count() == 1
    assert ana.text_content("#live") == "live"
    assert ana.evaluate("window.notReloaded === true")
    assert not ana.errors, ana.errors


def test_a_page_whose_link_was_replaced_says_so_when_its_stream_ends(
    http: httpx.Client, open_page: Opener
) -> None:
    """A new link for the seat ends the old one's stream, whose page then cannot reconnect:
    it says the link no longer works, rather than "Reconnecting…" for ever."""
    table = open_campaign(http, players=("Ana", "Ben"))
    ben = open_page(table, table.tokens[2])
    ben.wait_for_function("document.getElementById('live').textContent === 'live'")
    issued = http.post(table.url("/seats/2/token"), headers=table.as_owner())
    assert issued.is_success, issued.text
    # The stream's next message finds its token revoked: it ends.
    table.play("", c.FrameScene(seat=1, text="The harbor at midnight"))
    ben.locator("#fatal").wait_for()
    assert "no longer works" in ben.text_content("#fatal")
    assert not ben.is_visible("#offline")
    assert not ben.errors, ben.errors


def test_a_page_whose_seat_a_dispute_took_away_says_so_naming_the_dispute(
    http: httpx.Client, open_page: Opener
) -> None:
    """R-X-REC-8: Dana's page is open when the table upholds a dispute about her seating: the
    page says her seat was removed by that dispute, rather than showing a board without her
    seat, or "Reconnecting…" for ever once its stream ends; and so does her link opened
    again."""
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    a_scene_played_to_its_end(table)
    table.seat("Dana")
    dana = open_page(table, table.tokens[4])
    dana.wait_for_function("document.getElementById('live').textContent === 'live'")
    assert dana.text_content("#who") == "You are Dana (seat 4)"

    dispute = disputed_away(table, 4)

    said = f"Seat 4 was removed from this campaign by dispute #{dispute}"
    expect(dana.locator("#fatal")).to_contain_text(said, timeout=WAIT)
    expect(dana.locator("#offline")).to_be_hidden()
    assert dana.text_content("#live") == ""
    assert not dana.errors, dana.errors
    link = f"{dana.url.split('#')[0]}#token={table.tokens[4]}"
    dana.goto("about:blank")
    dana.goto(link)
    expect(dana.locator("#fatal")).to_contain_text(said, timeout=WAIT)


def test_a_read_refused_for_the_link_says_the_link_no_longer_works(
    http: httpx.Client, open_page: Opener
) -> None:
    """The page's reads after a move may meet the replaced link before its stream does (which
    then says so): the page says the same, not the bare 401's words."""
    table = open_campaign(http, players=("Ana", "Ben"))
    refusing = False

    def read(route: Any) -> None:
        if not refusing:
            route.continue_()
            return
        route.fulfill(status=401, content_type="application/problem+json",
                      body='{"status": 401, "title": "Unauthorized", '
                           '"detail": "this token is not one of this campaign\'s"}')

    ben = open_page(table, table.tokens[2], lambda page: page.route("**/ledgers?*", read))
    ben.wait_for_function("document.getElementById('live').textContent === 'live'")
    refusing = True
    table.play("", c.FrameScene(seat=1, text="The harbor at midnight"))
    ben.locator("#fatal").wait_for()
    assert "no longer works" in ben.text_content("#fatal")


#: The page's first EventSource opens but hands the page nothing (a proxy that holds the
#: stream's messages, a connection dropped where neither end noticed); later ones are real.
SILENT_FIRST_STREAM = """
(() => {
  const Real = window.EventSource;
  let first = true;
  window.EventSource = class extends Real {
    constructor(url, init) { super(url, init); this.silent = first; first = false; }
    get onmessage() { return super.onmessage; }
    set onmessage(handler) { super.onmessage = this.silent ? null : handler; }
  };
})();
"""


def test_a_stream_that_is_open_but_brings_nothing_is_opened_again_after_a_move(
    http: httpx.Client, open_page: Opener
) -> None:
    """A stream that did not bring the board of the page's own move within a moment is not
    to be trusted: the page reads the board, and follows a new stream, which shows the next
    player's move live."""
    table = open_campaign(http, players=("Ana", "Ben"))
    ana = open_page(table, table.tokens[1], lambda page: page.add_init_script(SILENT_FIRST_STREAM))
    ana.wait_for_function("document.getElementById('live').textContent === 'live'")
    ana.locator("form[data-move=frame_scene] [name=text]").fill("The harbor at midnight")
    move_done(ana, ana.get_by_role("button", name="Frame the scene"))
    said = table.play("", c.Narrate(seat=2, text="Rain hammers the docks"))["version"]
    see([ana], said)
    assert ana.locator(f"#log li[data-last='{said}']").count() == 1
    assert not ana.errors, ana.errors


#: The page's first stream dies without an error once it has brought the board, as a laptop's
#: does in its sleep: the browser holds it "open" and nothing more comes. Its first keep-alive
#: says one comes every 0.3 s (the server's are 15 s apart), so the test need not wait long.
DEAD_FIRST_STREAM = """
(() => {
  const Real = window.EventSource;
  window.opened = 0;
  window.EventSource = class extends Real {
    constructor(url, init) { super(url, init); this.first = window.opened++ === 0; }
    set onmessage(handler) {
      let dead = false;
      super.onmessage = (m) => {
        if (dead) return;
        const data = JSON.parse(m.data);
        if (this.first && data.type === "keep-alive") {
          handler(new MessageEvent("message", {data: JSON.stringify({...data, every: 0.3})}));
          return;
        }
        handler(m);
        if (this.first && data.type === "board") dead = window.firstBoard = true;
      };
    }
  };
})();
"""


def test_a_stream_that_dies_without_an_error_is_opened_again_when_its_keep_alives_stop(
    http: httpx.Client, open_page: Opener
) -> None:
    """Three keep-alives missed and the page opens a new stream from the last event it has:
    the next player's move shows without a reload, though the page sent nothing."""
    table = open_campaign(http, players=("Ana", "Ben"))
    ana = open_page(table, table.tokens[1], lambda page: page.add_init_script(DEAD_FIRST_STREAM))
    ana.wait_for_function("document.getElementById('live').textContent === 'live'")
    # The first stream dies once it has sent its board: a move played before that board was
    # sent would come with it (seen under load, the stream never reopened, the test failed).
    ana.wait_for_function("window.firstBoard === true")
    said = table.play("", c.Narrate(seat=2, text="Rain hammers the docks"))["version"]
    see([ana], said)
    assert ana.evaluate("window.opened") == 2
    assert ana.locator(f"#log li[data-last='{said}']").count() == 1
    assert not ana.errors, ana.errors


def drawn(page: Any) -> None:
    """Wait until the page is done with the move it sent and shows the board it made."""
    page.wait_for_function("!document.body.dataset.busy && document.body.dataset.applied"
                           " && +document.body.dataset.version >= +document.body.dataset.applied")


def test_a_keyboard_player_keeps_the_focus_and_the_words_while_another_seat_moves(
    http: httpx.Client, open_page: Opener
) -> None:
    """Ana, on a phone, types the scene's frame; Ben speaks meanwhile, and her moves are drawn
    again for the new board: her next keys still go where she was typing. Her move made with
    Enter, its form is gone and the focus is on her moves' heading, from which Tab reaches the
    narration: not the page's top, five links away."""
    table = open_campaign(http, players=("Ana", "Ben"))
    ana = open_page(table, table.tokens[1], phone=True)
    frame = ana.get_by_role("textbox", name="The scene")
    frame.focus()
    ana.keyboard.type("The harbor at ")
    table.play("", c.Narrate(seat=2, text="Rain hammers the docks"))
    see([ana], table.version())
    expect(frame).to_be_focused()
    ana.keyboard.type("midnight")
    expect(frame).to_have_value("The harbor at midnight")
    ana.keyboard.press("Enter")
    drawn(ana)
    assert table.query("board")["scene_text"] == "The harbor at midnight"
    expect(ana.get_by_role("heading", name="Your moves")).to_be_focused()
    ana.keyboard.press("Tab")
    expect(ana.get_by_role("textbox", name="Narration")).to_be_focused()
    assert not ana.errors, ana.errors


def test_a_half_written_dispute_stays_while_the_table_plays_on(
    http: httpx.Client, open_page: Opener
) -> None:
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    table.play("", c.FrameScene(seat=1, text="The harbor at midnight"))
    said = table.play("", c.Narrate(seat=3, text="A seagull steals Reyes' fries"))["version"]
    ana = open_page(table, table.tokens[1])
    move = ana.get_by_role("combobox", name="Dispute a move")
    move.select_option(str(said))
    why = ana.get_by_role("textbox", name="Why")
    why.fill("No seagull flies in")
    # Ben speaks: a new move to dispute, listed first in a form drawn again.
    table.play("", c.Narrate(seat=2, text="Thunder rolls over the bay"))
    see([ana], table.version())
    expect(move).to_have_value(str(said))
    expect(why).to_have_value("No seagull flies in")
    expect(why).to_be_focused()
    ana.keyboard.type(" this storm")
    ana.keyboard.press("Enter")
    drawn(ana)
    assert table.query("record")["dispute"]["reason"] == "No seagull flies in this storm"


def test_a_character_sheet_opened_stays_open_while_the_table_plays_on(
    http: httpx.Client, open_page: Opener
) -> None:
    table = open_campaign(http, players=("Ana", "Ben"))
    table.play("", c.CreateCharacter(seat=1, name="Nightjar", build=NIGHTJAR_BUILD))
    ben = open_page(table, table.tokens[2])
    first = NIGHTJAR_BUILD.abilities[0]
    ability = ben.get_by_role("listitem").filter(has_text=f"{first.name}: {first.category}")
    ben.get_by_text(f"Nightjar \u2014 Ana{APOS}s").click()
    expect(ability).to_be_visible()
    table.play("", c.FrameScene(seat=1, text="The harbor at midnight"))
    see([ben], table.version())
    expect(ability).to_be_visible()


def count_read_outs(box: Any) -> None:
    """From now on ``window.readOut`` counts the changes to what a live region in ``box`` (a
    locator) says, as a screen reader reads each out: a live region drawn anew, or anything
    drawn again inside one, even the same words. An ``output`` is a live region too (its role
    is status); one hidden from screen readers (aria-hidden) is not."""
    box.evaluate("""box => {
        window.readOut = 0;
        const live = "[role=status], [role=alert], [aria-live]:not([aria-live=off]), output";
        const heard = (n) => !n.closest("[aria-hidden=true]");
        const inLive = (n) => {
            const at = (n.nodeType === 1 ? n : n.parentElement).closest(live);
            return at && heard(at);
        };
        const hasLive = (n) => n.nodeType === 1 && heard(n)
            && (n.matches(live) || [...n.querySelectorAll(live)].some(heard));
        new MutationObserver((records) => {
            for (const r of records) {
                if (inLive(r.target) || [...r.addedNodes].some(hasLive)) window.readOut++;
            }
        }).observe(box, {childList: true, subtree: true, characterData: true});
    }""")


def test_whose_move_it_is_is_read_out_only_when_it_changes(
    http: httpx.Client, open_page: Opener
) -> None:
    """The status is a live region: each change to it is read out. Ben speaking leaves Ana's
    status as it was, and nothing is read out again; Ana framing the scene changes it."""
    table = open_campaign(http, players=("Ana", "Ben"))
    ana = open_page(table, table.tokens[1])
    status = ana.locator("#status")
    expect(status).to_have_attribute("aria-live", "polite")
    expect(status).to_contain_text("It\u2019s your move.")
    count_read_outs(status)
    table.play("", c.Narrate(seat=2, text="Rain hammers the docks"))
    see([ana], table.version())
    assert ana.evaluate("window.readOut") == 0
    table.play("", c.FrameScene(seat=1, text="The harbor at midnight"))
    see([ana], table.version())
    assert ana.evaluate("window.readOut") > 0
    expect(status).not_to_contain_text("Waiting for Ben (frame the scene)")


def capees_demo_until(http: httpx.Client, last: type) -> Table:
    """CAPEES!: a table of the Editor, Alice and Joe that played the demo's script (its seats'
    commands) up to its first command of type ``last``, included."""
    table = open_campaign(http, players=("Editor", "Alice", "Joe"), edition="capees")
    for _, command in demo_capees.SCRIPT:
        if isinstance(command, demo_capees.c.SeatCommand):
            table.play("", command)
            if isinstance(command, last):
                break
    return table


def editor_before_the_first_scene(http: httpx.Client, open_page: Opener) -> tuple[Table, Any]:
    """CAPEES!: the demo's table up to its story begun (two heroes made); the Editor's page,
    whose Start the scene asks, with the picker, which hero the scene features."""
    table = capees_demo_until(http, demo_capees.c.BeginStory)
    return table, open_page(table, table.tokens[1])


def picker_opened_by_keyboard(editor: Any) -> tuple[Any, Any]:
    """The Editor's Start the scene, focused and pressed with Enter, and the picker it opened."""
    start = editor.get_by_role("button", name="Start the scene")
    picker = editor.get_by_role("dialog")
    start.focus()
    editor.keyboard.press("Enter")
    expect(picker).to_be_visible()
    return start, picker


def test_the_picker_is_answered_and_closed_from_the_keyboard(
    http: httpx.Client, open_page: Opener
) -> None:
    """CAPEES!: the Editor starts the scene without naming the hero it features; the picker asks
    which, and takes the focus. Escape closes it, giving the focus back to the move's button;
    asked again, Tab and Enter choose Silverstar, and the move made, the focus is on the moves'
    heading."""
    table, editor = editor_before_the_first_scene(http, open_page)
    start, picker = picker_opened_by_keyboard(editor)
    expect(picker.get_by_role("button", name="Night Maiden")).to_be_focused()
    editor.keyboard.press("Escape")
    expect(picker).to_be_hidden()
    expect(start).to_be_focused()
    editor.keyboard.press("Enter")
    expect(picker.get_by_role("button", name="Night Maiden")).to_be_focused()
    editor.keyboard.press("Tab")
    expect(picker.get_by_role("button", name="Silverstar")).to_be_focused()
    editor.keyboard.press("Enter")
    drawn(editor)
    expect(start).to_have_count(0)
    expect(editor.get_by_role("heading", name="Your moves")).to_be_focused()
    assert [p["name"] for p in table.query("board")["present"]] == ["Silverstar"]


def test_the_keyboard_stays_in_the_picker_until_it_closes(
    http: httpx.Client, open_page: Opener
) -> None:
    """The picker is a modal dialog: while it asks, the page behind it is inert, and Tab and
    Shift+Tab go round its buttons (Night Maiden, Silverstar, Cancel), never out into the
    page. Escape closes it, and the focus is back on the move's button that opened it."""
    _, editor = editor_before_the_first_scene(http, open_page)
    start, picker = picker_opened_by_keyboard(editor)
    assert picker.evaluate("dialog => dialog.matches(':modal')")
    # From Night Maiden, twice round each way.
    for name in ["Silverstar", "Cancel", "Night Maiden", "Silverstar", "Cancel", "Night Maiden"]:
        editor.keyboard.press("Tab")
        expect(picker.get_by_role("button", name=name)).to_be_focused()
    for name in ["Cancel", "Silverstar", "Night Maiden", "Cancel", "Silverstar", "Night Maiden"]:
        editor.keyboard.press("Shift+Tab")
        expect(picker.get_by_role("button", name=name)).to_be_focused()
    # The page behind is out of reach: not even its own focus() can take the keyboard there.
    editor.locator("#narration").evaluate("box => box.focus()")
    expect(picker.get_by_role("button", name="Night Maiden")).to_be_focused()
    editor.keyboard.press("Escape")
    expect(picker).to_be_hidden()
    expect(start).to_be_focused()
    assert not editor.errors, editor.errors


def test_a_choice_refused_closes_the_picker_and_the_refusal_is_read_out(
    http: httpx.Client, open_page: Opener
) -> None:
    """The board may change between the picker's question and its answer: a choice refused
    closes the picker, which would hide the refusal (the page behind it is inert), and the
    refusal is in the moves' alert, the focus back on the move. Here the server's answer to
    the choice is that of a hero who is not one (C-PROM-2)."""
    table, editor = editor_before_the_first_scene(http, open_page)
    no_hero = next(ch["id"] for ch in table.query("characters") if not ch["hero"])
    refused = table.send({"type": "capees.start_scene", "featured": no_hero}, seat=1)
    assert refused.status_code == 422, refused.text
    start = editor.get_by_role("button", name="Start the scene")
    picker = editor.get_by_role("dialog")
    start.focus()
    editor.keyboard.press("Enter")
    expect(picker).to_be_visible()
    editor.route("**/commands", lambda route: route.fulfill(
        status=422, headers=dict(refused.headers), body=refused.content))
    editor.keyboard.press("Enter")  # Night Maiden
    expect(picker).to_be_hidden()
    expect(editor.get_by_role("alert").filter(has_text="C-PROM-2")).to_contain_text(
        refused.json()["detail"])
    expect(start).to_be_focused()
    assert not editor.errors, editor.errors


@pytest.mark.parametrize(("edition", "abilities", "field", "rule"), [
    ("capes", "Shadow Step, power, 1", "Abilities", "R-CHAR-1"),
    ("capees", "Shadow Step, power, 1", "Drives", "C-HERO-1"),
])
def test_a_refused_character_is_read_out_at_the_field_at_fault(
    http: httpx.Client, open_page: Opener, edition: str, abilities: str, field: str, rule: str
) -> None:
    """A build the rules refuse: the field at fault takes the focus, marked invalid and
    described by the rule's reason, so a screen reader reads out the field and why (the
    focus stayed on the button, and the reason beside the field was silent)."""
    table = open_campaign(http, players=("Ana",), edition=edition)
    ana = open_page(table, table.tokens[1], phone=True)
    ana.locator("#new-character summary").click()
    form = ana.locator("#character-form")
    form.get_by_role("textbox", name="Name", exact=True).fill("Nightjar")
    form.get_by_role("textbox", name=re.compile("^Abilities")).fill(abilities)
    form.get_by_role("button", name="Create the character").focus()
    ana.keyboard.press("Enter")
    at_fault = form.get_by_role("textbox", name=re.compile(f"^{field}"))
    expect(at_fault).to_be_focused()
    expect(at_fault).to_have_attribute("aria-invalid", "true")
    expect(at_fault).to_have_accessible_description(re.compile(f"^{rule}: "))


def test_a_capees_name_alone_with_a_hero_ticked_is_sent_back_to_the_hero_box(
    http: httpx.Client, open_page: Opener
) -> None:
    """C-NPC-1: given a CAPEES! table, when Ana types a name alone (an Exemplar, as the README
    says: "leave everything but the name empty") with "A hero" left ticked, as the form opens,
    then nothing is sent and the box takes the focus, described by why: untick it for a
    non-hero known by name only. It was refused with C-HERO-1 at the Drives, which named the
    five heroic Drives and not the box; unticked, the character is made."""
    table = open_campaign(http, players=("Ana",), edition="capees")
    ana = open_page(table, table.tokens[1], phone=True)
    ana.locator("#new-character summary").click()
    form = ana.locator("#character-form")
    form.get_by_role("textbox", name="Name", exact=True).fill("Supreme")
    sent = commands_sent(ana)
    form.get_by_role("button", name="Create the character").click()
    hero = form.get_by_role("checkbox", name=re.compile("^A hero"))
    expect(hero).to_be_focused()
    expect(hero).to_have_attribute("aria-invalid", "true")
    expect(hero).to_have_accessible_description(re.compile("untick"))
    assert sent == []
    hero.uncheck()
    form.get_by_role("button", name="Create the character").click()
    expect(ana.locator("#characters")).to_contain_text("Supreme — non-hero")
    assert not ana.errors, ana.errors


def test_the_table_page_is_headed_by_the_campaigns_name(
    http: httpx.Client, open_page: Opener
) -> None:
    """A screen reader lists a page by its headings: the table's first is the campaign's name
    (the page had none above its panels' ones: "The scene", "Your moves"…)."""
    table = open_campaign(http, "Harbor City", players=("Ana",))
    ana = open_page(table, table.tokens[1], phone=True)
    expect(ana.get_by_role("heading", level=1)).to_have_text("Harbor City")
    assert ana.evaluate("document.documentElement.lang") == "en"
    width, wide = ana.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert width <= wide, f"the page is {width} px wide in a {wide} px window"


def test_the_open_dispute_is_read_out_when_it_opens_takes_a_vote_and_ends_and_only_then(
    http: httpx.Client, open_page: Opener
) -> None:
    """The dispute is a live region of the record: its words are read out when it opens,
    takes a vote and ends (here withdrawn, R-REC-3). A new link issued meanwhile is a new board
    that says nothing new of the dispute, and nothing of it is read out again."""
    table = open_campaign(http, players=("Ana", "Ben", "Cleo", "Dan"))
    table.play("", c.FrameScene(seat=1, text="The harbor at midnight"))
    said = table.play("", c.Narrate(seat=3, text="A seagull steals Reyes' fries"))["version"]
    ben = open_page(table, table.tokens[2])
    record = ben.get_by_role("region", name="The record")
    dispute = record.get_by_role("status").filter(has_text="Dispute #1")
    count_read_outs(record)
    opened = table.send({"type": "open_dispute", "seat": 1, "position": said,
                         "reason": "No seagull flies in a storm"})
    assert opened.status_code == 200, opened.text
    see([ben], table.version())
    expect(dispute).to_contain_text("1 to uphold, 0 against")
    assert ben.evaluate("window.readOut") > 0
    count_read_outs(record)
    issued = http.post(table.url("/seats/4/token"), headers=table.as_owner())
    assert issued.status_code == 201, issued.text
    table.tokens[4] = issued.json()["token"]
    see([ben], table.version())
    assert ben.evaluate("window.readOut") == 0
    voted = table.send({"type": "vote", "seat": 4, "uphold": False})
    assert voted.status_code == 200, voted.text
    see([ben], table.version())
    expect(dispute).to_contain_text("1 to uphold, 1 against")
    assert ben.evaluate("window.readOut") > 0
    count_read_outs(record)
    withdrawn = table.send({"type": "withdraw_dispute", "seat": 1})
    assert withdrawn.status_code == 200, withdrawn.text
    see([ben], table.version())
    expect(dispute).to_have_text("Dispute #1 withdrawn: the move stands.")
    assert ben.evaluate("window.readOut") > 0
    assert not ben.errors, ben.errors


def test_a_sides_total_is_read_out_as_its_total_in_both_editions(
    http: httpx.Client, open_page: Opener
) -> None:
    """A side's heading shows its label and its total, the number alone; a screen reader reads
    "total" before the number (an aria-label on the number's plain span, which ARIA does not
    allow, ran into the label in Chrome: "Fortotal 1"). Capes:
    an Event's sides; CAPEES!: a Complication's, once the Chief's roll (a 3) is kept."""
    table = open_campaign(http, players=("Ana", "Ben"), starting_tokens=1)
    table.play("", c.FrameScene(seat=1, text="The harbor at midnight"))
    table.play("", c.CreateConflict(seat=1, kind="event", text="The bridge collapses"))
    ana = open_page(table, table.tokens[1])
    event = ana.get_by_role("article").filter(has_text="The bridge collapses")
    for side in ("For", "Against"):
        expect(event.get_by_role("heading", name=f"{side} total 1", exact=True)).to_be_visible()
    # The word is there for a screen reader, not for the eye.
    # (Measured in the page: a board redrawn meanwhile detached the element that a
    # bounding_box() had found, which then answered None.)
    shown = event.get_by_text("total", exact=True).first.evaluate(
        "e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; }")
    assert shown[0] <= 1 and shown[1] <= 1, shown
    capees = capees_demo_until(http, demo_capees.c.KeepRoll)
    editor = open_page(capees, capees.tokens[1])
    robbery = editor.get_by_role("article").filter(has_text="Robbery")
    expect(robbery.get_by_role("heading", name="Hero side total 1", exact=True)).to_be_visible()
    expect(robbery.get_by_role("heading", name="Opponent side total 3", exact=True)).to_be_visible()


def test_the_time_slider_reads_out_which_event_of_how_many_and_only_when_moved(
    http: httpx.Client, open_page: Opener
) -> None:
    """The slider's value reads as "event 3 of 9", not "3"; the words shown beside it (an
    output, a live region) are not read out again as each move makes the log longer."""
    table = open_campaign(http, players=("Ana", "Ben"))
    ana = open_page(table, table.tokens[1])
    record = ana.get_by_role("region", name="The record")
    slider = record.get_by_role("slider", name="Time")
    now = table.version()
    expect(slider).to_have_attribute("aria-valuetext", f"event {now} of {now}")
    count_read_outs(record)
    now = table.play("", c.Narrate(seat=2, text="Rain hammers the docks"))["version"]
    see([ana], now)
    expect(slider).to_have_attribute("aria-valuetext", f"event {now} of {now}")
    assert ana.evaluate("window.readOut") == 0
    slider.focus()
    ana.keyboard.press("Home")
    expect(slider).to_have_attribute("aria-valuetext", f"event 1 of {now}")
    expect(record).to_contain_text(f"Time: event 1 of {now}")


def test_the_log_says_what_it_is_when_the_keyboard_reaches_it(
    http: httpx.Client, open_page: Opener
) -> None:
    """The log scrolls on its own once it is long, and Tab stops on it to scroll it with the
    arrow keys (as Chromium makes any scroller a Tab stop): a screen reader then says "The
    log", not an unnamed list."""
    table = open_campaign(http, players=("Ana", "Ben"))
    for n in range(30):
        table.play("", c.Narrate(seat=2, text=f"Rain hammers the docks, {n + 1} times"))
    ana = open_page(table, table.tokens[1])
    ana.get_by_role("heading", name="Characters").focus()
    for _ in range(10):
        ana.keyboard.press("Tab")
        if ana.evaluate("!!document.activeElement.closest('#log-panel')"):
            break
    expect(ana.get_by_role("list", name="The log")).to_be_focused()


def test_an_entry_of_the_log_stays_the_same_element_while_moves_are_added(
    http: httpx.Client, open_page: Opener
) -> None:
    """A screen reader reading the log keeps its place as the table plays on: Ben's move is
    added at the log's end, and the entries there stay the very elements they were (the log was
    drawn anew on every board). Ben's undo marks his move reverted (R-REC-1), which draws the
    log anew."""
    table = open_campaign(http, players=("Ana", "Ben"))
    said = table.play("Rain hammers the docks", c.Narrate(seat=2, text="Rain"))["version"]
    ana = open_page(table, table.tokens[1])
    entry = ana.locator(f"#log li[data-position='{said}']")
    expect(entry).to_contain_text("Rain hammers the docks")
    entry.evaluate("li => { window.readingAt = li; }")
    again = table.play("Thunder rolls over the bay", c.Narrate(seat=2, text="Thunder"))[
        "version"]
    see([ana], table.version())
    expect(ana.locator("#log li").last).to_contain_text("Thunder rolls over the bay")
    assert entry.evaluate("li => li === window.readingAt"), "the log was drawn anew"
    assert ana.locator(f"#log li[data-position='{said}']").count() == 1
    assert table.send({"type": "undo"}, seat=2).status_code == 200
    see([ana], table.version())
    expect(ana.locator(f"#log li.reverted[data-position='{again}']")).to_contain_text(
        "(reverted)")
    expect(ana.locator(f"#log li[data-position='{said}']")).not_to_have_class(
        re.compile("reverted"))
    assert not ana.errors, ana.errors


def test_a_long_log_lets_its_oldest_entry_go_and_keeps_the_others_as_they_are(
    http: httpx.Client, open_page: Opener
) -> None:
    """The log shows the last 300 moves: the 301st from the end goes when a move is added,
    the count of those not shown goes up, and the entries still shown stay the same elements."""
    table = open_campaign(http, players=("Ana", "Ben"))
    said = [table.play(f"Drop {n}", c.Narrate(seat=2, text="Drip"))["version"]
            for n in range(302)]
    ana = open_page(table, table.tokens[1])
    log = ana.get_by_role("list", name="The log")
    expect(log.locator("li").last).to_contain_text("Drop 301")
    expect(log.locator("li").first).to_have_text(re.compile(r"^\d+ earlier moves not shown"))
    earlier = int(log.locator("li").first.text_content().split()[0])
    oldest = log.locator("li").nth(1).get_attribute("data-position")
    kept = log.locator(f"li[data-position='{said[-1]}']")
    kept.evaluate("li => { window.readingAt = li; }")
    table.play("Drop 302", c.Narrate(seat=2, text="Drip"))
    see([ana], table.version())
    expect(log.locator("li").last).to_contain_text("Drop 302")
    expect(log.locator("li").first).to_have_text(f"{earlier + 1} earlier moves not shown: "
                                                 "see the export")
    expect(log.locator(f"li[data-position='{oldest}']")).to_have_count(0)
    assert kept.evaluate("li => li === window.readingAt"), "the log was drawn anew"
    assert log.locator("li").count() == 301
    assert not ana.errors, ana.errors


def test_a_moves_form_is_cleared_once_its_move_is_made_and_no_other(
    http: httpx.Client, open_page: Opener
) -> None:
    """R-PAGE-3: Ana, with two Story Tokens, may add a Conflict while the scene is claimed, and
    another: the form, offered again after the first, is empty, not showing the first one's
    words again. The dispute she was writing meanwhile stays as she left it."""
    table = open_campaign(http, players=("Ana", "Ben"), starting_tokens=2)
    table.play("", c.FrameScene(seat=1, text="The harbor at midnight"))
    ana = open_page(table, table.tokens[1])
    why = ana.get_by_role("textbox", name="Why")
    why.fill("Nightjar was never in the harbor")
    moves = ana.get_by_role("region", name="Your moves")
    at_stake = moves.get_by_role("textbox", name="What is at stake")
    first_side = moves.get_by_role("textbox", name="First side")
    at_stake.fill("The bridge collapses")
    first_side.fill("Everyone gets off")
    moves.get_by_role("button", name="Create a conflict").click()
    drawn(ana)
    assert [x["text"] for x in table.query("board")["conflicts"]] == ["The bridge collapses"]
    expect(at_stake).to_have_value("")
    expect(first_side).to_have_value("For")
    expect(why).to_have_value("Nightjar was never in the harbor")
    at_stake.fill("The Smuggler King escapes")
    moves.get_by_role("button", name="Create a conflict").click()
    drawn(ana)
    assert [x["text"] for x in table.query("board")["conflicts"]] == [
        "The bridge collapses", "The Smuggler King escapes"]
    assert not ana.errors, ana.errors


def test_each_seats_link_buttons_say_whose_link_they_are(
    http: httpx.Client, open_page: Opener
) -> None:
    """The owner's seats each have a *Copy* and a *New link* button: a screen reader says whose
    (the buttons of every seat were "Copy" and "New link" alike)."""
    table = open_campaign(http, players=("Ana", "Ben"))
    owner = open_page(table, table.owner_token)
    seats = owner.get_by_role("region", name="Seats and invitations")
    expect(seats.get_by_role("button", name=f"Copy Ben{APOS}s link", exact=True)).to_be_visible()
    expect(seats.get_by_role("button", name="New link", exact=True)).to_have_count(0)
    seats.get_by_role("button", name="New link for Ben", exact=True).click()
    expect(seats.get_by_role("textbox", name=f"Ben{APOS}s invitation link")).to_have_value(
        re.compile("#token="))
    expect(seats.get_by_role("textbox", name=f"Ana{APOS}s invitation link")).to_have_value("")
    assert http.get(table.url(""), headers=table.as_seat(2)).status_code == 401


def test_a_characters_drives_are_a_table_named_after_it_in_both_editions(
    http: httpx.Client, open_page: Opener
) -> None:
    """A screen reader lists the tables of a page by name: each character's Drives are named
    after it (they were unnamed tables, one per character)."""
    table = open_campaign(http, players=("Ana", "Ben"))
    table.play("", c.CreateCharacter(seat=1, name="Nightjar", build=NIGHTJAR_BUILD))
    ben = open_page(table, table.tokens[2])
    drives = ben.get_by_role("table", name=f"Nightjar{APOS}s Drives", exact=True)
    expect(drives.get_by_role("rowheader", name="Undifferentiated")).to_be_visible()
    capees = open_campaign(http, players=("Editor", "Alice", "Joe"), edition="capees")
    for _, command in demo_capees.SCRIPT:
        if isinstance(command, demo_capees.c.BeginStory):
            break
        if isinstance(command, demo_capees.c.SeatCommand):
            capees.play("", command)
    joe = open_page(capees, capees.tokens[3])
    expect(joe.get_by_role("table", name=f"Night Maiden{APOS}s Drives", exact=True)).to_be_visible()
