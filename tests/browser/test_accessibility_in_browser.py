"""An automated accessibility audit of the browser pages with axe-core (``axe-playwright-python``
bundles it): the lobby; a Capes table mid-scene, as its owner and as the seat whose move it is
(two Conflicts with their dice, the picker open); a CAPEES! table mid-scene; the analytics page.
Each at a desktop's width and at a phone's (375 px), by axe's default rules (WCAG 2.x A and AA,
best practices) and :data:`ALSO`. No violation axe rates serious or critical may be left, but
those :data:`EXCUSED` names, each by its rule and the element it is about, with why; the
moderate and minor ones are listed in the test's output (``-rP``).

Real Chromium, a real server with scripted dice; each table is set up over HTTP (the other
browser tests' fixtures), and the page under test is then opened as its link opens it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from capees_positions import REACTING
from helpers import open_campaign
from test_capees_pickers_in_browser import dice, reach, run
from test_capes_moves_in_browser import BEN, the_ship_to_resolve
from test_play_in_browser import Run, new_context, watch
from test_table_page_in_browser import Opener, http, open_page

from cli.demo_capees import ALICE

pytestmark = pytest.mark.browser

__all__ = ["dice", "http", "open_page", "reach", "run"]  # the fixtures this module's tests use

#: Every die of a Capes table rolls 3 (the set-ups of ``test_capes_moves_in_browser.py``).
THREES = (3,) * 60
#: The widths each page is audited at: a desktop's, and a phone's.
WIDTHS = {"desktop": (1280, 1000), "phone": (375, 812)}
#: Rules axe leaves off by default that the audit runs too: WCAG 2.2's target size (AA: a
#: finger on a phone), and the duplicate ids (WCAG 2.0's parsing, since retired, but a label's
#: ``for`` or an ``aria-labelledby`` that names a duplicated id points at the wrong element).
ALSO = ("target-size", "duplicate-id", "duplicate-id-active")
#: The impacts that fail the audit.
FAILING = ("serious", "critical")
#: Violations let through: (rule id, the element's CSS selector as axe names it) -> why.
EXCUSED: dict[tuple[str, str], str] = {}

#: axe.run's options: the violations alone (each other kind of result cut to one element).
OPTIONS = {"resultTypes": ["violations"], "rules": {rule: {"enabled": True} for rule in ALSO}}


@pytest.fixture(scope="module")
def axe() -> Axe:
    return Axe()


def audit(axe: Axe, page: Any, where: str) -> None:
    """Run axe on ``page`` at each of :data:`WIDTHS`: fail on a serious or critical violation
    not :data:`EXCUSED`; print the others. The page is left at the width it had."""
    failing: list[str] = []
    size = page.viewport_size
    for width, (x, y) in WIDTHS.items():
        page.set_viewport_size({"width": x, "height": y})
        results = axe.run(page, options=OPTIONS).response
        for violation in results["violations"]:
            for node in violation["nodes"]:
                target = " ".join(map(str, node["target"]))
                line = (f"{where} ({width}): {violation['id']} ({violation['impact']}) "
                        f"at {target}: {node['failureSummary']!r} {node['html'][:160]}")
                if violation["impact"] in FAILING and (violation["id"], target) not in EXCUSED:
                    failing.append(line)
                else:
                    print(line)
    page.set_viewport_size(size)
    assert not failing, "\n".join(failing)


def test_the_lobby_has_no_serious_accessibility_violation(
    browser: Any, run: Run, axe: Axe
) -> None:
    context = new_context(browser, run)
    page = watch(context.new_page())
    page.goto(run.base + "/")
    page.locator("#open-campaign").wait_for()
    audit(axe, page, "lobby")
    # Opened here, a campaign is listed under "Your tables" on the lobby's next visit.
    page.get_by_label("Campaign name").fill("Harbor City")
    page.get_by_role("button", name="Open the campaign").click()
    page.wait_for_url("**/play/**")
    page.goto(run.base + "/")
    page.get_by_role("link", name="Harbor City").wait_for()
    audit(axe, page, "lobby, a table listed")
    assert not page.errors, page.errors
    context.close()


@pytest.mark.parametrize("dice", [THREES])
def test_a_capes_table_mid_scene_has_no_serious_accessibility_violation_for_its_owner(
    http: Any, open_page: Opener, axe: Axe
) -> None:
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    the_ship_to_resolve(table)
    owner = open_page(table, table.owner_token)
    owner.locator("#conflicts .die").first.wait_for()
    audit(axe, owner, "Capes table, owner")
    owner.locator("#slider").fill("5")
    owner.locator("#slider").dispatch_event("change")
    owner.locator("#past").wait_for()
    audit(axe, owner, "Capes table, owner, past")
    owner.get_by_role("button", name="Back to now").click()
    # Ana disputes Ben's roll (R-REC-2): the record panel's news, and Cleo's vote.
    rolled = table.query("events", after=0)["events"]
    roll = next(e["position"] for e in rolled if e["type"] == "DieRolled")
    opened = table.send({"type": "open_dispute", "seat": 1, "position": roll,
                         "reason": "Lightning never strikes twice"})
    assert opened.status_code == 200, opened.text
    cleo = open_page(table, table.tokens[3])
    cleo.get_by_role("button", name="Vote to uphold (rewind)").wait_for()
    audit(axe, cleo, "Capes table, a dispute open")
    assert not owner.errors + cleo.errors, owner.errors + cleo.errors


@pytest.mark.parametrize("dice", [THREES])
def test_a_capes_table_mid_scene_has_no_serious_accessibility_violation_for_the_seat_to_move(
    http: Any, open_page: Opener, axe: Axe
) -> None:
    """Ben resolves the ship (R-PAGE-7): his moves' forms, then the picker that asks how the
    dice pair off (R-RES-4), a modal dialog over the page."""
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    the_ship_to_resolve(table)
    ben = open_page(table, table.tokens[BEN])
    ben.locator("form[data-move=resolve]").wait_for()
    audit(axe, ben, "Capes table, Ben's move")
    open_every_details(ben)
    ben.get_by_label("Click-and-lock").check()
    audit(axe, ben, "Capes table, the character forms and sheets open")
    ben.locator("form[data-move=resolve]").get_by_role("button", name="Resolve").click()
    ben.get_by_role("dialog").wait_for()
    audit(axe, ben, "Capes table, Ben's picker")
    assert not ben.errors, ben.errors


def test_a_capees_table_mid_scene_has_no_serious_accessibility_violation(
    reach: Any, axe: Axe
) -> None:
    """CAPEES!: Alice's chance to react to Night Maiden's kept roll (C-REACT-1), the
    Complications with their dice."""
    alice = reach(REACTING, ALICE)
    audit(axe, alice, "CAPEES! table, Alice's move")
    open_every_details(alice)
    audit(axe, alice, "CAPEES! table, the character form open")
    assert not alice.errors, alice.errors
    analytics(alice)
    audit(axe, alice, "CAPEES! analytics")


@pytest.mark.parametrize("dice", [THREES])
def test_the_analytics_page_has_no_serious_accessibility_violation(
    http: Any, open_page: Opener, axe: Axe
) -> None:
    table = open_campaign(http, players=("Ana", "Ben", "Cleo"))
    the_ship_to_resolve(table)
    ana = open_page(table, table.tokens[1])
    analytics(ana)
    audit(axe, ana, "analytics")
    assert not ana.errors, ana.errors


def test_the_audit_fails_on_a_button_without_a_name_and_on_text_too_faint_to_read(
    browser: Any, run: Run, axe: Axe
) -> None:
    """The audit itself: a page it passes, given an unnamed button and pale grey text, fails
    it by those rules (so a clean audit is axe's verdict, not a check that never ran)."""
    context = new_context(browser, run)
    page = watch(context.new_page())
    page.goto(run.base + "/")
    page.evaluate("""document.querySelector('main').append(
        Object.assign(document.createElement('button'), {className: 'x'}),
        Object.assign(document.createElement('p'), {textContent: 'faint', style: 'color:#ddd'}))""")
    with pytest.raises(AssertionError) as failed:
        audit(axe, page, "lobby, spoilt")
    assert "button-name (critical) at .x" in str(failed.value)
    assert "color-contrast (serious)" in str(failed.value)
    context.close()


def open_every_details(page: Any) -> None:
    """Every collapsed part opened (the character forms, the sheets): axe skips hidden ones."""
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")


def analytics(page: Any) -> None:
    """From the table, its analytics page, the charts drawn and the dice table filled in."""
    page.get_by_role("link", name="Analytics").click()
    page.wait_for_url("**/analytics")
    page.wait_for_function("[...document.querySelectorAll('img[data-chart]')].every("
                           "i => i.complete && i.naturalWidth > 0)")
    page.locator("#dice-table tbody tr").last.wait_for()


def test_the_focus_ring_in_the_dark_header_stands_out_from_it(
    browser: Any, run: Run
) -> None:
    """WCAG 1.4.11 (non-text contrast, 3:1), which axe does not check: the keyboard's focus
    ring on the header's links and buttons was the page's blue on the header's near-black,
    2.7:1, barely seen."""
    context = new_context(browser, run)
    page = context.new_page()
    page.goto(run.base + "/")
    for _ in range(3):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('header .brand')"):
            break
    ring, header = page.evaluate("""[getComputedStyle(document.activeElement),
        getComputedStyle(document.querySelector('header.top'))].map(s =>
        [s.outlineStyle, s.outlineColor, s.backgroundColor])""")
    assert ring[0] == "solid", ring
    assert contrast(ring[1], header[2]) >= 3, (ring, header)
    context.close()


def contrast(one: str, other: str) -> float:
    """WCAG's contrast ratio of two CSS colours given as ``rgb(r, g, b)``."""

    def luminance(colour: str) -> float:
        channels = [int(x) / 255 for x in re.findall(r"\d+", colour)[:3]]
        r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
                   for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)
