"""Three friends play the demo's whole scene in a browser, only by clicking and typing.

A real server process (as ``capes serve`` runs it, with the demo's scripted dice so the story
is the same every time), Debian's Chromium, three browser contexts: Ana (who also opens the
campaign as its owner, in a second tab), Ben, and Cleo on a phone-sized screen (375 px). Each
of the demo's steps is made by the acting player's page: the move's form filled in, its button
clicked, a picker answered when the rules ask for a choice; and every page, without a reload,
must show the move before the next one is made. Along the way: a refused character build, an
undo, a dispute upheld by vote, the time slider, a fork, ``verify``, the export, the
analytics page, a lost link replaced, and no token in any URL, ``Referer`` or server log line.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pytest
from helpers import DEMO_STEPS, TIMEOUT, kill, server
from playwright.sync_api import expect

from cli.demo import DEMO_DICE, NIGHTJAR_BUILD
from domain.capes import commands as c

pytestmark = pytest.mark.browser

#: Milliseconds any one wait in a page may take.
WAIT = int(TIMEOUT * 1000)
#: Where the screenshots go (docs/ to refresh the README's); default: the test's folder.
SHOTS = "CAPES_SCREENSHOTS"
#: The typographic apostrophe the pages write (Ana-apostrophe-s).
APOS = "\u2019"
#: Fields the page leaves to the rules: asked for with a picker when there is a choice.
PICKED = ("drive", "ally")


@dataclass
class Run:
    """The server of a test (started again after :meth:`restart`) and what the pages asked."""

    folder: Path
    environ: dict[str, str]
    stack: ExitStack
    base: str = ""
    #: The server's log files, one per process.
    logs: list[Path] = field(default_factory=list)
    #: Every request any page made: (url, Referer header).
    requests: list[tuple[str, str]] = field(default_factory=list)

    def start(self) -> None:
        log = self.folder / f"server-{len(self.logs)}.log"
        self.logs.append(log)
        port = int(self.base.rsplit(":", 1)[1]) if self.base else None
        self.base = self.stack.enter_context(server(
            self.environ, log, factory="browser.scripted_server:create", log_level="info",
            port=port))

    def restart(self) -> None:
        """The server dies (every connection dropped) and comes back on the same port."""
        kill(self.base)
        self.start()


@contextmanager
def serving(tmp_path: Path, dice: Iterable[int]) -> Iterator[Run]:
    """A real server on a fresh SQLite file in ``tmp_path``, its dice ``dice`` in turn
    (``CAPES_TEST_DICE``), stopped afterwards."""
    environ = {"CAPES_DB": str(tmp_path / "table.sqlite"),
               "CAPES_TEST_DICE": ",".join(map(str, dice))}
    with ExitStack() as stack:
        started = Run(tmp_path, environ, stack)
        started.start()
        yield started


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    with serving(tmp_path, DEMO_DICE) as started:
        yield started


def new_context(browser: Any, run: Run, width: int = 1280, height: int = 1000) -> Any:
    # bypass_csp: Playwright's wait_for_function evaluates strings, which the pages' CSP
    # (script-src 'self') rightly forbids.
    context = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
    context.set_default_timeout(WAIT)
    context.on("request", lambda r: run.requests.append((r.url, r.headers.get("referer", ""))))
    return context


def watch(page: Any) -> Any:
    """Fail on a script error; mark the page so that a reload would show (the mark goes)."""
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    return page


def open_table(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_function("+document.body.dataset.version > 0")
    page.evaluate("window.notReloaded = true")


def version(page: Any) -> int:
    return int(page.get_attribute("body", "data-version") or 0)


def see(pages: list[Any], at_least: int) -> None:
    """Every page shows the table as of event ``at_least`` or later (live, no reload)."""
    for page in pages:
        page.wait_for_function("v => +document.body.dataset.version >= v", arg=at_least)


def click_and_wait(page: Any, button: Any, keyboard: bool = False) -> None:
    """Click a button that sends a command (or press Enter on it); wait for the answer, or a
    picker; fail on a refusal."""
    before = page.get_attribute("body", "data-applied") or ""
    if keyboard:
        button.focus()
        page.keyboard.press("Enter")
    else:
        button.click()
    page.wait_for_function(
        """prev => !document.body.dataset.busy && ((document.body.dataset.applied || "") !== prev
            || !document.getElementById('picker').hidden
            || document.querySelector('.error:not(:empty)'))""", arg=before)
    errors = [e for e in page.locator(".error").all_text_contents() if e]
    assert not errors, errors


def applied(page: Any) -> int:
    return int(page.get_attribute("body", "data-applied"))


class Table:
    """The three seats' pages (and the owner's tab)."""

    def __init__(self, owner: Any, seats: dict[int, Any]) -> None:
        self.owner = owner
        self.seats = seats
        self.pages = [owner, *seats.values()]
        #: The choices made in a picker (a 422 with ``choices``): (field, choice).
        self.picked: list[tuple[str, str]] = []

    def settle(self, page: Any) -> int:
        done = applied(page)
        see(self.pages, done)
        return done

    def play(self, narration: str, command: c.SeatCommand) -> None:
        """One step of the demo, by the acting seat's page."""
        page = self.seats[command.seat]
        fields = msgspec.to_builtins(command)
        kind = fields.pop("type")
        if isinstance(command, c.CreateCharacter):
            build_character(page, command, narration)
            self.settle(page)
            return
        if narration:
            page.fill("#narration", narration)
        if isinstance(command, c.Narrate) and not page.locator("form[data-move=narrate]").count():
            page.fill("#narration", command.text)
            click_and_wait(page, page.get_by_role("button", name="Say it (narration only)"))
            self.settle(page)
            return
        name = ("Ana", "Ben", "Cleo")[command.seat - 1]
        assert "It\u2019s your move." in page.text_content("#status")
        other = self.seats[command.seat % 3 + 1]
        status = other.text_content("#status")
        assert "Waiting for" in status and f"{name} (" in status, status
        form = page.locator(f"form[data-move={kind}]")
        for name, value in fields.items():
            if name in ("seat", "value", "draw") or value in (None, [], {}):
                continue
            if name in PICKED and not (name == "drive" and command.rolls):
                # Left to the picker; a rolling command's Drive is chosen up front (a refused
                # roll would use up one of the scripted dice).
                continue
            if name == "sides":
                form.locator("[name=side0]").fill(value[0])
                form.locator("[name=side1]").fill(value[1])
            elif name == "names":
                form.locator("[name=names]").select_option([str(v) for v in value])
            elif name in ("text", "label", "amount", "into", "times"):
                form.locator(f"[name={name}]").fill(str(value))
            elif name == "and_then":
                form.locator("[name=and_then]").set_checked(value)
            else:
                form.locator(f"[name={name}]").select_option(str(value))
        # Ben plays by keyboard: his buttons are pressed with Enter.
        click_and_wait(page, form.locator("button[type=submit]"), keyboard=command.seat == 2)
        for name in PICKED:
            if page.is_visible("#picker") and fields.get(name) is not None:
                wanted = str(fields[name])
                choice = page.locator("#picker-choices button").filter(
                    has_text=re.compile(rf"(^|“){re.escape(wanted)}($|”)")) if name == "drive" \
                    else page.locator("#picker-choices button").nth(int(wanted))
                click_and_wait(page, choice.first)
                self.picked.append((name, wanted))
        assert not page.is_visible("#picker"), page.text_content("#picker")
        self.settle(page)


def build_character(page: Any, command: c.CreateCharacter, narration: str) -> None:
    """Fill in the character form: freeform or click-and-lock, Drives or undifferentiated."""
    page.click("#new-character summary")
    form = page.locator("#character-form")
    form.get_by_label("Name", exact=True).fill(command.name)
    build = command.build
    if isinstance(build, c.Freeform):
        form.get_by_label("Freeform").check()
        form.locator("[name=abilities]").fill("\n".join(
            f"{a.name}, {a.category}, {a.rating}" + (", super" if a.super else "")
            for a in build.abilities))
    else:
        form.get_by_label("Click-and-lock").check()
        form.get_by_label("Set", exact=True).select_option(build.set_kind)
        form.get_by_label("Set's name").fill(build.set.name)
        form.get_by_label("Set's five abilities").fill(", ".join(build.set.abilities))
        form.get_by_label("Set's three styles").fill(", ".join(build.set.styles))
        form.get_by_label("Persona's name").fill(build.persona.name)
        form.get_by_label("Persona's five attitudes").fill(", ".join(build.persona.abilities))
        form.get_by_label("Persona's two styles").fill(", ".join(build.persona.styles))
        form.get_by_label("Cross out three abilities").fill(", ".join(build.crossed_out))
        form.locator("[name=ratings]").fill(
            "\n".join(f"{k} = {v}" for k, v in build.ratings.items()))
    if command.drives is None:
        form.get_by_label("Undifferentiated").check()
    else:
        for drive, strength in command.drives.items():
            form.get_by_label(f"{drive} strength").fill(str(strength))
    if narration:
        page.fill("#narration", narration)
    before = page.get_attribute("body", "data-applied") or ""
    form.get_by_role("button", name="Create the character").click()
    page.wait_for_function("v => (document.body.dataset.applied || '') !== v || document."
                           "querySelector('#character-form .field-error:not(:empty)')", arg=before)
    errors = form.locator(".field-error:not(:empty)")
    assert not errors.count(), errors.all_text_contents()


def refused_build(page: Any) -> None:
    """A build against the rules is refused, with the rule's reason next to the Drives."""
    page.click("#new-character summary")
    form = page.locator("#character-form")
    form.get_by_label("Name", exact=True).fill("Nightjar")
    form.locator("[name=abilities]").fill("\n".join(
        f"{a.name}, {a.category}, {a.rating}" + (", super" if a.super else "")
        for a in NIGHTJAR_BUILD.abilities))
    for drive, strength in {"Justice": 3, "Hope": 2, "Truth": 1, "Love": 1, "Duty": 1}.items():
        form.get_by_label(f"{drive} strength").fill(str(strength))
    form.get_by_role("button", name="Create the character").click()
    error = form.locator("[data-for=drives]")
    error.wait_for()
    assert "R-CHAR-5" in error.text_content() and "sum to exactly 9" in error.text_content()
    assert form.locator("[data-for=abilities]").text_content() == ""
    form.get_by_label("Truth strength").fill("")
    page.click("#new-character summary")  # closed again; the real build starts afresh


def test_three_players_play_the_demo_scene_by_clicking_and_typing(browser: Any, run: Run,
                                                                    tmp_path: Path) -> None:
    ana = new_context(browser, run)
    ben = new_context(browser, run)
    cleo = new_context(browser, run, width=375, height=812)  # a phone
    try:
        play_the_scene(ana, ben, cleo, run, tmp_path)
    finally:
        for context in (ana, ben, cleo):
            context.close()


def play_the_scene(ana: Any, ben: Any, cleo: Any, run: Run, tmp_path: Path) -> None:
    # Ana opens the campaign in the lobby, as its owner.
    owner = watch(ana.new_page())
    owner.goto(run.base + "/")
    owner.get_by_label("Campaign name").fill("Demo: Harbor City")
    owner.get_by_label("Story Tokens each player starts with").fill("1")
    owner.get_by_role("button", name="Open the campaign").click()
    owner.wait_for_url("**/play/**")
    owner.wait_for_function("+document.body.dataset.version > 0")
    assert "#token=" not in owner.url, "the token stays out of the address bar"
    assert owner.text_content("#who") == "You are the owner"
    # She invites the three players and hands out their links.
    for name in ("Ana", "Ben", "Cleo"):
        owner.get_by_label("Player's name").fill(name)
        owner.get_by_role("button", name="Invite").click()
        owner.get_by_label(f"{name}{APOS}s invitation link").wait_for()
    links = {seat: owner.input_value(f"#link-{seat}") for seat in (1, 2, 3)}
    tokens = {seat: link.split("#token=")[1] for seat, link in links.items()}
    tokens[0] = owner.evaluate(
        "sessionStorage.getItem('capes:token:' + document.body.dataset.campaign)")
    seats = {1: watch(ana.new_page()), 2: watch(ben.new_page()), 3: watch(cleo.new_page())}
    for seat, page in seats.items():
        open_table(page, links[seat])
        assert page.text_content("#who") == f"You are {('Ana', 'Ben', 'Cleo')[seat - 1]} " \
            f"(seat {seat})"
    owner.evaluate("window.notReloaded = true")
    table = Table(owner, seats)

    refused_build(seats[1])
    for index, (narration, command) in enumerate(DEMO_STEPS):
        if narration == "Nightjar spots the King's escape boat":
            screenshot(seats[1], "table-desktop.png", tmp_path)  # Ana's turn: her moves
        if narration == "Reyes shoots out the crane's winch":
            screenshot(seats[3], "table-phone.png", tmp_path)  # Cleo's turn, on her phone
        try:
            table.play(narration, command)
        except Exception as e:
            waiting = seats[1].text_content("#status")
            raise AssertionError(f"step {index} {command!r}: {waiting}") from e
        if index == 0:
            assert "Nightjar" in seats[2].text_content("#characters")  # seen live by Ben
        if narration == "There he is, on the ferry":
            undo_and_redo(table)
        if narration == "Rain hammers the docks":
            dispute_and_vote(table)
        if narration == "Ana buys a turn":
            assert f"Ana{APOS}s turn with Nightjar" in seats[3].text_content("#scene-line")
        if narration == "Tempest's pride is on the line":
            slide_through_time(table)

    assert ("drive", "Justice") in table.picked, table.picked  # Nightjar's stake: which Drive?
    # The scene is over: everyone sees it, and the log holds everyone's narration.
    final = version(seats[1])
    for page in table.pages:
        assert "Between scenes (1 played)" in page.text_content("#scene-line")
        log = page.text_content("#log")
        assert "Reyes waves the cars off the bridge" in log
        assert "Everyone gets off the bridge before it falls" in log
        assert page.evaluate("window.notReloaded === true"), "the page was reloaded"
        assert not page.errors, page.errors
    verify_and_export(table, run, final)
    analytics(seats[1], run)
    reconnect_and_link_an_exemplar(table, run)
    lost_link(table, links, tokens)
    no_token_leaked(run, tokens)


def undo_and_redo(table: Table) -> None:
    """Ben takes back his Conflict's creation (Undo), then creates it again."""
    ben = table.seats[2]
    assert "The harbor bridge collapses" in ben.text_content("#conflicts")
    ben.get_by_role("button", name="Undo my last move").wait_for()
    click_and_wait(ben, ben.get_by_role("button", name="Undo my last move"))
    table.settle(ben)
    for page in table.pages:
        assert "Tempest captures the Smuggler King" not in page.text_content("#conflicts")
    assert ben.locator("form[data-move=create_conflict]").count() == 1
    table.play("There he is, on the ferry", c.CreateConflict(
        seat=2, kind="goal", text="Tempest captures the Smuggler King",
        sides=("Captured", "Escapes"), names=(2,)))


def dispute_and_vote(table: Table) -> None:
    """Cleo says something the table disagrees with; Ana disputes it (preview first), Ben
    votes with her, and the table rewinds to before it."""
    ana, ben, cleo = (table.seats[s] for s in (1, 2, 3))
    cleo.fill("#narration", "A seagull steals Reyes' fries")
    click_and_wait(cleo, cleo.get_by_role("button", name="Say it (narration only)"))
    said = table.settle(cleo)
    ana.get_by_label("Dispute a move").select_option(str(said))
    ana.get_by_label("Why").fill("No seagull flies in this storm")
    ana.get_by_role("button", name="Preview without it").click()
    ana.locator("#preview").wait_for()
    assert f"just before event #{said}: 1 event undone" in ana.text_content("#preview")
    click_and_wait(ana, ana.get_by_role("button", name="Open the dispute"))
    table.settle(ana)
    assert "No seagull flies in this storm" in cleo.text_content("#dispute")
    # R-REC-2: the game waits for the dispute; no page says it is anyone's move, and the
    # status names who must still vote.
    for page in table.pages:
        page.locator("#status .dispute").wait_for()
        status = page.text_content("#status")
        assert "The table waits for dispute #" in status and "your move" not in status
    assert "must still vote" in ben.text_content("#status")
    vote = ben.get_by_role("button", name="Vote to uphold (rewind)")
    click_and_wait(ben, vote)
    table.settle(ben)
    for page in table.pages:
        reverted = page.locator("#log li.reverted")
        assert "A seagull steals Reyes' fries" in reverted.last.text_content()
        # The dispute is over, and the record says how it ended.
        ended = page.get_by_role("status").filter(has_text="Dispute #1")
        expect(ended).to_have_text(f"Dispute #1 upheld by vote: event #{said} reverted.")


def slide_through_time(table: Table) -> None:
    """Ben looks back with the time slider (by keyboard), forks from there, comes back."""
    ben = table.seats[2]
    now = version(ben)
    slider = ben.get_by_role("slider", name="Time")
    slider.focus()
    ben.keyboard.press("Home")
    ben.wait_for_function("document.body.dataset.past === '1'")
    assert "Between scenes (0 played)" in ben.text_content("#scene-line")
    assert not ben.is_visible("#moves-panel")
    slider.fill(str(now - 20))
    ben.wait_for_function(f"document.body.dataset.past === '{now - 20}'")
    assert ben.text_content("#past-version") == f"#{now - 20}"
    ben.get_by_role("button", name="Fork from here").click()
    fork = ben.locator("#fork-link")
    fork.wait_for()
    assert f"from event #{now - 20}" in fork.text_content()
    with ben.context.expect_page() as opened:
        fork.click()
    forked = opened.value
    forked.wait_for_function("+document.body.dataset.version > 0")
    assert forked.text_content("#who") == "You are the owner"
    assert forked.text_content("#campaign-name") == f"Demo: Harbor City (fork at {now - 20})"
    forked.close()
    ben.get_by_role("button", name="Back to now").click()
    assert not ben.is_visible("#past")
    assert ben.is_visible("#moves-panel")


def screenshot(page: Any, name: str, tmp_path: Path) -> None:
    """The table mid-scene (kept in the test's folder, or in $CAPES_SCREENSHOTS); nothing
    sticks out sideways, on a desktop or a phone (375 px)."""
    folder = Path(os.environ.get(SHOTS, tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    # A phone's screenshot goes on down the page, to show the board and the moves both.
    page.screenshot(path=str(folder / name), full_page=True,
                    clip={"x": 0, "y": 0, "width": width,
                          "height": height if width > 800 else width * 4})
    unlabelled = page.evaluate("""[...document.querySelectorAll('input, select, textarea')]
        .filter(e => e.type !== 'hidden' && !e.labels.length && !e.getAttribute('aria-label'))
        .map(e => e.outerHTML)""")
    assert not unlabelled, unlabelled
    width, wide = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= wide, f"the page is {width} px wide in a {wide} px window"


def verify_and_export(table: Table, run: Run, final: int) -> None:
    cleo = table.seats[3]
    cleo.get_by_role("button", name="Verify").click()
    result = cleo.locator("#verify-result[data-ok]")
    result.wait_for()
    assert result.get_attribute("data-ok") == "true", result.text_content()
    assert result.text_content().startswith("✓ verified")
    href = cleo.get_attribute("#export", "href")
    exported = cleo.request.get(run.base + href)  # the session cookie, no token
    assert exported.status == 200
    lines = exported.text().splitlines()
    assert len(lines) == final and json.loads(lines[-1])["position"] == final


def analytics(page: Any, run: Run) -> None:
    page.get_by_role("link", name="Analytics").click()
    page.wait_for_url("**/analytics")
    page.wait_for_function("[...document.querySelectorAll('img[data-chart]')].every("
                           "i => i.complete && i.naturalWidth > 0)")
    assert page.text_content("#charts-error") == ""
    page.locator("#dice-table tbody tr").last.wait_for()
    rows = page.locator("#dice-table tbody tr").all_text_contents()
    assert rows[0].startswith("Ana") and rows[-1].startswith("Everyone")
    page.screenshot(path=str(run.folder / "analytics.png"),
                    full_page=True)
    page.go_back()
    page.wait_for_function("document.getElementById('live').textContent === 'live'")


def reconnect_and_link_an_exemplar(table: Table, run: Run) -> None:
    """The server dies and comes back: every page reconnects by itself and resumes after the
    last event it saw (Last-Event-ID); Ana's next move (an Exemplar linked) reaches all."""
    ana, ben = table.seats[1], table.seats[2]
    run.restart()
    for index, page in enumerate(table.pages):
        try:
            page.wait_for_function("document.getElementById('live').textContent === 'live'"
                                   " && document.body.dataset.reconnected")
        except Exception as e:
            raise AssertionError(f"page {index} ({page.url}): {page.text_content('#live')}") from e
    ana.click("#link-exemplar summary")
    form = ana.locator("#exemplar-form")
    form.get_by_label("Character").select_option(label="Nightjar")
    form.get_by_label("Exemplar").select_option(label="Tempest")
    form.get_by_label("Drive").select_option("Justice")
    click_and_wait(ana, form.get_by_role("button", name="Link"))
    table.settle(ana)
    ben.click("#characters details:first-of-type summary")
    assert "Exemplars: Tempest (Justice)" in ben.text_content("#characters")
    assert ben.evaluate("window.notReloaded === true")
    log = run.logs[-1].read_text()
    assert "/events/stream" in log  # the pages came back by themselves


def lost_link(table: Table, links: dict[int, str], tokens: dict[int, str]) -> None:
    """Ben lost his link: the owner gives him a new one, and the old one stops working."""
    owner = table.owner
    owner.get_by_role("button", name="New link").nth(1).click()
    owner.wait_for_function(f"document.getElementById('link-2').value !== {links[2]!r}")
    new = owner.input_value("#link-2")
    tokens[4] = new.split("#token=")[1]
    ben = table.seats[2]
    ben.goto("about:blank")
    ben.goto(links[2])
    ben.locator("#fatal").wait_for()
    assert "no longer works" in ben.text_content("#fatal")
    ben.goto("about:blank")
    open_table(ben, new)
    assert ben.text_content("#who") == "You are Ben (seat 2)"


def no_token_leaked(run: Run, tokens: dict[int, str]) -> None:
    """No token in a URL the browser asked for, in a Referer, or in the server's log."""
    assert len(run.requests) > 100
    log = "".join(path.read_text() for path in run.logs)
    assert "/events/stream" in log and "POST /campaigns/" in log  # requests are logged
    for who, token in tokens.items():
        for url, referer in run.requests:
            assert token not in url, (who, url)
            assert token not in referer, (who, referer)
        assert token not in log, who
    assert all(referer == "" for _, referer in run.requests), "a page sent a Referer"
