"""The Editor, Alice and Joe play CAPEES!'s example scene in a browser, only by clicking and
typing.

A real server process with the CAPEES! demo's scripted dice (``capes demo --edition capees``
plays the same story), Debian's Chromium, three browser contexts: the Editor (who opens the
campaign in the lobby, choosing the edition, and invites the table from a second tab), Alice
(Night Maiden) and Joe (Silverstar) on a phone-sized screen (375 px). Every step of the demo's
script is made by the acting player's page — the character form, the move's form filled in and
its button clicked, every reaction passed — and every page shows it live, without a reload,
before the next step. Along the way: an undo, a dispute upheld by vote, the time slider, a
fork, ``verify`` and the analytics page's Victory Points; the scene ends when the heroes reach
the Victory Target.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from test_play_in_browser import (
    APOS,
    Run,
    applied,
    click_and_wait,
    new_context,
    open_table,
    screenshot,
    see,
    serving,
    watch,
)

from cli.demo_capees import DEMO_DICE, NPC_DRIVES, PASS_REACTIONS, ROBBERS_SHEET, SCRIPT
from domain.capees import commands as c

pytestmark = pytest.mark.browser

NAMES = {1: "Editor", 2: "Alice", 3: "Joe"}
#: Fields a move's form has as a text or number box; the others are selects.
TYPED = ("name", "replacement", "points", "victory_total", "amount", "into", "move")
#: Fields left to the picker (the 422's ``choices``), and how a choice reads there.
PICKED = ("side", "featured")


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    with serving(tmp_path, (*DEMO_DICE, 3, 3, 3)) as started:
        yield started


class Table:
    """The three seats' pages and the owner's tab."""

    def __init__(self, owner: Any, seats: dict[int, Any]) -> None:
        self.owner = owner
        self.seats = seats
        self.pages = [owner, *seats.values()]
        #: The characters' names by id, as they are created (ids count from 1).
        self.characters: list[str] = []
        #: The choices made in a picker: (field, the choice's label).
        self.picked: list[tuple[str, str]] = []

    def settle(self, page: Any) -> int:
        done = applied(page)
        see(self.pages, done)
        return done

    def move(self, page: Any, kind: str, fields: dict[str, Any], narration: str = "") -> None:
        """Fill in the form of move ``kind`` on ``page``, send it, answer the picker if the
        rules ask for a choice left out, and wait until every page shows it."""
        if narration:
            page.fill("#narration", narration)
        form = page.locator(f'form[data-move="{kind}"]')
        if kind in ("capees.roll_ability", "capees.react"):
            # C-ABIL-5: a reaction's list holds the Tropes only, an action's none of them.
            listed = form.locator("[name=ability] option").all_text_contents()
            assert listed and all(("(trope " in x) == (kind == "capees.react") for x in listed), \
                listed
        picks = {name: self.label(name, value) for name, value in fields.items()
                 if name in PICKED}
        for name, value in fields.items():
            if name in PICKED:
                continue
            if name in TYPED:
                form.locator(f"[name={name}]").fill(str(value))
            else:
                form.locator(f"[name={name}]").select_option(str(value))
        click_and_wait(page, form.locator("button[type=submit]"))
        for name, label in picks.items():
            if page.is_visible("#picker"):
                click_and_wait(page, page.locator("#picker-choices button").filter(
                    has_text=label).first)
                self.picked.append((name, label))
        assert not page.is_visible("#picker"), page.text_content("#picker")
        self.settle(page)

    def label(self, name: str, value: Any) -> str:
        """How the picker shows a choice: a side by its name, a character by its name."""
        return str(value).capitalize() if name == "side" else self.characters[value - 1]

    def play(self, narration: str, command: c.SeatCommand) -> None:
        """One step of the demo's script, by the acting seat's page."""
        page = self.seats[command.seat]
        if isinstance(command, c.CreateCharacter):
            self.create_character(page, command)
            return
        fields = msgspec.to_builtins(command)
        kind = fields.pop("type")
        assert f"It{APOS}s your move." in page.text_content("#status")
        other = self.seats[command.seat % 3 + 1]
        status = other.text_content("#status")
        assert "Waiting for" in status and f"{NAMES[command.seat]} (" in status, status
        # The tab's title says whose move it is too (a tab in the background).
        name = page.text_content("#campaign-name")
        assert page.title() == f"Your move · {name} · CAPEES!"
        yours = f"It{APOS}s your move." in status
        assert other.title() == f"{'Your move · ' if yours else ''}{name} · CAPEES!"
        defaults = {f.name: f.default for f in msgspec.structs.fields(command)}
        wanted = {k: v for k, v in fields.items()
                  if k not in ("seat", "value", "draw") and v not in ([], {}, defaults.get(k))
                  and not (k == "editor" and v == command.seat)}  # the sender is the Editor
        self.move(page, kind, wanted, narration)

    def create_character(self, page: Any, command: c.CreateCharacter) -> None:
        """The character form: a hero with Drives, Tropes and Exemplars, or a non-hero."""
        page.click("#new-character summary")
        form = page.locator("#character-form")
        form.get_by_label("Name", exact=True).fill(command.name)
        form.get_by_label("A hero").set_checked(command.hero)
        form.locator("[name=drives]").fill(
            "\n".join(f"{d} = {n}" for d, n in command.drives.items()))
        form.locator("[name=abilities]").fill("\n".join(
            f"{a.name}, {a.type}, {a.rating}" + (", super" if a.super else "")
            for a in command.abilities))
        form.locator("[name=exemplars]").fill("\n".join(
            f"{d} = {self.characters[i - 1]}" for d, i in command.exemplars.items()))
        before = page.get_attribute("body", "data-applied") or ""
        form.get_by_role("button", name="Create the character").click()
        page.wait_for_function("v => (document.body.dataset.applied || '') !== v || document."
                               "querySelector('#character-form .field-error:not(:empty)')",
                               arg=before)
        errors = form.locator(".field-error:not(:empty)")
        assert not errors.count(), errors.all_text_contents()
        self.characters.append(command.name)
        self.settle(page)

    def pass_reactions(self) -> None:
        """Every seat asked to react passes, until the round closes."""
        for _ in range(6):
            asked = [p for p in self.seats.values()
                     if p.locator('form[data-move="capees.pass_reaction"]').count()]
            if not asked:
                return
            self.move(asked[0], "capees.pass_reaction", {})
        raise AssertionError("the reactions never closed")


def test_the_editor_and_two_heroes_play_a_capees_scene_by_clicking_and_typing(
        browser: Any, run: Run, tmp_path: Path) -> None:
    editor = new_context(browser, run)
    alice = new_context(browser, run)
    joe = new_context(browser, run, width=375, height=812)  # a phone
    try:
        play_the_scene(editor, alice, joe, run, tmp_path)
    finally:
        for context in (editor, alice, joe):
            context.close()


def open_the_campaign(editor: Any, alice: Any, joe: Any, run: Run) -> Table:
    """The Editor opens a CAPEES! campaign in the lobby and hands out the three links."""
    owner = watch(editor.new_page())
    owner.goto(run.base + "/")
    owner.get_by_label("Campaign name").fill("Millennium City")
    owner.get_by_label("Edition").select_option("capees")
    owner.get_by_role("button", name="Open the campaign").click()
    owner.wait_for_url("**/play/**")
    owner.wait_for_function("+document.body.dataset.version > 0")
    assert owner.get_attribute("body", "data-edition") == "capees"
    for name in NAMES.values():
        owner.get_by_label("Player's name").fill(name)
        owner.get_by_role("button", name="Invite").click()
        owner.get_by_label(f"{name}{APOS}s invitation link").wait_for()
    links = {seat: owner.input_value(f"#link-{seat}") for seat in NAMES}
    seats = {1: watch(editor.new_page()), 2: watch(alice.new_page()), 3: watch(joe.new_page())}
    for seat, page in seats.items():
        open_table(page, links[seat])
        assert page.text_content("#who") == f"You are {NAMES[seat]} (seat {seat})"
    owner.evaluate("window.notReloaded = true")
    return Table(owner, seats)


def play_the_scene(editor: Any, alice: Any, joe: Any, run: Run, tmp_path: Path) -> None:
    table = open_the_campaign(editor, alice, joe, run)
    steps = [(n, command) for n, command in SCRIPT if not isinstance(command, c.SeatPlayer)]
    for index, (narration, command) in enumerate(steps):
        if narration == "Night Maiden strikes from the shadows":
            screenshot(table.seats[2], "capees-desktop.png", tmp_path)  # Alice's action
        if narration == "Silverstar simply asks the robbers to give up":
            screenshot(table.seats[3], "capees-phone.png", tmp_path)  # Joe's, on his phone
        try:
            if command == PASS_REACTIONS:
                table.pass_reactions()
            else:
                table.play(narration, command)
        except Exception as e:
            raise AssertionError(f"step {index} {command!r}: "
                                 f"{table.seats[1].text_content('#status')}") from e
        if index == 0:
            assert "Supreme" in table.seats[3].text_content("#characters")  # live on Joe's
        if narration == "Robbers hit the First National":
            dispute_and_vote(table)
        if narration == "They have taken the tellers":
            undo_and_redo(table, narration, command)
        if narration == "Chief Mannelli wants nobody in capes on his crime scene":
            on_the_board(table)
            slide_through_time(table)
    the_heroes_win(table)
    # The featured hero and Night Maiden's side were asked for with the picker.
    assert {("featured", "Silverstar"), ("side", "Hero")} <= set(table.picked), table.picked
    complete_a_sheet(table)
    verify(table)
    analytics(table.seats[1])


def on_the_board(table: Table) -> None:
    """Every page shows the scene's Complications, the sides' Prominence and the Editor."""
    for page in table.pages:
        line = page.text_content("#scene-line")
        assert "Editor: Editor" in line and "Story 1 (Victory Total 12" in line, line
        assert "Victory Target 6" in line and "Prominence 3" in line, line
        assert "Night Maiden: Prominence 1 (Hero, Alice)" in line, line
        assert "Chief Mannelli: Prominence 2 (Opponent, Editor)" in line, line
        cards = page.text_content("#conflicts")
        assert "#1 Robbery" in cards and "#2 Hostages" in cards and "Hero side" in cards


def undo_and_redo(table: Table, narration: str, command: c.SeatCommand) -> None:
    """The Editor takes back a Complication (Undo), then adds it again."""
    page = table.seats[1]
    click_and_wait(page, page.get_by_role("button", name="Undo my last move"))
    table.settle(page)
    for each in table.pages:
        assert "Hostages" not in each.text_content("#conflicts")
    table.play(narration, command)


def dispute_and_vote(table: Table) -> None:
    """The Editor adds a Complication the table disagrees with; Alice disputes it (preview
    first), Joe votes with her, and the table rewinds to before it."""
    page, alice, joe = (table.seats[s] for s in (1, 2, 3))
    table.move(page, "capees.add_complication", {"name": "Alien invasion"},
               "Saucers over the bank")
    added = applied(page)
    assert "Alien invasion" in joe.text_content("#conflicts")
    alice.get_by_label("Dispute a move").select_option(str(added))
    alice.get_by_label("Why").fill("Not in this story")
    alice.get_by_role("button", name="Preview without it").click()
    alice.locator("#preview").wait_for()
    assert f"just before event #{added}: 1 event undone" in alice.text_content("#preview")
    click_and_wait(alice, alice.get_by_role("button", name="Open the dispute"))
    table.settle(alice)
    assert "Not in this story" in page.text_content("#dispute")
    click_and_wait(joe, joe.get_by_role("button", name="Vote to uphold (rewind)"))
    table.settle(joe)
    for each in table.pages:
        assert "Alien invasion" not in each.text_content("#conflicts")
        assert "Saucers over the bank" in each.locator("#log li.reverted").last.text_content()


def slide_through_time(table: Table) -> None:
    """Alice looks back with the time slider, forks from there (a CAPEES! table of its own),
    and comes back."""
    alice = table.seats[2]
    slider = alice.locator("#slider")
    slider.focus()
    alice.keyboard.press("Home")
    alice.wait_for_function("document.body.dataset.past === '1'")
    assert "Between scenes (0 played)" in alice.text_content("#scene-line")
    assert not alice.is_visible("#moves-panel")
    # Where a move a few moves back ended: a fork starts where a move ended (R-X-REC-6).
    then = alice.eval_on_selector_all("#log li[data-last]",
                                      "items => items.map((li) => +li.dataset.last)")[-4]
    slider.fill(str(then))
    alice.wait_for_function(f"document.body.dataset.past === '{then}'")
    alice.get_by_role("button", name="Fork from here").click()
    with alice.context.expect_page() as opened:
        alice.locator("#fork-link").click()
    forked = opened.value
    forked.wait_for_function("+document.body.dataset.version > 0")
    assert forked.get_attribute("body", "data-edition") == "capees"
    assert forked.text_content("#campaign-name") == f"Millennium City (fork at {then})"
    assert "#1 Robbery" in forked.text_content("#conflicts")
    forked.close()
    alice.get_by_role("button", name="Back to now").click()
    assert alice.is_visible("#moves-panel")


def the_heroes_win(table: Table) -> None:
    """The heroes' Victory Points reach the Target: the scene is over on every page, the
    Inspirations are in the ledgers, the log holds everyone's narration."""
    for page in table.pages:
        assert "Between scenes (1 played)" in page.text_content("#scene-line")
        assert "Hero 6, Opponent 0" in page.text_content("#scene-line")
        ledgers = page.text_content("#ledgers")
        assert "Robbery: Hero, 5 VP, Bonus 1" in ledgers
        assert "Hostages: Hero, 1 VP, Bonus 1" in ledgers
        log = page.text_content("#log")
        assert "Silverstar simply asks the robbers to give up" in log
        assert "'Stand down, lady!'" in log
        assert page.evaluate("window.notReloaded === true"), "the page was reloaded"
        assert not page.errors, page.errors


def complete_a_sheet(table: Table) -> None:
    """Between scenes the Editor gives Supreme, known by name only, a full sheet (C-NPC-1)."""
    page = table.seats[1]
    page.click("#new-character summary")
    form = page.locator("#character-form")
    form.get_by_label("Whose sheet").select_option(label="Supreme")
    form.locator("[name=drives]").fill("\n".join(f"{d} = {n}" for d, n in NPC_DRIVES.items()))
    form.locator("[name=abilities]").fill("\n".join(
        f"{a.name}, {a.type}, {a.rating}" for a in ROBBERS_SHEET))
    click_and_wait(page, form.get_by_role("button", name="Create the character"))
    table.settle(page)
    alice = table.seats[2]
    alice.locator("#characters summary", has_text="Supreme").click()
    assert "Getaway driving: skill 1" in alice.text_content("#characters")
    # No longer known by name only, on Alice's page either.
    assert "Known by name only: Black Jack, Becky Tesla, Sister Grace" in alice.text_content(
        "#ledgers")


def verify(table: Table) -> None:
    joe = table.seats[3]
    joe.get_by_role("button", name="Verify").click()
    result = joe.locator("#verify-result[data-ok]")
    result.wait_for()
    assert result.get_attribute("data-ok") == "true", result.text_content()


def analytics(page: Any) -> None:
    """The analytics page draws the Victory Points over time."""
    page.get_by_role("link", name="Analytics").click()
    page.wait_for_url("**/analytics")
    chart = page.locator("img[data-chart=victory_points]")
    page.wait_for_function("(() => { const i = document.querySelector("
                           "'img[data-chart=victory_points]'); return i && i.complete "
                           "&& i.naturalWidth > 0; })()")
    assert chart.get_attribute("alt").startswith("Hero and Opponent Victory Points")
    assert page.text_content("#charts-error") == ""
