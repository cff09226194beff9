"""``GET /health``: what a load balancer, systemd, Docker or Kubernetes asks of a host's server.

200 while the server can serve (the store answers, the writer runs), with the read models'
position beside the store's; 503 naming, in words, the part that cannot. Unauthenticated, so it
says nothing of any campaign: no id, no name, no token. The store down is the real PostgreSQL
behind a proxy the test breaks, as in test_store_unreachable.py.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import JSON, TIMEOUT, Table, open_campaign
from litestar.testing import TestClient
from stores import MakeApp
from tcp_proxy import TcpProxy

from api.app import create_app
from api.routes import host
from api.writer import RemoteWriter
from projections.service import ReadModels

#: What every answer of /health holds, and nothing more.
FIELDS = {"status", "store", "writer", "read_models", "problems"}


def health(client: TestClient[Any]) -> tuple[int, JSON]:
    answer = client.get("/health")
    assert answer.headers["content-type"].startswith("application/json"), answer.text
    body: JSON = answer.json()
    assert set(body) == FIELDS, body
    return answer.status_code, body


def healthy_once(client: TestClient[Any], until: Any = lambda body: True) -> JSON:
    """/health polled until it is a 200 for which ``until(body)`` holds (the read models
    catch up in the background, a writer process starts again): the last body."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        status, body = health(client)
        if (status == 200 and until(body)) or time.monotonic() > deadline:
            assert status == 200, body
            return body
        time.sleep(0.05)


def a_played_table(client: TestClient[Any]) -> tuple[Table, int]:
    """A campaign with a seat and a narrated line: the table and the store's last position."""
    table = open_campaign(client, name="Harbor City", players=["Ana"])
    applied = table.send({"type": "narrate", "seat": 1, "text": "The docks at night"})
    assert applied.status_code == 200, applied.text
    return table, int(applied.json()["position"])


def assert_says_nothing_of(table: Table, text: str) -> None:
    for secret in (table.campaign_id, "Harbor City", "Ana", "docks", table.owner_token,
                   *table.tokens.values()):
        assert secret not in text, f"/health told {secret!r}"


@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_health_is_a_200_naming_the_store_with_the_read_models_position_and_nothing_of_campaigns(
    make_app: MakeApp, request: pytest.FixtureRequest, store: str,
) -> None:
    env: dict[str, str] = request.getfixturevalue(f"{store}_env")
    with TestClient(create_app(make_app(env), rate_limit=0), timeout=TIMEOUT) as client:
        table, position = a_played_table(client)

        body = healthy_once(client, until=lambda b: b["read_models"]["behind"] == 0)

        assert body["status"] == "ok" and body["writer"] == "ok" and body["problems"] == []
        assert body["store"] == {"sqlite": "sqlite", "postgres": "postgresql"}[store]
        assert body["read_models"] == {"position": position, "store_position": position,
                                       "behind": 0}
        assert_says_nothing_of(table, client.get("/health").text)


def test_read_models_behind_the_store_are_reported_and_still_a_200(
    make_app: MakeApp, sqlite_env: dict[str, str],
) -> None:
    """Read models catch up on their own: lagging is told, not a reason to take the server out
    of a load balancer (the table plays from the writer's state meanwhile)."""
    environ = {"CAPES_PROJECTIONS": "external"}  # nobody runs them: they stay where they are
    app = create_app(make_app(sqlite_env), rate_limit=0, environ=environ)
    with TestClient(app, timeout=TIMEOUT) as client:
        _, position = a_played_table(client)

        status, body = health(client)

    assert status == 200 and body["status"] == "ok", body
    assert body["read_models"] == {"position": 0, "store_position": position,
                                   "behind": position}


def test_head_health_answers_the_status_without_a_body(
    make_app: MakeApp, sqlite_env: dict[str, str],
) -> None:
    with TestClient(create_app(make_app(sqlite_env), rate_limit=0), timeout=TIMEOUT) as client:
        answer = client.head("/health")
    assert answer.status_code == 200 and answer.content == b""


def test_health_is_not_rate_limited(make_app: MakeApp, sqlite_env: dict[str, str]) -> None:
    """A load balancer's probes come from one address, which may be the proxy every player's
    requests come through too: a 429 there would take the server out."""
    with TestClient(create_app(make_app(sqlite_env), rate_limit=1), timeout=TIMEOUT) as client:
        assert client.get("/analytics").status_code != 429
        assert client.get("/analytics").status_code == 429, "the limit is on"
        assert [client.get("/health").status_code for _ in range(5)] == [200] * 5


@pytest.mark.postgres
def test_health_is_a_503_saying_the_store_cannot_be_reached_and_a_200_once_it_is_back(
    make_app: MakeApp, postgres_env: dict[str, str],
) -> None:
    with TcpProxy(postgres_env["POSTGRES_HOST"], int(postgres_env["POSTGRES_PORT"])) as proxy:
        env = {**postgres_env, "POSTGRES_HOST": "127.0.0.1", "POSTGRES_PORT": str(proxy.port),
               "POSTGRES_CONNECT_TIMEOUT": "1"}
        with TestClient(create_app(make_app(env), rate_limit=0), timeout=TIMEOUT) as client:
            table, _ = a_played_table(client)
            healthy_once(client)

            proxy.down()
            started = time.monotonic()
            status, body = health(client)
            waited = time.monotonic() - started

            assert status == 503, body
            assert body["status"] == "unavailable" and body["store"] == "postgresql"
            assert body["problems"] == ["the store cannot be reached"]
            assert body["read_models"] is None
            assert waited < 5, f"the 503 came after {waited:.1f} s"
            text = client.get("/health").text
            assert_says_nothing_of(table, text)
            assert str(proxy.port) not in text, "nor where the store is"

            proxy.up()
            assert healthy_once(client)["status"] == "ok"


def test_a_store_that_never_answers_is_asked_by_one_thread_however_many_probes_come(
    make_app: MakeApp, sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A look at the store is left to finish on its own once a probe stops waiting for it,
    and the probes that come meanwhile wait for that same look: a store fallen silent is
    asked by one worker thread, not by one more every probe (each held for as long as the
    silence lasts). Once the look ends, the next probe asks anew."""
    monkeypatch.setattr(host, "STORE_WAIT", 0.2)
    answers = threading.Event()
    looks: list[str] = []
    progress = ReadModels.progress

    def silent(self: ReadModels) -> tuple[int, int]:
        looks.append(threading.current_thread().name)
        answers.wait(TIMEOUT)
        return progress(self)

    with TestClient(create_app(make_app(sqlite_env), rate_limit=0), timeout=TIMEOUT) as client:
        a_played_table(client)
        monkeypatch.setattr(ReadModels, "progress", silent)
        probes = [health(client) for _ in range(5)]
        assert [status for status, _ in probes] == [503] * 5, probes
        assert {body["problems"][0] for _, body in probes} == {"the store cannot be reached"}
        assert len(looks) == 1, looks

        answers.set()
        assert healthy_once(client)["status"] == "ok"  # maybe the first look's late answer
        seen = len(looks)
        assert health(client)[0] == 200
        assert len(looks) == seen + 1, "a look that ended is not the next probe's answer"


def test_health_is_a_503_while_the_writer_process_is_gone_and_a_200_once_another_runs(
    tmp_path: Path,
) -> None:
    """The probe itself starts the next writer process: a server a load balancer took out on
    the 503 gets no game request that would start it."""
    app = create_app(environ={"CAPES_DB": str(tmp_path / "s.sqlite"), "CAPES_WRITER": "process"},
                     rate_limit=0)
    with TestClient(app, timeout=TIMEOUT) as client:
        assert health(client)[0] == 200
        writer = client.app.dependencies["services"].dependency().committer
        assert isinstance(writer, RemoteWriter) and writer._process is not None
        process = writer._process
        os.kill(process.pid, signal.SIGKILL)
        process.wait(TIMEOUT)

        status, body = health(client)

        assert status == 503 and body["status"] == "unavailable", body
        assert body["writer"] == "stopped"
        assert body["problems"] == ["the writer process stopped: another is starting"]
        assert healthy_once(client)["writer"] == "ok"
        assert writer._process is not None and writer._process.pid != process.pid


def test_health_is_in_the_schema_under_the_hosts_tag(make_app: MakeApp,
                                                      sqlite_env: dict[str, str]) -> None:
    with TestClient(create_app(make_app(sqlite_env), rate_limit=0), timeout=TIMEOUT) as client:
        schema = client.get("/schema/openapi.json").json()
    operation = schema["paths"]["/health"]["get"]
    assert operation["tags"] == ["host"]
    assert operation["security"] == [{}], "no token needed"
    assert {"200", "503"} <= set(operation["responses"])
    assert "host" in {tag["name"] for tag in schema["tags"]}

