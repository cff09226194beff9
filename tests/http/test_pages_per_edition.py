"""The table's page takes the shape of the campaign's edition: the same page and table script
for every edition, with the edition's own script (moves, board, ledgers, sheets) and character
form; the analytics page of a CAPEES! campaign draws its Victory Points."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import pytest
from helpers import app_client, open_campaign
from litestar.testing import TestClient

from api.routes.pages import STATIC, TEMPLATES
from application.config import persistence_env


@pytest.fixture
def client() -> Iterator[TestClient[Any]]:
    with app_client(persistence_env({"CAPES_DB": ":memory:"})) as test_client:
        yield test_client


def test_the_lobby_offers_both_editions(client: TestClient[Any]) -> None:
    lobby = client.get("/").text
    assert '<option value="capes">' in lobby and '<option value="capees">' in lobby


def test_a_capees_table_loads_the_capees_script_and_character_form(
    client: TestClient[Any],
) -> None:
    opened = client.post("/campaigns", json={"name": "Millennium City", "edition": "capees"})
    page = client.get(f"/play/{opened.json()['campaign_id']}").text
    assert 'data-edition="capees"' in page
    assert re.search(r'<script src="/static/edition-capees.js\?v=\w+"></script>', page)
    assert re.search(r'<script src="/static/table.js\?v=\w+"></script>', page)
    assert "edition-capes.js" not in page
    assert 'id="ch-exemplars"' in page and "click_and_lock" not in page


def test_a_capes_table_loads_the_capes_script_and_character_form(
    client: TestClient[Any],
) -> None:
    table = open_campaign(client, players=["Ana"])
    page = client.get(f"/play/{table.campaign_id}").text
    assert 'data-edition="capes"' in page
    assert re.search(r'<script src="/static/edition-capes.js\?v=\w+"></script>', page)
    assert "click_and_lock" in page and 'id="ch-exemplars"' not in page


def test_an_unknown_campaign_gets_the_page_whose_script_says_the_link_is_bad(
    client: TestClient[Any],
) -> None:
    page = client.get(f"/play/{uuid4()}")
    assert page.status_code == 200 and 'data-edition="capes"' in page.text


def test_every_edition_has_its_script_and_character_form() -> None:
    from domain.editions import EDITIONS

    for name in EDITIONS:
        assert (STATIC / f"edition-{name}.js").read_text().startswith("/* Edition")
        assert (TEMPLATES / f"characters_{name}.html").exists()


def test_the_capees_log_words_every_event_that_carries_more_than_its_name() -> None:
    """The CAPEES! page's log says what each event of the edition did (``EVENT_TEXT`` in its
    script, one ``Name: (e) =>`` a line): who, which Complication, ability, die, Debt, Story
    Tokens. Only the events with nothing in them but their name keep it ("Resolution began")."""
    from domain.capees.events import EVENT_TYPES

    source = (STATIC / "edition-capees.js").read_text()
    worded = set(re.findall(r"^ +(\w+): \(e\) =>", source, re.MULTILINE))
    assert worded | worded_by_table() == {t.__name__ for t in EVENT_TYPES if t.__struct_fields__}


def test_the_capes_log_words_every_event_that_carries_more_than_its_name() -> None:
    """The Capes page's log says what each event of the edition did (``EVENT_TEXT`` in its
    script, one ``Name: "template"`` or ``Name: (e) =>`` a line): which characters, seats,
    Conflicts, dice and values, Drives, Story Tokens and Debt. It named most of them only
    ("Character created", "Scene framed", "Reactions opened"); only the events with nothing in
    them but their name keep it ("Campaign closed")."""
    from domain.capes.events import EVENT_TYPES

    source = (STATIC / "edition-capes.js").read_text()
    worded = words_of(source, "EVENT_TEXT")
    assert worded | worded_by_table() == {t.__name__ for t in EVENT_TYPES if t.__struct_fields__}


def words_of(source: str, table: str) -> set[str]:
    """The event names a script's ``const <table> = {…}`` words, one ``Name: "template"`` or
    ``Name: (e) =>`` a line."""
    entries = source.split(f"const {table} = {{")[1].split("\n  };")[0]
    return set(re.findall(r'^ +(\w+): (?:\(e\) =>|")', entries, re.MULTILINE))


def worded_by_table() -> set[str]:
    """The events both editions share (a campaign opened, a seat taken, a fork), worded once
    by table.js's ``TABLE_TEXT``."""
    return words_of((STATIC / "table.js").read_text(), "TABLE_TEXT")


def test_the_analytics_page_of_a_capees_campaign_draws_its_victory_points(
    client: TestClient[Any],
) -> None:
    opened = client.post("/campaigns", json={"name": "Millennium City", "edition": "capees"})
    capees = client.get(f"/play/{opened.json()['campaign_id']}/analytics").text
    assert 'data-chart="victory_points"' in capees and 'data-chart="conflicts"' not in capees
    table = open_campaign(client, players=["Ana"])
    capes = client.get(f"/play/{table.campaign_id}/analytics").text
    assert 'data-chart="conflicts"' in capes and 'data-chart="victory_points"' not in capes
