"""``capes demo --edition capees`` plays 004's own example through the application, on every
store, and the record, the hash chain, the export and time travel work on it as on ``capes``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from stores import MakeApp

from application.audit import stored_entries, verify_stored
from application.transfer import export, read
from cli.demo_capees import demo_dice, play_capees_demo
from cli.main import main
from domain.capees.events import ComplicationResolved, SceneEnding
from domain.record.commands import Undo


def test_the_capees_demo_plays_to_its_victory_target_on_each_store(
    make_app: MakeApp, store_env: dict[str, str], tmp_path: Path
) -> None:
    """C-VP-3, C-VP-5, C-INSP-1, C-PROM-2, C-PROM-6, C-REACT-1: the scene of 004's example
    ends on its Target; every store reloads it the same; it verifies and exports."""
    app = make_app(store_env, dice=demo_dice(), snapshot_interval=7)  # snapshots too
    campaign = play_capees_demo(app, out=lambda _: None)
    history = app.history(campaign, limit=10_000)
    kinds = Counter(type(r.event).__name__ for r in history)
    assert {"StoryBegun", "SceneStarted", "ProminenceBalanced", "PlayBegan", "RollKept",
            "ComplicationResolved", "SceneEnded"} <= set(kinds)
    endings = [r.event for r in history if isinstance(r.event, SceneEnding)]
    assert [e.reason for e in endings] == ["target"]
    won = [r.event for r in history if isinstance(r.event, ComplicationResolved)]
    assert sum(e.vp for e in won) == 6
    state = app.state(campaign)
    assert state.scene is None and state.story is not None and state.story.hero_vp == 6
    # Time travel: the scene as it stood at the end of page 1.
    played = next(r.originator_version for r in history
                  if type(r.event).__name__ == "PageEnded")
    assert app.state(campaign, played).scene.page == 1
    if store_env["PERSISTENCE_MODULE"] != "eventsourcing.popo":
        fresh = make_app(store_env, snapshot_interval=7)
        assert fresh.state(campaign) == state  # from its last snapshot
        assert all(fresh.state(campaign, v) == app.state(campaign, v)
                   for v in range(1, len(history) + 1, 5))
    report = verify_stored(app, campaign)
    assert report.ok, report
    path = tmp_path / "capees.ndjson"
    path.write_bytes(export(campaign, stored_entries(app, campaign), None, "ndjson"))
    source, entries = read(path)
    assert source == campaign and len(entries) == len(history)
    imported = app.import_log(source, entries).campaign_id
    assert app.state(imported) == state  # R-FAIR-7: an import replays to the same game
    assert verify_stored(app, imported).ok
    # R-REC-6, R-X-REC-6: a fork starts where a move ended: just before the one that ended
    # page 1 (the page ends and the next starts in one move).
    ending = next(r.command for r in history if r.originator_version == played)
    fork = app.fork(campaign, ending - 1, name="What if").campaign_id
    forked = app.state(fork)
    assert forked.name == "What if" and forked.scene is not None and forked.scene.page == 1


def test_a_capees_seat_undoes_its_own_last_command(make_app: MakeApp,
                                                   store_env: dict[str, str]) -> None:
    """R-REC-1 on a capees campaign: the record of play is the same for both editions."""
    from domain.capees import commands as c

    app = make_app(store_env)
    campaign = app.create(c.CreateCampaign(name="Undo")).campaign_id
    for name in ("Editor", "Alice"):
        app.execute(campaign, c.SeatPlayer(name=name))
    app.execute(campaign, c.CreateCharacter(seat=2, name="Bystander"))
    assert len(app.state(campaign).characters) == 1
    app.execute(campaign, Undo(seat=2))
    assert app.state(campaign).characters == {}


def test_capes_demo_edition_capees_prints_the_board_and_stores_the_campaign(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, make_app: MakeApp
) -> None:
    db = tmp_path / "demo.sqlite"
    monkeypatch.setenv("CAPES_DB", str(db))
    monkeypatch.delenv("CAPES_DATABASE_URL", raising=False)
    assert main(["demo", "--edition", "capees"]) == 0
    printed = capsys.readouterr().out
    assert "-- end of page 1" in printed and "-- end of scene 1" in printed
    assert "Silverstar" in printed and "Night Maiden" in printed and "Target 6" in printed
    app = make_app({"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(db)})
    [campaign] = app.campaign_ids()
    assert main(["analytics", str(campaign)]) == 0
    printed = capsys.readouterr().out
    assert "Victory Points: hero 6." in printed
    assert "won by" in printed
    assert main(["state", str(campaign)]) == 0
    assert "story Victory Points: Hero 6" in capsys.readouterr().out


def test_an_upheld_dispute_rewinds_a_capees_scene(make_app: MakeApp,
                                                  store_env: dict[str, str]) -> None:
    """R-REC-2, R-REC-3, R-REC-5 on a capees campaign: the Chief's kept roll is disputed and
    the table upholds it; the die shows 1 again."""
    from cli.demo_capees import EDITOR, JOE, ROBBERY, SCRIPT
    from domain.capees import commands as c
    from domain.capees.events import DieRolled
    from domain.record.commands import OpenDispute, Vote

    app = make_app(store_env, dice=demo_dice())
    campaign = app.create(c.CreateCampaign(name="Disputed")).campaign_id
    for _, command in SCRIPT:
        if isinstance(command, c.KeepRoll):
            break
        app.execute(campaign, command)
    app.execute(campaign, c.KeepRoll(seat=EDITOR))
    rolled = next(r.originator_version for r in app.history(campaign, limit=10_000)
                  if isinstance(r.event, DieRolled))
    assert app.state(campaign).complications[ROBBERY].sides[1].dice[0].value == 5
    app.execute(campaign, OpenDispute(seat=JOE, position=rolled, reason="no anger here"))
    for seat in (2, JOE):
        if app.get(campaign).record.dispute is not None:
            app.execute(campaign, Vote(seat=seat, uphold=True))
    assert app.get(campaign).record.dispute is None
    state = app.state(campaign)
    assert state.complications[ROBBERY].sides[1].dice[0].value == 1
    assert state.scene is not None and state.scene.action is not None  # the Chief acts again
