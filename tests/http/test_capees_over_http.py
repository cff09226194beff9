"""A whole CAPEES! scene over HTTP: 004's example (Silverstar, Night Maiden, the Editor) opened
with ``{"edition": "capees"}``, played by its seats to the Victory Target, with the board,
ledgers, diff, analytics (Victory Points over time) and the refusal of the other edition's
commands."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
from litestar.testing import TestClient

from api.app import create_app
from application.campaigns import Campaigns
from application.config import persistence_env
from application.dice import ScriptedDice
from cli.demo_capees import DEMO_DICE, PASS_REACTIONS, SCRIPT
from domain.capees import commands as c

JSON = dict[str, Any]


@contextmanager
def serving() -> Iterator[TestClient[Any]]:
    campaigns = Campaigns(persistence_env({"CAPES_DB": ":memory:"}),
                          dice=ScriptedDice(DEMO_DICE))
    with TestClient(create_app(campaigns, rate_limit=0, environ={}), timeout=10) as client:
        yield client


class CapeesTable:
    def __init__(self, client: TestClient[Any]) -> None:
        self.client = client
        opened = client.post("/campaigns", json={"name": "Millennium City",
                                                 "edition": "capees"})
        assert opened.status_code == 201, opened.text
        self.id, self.owner = opened.json()["campaign_id"], opened.json()["owner_token"]
        self.tokens: dict[int, str] = {}

    def auth(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}

    def seat(self, name: str) -> None:
        taken = self.client.post(f"/campaigns/{self.id}/seats", json={"name": name})
        assert taken.status_code == 201, taken.text
        self.tokens[taken.json()["seat"]] = taken.json()["token"]

    def send(self, seat: int, command: Any, narration: str = "") -> Any:
        body = command if isinstance(command, dict) else msgspec.to_builtins(command)
        return self.client.post(f"/campaigns/{self.id}/commands", headers=self.auth(seat),
                                json={"command": body, "narration": narration})

    def do(self, seat: int, command: Any, narration: str = "") -> JSON:
        response = self.send(seat, command, narration)
        assert response.status_code == 200, (command, response.text)
        applied: JSON = response.json()
        return applied

    def get(self, path: str, seat: int = 1, **params: Any) -> Any:
        response = self.client.get(f"/campaigns/{self.id}{path}", headers=self.auth(seat),
                                   params=params)
        assert response.status_code == 200, response.text
        return response.json()


def play_the_scene(table: CapeesTable) -> JSON:
    """Play the demo's script by the seats' tokens; the last command's answer."""
    applied: JSON = {}
    for narration, command in SCRIPT:
        if isinstance(command, c.SeatPlayer):
            table.seat(command.name)
        elif command == PASS_REACTIONS:
            while (action := table.get("/board")["action"]) and action["reacting"]:
                table.do(action["reacting"], {"type": "capees.pass_reaction"})
        else:
            applied = table.do(command.seat, command, narration)
    return applied


def test_a_whole_capees_scene_over_http() -> None:
    """C-SRV-1, C-SRV-3, C-VP-1, C-VP-3, C-COMP-3, C-PROM-4: opened as capees, played to its
    Target by the seats' tokens; the board shows Complications, Prominence and Victory
    Points, the ledgers Story Tokens, Debt and Inspiration cards."""
    with serving() as client:
        table = CapeesTable(client)
        last = play_the_scene(table)
        assert table.get("")["edition"] == "capees"
        # The board and ledgers read models hold capees documents: the same as replayed.
        board = table.get("/board", position=last["position"])
        assert board == table.get("/board", version=last["version"])
        assert table.get("/ledgers", position=last["position"]) == table.get(
            "/ledgers", version=last["version"])
        assert board["edition"] == "capees" and board["scene"] is None
        assert (board["story_hero_vp"], board["story_opponent_vp"]) == (6, 0)
        assert board["waiting_for"] == {"1": ["capees.start_scene"]}
        ledgers = table.get("/ledgers")
        cards = {led["name"]: [(i["name"], i["faction"], i["vp"], i["bonus"])
                               for i in led["inspirations"]] for led in ledgers}
        assert cards["Joe"] == [("Robbery", "hero", 5, 1)]
        assert cards["Alice"] == [("Hostages", "hero", 1, 1)]
        assert ledgers[0]["editor"] is True
        # The board in the middle of page 1: Complications, Prominence, Target.
        events = table.get("/events", limit=1000)["events"]
        page = next(e["position"] for e in events if e["type"] == "PageEnded")
        then = table.get("/board", version=page)
        assert then["target"] == 6 and then["hero_prominence"] == 3
        assert [x["controlled_by"] for x in then["complications"]] == ["hero", "hero"]
        assert {p["name"]: p["prominence"] for p in then["present"]} == {
            "the robbers": 1, "Chief Mannelli": 2, "Night Maiden": 1, "Silverstar": 2}
        changes = table.get("/diff", **{"from": page})
        assert {x["name"] for x in changes["complications"]} >= {"Robbery", "Hostages"}
        characters = table.get("/characters")
        assert any(ch["name"] == "Silverstar" and ch["hero"] for ch in characters)
        state = table.get("/state")
        assert state["edition"] == "capees"
        figures = table.get("/analytics", position=events[-1]["position"])
        assert figures["victory_points"]["by_faction"] == {"hero": 6}
        assert [(v["hero"], v["opponent"]) for v in figures["victory_points"]["over_time"]] \
            == [(1, 0), (6, 0)]
        png = client.get(f"/campaigns/{table.id}/analytics/victory_points.png",
                         headers=table.auth(1), params={"position": last["position"]})
        assert png.status_code == 200 and png.content.startswith(b"\x89PNG")


def test_a_command_of_the_other_edition_is_400_naming_the_campaigns_edition() -> None:
    """Each campaign takes its own edition's commands; nothing changes on a refusal."""
    with serving() as client:
        table = CapeesTable(client)
        table.seat("Editor")
        table.seat("Alice")
        version = table.get("")["version"]
        wrong = table.send(1, {"type": "frame_scene", "text": "The docks"})
        assert wrong.status_code == 400, wrong.text
        assert "edition capees" in wrong.json()["detail"]
        assert table.get("")["version"] == version
        refused = table.send(1, {"type": "capees.begin_story", "editor": 2, "victory_total": 0})
        assert refused.status_code == 400  # the command's own bounds
        opened = client.post("/campaigns", json={"name": "Harbor City"}).json()
        seat = client.post(f"/campaigns/{opened['campaign_id']}/seats",
                           json={"name": "Ana"}).json()
        other = client.post(f"/campaigns/{opened['campaign_id']}/commands",
                            headers={"Authorization": f"Bearer {seat['token']}"},
                            json={"command": {"type": "capees.pass_setup"}})
        assert other.status_code == 400 and "edition capes" in other.json()["detail"]


def test_a_capees_rule_refusal_is_422_with_its_rule_id() -> None:
    """C-SRV-2 over HTTP."""
    with serving() as client:
        table = CapeesTable(client)
        table.seat("Solo")
        refused = table.send(1, {"type": "capees.begin_story", "editor": 1})
        assert refused.status_code == 422 and refused.json()["rule"] == "C-TABLE-1"


def test_an_attitude_sent_as_super_is_422_naming_the_field_and_changes_nothing() -> None:
    """C-ABIL-2, C-SRV-2 over HTTP: the refusal names ``super`` and the ability."""
    with serving() as client:
        table = CapeesTable(client)
        table.seat("Editor")
        version = table.get("")["version"]
        abilities = [{"name": f"{kind} {r}", "type": kind, "rating": r,
                      "super": (kind, r) == ("attitude", 2)}
                     for kind, top in (("skill", 3), ("attitude", 4), ("trope", 5))
                     for r in range(1, top + 1)]
        refused = table.send(1, {"type": "capees.create_character", "name": "Chief",
                                 "drives": {"Order": 2, "Pride": 2, "Duty": 2, "Anger": 2,
                                            "Doubt": 1}, "abilities": abilities})
        assert refused.status_code == 422 and refused.json()["rule"] == "C-ABIL-2"
        assert "super" in refused.json()["detail"] and "attitude 2" in refused.json()["detail"]
        assert table.get("")["version"] == version


def test_the_schema_documents_both_editions_commands() -> None:
    with serving() as client:
        schema = client.get("/schema/openapi.json").json()
        post = schema["paths"]["/campaigns/{campaign_id}/commands"]["post"]
        text = msgspec.json.encode(post).decode() + msgspec.json.encode(
            schema["components"]).decode()
        for tag in ("capees.claim", "capees.buy_prominence", "capees.split", "claim",
                    "roll_die"):
            assert f'"{tag}"' in text, tag
        edition = schema["components"]["schemas"]["NewCampaign"]["properties"]["edition"]
        assert set(edition["enum"]) == {"capes", "capees"}
