"""Who may do what over HTTP: every command type needs the token of a seat of this campaign and
acts for that seat only; only the owner's token closes a campaign; every query needs a token;
tokens are stored as digests, never as themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest
from helpers import (
    DEMO_STEPS,
    Table,
    app_client,
    bearer,
    command_body,
    event_types,
    minimal_command,
    open_campaign,
)
from litestar.testing import TestClient

from api.schemas import SEAT_COMMANDS
from application.config import persistence_env
from application.credentials import digest
from domain.capes import commands as c

COMMANDS = [pytest.param(t, id=msgspec.inspect.type_info(t).tag) for t in SEAT_COMMANDS]
#: Every query route, by its path under the campaign.
QUERIES = ["", "/board", "/ledgers", "/characters", "/state", "/events", "/events/stream"]


@dataclass(frozen=True)
class Lobby:
    client: TestClient[object]
    #: The campaign under test, with Ana (seat 1) and Ben (seat 2).
    table: Table
    #: Another campaign, whose tokens are worth nothing at the first.
    elsewhere: Table

    def strangers(self) -> dict[str, dict[str, str]]:
        """Headers of everyone who is not at ``table``."""
        return {
            "no token": {},
            "an empty bearer": {"Authorization": "Bearer "},
            "another scheme": {"Authorization": f"Basic {self.table.tokens[1]}"},
            "garbage": bearer("not-a-token"),
            "another campaign's seat": bearer(self.elsewhere.tokens[1]),
            "another campaign's owner": bearer(self.elsewhere.owner_token),
        }


@pytest.fixture(scope="module")
def lobby() -> Iterator[Lobby]:
    with app_client(persistence_env({"CAPES_DB": ":memory:"})) as client:
        yield Lobby(client, open_campaign(client, players=["Ana", "Ben"]),
                    open_campaign(client, "Elsewhere", players=["Zed"]))


def test_every_command_type_has_a_minimal_valid_body() -> None:
    tags = {minimal_command(t)["type"] for t in SEAT_COMMANDS}
    assert len(tags) == len(SEAT_COMMANDS) > 20


@pytest.mark.parametrize("command_type", COMMANDS)
def test_a_command_without_a_token_of_this_campaign_is_401(
    lobby: Lobby, command_type: type[c.SeatCommand]
) -> None:
    table, version = lobby.table, lobby.table.version()
    body = command_body(minimal_command(command_type))
    for who, headers in lobby.strangers().items():
        response = table.client.post(table.url("/commands"), json=body, headers=headers)
        assert response.status_code == 401, who
        assert response.headers["content-type"] == "application/problem+json"
    assert table.version() == version


@pytest.mark.parametrize("command_type", COMMANDS)
def test_a_command_for_another_seat_is_403(
    lobby: Lobby, command_type: type[c.SeatCommand]
) -> None:
    table, version = lobby.table, lobby.table.version()
    response = table.send(minimal_command(command_type, seat=2), seat=1)
    assert response.status_code == 403, response.text
    assert "seat 1 may not act for seat 2" in response.json()["detail"]
    assert table.version() == version


@pytest.mark.parametrize("command_type", COMMANDS)
def test_the_owners_token_runs_no_seat_command(
    lobby: Lobby, command_type: type[c.SeatCommand]
) -> None:
    table, version = lobby.table, lobby.table.version()
    response = table.send(minimal_command(command_type), headers=table.as_owner())
    assert response.status_code == 403, response.text
    assert table.version() == version


def test_a_seat_cannot_close_the_campaign_and_the_owner_can(memory_env: dict[str, str]) -> None:
    with app_client(memory_env) as client:
        table = open_campaign(client, players=["Ana"])
        elsewhere = open_campaign(client, "Elsewhere")
        version = table.version()
        close = table.url("/close")
        assert client.post(close, headers=table.as_seat(1)).status_code == 403
        assert client.post(close, headers=elsewhere.as_owner()).status_code == 401
        assert client.post(close).status_code == 401
        assert table.version() == version
        closed = client.post(close, headers=table.as_owner())
        assert closed.status_code == 200
        assert event_types(closed.json()) == ["CampaignClosed"]
        assert table.query("")["closed"] is True
        narration, command = DEMO_STEPS[0]
        refused = table.send(command, narration)  # nobody plays on at a closed table
        assert refused.status_code == 403 and "closed" in refused.json()["detail"]
        assert table.version() == version + 1


@pytest.mark.parametrize("query", QUERIES)
def test_every_query_needs_a_token_of_this_campaign(lobby: Lobby, query: str) -> None:
    table = lobby.table
    for who, headers in lobby.strangers().items():
        response = table.client.get(table.url(query), headers=headers)
        assert response.status_code == 401, who
        assert response.headers["content-type"] == "application/problem+json"
    if query.endswith("/stream"):
        # The stream also takes ?token= (browsers' EventSource sends no headers); a live
        # stream never ends in the in-process client, so only refusals are asked for here.
        for token in ("not-a-token", lobby.elsewhere.tokens[1]):
            response = table.client.get(table.url(query), params={"token": token})
            assert response.status_code == 401
        return
    for headers in (table.as_seat(1), table.as_seat(2), table.as_owner()):
        assert table.client.get(table.url(query), headers=headers).status_code == 200


def test_tokens_are_stored_as_digests_never_as_themselves(sqlite_env: dict[str, str]) -> None:
    with app_client(sqlite_env) as client:
        table = open_campaign(client, players=["Ana", "Ben"])
        narration, command = DEMO_STEPS[0]
        table.play(narration, command)
        for seat in table.tokens:
            table.query("board", seat=seat)
        assert client.post(table.url("/close"), headers=table.as_owner()).status_code == 200
    tokens = [table.owner_token, *table.tokens.values()]
    database = Path(sqlite_env["SQLITE_DBNAME"])
    files = sorted(database.parent.glob(database.name + "*"))  # the file, its WAL and SHM
    stored = b"".join(f.read_bytes() for f in files)
    for token in tokens:
        assert token.encode() not in stored
        assert digest(token).encode() in stored, "the digest is what is kept"
