"""A damaged or edited store is found out and never served as the truth (issue 13, items 6, 7).

Snapshots are a cache, not evidence: ``verify`` checks every one against the fold of the log,
and the server never loads a campaign from one that disagrees. A campaign whose log does not
verify is marked in every answer about it and takes no command (423); an event that cannot be
decoded is a 423 naming its position, never a 500. (R-FAIR-6, R-FAIR-7.)
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from fair_play import blob, sqlite_env, write
from litestar.testing import TestClient
from stores import sqlite_file

from api.app import create_app
from application.audit import verify_stored
from application.campaigns import Campaigns
from cli.main import main
from domain.capes import RULES_VERSION


class Table:
    """One campaign seen through a client: its id and tokens."""

    def __init__(self, client: Any, campaign_id: str, tokens: dict[str, str]) -> None:
        self.client = client
        self.campaign_id = campaign_id
        self.tokens = tokens

    def url(self, suffix: str = "") -> str:
        return f"/campaigns/{self.campaign_id}{suffix}"

    def as_seat(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[str(seat)]}"}

    def as_owner(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens['owner']}"}

    def send(self, command: dict[str, Any], seat: int) -> Any:
        return self.client.post(self.url("/commands"), json={"command": command},
                                headers=self.as_seat(seat))

    def query(self, what: str) -> Any:
        response = self.client.get(self.url(f"/{what}" if what else ""),
                                   headers=self.as_seat(1))
        assert response.status_code == 200, response.text
        return response.json()

    def version(self) -> int:
        return int(self.query("")["version"])


def app_client(campaigns: Campaigns) -> TestClient[Any]:
    return TestClient(create_app(campaigns, rate_limit=0))


def open_campaign(client: Any, starting_tokens: int, players: list[str]) -> Table:
    opened = client.post("/campaigns", json={"name": "Harbor",
                                             "starting_tokens": starting_tokens}).json()
    tokens = {"owner": opened["owner_token"]}
    for name in players:
        taken = client.post(f"/campaigns/{opened['campaign_id']}/seats",
                            json={"name": name}).json()
        tokens[str(taken["seat"])] = taken["token"]
    return Table(client, opened["campaign_id"], tokens)


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "damaged.sqlite"
    monkeypatch.setenv("CAPES_DB", str(path))
    monkeypatch.delenv("CAPES_DATABASE_URL", raising=False)
    return path


def a_table(db: Path) -> tuple[Campaigns, Table, dict[str, str]]:
    """A campaign opened over HTTP with 5 Story Tokens a player, snapshotted every 4 events;
    the Campaigns stay open for the caller to close."""
    app = Campaigns(sqlite_env(db), snapshot_interval=4)
    with app_client(app) as client:
        table = open_campaign(client, starting_tokens=5, players=["Ana", "Ben", "Cleo"])
    return app, table, table.tokens


def forge_snapshots(db: Path, before: bytes, after: bytes) -> int:
    """Edit every stored snapshot's JSON (inside its compression, as a forger would); how many
    were changed."""
    with sqlite_file(db) as conn:
        rows = conn.execute("SELECT originator_id, originator_version, state "
                            "FROM stored_snapshots").fetchall()
        changed = 0
        for originator, version, state in rows:
            body = zlib.decompress(state)
            if before in body:
                conn.execute("UPDATE stored_snapshots SET state=? WHERE originator_id=? AND "
                             "originator_version=?",
                             (zlib.compress(body.replace(before, after)), originator, version))
                changed += 1
    return changed


def test_a_forged_snapshot_fails_verify_and_is_never_served(
    db: Path, capsys: Any
) -> None:
    app, table, tokens = a_table(db)
    campaign = UUID(table.campaign_id)
    app.close()
    assert forge_snapshots(db, b'"tokens":5', b'"tokens":99') >= 1

    checker = Campaigns(sqlite_env(db))
    try:
        report = verify_stored(checker, campaign)
    finally:
        checker.close()
    assert not report.ok and report.discrepancy is not None
    assert report.discrepancy.check == "snapshot", report.summary()
    assert "tokens" in report.discrepancy.message
    for args in ([], ["--strict"], ["--head", f"{report.head_position}:{report.head}"]):
        assert main(["verify", table.campaign_id, *args]) != 0
        assert "snapshot" in capsys.readouterr().out

    with app_client(Campaigns(sqlite_env(db))) as client:
        again = Table(client, table.campaign_id, tokens)
        state = again.query("state")
        assert [p["tokens"] for p in state["players"]] == [5, 5, 5]
        # It plays on from the log's truth, and the answers do not say it is broken.
        played = again.send({"type": "frame_scene", "text": "The docks"}, seat=1)
        assert played.status_code == 200, played.text
        assert "capes-log-broken" not in played.headers


def test_a_snapshot_of_another_rules_version_is_left_out_of_verify_as_it_is_of_loading(
    db: Path,
) -> None:
    """A snapshot taken under another version of the rules is never used (the campaign is
    replayed), and its state may differ from what the rules of now fold to: after an upgrade
    that changed the rules, verify reported every honest store's snapshots as forged."""
    app, table, _ = a_table(db)
    campaign = UUID(table.campaign_id)
    app.close()
    old = f'"rules_version":"{RULES_VERSION}"'.encode()
    assert forge_snapshots(db, old, b'"rules_version":"capes-0.9"') >= 1
    assert forge_snapshots(db, b'"tokens":5', b'"tokens":99') >= 1  # what 0.9 folded to
    checker = Campaigns(sqlite_env(db))
    try:
        report = verify_stored(checker, campaign)
        assert report.ok, report.summary()
        assert [p.tokens for p in checker.state(campaign).players] == [5, 5, 5]
    finally:
        checker.close()


def test_a_campaign_whose_chain_does_not_verify_is_marked_and_takes_no_command(
    db: Path,
) -> None:
    app, table, tokens = a_table(db)
    campaign = UUID(table.campaign_id)
    app.close()
    topic, state = blob(db, campaign, 2)
    write(db, campaign, 2, topic, state.replace(b'"Ana"', b'"Eve"'))

    with app_client(Campaigns(sqlite_env(db))) as client:
        again = Table(client, table.campaign_id, tokens)
        summary = client.get(again.url(), headers=again.as_seat(1))
        assert summary.status_code == 200
        assert summary.json()["broken_at"] == 2
        assert summary.headers["capes-log-broken"] == "2"
        board = client.get(again.url("/board"), headers=again.as_seat(2))
        assert board.headers["capes-log-broken"] == "2"
        version = again.version()
        refused = again.send({"type": "frame_scene", "text": "The docks"}, seat=1)
        assert refused.status_code == 423, refused.text
        assert refused.json()["position"] == 2
        closed = client.post(again.url("/close"), headers=again.as_owner())
        assert closed.status_code == 423
        assert again.version() == version, "nothing is appended on a broken chain"
        verified = client.get(again.url("/verify"), headers=again.as_seat(1)).json()
        assert verified["ok"] is False
        # A fork from the damage on would carry it under a new chain that verifies: refused,
        # for the owner as for a seat, naming the event.
        for body, headers in (({}, again.as_owner()), ({"version": 2}, again.as_seat(1))):
            laundered = client.post(again.url("/forks"), json=body, headers=headers)
            assert laundered.status_code == 423, laundered.text
            assert laundered.json()["position"] == 2
            assert "version 1 at most" in laundered.json()["detail"]
        # The host forks it from before the damage: the fork plays, the source stays as it is.
        forked = client.post(again.url("/forks"), json={"version": 1}, headers=again.as_owner())
        assert forked.status_code == 201, forked.text
        assert again.version() == version


def test_the_console_appends_nothing_to_a_log_that_does_not_verify(
    db: Path, capsys: Any,
) -> None:
    """Issue 13 at the console: a command, a fork from the damage on, new tokens are refused
    as the server refuses them (the console chained events onto a damaged log, and forked the
    damage into a campaign that verified); a fork from before the damage is made."""
    app, table, _ = a_table(db)
    app.close()
    campaign = UUID(table.campaign_id)
    topic, state = blob(db, campaign, 2)
    write(db, campaign, 2, topic, state.replace(b'"Ana"', b'"Eve"'))

    def stored_version() -> int:
        store = Campaigns(sqlite_env(db))
        try:
            return store.get(campaign).version
        finally:
            store.close()

    version = stored_version()
    capsys.readouterr()
    for argv in (["undo", table.campaign_id, "--seat", "1"],
                 ["fork", table.campaign_id], ["tokens", table.campaign_id]):
        assert main(argv) == 1, argv
        assert "refused: " in capsys.readouterr().err, argv
    assert stored_version() == version, "nothing appended"
    assert main(["fork", table.campaign_id, "--version", "1"]) == 0


def test_an_event_that_cannot_be_decoded_is_a_423_naming_its_position(db: Path) -> None:
    app, table, tokens = a_table(db)
    campaign = UUID(table.campaign_id)
    app.close()
    topic, _ = blob(db, campaign, 3)
    write(db, campaign, 3, topic, b"\x00not json")

    with app_client(Campaigns(sqlite_env(db))) as client:
        again = Table(client, table.campaign_id, tokens)
        for path in ("/events", "/board", ""):
            response = client.get(again.url(path), headers=again.as_seat(1))
            assert response.status_code in (200, 423), (path, response.text)
            if response.status_code == 423:
                assert response.json()["position"] == 3
            assert response.headers["capes-log-broken"] == "3"
        events = client.get(again.url("/events"), headers=again.as_seat(1))
        assert events.status_code == 423 and events.json()["position"] == 3
        refused = again.send({"type": "frame_scene", "text": "The docks"}, seat=1)
        assert refused.status_code == 423
