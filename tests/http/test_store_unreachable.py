"""PostgreSQL unreachable for a while (restarted, the network): what players get, and the
server afterwards. Against the real PostgreSQL, behind a proxy the test breaks
(tests/tcp_proxy.py)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from helpers import TIMEOUT, open_campaign
from litestar.testing import TestClient
from stores import MakeApp
from tcp_proxy import TcpProxy

import application.postgres_store
from api.app import create_app

pytestmark = pytest.mark.postgres

#: Seconds within which a request is answered while the store cannot be reached, and the
#: store is back once it is: generous bounds (the answers come in a few seconds), which prove
#: only that nothing waits for ever. A client's own wait is longer still.
SECONDS = 20
WAIT = 60


def test_a_command_while_postgresql_is_unreachable_is_a_503_naming_the_store_and_play_resumes(
    make_app: MakeApp, postgres_env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 503 that names the store (never a 500 "the server failed"), with Retry-After; the
    writer goes on (its look at the store failing used to end the writer process, and every
    request waiting on it got "the writer process stopped"), and once PostgreSQL is back the
    next command is stored, once."""
    monkeypatch.setattr(application.postgres_store, "INSERT_ATTEMPTS", 2)  # the test's pace
    with TcpProxy(postgres_env["POSTGRES_HOST"], int(postgres_env["POSTGRES_PORT"])) as proxy:
        env = {**postgres_env, "POSTGRES_HOST": "127.0.0.1", "POSTGRES_PORT": str(proxy.port),
               "POSTGRES_CONNECT_TIMEOUT": "1"}
        campaigns = make_app(env)
        with TestClient(create_app(campaigns, rate_limit=0), timeout=TIMEOUT) as client:
            table = open_campaign(client, players=["Ana"])
            narrate: dict[str, Any] = {"type": "narrate", "seat": 1, "text": "Before"}
            assert table.send(narrate).status_code == 200

            proxy.down()
            time.sleep(0.1)
            refused = table.send({**narrate, "text": "While away"})

            assert refused.status_code == 503, refused.text
            problem = refused.json()
            assert f"PostgreSQL at 127.0.0.1:{proxy.port}" in problem["detail"]
            assert "may or may not have been stored" in problem["detail"]
            assert refused.headers["Retry-After"] == "1"

            proxy.up()
            deadline = time.monotonic() + 20
            while True:
                after = table.send({**narrate, "text": "After"})
                if after.status_code == 200 or time.monotonic() > deadline:
                    break
                assert after.status_code == 503, after.text
                time.sleep(0.5)
            assert after.status_code == 200, after.text
    texts = [r.event.text for r in make_app(postgres_env).history(table.campaign_id)
             if type(r.event).__name__ == "Narrated"]
    assert texts in (["Before", "After"], ["Before", "While away", "After"])


def test_a_command_while_postgresql_refuses_connections_is_answered_within_seconds_by_default(
    make_app: MakeApp, postgres_env: dict[str, str],
) -> None:
    """With nothing set but the store, a request waits a few seconds for PostgreSQL, once
    (POSTGRES_CONNECT_TIMEOUT, 3 s here): the library's 30 s, tried again ten times, made it
    five minutes. The pool goes on trying to connect meanwhile, and the first command once
    PostgreSQL is back is stored."""
    with TcpProxy(postgres_env["POSTGRES_HOST"], int(postgres_env["POSTGRES_PORT"])) as proxy:
        env = {**postgres_env, "POSTGRES_HOST": "127.0.0.1", "POSTGRES_PORT": str(proxy.port)}
        with TestClient(create_app(make_app(env), rate_limit=0), timeout=WAIT) as client:
            table = open_campaign(client, players=["Ana"])
            narrate: dict[str, Any] = {"type": "narrate", "seat": 1, "text": "Before"}
            assert table.send(narrate).status_code == 200

            proxy.down()
            # The first meets its connection dropped, at once; the next ones find none.
            for text in ("While away", "Still away", "Away again"):
                started = time.monotonic()
                refused = table.send({**narrate, "text": text})
                waited = time.monotonic() - started

                assert refused.status_code == 503, refused.text
                assert f"PostgreSQL at 127.0.0.1:{proxy.port}" in refused.json()["detail"]
                assert waited < SECONDS, f"the 503 came after {waited:.1f} s"

            proxy.up()
            after = command_once_back(table, {**narrate, "text": "After"})
            assert after.status_code == 200, after.text
    assert narrated(make_app(postgres_env), table.campaign_id) == ["Before", "After"]


def test_a_command_while_the_network_to_postgresql_is_silent_is_a_503_and_play_resumes(
    make_app: MakeApp, postgres_env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The network drops every packet without a word (here: a proxy on the way that takes
    the bytes and passes nothing on, as a NAT or a database proxy would whose far side is
    gone): a command is answered, a 503 naming the store, once PostgreSQL's answer is
    overdue (STATEMENT_TIMEOUT, then POSTGRES_CONNECT_TIMEOUT), instead of waiting for ever
    and every command after it with it. Once the network carries bytes again, play goes on
    with nothing restarted, and nothing acknowledged is lost."""
    monkeypatch.setattr(application.postgres_store, "STATEMENT_TIMEOUT", 1)  # the test's pace
    with TcpProxy(postgres_env["POSTGRES_HOST"], int(postgres_env["POSTGRES_PORT"])) as proxy:
        env = {**postgres_env, "POSTGRES_HOST": "127.0.0.1", "POSTGRES_PORT": str(proxy.port),
               "POSTGRES_CONNECT_TIMEOUT": "2"}
        with TestClient(create_app(make_app(env), rate_limit=0), timeout=WAIT) as client:
            table = open_campaign(client, players=["Ana"])
            narrate: dict[str, Any] = {"type": "narrate", "seat": 1, "text": "Before"}
            assert table.send(narrate).status_code == 200

            proxy.hang()
            started = time.monotonic()
            refused = table.send({**narrate, "text": "While silent"})
            waited = time.monotonic() - started

            assert refused.status_code == 503, refused.text
            problem = refused.json()
            assert f"PostgreSQL at 127.0.0.1:{proxy.port}" in problem["detail"]
            assert "may or may not have been stored" in problem["detail"]
            assert refused.headers["Retry-After"] == "1"
            assert waited < SECONDS, f"the 503 came after {waited:.1f} s"

            proxy.resume()
            after = command_once_back(table, {**narrate, "text": "After"})
            assert after.status_code == 200, after.text
            again = table.send({**narrate, "text": "Again"})
            assert again.status_code == 200, again.text
    # What the network held reached PostgreSQL once it came back, or never.
    assert narrated(make_app(postgres_env), table.campaign_id) in (
        ["Before", "After", "Again"], ["Before", "While silent", "After", "Again"])


def command_once_back(table: Any, command: dict[str, Any]) -> Any:
    """``command`` sent until it is not a 503 (the store coming back), for a while."""
    deadline = time.monotonic() + SECONDS
    while True:
        answer = table.send(command)
        if answer.status_code != 503 or time.monotonic() > deadline:
            return answer
        time.sleep(0.5)


def narrated(app: Any, campaign_id: Any) -> list[str]:
    """The texts narrated in the campaign, in the log's order."""
    return [r.event.text for r in app.history(campaign_id)
            if type(r.event).__name__ == "Narrated"]
