"""Undo, disputes, previews, rewinds, forks, diffs and time travel over HTTP (R-REC-*)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from helpers import DEMO_STEPS, Table, app_client, bearer, demo_table, play_until
from litestar.testing import TestClient

from application.campaigns import Campaigns
from application.config import persistence_env
from application.dice import ScriptedDice
from cli.demo import DEMO_DICE


@pytest.fixture
def client() -> Iterator[TestClient[Any]]:
    campaigns = Campaigns(persistence_env({"CAPES_DB": ":memory:"}),
                          dice=ScriptedDice(DEMO_DICE * 3))
    with app_client(campaigns) as client:
        yield client


def at_the_first_roll(client: TestClient[Any]) -> Table:
    """The demo until Reyes has rolled (and not yet decided) on the bridge."""
    table = demo_table(client)
    index = play_until(table, "Reyes waves the cars off the bridge")
    table.play(*DEMO_STEPS[index])
    return table


def test_a_seat_undoes_its_last_command_and_the_log_marks_it_reverted(
    client: TestClient[Any],
) -> None:
    """R-REC-1, R-REC-5: undo over HTTP; the events stay, marked reverted."""
    table = demo_table(client)
    play_until(table, "Reyes waves the cars off the bridge")  # Cleo has just started a turn
    before = table.query("board", version=table.version() - 1)
    undone = table.send({"type": "undo"}, seat=3)
    assert undone.status_code == 200, undone.text
    assert [e["type"] for e in undone.json()["events"]] == ["Undone"]
    assert table.query("board")["turn"] == before["turn"]
    log = table.query("events", after=table.version() - 3)["events"]
    assert [e["reverted"] for e in log] == [False, True, False]
    refused = table.send({"type": "undo"}, seat=1)
    assert refused.status_code == 422 and refused.json()["rule"] == "R-REC-1"


def test_a_roll_is_not_undone_over_http(client: TestClient[Any]) -> None:
    """R-X-REC-1: the die's value is in the answer: undoing the roll is refused, 422."""
    table = at_the_first_roll(client)
    version = table.version()
    refused = table.send({"type": "undo"}, seat=3)
    assert refused.status_code == 422 and refused.json()["rule"] == "R-X-REC-1"
    assert table.version() == version


def test_a_dispute_is_previewed_voted_and_upheld_rewinding_the_game(
    client: TestClient[Any],
) -> None:
    """R-REC-2, R-REC-3, R-REC-5: the whole dispute over HTTP."""
    table = at_the_first_roll(client)
    roll = table.version()
    before_roll = table.query("board", version=roll - 3)
    preview = table.query("disputes/preview", position=roll)
    assert preview["first"] == roll - 2
    assert [e["type"] for e in preview["reverted"]] == [
        "AbilityUsed", "AbilityBlocked", "DieRolled"]
    assert preview["board"] == before_roll
    opened = table.send({"type": "open_dispute", "position": roll, "reason": "wrong die"}, seat=1)
    assert opened.status_code == 200, opened.text
    waiting = table.send({"type": "accept_roll"}, seat=3)
    assert waiting.status_code == 409
    assert table.query("board")["waiting_for"] == {"2": ["vote"], "1": ["withdraw_dispute"]}
    assert table.send({"type": "vote", "uphold": True}, seat=1).status_code == 422
    record = table.query("record")
    assert record["dispute"]["voters"] == [1, 2] and record["dispute"]["votes"] == {"1": True}
    upheld = table.send({"type": "vote", "uphold": True}, seat=2)
    assert [e["type"] for e in upheld.json()["events"]] == [
        "DisputeVoted", "DisputeSettled", "Rewound"]
    assert table.query("board") == before_roll | {"waiting_for": before_roll["waiting_for"]}
    assert table.query("record")["reverted"] == [[roll - 2, roll]]


def test_a_preview_is_refused_as_the_dispute_itself_would_be(client: TestClient[Any]) -> None:
    """R-REC-2: before the scene, past the log, or a move of the record: the same 422."""
    table = at_the_first_roll(client)
    before_the_scene = table.query("events")["events"][3]["position"]
    seeds_closed = table.version() - 3  # the server's own step before the first roll
    for position in (1, before_the_scene, seeds_closed, table.version() + 5):
        preview = client.get(table.url("/disputes/preview"), params={"position": position},
                             headers=table.as_seat(1))
        dispute = table.send({"type": "open_dispute", "position": position, "reason": "no"},
                             seat=1)
        assert preview.status_code == dispute.status_code == 422, preview.text
        assert {k: preview.json()[k] for k in ("rule", "detail")} == {
            k: dispute.json()[k] for k in ("rule", "detail")}
        assert preview.json()["rule"] == "R-REC-2"


def listed_as_previews_allow(client: TestClient[Any], table: Table) -> list[int]:
    """``GET /record``'s ``disputable``, checked against a preview of every position."""
    disputable: list[int] = table.query("record")["disputable"]
    for position in range(1, table.version() + 1):
        preview = client.get(table.url("/disputes/preview"), params={"position": position},
                             headers=table.as_seat(1))
        listed = preview.status_code == 200 and preview.json()["first"] == position
        assert listed == (position in disputable), (position, preview.text)
    return disputable


def test_the_record_lists_the_moves_a_dispute_may_be_about_and_only_those(
    client: TestClient[Any],
) -> None:
    """R-REC-2: the moves of the scene still in effect, each by its first event; no move of
    the record (the seeds closing), none before the scene: exactly those a preview allows."""
    table = at_the_first_roll(client)
    roll = table.version() - 2
    disputable = listed_as_previews_allow(client, table)
    assert disputable[-1] == roll and roll - 1 not in disputable
    assert table.version() - 3 not in disputable, "the server's own step is not a move"


def test_the_list_kept_between_reads_drops_a_move_undone(client: TestClient[Any]) -> None:
    """R-REC-1, R-REC-2: only the log's new part is read for each ``GET /record``; a move undone
    since the last read leaves the list all the same."""
    table = demo_table(client)
    play_until(table, "Reyes waves the cars off the bridge")  # Cleo has just started a turn
    started = table.version()
    assert started in listed_as_previews_allow(client, table)
    assert table.send({"type": "undo"}, seat=3).status_code == 200
    assert started not in listed_as_previews_allow(client, table)


def test_the_owner_settles_and_sets_options_and_seats_may_not(client: TestClient[Any]) -> None:
    """R-REC-4: owner_settles is a table option only the owner sets."""
    table = at_the_first_roll(client)
    table.send({"type": "open_dispute", "position": table.version(), "reason": "no"}, seat=1)
    settle = table.url("/disputes/settle")
    assert client.post(settle, json={"uphold": False},
                       headers=table.as_owner()).json()["rule"] == "R-REC-4"
    options = table.url("/options")
    assert client.post(options, json={"owner_settles": True},
                       headers=table.as_seat(1)).status_code == 403
    assert client.post(options, json={"owner_settles": True},
                       headers=table.as_owner()).status_code == 200
    assert client.post(settle, json={"uphold": False},
                       headers=table.as_seat(2)).status_code == 403
    settled = client.post(settle, json={"uphold": False}, headers=table.as_owner())
    assert [e["type"] for e in settled.json()["events"]] == ["DisputeSettled"]
    assert table.send({"type": "accept_roll"}, seat=3).status_code == 200


def test_a_fork_has_its_own_owner_who_issues_its_seats_tokens(client: TestClient[Any]) -> None:
    """R-REC-6: fork over HTTP; the source records the link."""
    table = at_the_first_roll(client)
    at = table.version() - 3
    response = client.post(table.url("/forks"), json={"version": at, "name": "What if"},
                           headers=table.as_seat(2))
    assert response.status_code == 201, response.text
    fork = response.json()
    assert (fork["source"], fork["version"]) == (table.campaign_id, at)
    forked = Table(client, fork["campaign_id"], fork["owner_token"])
    token = client.post(forked.url("/seats/3/token"), headers=forked.as_owner())
    assert token.status_code == 201
    assert client.post(forked.url("/seats/3/token"),
                       headers=table.as_owner()).status_code == 401
    forked.tokens[3] = token.json()["token"]
    assert forked.query("board", seat=3)["name"] == "What if"
    assert table.query("record")["forks"] == [[fork["campaign_id"], at]]


def test_time_travel_by_time_and_a_diff_between_versions(client: TestClient[Any]) -> None:
    """R-REC-5 relies on looking back: ``?at=`` and ``/diff``."""
    table = demo_table(client)
    play_until(table, "Ana buys a turn")
    now = datetime.now(UTC)
    assert table.query("board", at=now.isoformat())["page"] == table.query("board")["page"]
    early = client.get(table.url("/board"), params={"at": (now - timedelta(days=1)).isoformat()},
                       headers=table.as_seat(1))
    assert early.status_code == 404
    naive = client.get(table.url("/board"), params={"at": "2026-01-01T00:00:00"},
                       headers=table.as_seat(1))
    assert naive.status_code == 400
    changes = table.query("diff", **{"from": 4, "to": table.version()})
    assert {p["seat"] for p in changes["players"]} == {1, 2, 3}
    assert [c["status"] for c in changes["conflicts"]] == ["added", "added"]
    assert client.get(table.url("/diff"), params={"from": 1},
                      headers=bearer("nope")).status_code == 401
