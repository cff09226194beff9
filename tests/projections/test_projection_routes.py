"""The read models over HTTP and on the command line: read-your-writes with a command's
position, the board and ledgers served from read models (and replayed when one is late), the
timeline, analytics as JSON and PNG, the public aggregate, the host's directory, the background
catch-up's life cycle, and ``capes projections`` / ``capes analytics`` / ``capes campaigns``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID

import msgspec
import pytest
from litestar.testing import TestClient
from stores import sqlite_file

from api.app import create_app
from application.campaigns import Campaigns
from application.config import persistence_env
from application.dice import ScriptedDice, SeededDice
from cli.demo import DEMO_DICE, play_demo
from cli.main import main
from cli.projections import positions_text
from domain.capes import commands as c
from domain.capes.views import board
from projections.board import BoardModel
from projections.service import MODELS, ReadModels

ROOT = Path(__file__).resolve().parents[2]
JSON = dict[str, Any]


@contextmanager
def serving(campaigns: Campaigns, **environ: str) -> Iterator[TestClient[Any]]:
    app = create_app(campaigns, rate_limit=0, environ=environ)
    with TestClient(app, timeout=10) as client:
        yield client


def freeform(kind: str) -> JSON:
    return {"method": "freeform", "abilities": [
        {"name": f"{cat} {r}", "category": cat, "rating": r}
        for cat in (kind, "style", "attitude") for r in (1, 2, 3)]}


class Table:
    """A campaign opened over HTTP with two seats and a character each."""

    def __init__(self, client: TestClient[Any], name: str = "Harbor City") -> None:
        self.client = client
        opened = client.post("/campaigns", json={"name": name, "starting_tokens": 1}).json()
        self.id, self.owner = opened["campaign_id"], opened["owner_token"]
        self.tokens = {}
        for player in ("Ana", "Ben"):
            taken = client.post(f"/campaigns/{self.id}/seats", json={"name": player}).json()
            self.tokens[taken["seat"]] = taken["token"]
        self.do(1, {"type": "create_character", "name": "Nightjar", "build": freeform("skill")})
        self.do(2, {"type": "create_character", "name": "Reyes", "build": freeform("skill")})

    def auth(self, seat: int = 1) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}

    def do(self, seat: int, command: JSON) -> JSON:
        response = self.client.post(f"/campaigns/{self.id}/commands", headers=self.auth(seat),
                                    json={"command": command})
        assert response.status_code == 200, response.text
        applied: JSON = response.json()
        return applied

    def get(self, path: str, seat: int = 1, **params: Any) -> Any:
        return self.client.get(f"/campaigns/{self.id}{path}", headers=self.auth(seat),
                               params=params)


def scene(table: Table) -> JSON:
    """Frame a scene and get to Ana's turn; the last command's response."""
    table.do(1, {"type": "frame_scene", "text": "The docks"})
    table.do(1, {"type": "choose_character", "character": 1})
    table.do(1, {"type": "pass_claiming"})
    table.do(2, {"type": "choose_character", "character": 2})
    for seat in (2, 1, 2):
        table.do(seat, {"type": "pass_claiming"})
    return table.do(1, {"type": "start_turn", "character": 1})


def memory() -> Campaigns:
    return Campaigns(persistence_env({"CAPES_DB": ":memory:"}), dice=SeededDice(1))


# -- read-your-writes ------------------------------------------------------------------------


def test_a_commands_position_lets_a_query_see_its_effect() -> None:
    campaigns = memory()
    with serving(campaigns) as client:
        table = Table(client)
        applied = scene(table)
        assert applied["position"] == campaigns.recorder.max_notification_id()
        shown = table.get("/board", position=applied["position"], timeout=2)
        assert shown.status_code == 200
        state = campaigns.state(UUID(table.id))
        assert shown.json() == msgspec.json.decode(msgspec.json.encode(board(state)))
        assert shown.json()["turn"]["seat"] == 1
        ledgers = table.get("/ledgers", position=applied["position"]).json()
        assert [ledger["tokens"] for ledger in ledgers] == [1, 1]


def test_the_server_keeps_its_read_models_up_to_date_in_the_background() -> None:
    campaigns = memory()
    app = create_app(campaigns, rate_limit=0, environ={})
    with TestClient(app, timeout=10) as client:
        table = Table(client)
        applied = scene(table)
        read_models = _read_models_of(app)
        deadline = time.monotonic() + 5
        while min(read_models.runner.positions().values()) < applied["position"]:
            assert time.monotonic() < deadline, "the background catch-up did not run"
            time.sleep(0.02)
        thread = read_models.runner._thread
        assert thread is not None and thread.is_alive()
    assert read_models.runner._thread is None, "stopped with the server"


def _read_models_of(app: Any) -> ReadModels:
    """The server's read models (the ``services`` dependency's)."""
    provider = app.dependencies["services"]
    services = provider.dependency()
    read_models: ReadModels = services.read_models
    return read_models


def test_with_projections_run_elsewhere_a_late_read_model_is_replayed_or_503(
    tmp_path: Path,
) -> None:
    env = persistence_env({"CAPES_DB": str(tmp_path / "capes.sqlite")})
    campaigns = Campaigns(env, dice=SeededDice(1))
    with serving(campaigns, CAPES_PROJECTIONS="external") as client:
        table = Table(client)
        applied = scene(table)
        # Nobody runs the read models: the timeline cannot answer, the board is replayed.
        late = table.get("/timeline", timeout=0.2)
        assert late.status_code == 503 and late.headers["retry-after"] == "1"
        assert late.headers["content-type"] == "application/problem+json"
        assert "not caught up" in late.json()["detail"]
        assert table.get("/analytics", timeout=0).status_code == 503
        now = table.get("/board", timeout=0.1).json()
        assert now["turn"]["seat"] == 1

        # Another process (here: another application on the same file) runs them.
        worker = Campaigns(env)
        other = ReadModels(worker)
        other.runner.catch_up()
        assert table.get("/timeline", position=applied["position"]).status_code == 200
        assert table.get("/board", position=0).json() == now

        # One more command: the read model as it is (position 0) is a step behind; the
        # default waits for the store's last position, and past its timeout is replayed.
        ended = table.do(1, {"type": "create_conflict", "kind": "event", "text": "Crane"})
        stale = table.get("/board", position=0).json()
        assert stale == now
        fresh = table.get("/board", timeout=0.1).json()
        assert stale["conflicts"] == [] and len(fresh["conflicts"]) == 1
        other.runner.catch_up()
        assert table.get("/board", position=ended["position"]).json() == fresh
        assert table.get("/timeline", position=ended["position"]).json()["entries"][-1][
            "type"] == type(campaigns.history(campaigns.campaign_ids()[0], limit=1000)[-1]
                            .event).__name__
        other.close()
        worker.close()


def test_a_position_the_store_does_not_have_is_refused_at_once() -> None:
    """No answer ever carried such a position, and no wait reaches it: refused before the
    read models are waited for (it used to take the whole ``timeout``, and the board and
    ledgers then answered as of now)."""
    with serving(memory()) as client:
        table = Table(client)
        for path in ("/timeline", "/analytics", "/board", "/ledgers"):
            began = time.monotonic()
            response = table.get(path, position=2**62, timeout=10)
            assert response.status_code == 400, (path, response.text)
            assert "beyond the store's last event" in response.json()["detail"]
            assert time.monotonic() - began < 5, f"{path} waited for its timeout"


# -- timeline, analytics, charts -----------------------------------------------------------


def test_the_timeline_marks_what_an_undo_reverted() -> None:
    with serving(memory()) as client:
        table = Table(client)
        scene(table)
        created = table.do(1, {"type": "create_conflict", "kind": "event", "text": "Crane"})
        undone = table.do(1, {"type": "undo"})
        page = table.get("/timeline", position=undone["position"], limit=1000).json()
        by_position = {e["position"]: e for e in page["entries"]}
        for event in created["events"]:
            entry = by_position[event["position"]]
            assert entry["reverted"] is True
            assert entry["reverted_by"] == undone["events"][0]["position"]
            assert entry["seat"] == 1 and entry["type"] == event["type"]
        reverted = table.get("/timeline", reverted=True).json()["entries"]
        assert [e["position"] for e in reverted] == [e["position"] for e in created["events"]]
        first = table.get("/timeline", limit=3).json()
        assert len(first["entries"]) == 3 and first["next_after"] == 3
        assert table.get("/timeline", seat=2).status_code == 200
        assert client.get(f"/campaigns/{table.id}/timeline").status_code == 401


def test_analytics_as_json_and_as_png_charts() -> None:
    campaigns = Campaigns(persistence_env({"CAPES_DB": ":memory:"}),
                          dice=ScriptedDice(DEMO_DICE))
    campaign = play_demo(campaigns, out=lambda _: None)
    with serving(campaigns, CAPES_HOST_KEY="the-host") as client:
        # The demo was played without tokens: issue the owner's for it.
        token = _owner_token(client, campaign)
        auth = {"Authorization": f"Bearer {token}"}
        figures = client.get(f"/campaigns/{campaign}/analytics", headers=auth).json()
        assert figures["dice"]["overall"]["faces"] == [0, 2, 0, 2, 2, 2]
        assert figures["dice"]["overall"]["chi_square"] == pytest.approx(4.0)
        for name in ("dice", "tokens", "debt", "conflicts", "abilities", "pace"):
            png = client.get(f"/campaigns/{campaign}/analytics/{name}.png",
                             params={"token": token})
            assert png.status_code == 200, (name, png.text)
            assert png.headers["content-type"] == "image/png"
            assert png.content.startswith(b"\x89PNG")
        assert client.get(f"/campaigns/{campaign}/analytics/dice.png").status_code == 401
        assert client.get(f"/campaigns/{campaign}/analytics/nope.png",
                          headers=auth).status_code == 404

        # Across campaigns: the host's, and nothing in it names a campaign or a player.
        assert client.get("/analytics").status_code == 401
        assert client.get("/analytics", headers=auth).status_code == 401, "a campaign's token"
        across = client.get("/analytics", headers={"Authorization": "Bearer the-host"})
        assert across.status_code == 200
        assert across.json()["campaigns"] == 1
        assert across.json()["dice"]["overall"]["faces"] == [0, 2, 0, 2, 2, 2]
        for secret in (str(campaign), "Ana", "Harbor", "Nightjar"):
            assert secret not in across.text


def _owner_token(client: TestClient[Any], campaign: Any) -> str:
    """Keys for a campaign made outside the server (the demo): the owner's token."""
    services = client.app.dependencies["services"].dependency()
    token: str = services.keyring.open_campaign(campaign)
    return token


# -- the directory -------------------------------------------------------------------------


def test_the_directory_is_the_hosts_only() -> None:
    campaigns = memory()
    with serving(campaigns) as client:
        Table(client, "Harbor City")
        assert client.get("/campaigns").status_code == 403, "off without CAPES_HOST_KEY"
    with serving(campaigns, CAPES_HOST_KEY="s3cret") as client:
        Table(client, "Skyline")
        assert client.get("/campaigns").status_code == 401
        assert client.get("/campaigns", headers={"Authorization": "Bearer nope"}
                          ).status_code == 401
        host = {"Authorization": "Bearer s3cret"}
        listed = client.get("/campaigns", headers=host).json()["campaigns"]
        assert [c["name"] for c in listed] == ["Skyline", "Harbor City"], "last played first"
        assert listed[0]["players"] == ["Ana", "Ben"] and listed[0]["closed"] is False
        found = client.get("/campaigns", headers=host, params={"q": "harb"}).json()
        assert [c["name"] for c in found["campaigns"]] == ["Harbor City"]
        assert client.get("/campaigns", headers=host, params={"q": "%"}).json()[
            "campaigns"] == []
        page = client.get("/campaigns", headers=host, params={"limit": 1}).json()
        assert len(page["campaigns"]) == 1 and page["next_offset"] == 1


# -- the command line ------------------------------------------------------------------------


def test_capes_projections_analytics_and_campaigns(tmp_path: Path, capsys: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "capes.sqlite"
    monkeypatch.setenv("CAPES_DB", str(db))
    monkeypatch.setattr(BoardModel, "layout", 1)  # a release before the board's layout 2
    campaigns = Campaigns(persistence_env({"CAPES_DB": str(db)}), dice=ScriptedDice(DEMO_DICE))
    campaign = play_demo(campaigns, out=lambda _: None)
    head = campaigns.recorder.max_notification_id()
    campaigns.close()
    capsys.readouterr()

    assert main(["projections", "status"]) == 0
    status = capsys.readouterr().out
    assert f"last position {head}" in status
    assert re.search(r"^  board +at +0  layout 1  \(\d+ behind\)  log: unknown \(no mark yet\)$",
                     status, re.M)
    assert main(["projections", "rebuild", "--quiet", "--name", "timeline"]) == 0
    assert f"rebuilt timeline to position {head}" in capsys.readouterr().out
    assert main(["projections", "rebuild", "--quiet"]) == 0
    assert f"rebuilt {', '.join(MODELS)} to position {head}" in capsys.readouterr().out
    with monkeypatch.context() as upgraded:
        upgraded.setattr(BoardModel, "layout", 2)
        assert main(["projections", "status"]) == 0  # looks only: whoever runs them rebuilds
        assert re.search(rf"^  board +at +{head}  layout 1  \(this release writes layout 2: "
                         r"rebuilt when the read models next start\)  log: matches$",
                         capsys.readouterr().out, re.M)

    assert main(["analytics", str(campaign)]) == 0
    text = capsys.readouterr().out
    assert re.search(r"^  all +8 +0 +2 +0 +2 +2 +2 +4\.25 +4\.00 +0\.549$", text, re.M)
    assert re.search(r"^  Ana +2 ", text, re.M) and "Resolving took 2 pages once" in text
    assert main(["analytics", "--all", "--json"]) == 0
    figures = msgspec.json.decode(capsys.readouterr().out)
    assert figures["campaigns"] == 1 and figures["dice"]["by_player"] == []
    assert main(["analytics"]) == 2

    assert main(["campaigns", "harbor"]) == 0
    assert f"{campaign}  'Demo: Harbor City'" in capsys.readouterr().out
    assert main(["campaigns", "--closed"]) == 0
    assert "no campaign found" in capsys.readouterr().err


def test_a_rebuild_into_a_pipe_or_file_prints_plain_lines_not_a_progress_bar(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Piped (``capes projections rebuild | tee rebuild.log``), the progress bar's last frame
    was written as it is drawn on a terminal: bar characters cut to 80 columns with ellipses
    ("157/… 0:0… 0:00:…"), and escape sequences wherever rich took the output for a terminal."""
    db = tmp_path / "capes.sqlite"
    monkeypatch.setenv("CAPES_DB", str(db))
    campaigns = Campaigns(persistence_env({"CAPES_DB": str(db)}), dice=ScriptedDice(DEMO_DICE))
    play_demo(campaigns, out=lambda _: None)
    head = campaigns.recorder.max_notification_id()
    campaigns.close()
    capsys.readouterr()
    assert main(["projections", "rebuild", "--name", "timeline"]) == 0  # stdout: no terminal
    out = capsys.readouterr().out
    assert out.isascii() and "\x1b" not in out, out
    lines = out.splitlines()
    assert lines[-1].startswith(f"rebuilt timeline to position {head} in ")
    assert lines[:-1] and all(re.fullmatch(rf"rebuilding timeline: [\d,]+ of {head:,} events",
                                           line) for line in lines[:-1]), out


def test_capes_projections_run_follows_the_log_until_stopped(tmp_path: Path) -> None:
    db = tmp_path / "capes.sqlite"
    env: Mapping[str, str] = {**os.environ, "CAPES_DB": str(db)}
    campaigns = Campaigns(persistence_env({"CAPES_DB": str(db)}), dice=ScriptedDice(DEMO_DICE))
    play_demo(campaigns, out=lambda _: None)
    head = campaigns.recorder.max_notification_id() or 0
    runner = subprocess.Popen([sys.executable, "-m", "cli.main", "projections", "run"],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    watcher = ReadModels(campaigns, runs=False)
    try:
        assert watcher.wait(head, list(MODELS), timeout=30), "the runner did not catch up"
        campaigns.execute(campaigns.campaign_ids()[0], c.CloseCampaign())
        assert watcher.wait(None, list(MODELS), timeout=10), "nor follow a new event"
        assert watcher.directory.search("")[0].closed
    finally:
        runner.send_signal(signal.SIGTERM)
        out, _ = runner.communicate(timeout=30)
        watcher.close()
        campaigns.close()
    assert runner.returncode == 0, out
    # Its positions read as its start line's do, not as a Python dict ({'board': 157, …}).
    assert re.search(rf"the store is at {head}, the read models at 0$", out, re.M), out
    assert re.search(rf"^stopped at {head + 1}$", out, re.M), out


def test_the_read_models_positions_read_as_one_number_or_one_per_model() -> None:
    assert positions_text({"board": 157, "timeline": 157}) == "157"
    assert positions_text({"board": 157, "timeline": 98}) == "board 157, timeline 98"


def test_a_rebuild_gets_past_an_event_it_cannot_apply_and_names_it(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 13: one damaged event left ``capes projections rebuild`` failing for good; now it
    leaves that campaign out, names the event, and rebuilds every other campaign."""
    db = tmp_path / "capes.sqlite"
    monkeypatch.setenv("CAPES_DB", str(db))
    campaigns = Campaigns(persistence_env({"CAPES_DB": str(db)}), dice=ScriptedDice(DEMO_DICE))
    damaged = campaigns.create(c.CreateCampaign(name="Damaged")).campaign_id
    campaigns.execute(damaged, c.SeatPlayer(name="Ana"))
    campaign = play_demo(campaigns, out=lambda _: None)
    head = campaigns.recorder.max_notification_id()
    campaigns.close()
    with sqlite_file(db) as conn:
        conn.execute("UPDATE stored_events SET state=? WHERE originator_id=? AND "
                     "originator_version=2", (b"not json", damaged.hex))
    capsys.readouterr()
    assert main(["projections", "rebuild", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"to position {head}" in out
    assert f"left out campaign {damaged} from its event 2" in out
    assert main(["analytics", str(campaign)]) == 0



def test_capes_projections_run_with_a_long_poll_stops_at_once_when_asked(tmp_path: Path) -> None:
    """SIGTERM woke nothing: the runner slept out its poll (an hour here) before it stopped, and
    a service manager's stop waited for it, then killed it."""
    env: Mapping[str, str] = {**os.environ, "CAPES_DB": str(tmp_path / "capes.sqlite")}
    runner = subprocess.Popen([sys.executable, "-m", "cli.main", "projections", "run",
                               "--poll", "3600"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    assert runner.stdout is not None
    assert "Following" in runner.stdout.readline()
    time.sleep(1)  # asleep in its poll
    runner.send_signal(signal.SIGTERM)
    out, _ = runner.communicate(timeout=10)
    assert runner.returncode == 0, out
    assert "stopped at" in out
