"""The demo scene played over HTTP by its three seats, and how the API refuses what it must.

Every refusal is checked to change nothing: the campaign's version stays where it was.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest
from helpers import (
    DEMO_PLAYERS,
    DEMO_STEPS,
    JSON,
    Table,
    app_client,
    bearer,
    command_body,
    demo_table,
    event_types,
    open_campaign,
    pages_ended,
    play_until,
)

from api.services import MAX_BODY
from application.campaigns import Campaigns
from application.config import persistence_env
from application.dice import ScriptedDice
from cli.demo import DEMO_DICE
from domain.capes import commands as c

ANA, BEN, CLEO = 1, 2, 3


@dataclass(frozen=True)
class PageEnd:
    """The table right after a page ended: the version and what each query showed."""

    page: int
    version: int
    board: JSON
    ledgers: list[JSON]
    state: JSON


@dataclass(frozen=True)
class Played:
    table: Table
    #: (step, the command's response) for every step of the demo after the seats.
    applied: list[tuple[tuple[str, c.SeatCommand], JSON]]
    pages: list[PageEnd]


def play_demo_over_http(table: Table) -> Played:
    applied, pages = [], []
    for step in DEMO_STEPS:
        response = table.play(*step)
        applied.append((step, response))
        for ended in pages_ended(response):
            pages.append(PageEnd(ended["event"]["page"], response["version"],
                                 table.query("board", seat=step[1].seat),
                                 table.query("ledgers"), table.query("state")))
    return Played(table, applied, pages)


@pytest.fixture(scope="module")
def played() -> Iterator[Played]:
    """The whole demo, played once over HTTP on the in-memory store, shared by the queries."""
    with app_client(persistence_env({"CAPES_DB": ":memory:"}),
                    ScriptedDice(DEMO_DICE)) as client:
        yield play_demo_over_http(demo_table(client))


@pytest.fixture
def table(memory_env: dict[str, str]) -> Iterator[Table]:
    """A fresh demo campaign with its three players seated, before any step."""
    with app_client(memory_env, ScriptedDice(DEMO_DICE)) as client:
        yield demo_table(client)


def tokens(ledgers: list[JSON]) -> list[int]:
    return [ledger["tokens"] for ledger in ledgers]


def inspirations(ledgers: list[JSON]) -> list[list[int]]:
    return [[i["value"] for i in ledger["inspirations"]] for ledger in ledgers]


# -- the scene -------------------------------------------------------------------------------


def test_three_seats_take_their_places_with_a_token_each(played: Played) -> None:
    table = played.table
    assert sorted(table.tokens) == [ANA, BEN, CLEO]
    assert len(set(table.tokens.values())) == 3, "every seat has a token of its own"
    summary = table.query("")
    assert summary["players"] == list(DEMO_PLAYERS)


def test_every_step_appends_its_events_in_order_as_the_acting_seat(played: Played) -> None:
    version = 1 + 2 * len(DEMO_PLAYERS)  # created, then seated, each with its token's record
    for (narration, command), applied in played.applied:
        positions = [e["position"] for e in applied["events"]]
        first = positions[0] if positions else version + 1
        if first > version + 1:
            # Only a step of the server's own may come between: it closes the scene's seeds
            # just before its first roll (R-FAIR-3).
            between = played.table.query("events", after=version, limit=first - 1 - version)
            assert [(e["type"], e["seat"]) for e in between["events"]] == [
                ("SeedsClosed", None)], command
        assert positions == list(range(first, applied["version"] + 1)), command
        assert {e["seat"] for e in applied["events"]} <= {command.seat}
        if applied["events"]:
            assert applied["events"][0]["narration"] == narration
        version = applied["version"]
    assert played.table.version() == version


def test_after_page_one_no_story_token_was_given_only_anas_bought_turn_spent(
    played: Played,
) -> None:
    first = played.pages[0]
    assert first.page == 1
    # Everyone started with 1; Ana paid hers for the turn she bought. Nothing was given.
    assert tokens(first.ledgers) == [0, 1, 1]
    assert inspirations(first.ledgers) == [[], [], []]
    assert first.board["page"] == 2 and first.board["starter"] == BEN
    assert first.board["phase"] == "claiming"
    assert list(first.board["waiting_for"]) == [str(BEN)]
    assert [conflict["id"] for conflict in first.board["conflicts"]] == [1, 2]


def test_after_page_two_ana_has_two_tokens_and_an_inspiration(played: Played) -> None:
    second = played.pages[1]
    assert second.page == 2
    assert tokens(second.ledgers) == [2, 1, 2]
    assert inspirations(second.ledgers) == [[1], [3], []]
    assert second.board["page"] == 3 and second.board["starter"] == CLEO
    assert [conflict["id"] for conflict in second.board["conflicts"]] == [1], "capture resolved"


def test_at_the_end_the_scene_is_over_and_seat_two_frames_the_next(played: Played) -> None:
    assert [page.page for page in played.pages] == [1, 2, 3]
    (_, last), applied = played.applied[-1]
    assert isinstance(last, c.Resolve)
    # The scene's end reveals the seed of its dice in the same command (R-FAIR-5).
    assert event_types(applied)[-3:] == ["PageEnded", "SceneEnded", "DiceRevealed"]
    board = played.table.query("board")
    assert board["scene"] is None and board["page"] is None
    assert board["scenes_played"] == 1 and board["next_framer"] == BEN
    assert board["waiting_for"] == {str(BEN): ["frame_scene", "pass_framing"]}
    assert board["conflicts"] == []
    ledgers = played.table.query("ledgers")
    assert tokens(ledgers) == [2, 1, 2]
    assert inspirations(ledgers) == [[2], [], [3]]


def test_the_demo_plays_to_the_same_end_over_http_on_each_store(
    store_env: dict[str, str], played: Played
) -> None:
    with app_client(store_env, ScriptedDice(DEMO_DICE)) as client:
        again = play_demo_over_http(demo_table(client))
        for what in ("board", "ledgers", "characters"):
            assert again.table.query(what) == played.table.query(what), what
    assert [p.board for p in again.pages] == [p.board for p in played.pages]


# -- queries ---------------------------------------------------------------------------------


@pytest.mark.parametrize("what", ["board", "ledgers", "state"])
def test_a_query_at_a_version_shows_the_campaign_as_it_was_then(
    played: Played, what: str
) -> None:
    for page in played.pages:
        then = played.table.query(what, version=page.version)
        assert then == getattr(page, what), (what, page.page)
    assert played.table.query(what, version=played.table.version()) == played.table.query(what)


def test_the_state_at_version_one_is_the_campaign_just_opened(played: Played) -> None:
    created = played.table.query("state", version=1)
    assert created["players"] == [] and created["characters"] == {}
    seated = played.table.query("state", version=1 + 2 * len(DEMO_PLAYERS))
    assert [p["name"] for p in seated["players"]] == list(DEMO_PLAYERS)


@pytest.mark.parametrize("version, status", [(0, 400), (-1, 400), ("x", 400), (10**6, 404)])
def test_a_version_that_is_not_one_of_the_campaigns_is_refused(
    played: Played, version: Any, status: int
) -> None:
    table = played.table
    for what in ("board", "state"):
        response = table.client.get(table.url(f"/{what}"), params={"version": version},
                                    headers=table.as_seat(ANA))
        assert response.status_code == status, response.text
        assert response.headers["content-type"] == "application/problem+json"
    if status == 404:
        assert response.json()["current_version"] == table.version()


def test_the_event_log_pages_through_every_event_once_in_order(played: Played) -> None:
    table, positions, after, pages = played.table, [], 0, 0
    while True:
        page = table.query("events", after=after, limit=50)
        positions += [event["position"] for event in page["events"]]
        pages += 1
        if page["next_after"] is None:
            break
        assert page["next_after"] == page["events"][-1]["position"]
        after = page["next_after"]
    assert positions == list(range(1, table.version() + 1))
    assert pages == table.version() // 50 + 1
    whole = table.query("events", limit=1000)
    assert [e["position"] for e in whole["events"]] == positions and whole["next_after"] is None
    middle = table.query("events", after=10, limit=3)
    assert [e["position"] for e in middle["events"]] == [11, 12, 13]
    assert middle["next_after"] == 13
    assert table.query("events", after=table.version())["events"] == []


@pytest.mark.parametrize("params", [{"after": -1}, {"limit": 0}, {"limit": 1001},
                                    {"limit": "many"}])
def test_event_paging_out_of_range_is_400_naming_the_parameter(
    played: Played, params: dict[str, Any]
) -> None:
    table = played.table
    response = table.client.get(table.url("/events"), params=params, headers=table.as_seat(1))
    assert response.status_code == 400
    assert [e["key"] for e in response.json()["errors"]] == list(params)


# -- refusals --------------------------------------------------------------------------------


def test_a_stale_expected_version_is_409_and_appends_nothing(table: Table) -> None:
    version = table.version()
    narration, command = DEMO_STEPS[0]
    response = table.send(command, narration, expected_version=version - 1)
    assert response.status_code == 409
    assert response.json()["current_version"] == version
    assert table.version() == version
    accepted = table.send(command, narration, expected_version=version)
    assert accepted.status_code == 200 and accepted.json()["version"] > version


def test_a_rule_refusal_is_422_with_the_rule_id_and_appends_nothing(table: Table) -> None:
    version = table.version()
    response = table.send(c.EndTurn(seat=ANA))
    assert response.status_code == 422
    problem = response.json()
    assert problem["rule"] == "R-SCENE-1" and problem["status"] == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert table.version() == version


def test_a_choice_left_out_is_422_with_the_choices_and_the_field_to_fill(table: Table) -> None:
    step = play_until(table, "Nightjar believes the King deserves a fair trial")
    narration, command = DEMO_STEPS[step]
    assert isinstance(command, c.StakeDebt) and command.drive == "Justice"
    version = table.version()
    response = table.send(msgspec.structs.replace(command, drive=None), narration)
    assert response.status_code == 422
    problem = response.json()
    assert problem["rule"] == "R-STAKE-1" and problem["field"] == "drive"
    assert sorted(problem["choices"]) == ["Hope", "Justice"]
    assert table.version() == version
    table.play(narration, command)  # naming the Drive, the same stake is accepted


def test_a_stake_before_the_and_then_is_422_naming_r_x_roll_2(table: Table) -> None:
    """R-X-ROLL-2: Ana's stake after her roll waits for Ben's And Then; sent first, it is
    refused with the ruling's id and appends nothing, and after the narration it is taken."""
    step = play_until(table, "...and then the ferry's engine dies in Tempest's gale")
    narration, and_then = DEMO_STEPS[step]
    stake_narration, stake = DEMO_STEPS[step + 1]
    assert isinstance(and_then, c.Narrate) and isinstance(stake, c.StakeDebt)
    version = table.version()
    response = table.send(stake, stake_narration)
    assert response.status_code == 422
    assert response.json()["rule"] == "R-X-ROLL-2"
    assert table.version() == version
    table.play(narration, and_then)
    table.play(stake_narration, stake)


MALFORMED: list[tuple[str, Any, str]] = [
    ("no command", {}, "command"),
    ("an empty ability", {"command": {"type": "roll_die", "ability": "", "conflict": 1,
                                      "die": 1}}, "command.ability"),
    ("a missing field", {"command": {"type": "roll_die", "conflict": 1, "die": 1}}, "ability"),
    ("a die of 0", {"command": {"type": "roll_die", "ability": "x", "conflict": 1, "die": 0}},
     "command.die"),
    ("a side that is text", {"command": {"type": "claim", "conflict": 1, "side": "left"}},
     "command.side"),
    ("a seat out of range", {"command": {"type": "pass_turn", "seat": 65}}, "command.seat"),
    ("narration too long", {"command": {"type": "pass_turn"}, "narration": "x" * 2001},
     "narration"),
    ("expected version 0", {"command": {"type": "pass_turn"}, "expected_version": 0},
     "expected_version"),
    ("an unknown field", {"command": {"type": "pass_turn"}, "dice": [6, 6]}, "dice"),
    ("an unknown command field", {"command": {"type": "pass_turn", "value": 6}}, "value"),
    ("a command that is a list", {"command": ["pass_turn"]}, "command"),
]


@pytest.mark.parametrize("body, field", [pytest.param(b, f, id=i) for i, b, f in MALFORMED])
def test_a_malformed_body_is_400_naming_the_field(table: Table, body: Any, field: str) -> None:
    version = table.version()
    response = table.client.post(table.url("/commands"), json=body, headers=table.as_seat(ANA))
    assert response.status_code == 400, response.text
    errors = response.json()["errors"]
    assert any(field in f"{e['key']} {e['message']}" for e in errors), errors
    assert table.version() == version


def test_a_body_that_is_not_json_is_400(table: Table) -> None:
    version = table.version()
    response = table.client.post(table.url("/commands"), content=b"{roll: 6",
                                 headers={**table.as_seat(ANA),
                                          "content-type": "application/json"})
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    assert table.version() == version


@pytest.mark.parametrize("kind", ["teleport", "create_campaign", "seat_player",
                                  "close_campaign", ""])
def test_an_unknown_command_type_is_400(table: Table, kind: str) -> None:
    """Only seat commands go through /commands: creating, seating and closing have routes."""
    version = table.version()
    response = table.send({"type": kind, "name": "x"}, seat=ANA)
    assert response.status_code == 400
    assert [e["key"] for e in response.json()["errors"]] == ["command.type"]
    assert table.version() == version


def test_a_body_over_64_kib_is_413(table: Table) -> None:
    version = table.version()
    body = command_body(c.Narrate(text="x"), narration="x" * MAX_BODY)
    response = table.client.post(table.url("/commands"), json=body, headers=table.as_seat(ANA))
    assert response.status_code == 413
    assert response.headers["content-type"] == "application/problem+json"
    assert table.version() == version


def test_a_client_over_the_rate_limit_gets_429_and_its_command_is_not_run(
    memory_env: dict[str, str],
) -> None:
    campaigns = Campaigns(memory_env)
    with app_client(campaigns, rate_limit=2) as client:
        table = open_campaign(client, players=["Ana"])
        campaign = UUID(table.campaign_id)
        # A command a seat may send again and again: whichever of them the limit lets through
        # (it counts whole seconds, so where the window turns decides which), the next one is
        # still legal. The demo's first step, sent twice, was refused as a second character.
        command = c.Narrate(seat=1, text="Meanwhile, across town")
        # Within 5 quick requests one must be over the limit.
        version = campaigns.get(campaign).version
        for _ in range(5):
            response = table.send(command)
            if response.status_code != 200:
                break
            version = response.json()["version"]
        assert response.status_code == 429
        assert response.headers["content-type"] == "application/problem+json"
        assert {"ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"} <= set(
            response.headers), response.headers
        assert 1 <= int(response.headers["retry-after"]) <= 2, "RFC 9110's Retry-After"
        assert campaigns.get(campaign).version == version
        time.sleep(1.1)  # the next window
        assert table.send(command).status_code == 200


@pytest.mark.parametrize("path", ["/campaigns/Harbor-City/board", "/campaigns/1234/ledgers",
                                  "/play/e04b46a3-997d-4c20-892f"])
def test_a_campaign_id_mistyped_in_a_path_is_a_404_saying_so(table: Table, path: str) -> None:
    """It was a bare "Not Found", as for a route that does not exist."""
    response = table.client.get(path, headers=table.as_seat(ANA))
    assert response.status_code == 404
    mistyped = path.split("/")[2]
    assert response.json()["detail"] == (
        f"not a campaign id: {mistyped!r} (a campaign's id is a UUID, as in its invitation "
        "link: 8-4-4-4-12 hexadecimal digits)")


def test_an_unknown_campaign_is_404_to_join_and_401_to_anything_with_a_token(
    table: Table,
) -> None:
    nowhere = Table(table.client, str(uuid4()), table.owner_token, dict(table.tokens))
    response = nowhere.client.post(nowhere.url("/seats"), json={"name": "Dana"})
    assert response.status_code == 404
    assert nowhere.send(c.PassTurn(seat=ANA)).status_code == 401
    for what in ("", "/board", "/events", "/close"):
        method = nowhere.client.post if what == "/close" else nowhere.client.get
        assert method(nowhere.url(what), headers=bearer(table.owner_token)).status_code == 401
    assert table.client.get("/campaigns/not-a-uuid/board",
                            headers=table.as_seat(ANA)).status_code == 404
