"""Undo, disputes, previews, rewinds, forks, diffs and time travel over HTTP (R-REC-*)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
from helpers import (
    DEMO_STEPS,
    Table,
    a_scene_played_to_its_end,
    app_client,
    bearer,
    demo_table,
    disputed_away,
    open_campaign,
    play_until,
)
from litestar.testing import TestClient

from api.routes.record import OptionsChange
from application.campaigns import Campaigns
from application.config import persistence_env
from application.dice import ScriptedDice
from cli.demo import DEMO_DICE
from cli.main import main
from domain.record import TableOptions


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


def a_seat_taken_after_the_scene_and_disputed_away(client: TestClient[Any]) -> tuple[Table, int]:
    """Ana, Ben and Cleo play a scene to its end; Dana sits down (seat 4); Ana disputes her
    seating (R-X-REC-5) and Ben and Cleo uphold it: the game goes back to before Dana sat
    down (R-REC-5). The table, and the dispute's number."""
    table = open_campaign(client, players=["Ana", "Ben", "Cleo"])
    a_scene_played_to_its_end(table)
    assert table.seat("Dana") == 4
    assert table.query("board", seat=4)["players"][3] == "Dana"
    dispute = disputed_away(table, 4)
    assert table.query("board")["players"] == ["Ana", "Ben", "Cleo"]
    return table, dispute


def test_a_seat_an_upheld_dispute_took_away_loses_its_link_reads_included(
    client: TestClient[Any],
) -> None:
    """R-X-REC-8: Dana's link is refused from then on, whatever it asks — a read, a command,
    who it is — with 403 naming the dispute: she is no longer at the table, and her link
    went on reading it as a seat that no longer exists. (Her live stream ends too: the
    browser's test, where a stream can be followed.)"""
    table, dispute = a_seat_taken_after_the_scene_and_disputed_away(client)
    asked = [client.get(table.url(path), headers=table.as_seat(4))
             for path in ("", "/board", "/events", "/me", "/record")]
    asked.append(client.post(table.url("/commands"), headers=table.as_seat(4),
                             json={"command": {"type": "narrate", "seat": 4, "text": "Hi"}}))
    for refused in asked:
        assert refused.status_code == 403, (refused.request.url, refused.text)
        problem = refused.json()
        assert problem["rule"] == "R-X-REC-8"
        assert f"seat 4 was removed from this campaign by dispute #{dispute}" in problem["detail"]
    assert table.query("board", seat=2)["players"] == ["Ana", "Ben", "Cleo"]  # the others play on


def test_a_seat_taken_again_after_a_dispute_took_it_away_plays_with_its_new_link(
    client: TestClient[Any],
) -> None:
    """R-X-REC-8: the seat is taken again (Dana sits down anew: seat 4 again), with a new
    link; the old one is then refused as any replaced link is (401)."""
    table, _ = a_seat_taken_after_the_scene_and_disputed_away(client)
    old = table.tokens[4]
    assert table.seat("Dana") == 4
    assert table.query("board", seat=4)["players"][3] == "Dana"
    assert client.get(table.url("/board"), headers=bearer(old)).status_code == 401


def test_a_seat_taken_away_by_a_vote_at_the_console_loses_its_link_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """R-X-REC-8: the last vote comes from the console (``capes vote``, on the store itself):
    the seat's link is refused all the same."""
    store = {"CAPES_DB": str(tmp_path / "table.sqlite")}
    with app_client(persistence_env(store)) as client:
        table = open_campaign(client, players=["Ana", "Ben", "Cleo"])
        a_scene_played_to_its_end(table)
        table.seat("Dana")
        page = table.query("events", after=table.version() - 2)["events"]
        seated = next(e["position"] for e in page if e["type"] == "PlayerSeated")
        assert table.send({"type": "open_dispute", "seat": 1, "position": seated,
                           "reason": "Dana sat down at the wrong table"}).status_code == 200
        assert table.send({"type": "vote", "seat": 2, "uphold": True}).status_code == 200
    monkeypatch.setenv("CAPES_DB", store["CAPES_DB"])
    monkeypatch.delenv("CAPES_DATABASE_URL", raising=False)

    assert main(["vote", table.campaign_id, "--seat", "3", "--uphold"]) == 0

    with app_client(persistence_env(store)) as client:
        refused = client.get(table.url("/board"), headers=table.as_seat(4))
        assert refused.status_code == 403, refused.text
        assert refused.json()["rule"] == "R-X-REC-8"
        assert client.get(table.url("/board"), headers=table.as_seat(3)).status_code == 200


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


def test_patching_the_options_changes_only_those_sent_where_posting_resets_the_others(
    client: TestClient[Any],
) -> None:
    """R-REC-3, R-REC-4: ``PATCH /options`` merges: the options left out keep their values,
    and it records the same ``TableOptionsSet`` as ``POST``, with every option (POST, which
    sets them all, put the threshold and owner_settles back to their defaults)."""
    table = open_campaign(client, players=("Ana", "Ben"))
    options = table.url("/options")
    posted = client.post(options, json={"dispute_threshold": "unanimous", "owner_settles": True},
                         headers=table.as_owner())
    assert posted.status_code == 200, posted.text
    patched = client.patch(options, json={"dispute_minutes": 60}, headers=table.as_owner())
    assert patched.status_code == 200, patched.text
    merged = {"dispute_threshold": "unanimous", "owner_settles": True, "dispute_minutes": 60}
    assert [e["event"] for e in patched.json()["events"]] == [
        {"type": "TableOptionsSet", "options": merged}]
    assert table.query("record")["options"] == merged
    patched = client.patch(options, json={"owner_settles": False}, headers=table.as_owner())
    assert table.query("record")["options"] == {**merged, "owner_settles": False}
    client.post(options, json={"dispute_minutes": 60}, headers=table.as_owner())
    assert table.query("record")["options"] == {
        "dispute_threshold": "majority", "owner_settles": False, "dispute_minutes": 60}


def test_a_patch_of_the_options_takes_each_option_typed_and_bounded_as_the_options_are() -> None:
    """An option added to ``TableOptions`` is one a PATCH may change, and a value POST refuses
    PATCH refuses too; none is required."""
    def fields(struct: type) -> list[Any]:
        return list(msgspec.inspect.type_info(struct).fields)  # type: ignore[attr-defined]

    assert [(f.name, f.type) for f in fields(OptionsChange)] == [
        (f.name, f.type) for f in fields(TableOptions)]
    assert not any(f.required for f in fields(OptionsChange))


def test_patching_the_options_is_the_owners_and_refuses_what_posting_refuses_and_nothing(
    client: TestClient[Any],
) -> None:
    """R-REC-4: a seat's token is refused (403), a wrong one (401); a bad value is a 400
    naming its field, as for POST, an unknown field a 400 naming it, an empty object a 400
    saying no option was given; none of them changes anything."""
    table = open_campaign(client, players=("Ana", "Ben"))
    options = table.url("/options")
    version = table.version()
    sent = {"dispute_minutes": 60}
    assert client.patch(options, json=sent, headers=table.as_seat(1)).status_code == 403
    assert client.patch(options, json=sent, headers=bearer("not-a-token")).status_code == 401
    for body, key in [({"dispute_minutes": 0}, "dispute_minutes"),
                      ({"dispute_threshold": "most"}, "dispute_threshold"),
                      ({"owner_settles": "yes"}, "owner_settles")]:
        refused = client.patch(options, json=body, headers=table.as_owner())
        assert refused.status_code == 400, refused.text
        assert [e["key"] for e in refused.json()["errors"]] == [key], refused.text
    unknown = client.patch(options, json={"dispute_mins": 60}, headers=table.as_owner())
    assert unknown.status_code == 400 and "dispute_mins" in unknown.json()["detail"], unknown.text
    empty = client.patch(options, json={}, headers=table.as_owner())
    assert empty.status_code == 400, empty.text
    assert "no option given" in empty.json()["detail"], empty.text
    assert table.version() == version
    assert table.query("record")["options"] == {
        "dispute_threshold": "majority", "owner_settles": False, "dispute_minutes": 1440}


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
