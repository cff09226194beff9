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
