"""Events written in an older shape load in the current one (domain.capes.upcasts)."""

from __future__ import annotations

from pathlib import Path

import msgspec
from eventsourcing.persistence import StoredEvent
from stores import MakeApp, sqlite_file

from application.campaigns import Campaigns
from application.config import persistence_env
from cli.demo import demo_dice, play_demo
from domain.capes.events import DieRolled


def a_version_one_roll(position: int, draw_field: bool = False) -> bytes:
    """A DieRolled as schema version 1 stored it: no roll counter."""
    event = {"type": "DieRolled", "conflict": 1, "die": 1, "before": 1, "rolled": 4,
             "character": 3, "seat": 3, "reaction": False}
    return msgspec.json.encode({"timestamp": "2026-01-01T00:00:00Z", "seat": 3,
                                "narration": "", "schema": 1, "command": position,
                                "event": event})


def test_a_version_one_roll_is_read_as_the_current_shape() -> None:
    app = Campaigns(persistence_env({"CAPES_DB": ":memory:"}))
    stored = StoredEvent(originator_id="8d1f0b7e-0000-4000-8000-000000000001",
                         originator_version=7, topic="capes:DieRolled",
                         state=a_version_one_roll(7))
    recorded = app.mapper.to_domain_event(stored)
    assert recorded.schema == 2
    assert recorded.event == DieRolled(conflict=1, die=1, before=1, rolled=4, character=3,
                                       seat=3, draw=0)


def test_a_campaign_whose_log_holds_old_shapes_loads_the_same(
    make_app: MakeApp, tmp_path: Path
) -> None:
    """A long campaign survives the code changing: rewrite its rolls as version 1 and load."""
    env = persistence_env({"CAPES_DB": str(tmp_path / "old.sqlite")})
    app = make_app(env, dice=demo_dice())
    campaign = play_demo(app, out=lambda _: None)
    expected = app.state(campaign)
    rolls = [r.originator_version for r in app.history(campaign, limit=10_000)
             if isinstance(r.event, DieRolled)]
    with sqlite_file(tmp_path / "old.sqlite") as db:
        for position in rolls:
            db.execute("UPDATE stored_events SET state = ? WHERE originator_version = ? AND "
                       "topic = 'capes:DieRolled'", (a_version_one_roll(position), position))
        db.execute("DELETE FROM stored_snapshots")
    fresh = make_app(env)
    assert [r.schema for r in fresh.history(campaign, limit=10_000)
            if isinstance(r.event, DieRolled)] == [2] * len(rolls)
    reloaded = fresh.state(campaign)
    assert reloaded.players == expected.players
    assert reloaded.scenes_played == expected.scenes_played
