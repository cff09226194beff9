"""The seats' own seeds (R-FAIR-2): added after the commitment, before the first roll, once."""

from __future__ import annotations

import random
from typing import Any
from uuid import UUID

import pytest
from fair_play import MEMORY, new_table, play_until, rolls
from litestar.testing import TestClient

from api.app import create_app
from application.campaigns import Campaigns
from domain.capes import commands as c
from domain.errors import NotPermitted, RuleViolation
from domain.record import Record, SceneDice
from domain.record import decide as record_decide
from domain.record.commands import AddSeed
from domain.record.events import SeatSeedAdded

OPEN = Record(dice=SceneDice(scene=1, commitment="ab" * 32))


def test_a_seat_adds_its_seed_to_the_open_dice() -> None:
    """R-FAIR-2: the seed goes into the log as it was given."""
    assert record_decide(OPEN, (1, 2), AddSeed(seat=2, seed="my seed ✓")) == (
        SeatSeedAdded(seat=2, seed="my seed ✓"),)


@pytest.mark.parametrize(("record", "why"), [
    (Record(), "no scene's dice are committed to"),
    (Record(dice=SceneDice(scene=1, commitment="ab" * 32, closed=True)), "closed with its first"),
    (Record(dice=SceneDice(scene=1, commitment="ab" * 32, seeds=((2, "x"),))), "already"),
])
def test_a_seed_is_refused_without_open_dice_after_the_first_roll_or_twice(
    record: Record, why: str,
) -> None:
    """R-FAIR-2: before a scene, after its first roll, or a second seed of the same seat."""
    with pytest.raises(RuleViolation) as refused:
        record_decide(record, (1, 2), AddSeed(seat=2, seed="late"))
    assert refused.value.rule == "R-FAIR-2"
    assert why in str(refused.value)


def test_the_owner_adds_no_seed_and_an_unknown_seat_none_either() -> None:
    """R-FAIR-2: the owner's token does not sit at the table."""
    with pytest.raises(NotPermitted):
        record_decide(OPEN, (1, 2), AddSeed(seat=0, seed="owner"))
    with pytest.raises(Exception, match="no seat 5"):
        record_decide(OPEN, (1, 2), AddSeed(seat=5, seed="ghost"))


def test_through_the_application_seeds_go_in_until_the_first_roll_closes_them() -> None:
    """R-FAIR-2, R-FAIR-3: each seat once; the first roll closes; later seeds are refused."""
    app = Campaigns(MEMORY)
    campaign = new_table(app)
    with pytest.raises(RuleViolation) as early:
        app.execute(campaign, AddSeed(seat=1, seed="too early"))
    assert early.value.rule == "R-FAIR-2"
    app.execute(campaign, c.FrameScene(seat=1, text="Seeds"))
    added = app.execute(campaign, AddSeed(seat=2, seed="ben"), narration="for luck")
    assert [type(r.event).__name__ for r in added.events] == ["SeatSeedAdded"]
    assert added.events[0].seat == 2 and added.events[0].narration == "for luck"
    with pytest.raises(RuleViolation) as twice:
        app.execute(campaign, AddSeed(seat=2, seed="ben again"))
    assert twice.value.rule == "R-FAIR-2"
    assert app.get(campaign).record.dice.seeds == ((2, "ben"),)  # type: ignore[union-attr]
    rng = random.Random(4)
    if not play_until(app, campaign, lambda a, cid: bool(rolls(a, cid)), rng, seeds=False):
        pytest.skip("random play got stuck before a roll")  # pragma: no cover
    assert app.get(campaign).record.dice.closed  # type: ignore[union-attr]
    with pytest.raises(RuleViolation) as late:
        app.execute(campaign, AddSeed(seat=3, seed="after the roll"))
    assert late.value.rule == "R-FAIR-2"


def _client() -> tuple[TestClient[Any], Campaigns]:
    campaigns = Campaigns(MEMORY)
    return TestClient(create_app(campaigns, rate_limit=0)), campaigns


def test_a_seat_adds_its_seed_over_http_and_a_refusal_names_the_rule() -> None:
    """R-FAIR-2: ``add_seed`` is a command like the others; the seat comes from the token."""
    client, _ = _client()
    with client:
        opened = client.post("/campaigns", json={"name": "Seeds"}).json()
        campaign = opened["campaign_id"]
        tokens = {}
        for name in ("Ana", "Ben"):
            taken = client.post(f"/campaigns/{campaign}/seats", json={"name": name}).json()
            tokens[taken["seat"]] = {"Authorization": f"Bearer {taken['token']}"}

        def send(seat: int, command: dict[str, Any]) -> Any:
            return client.post(f"/campaigns/{campaign}/commands", headers=tokens[seat],
                               json={"command": command})

        refused = send(1, {"type": "add_seed", "seed": "before the scene"})
        assert refused.status_code == 422 and refused.json()["rule"] == "R-FAIR-2"
        assert send(1, {"type": "frame_scene", "text": "Over HTTP"}).status_code == 200
        added = send(2, {"type": "add_seed", "seed": "ben over http"})
        assert added.status_code == 200, added.text
        event = added.json()["events"][0]
        assert event["type"] == "SeatSeedAdded" and event["seat"] == 2
        assert event["event"] == {"type": "SeatSeedAdded", "seat": 2, "seed": "ben over http"}
        assert len(event["chain"]) == 64
        assert send(2, {"type": "add_seed", "seed": ""}).status_code == 400
        other = send(2, {"type": "add_seed", "seat": 1, "seed": "for ana"})
        assert other.status_code == 403


def test_seat_seeds_are_public_and_part_of_the_verified_dice() -> None:
    """R-FAIR-2: a seat seed is in the log, so anyone can recompute the dice with it."""
    app = Campaigns(MEMORY)
    campaign: UUID = new_table(app)
    app.execute(campaign, c.FrameScene(seat=1, text="Public seeds"))
    app.execute(campaign, AddSeed(seat=3, seed="cleo"))
    assert any(isinstance(r.event, SeatSeedAdded) and r.event.seed == "cleo"
               for r in app.history(campaign))
