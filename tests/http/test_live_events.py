"""Live events (Server-Sent Events) from a real server process.

The in-process TestClient buffers an endless stream and hangs, so these tests start uvicorn on
127.0.0.1 (SQLite in a temporary folder) and read the stream with httpx. Every wait is bounded
by the client's timeouts; the server is stopped whatever happens.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import msgspec
import pytest
from helpers import (
    DEMO_STEPS,
    PROMPT,
    TIMEOUT,
    Message,
    Table,
    client,
    open_campaign,
    read_until,
    server,
    sse_messages,
    subscribe,
)
from stores import REDIS_URL, need_redis

from api.live import KEEPALIVE
from api.routes.queries import KEEPALIVE_MESSAGE
from domain.capes import commands as c


@pytest.fixture
def base_url(tmp_path: Path) -> Iterator[str]:
    with server({"CAPES_DB": str(tmp_path / "live.sqlite")}, tmp_path / "server.log") as url:
        yield url


def ids(messages: list[Message]) -> list[int]:
    return [m.id for m in messages]


def test_a_subscriber_receives_a_commands_events_as_they_happen_and_resumes_exactly(
    base_url: str,
) -> None:
    with client(base_url) as http, client(base_url, read=PROMPT) as watcher:
        table = open_campaign(http, players=["Ana", "Ben", "Cleo"])
        version = table.version()
        stream = subscribe(watcher, table)
        try:
            messages = sse_messages(stream)
            backlog = read_until(messages, version)
            assert ids(backlog) == list(range(1, version + 1))
            # Each seat with the record of its token (R-X-REC-4).
            assert [m.event for m in backlog] == (["CampaignCreated"]
                                                  + ["PlayerSeated", "SeatTokenIssued"] * 3)

            narration, command = DEMO_STEPS[0]
            applied = table.play(narration, command)
            live = read_until(messages, applied["version"], limit=PROMPT)
        finally:
            stream.close()
        sent = applied["events"]
        assert ids(live) == [e["position"] for e in sent]
        assert [m.event for m in live] == [e["type"] for e in sent]
        assert [m.data for m in live] == sent, "the message is the event as the log shows it"
        assert live[0].data["narration"] == narration and live[0].data["seat"] == 1

        end = applied["version"]
        for last in (0, 3, end - 1):
            again = subscribe(watcher, table, **{"Last-Event-ID": str(last)})
            try:
                resumed = read_until(sse_messages(again), end)
            finally:
                again.close()
            assert ids(resumed) == list(range(last + 1, end + 1)), last


def test_a_subscriber_hears_a_seat_taken_and_the_after_parameter_resumes_too(
    base_url: str,
) -> None:
    with client(base_url) as http, client(base_url, read=PROMPT) as watcher:
        table = open_campaign(http, players=["Ana"])
        request = watcher.build_request("GET", table.url("/events/stream"),
                                        params={"after": 1}, headers=table.as_seat(1))
        stream = watcher.send(request, stream=True)
        try:
            messages = sse_messages(stream)
            assert ids(read_until(messages, 3)) == [2, 3]
            seat = table.seat("Ben")
            heard = read_until(messages, 5, limit=PROMPT)
        finally:
            stream.close()
        assert [(m.id, m.event, m.data["event"]["seat"]) for m in heard] == [
            (4, "PlayerSeated", seat), (5, "SeatTokenIssued", seat)]


def test_the_stream_refuses_a_wrong_token_and_an_unknown_campaign(base_url: str) -> None:
    with client(base_url) as http:
        table = open_campaign(http, players=["Ana"])
        other = open_campaign(http, "Elsewhere", players=["Zed"])
        for token in ("garbage", other.tokens[1]):
            response = http.get(table.url("/events/stream"), params={"token": token})
            assert response.status_code == 401
        response = http.get(table.url("/events/stream"), params={"after": -1},
                            headers=table.as_seat(1))
        assert response.status_code == 400
        # A Last-Event-ID is a position this server sent; anything else is refused before the
        # stream starts (a superscript digit, or past the store's integers, was a 500).
        for last_id in ("\u00b2".encode("latin-1"), str(2**64), "abc", "-1"):
            response = http.get(table.url("/events/stream"),
                                headers=table.as_seat(1) | {"Last-Event-ID": last_id})
            assert response.status_code == 400, last_id
            assert "Last-Event-ID" in response.json()["detail"]


def test_a_stream_whose_token_is_revoked_ends_before_it_sends_anything_more(
    base_url: str,
) -> None:
    """A new link for a seat revokes its old token: a stream opened with the old one ends,
    and the table's next move does not reach it (it went on reading the table live)."""
    with client(base_url) as http, client(base_url, read=PROMPT) as watcher:
        table = open_campaign(http, players=["Ana", "Ben"])
        stream = subscribe(watcher, table)  # with Ana's token
        try:
            messages = sse_messages(stream)
            read_until(messages, table.version())
            renewed = http.post(table.url("/seats/1/token"), headers=table.as_owner())
            assert renewed.status_code in (200, 201), renewed.text
            table.play("", c.Narrate(seat=2, text="Ana's old link must not read this"))
            after = list(messages)  # the stream ends (a read timeout, were it still open)
        finally:
            stream.close()
        assert after == []


def test_a_token_holds_at_most_its_share_of_live_streams(tmp_path: Path) -> None:
    """Each stream is an open socket: one token could hold the server's open files. Past
    ``CAPES_STREAMS_PER_TOKEN`` a token's next stream is a 429 naming the setting; another
    seat's token is not held back, and a stream that ends frees its place."""
    environ = {"CAPES_DB": str(tmp_path / "live.sqlite"), "CAPES_STREAMS_PER_TOKEN": "2"}
    with server(environ, tmp_path / "server.log") as base, client(base) as http, \
            client(base, read=PROMPT) as watcher:
        table = open_campaign(http, players=["Ana", "Ben"])
        first, second = subscribe(watcher, table), subscribe(watcher, table)
        try:
            refused = http.get(table.url("/events/stream"), params={"token": table.tokens[1]})
            assert refused.status_code == 429, refused.text
            assert "CAPES_STREAMS_PER_TOKEN" in refused.json()["detail"]
            ben = http.build_request("GET", table.url("/events/stream"),
                                     params={"token": table.tokens[2]})
            other = watcher.send(ben, stream=True)
            assert other.status_code == 200
            other.close()
        finally:
            first.close()
        # Freed as the server takes in the client's going (within 0.1 s in 22 runs here; one
        # CI run saw more than 5 s): given up to a keep-alive's quiet more, when a stream
        # whose client went unnoticed writes to it and finds it gone.
        deadline = time.monotonic() + KEEPALIVE + PROMPT
        while True:
            again = watcher.send(watcher.build_request(
                "GET", table.url("/events/stream"), params={"token": table.tokens[1]}),
                stream=True)
            if again.status_code == 200 or time.monotonic() > deadline:
                break
            again.close()
            time.sleep(0.1)
        try:
            assert again.status_code == 200
        finally:
            again.close()
            second.close()


def test_a_quiet_streams_keep_alive_is_a_comment_that_no_page_receives_as_a_message() -> None:
    """An EventSource dispatches a message for a blank line only when a ``data`` field came
    before it (the HTML standard's "dispatch the event": an empty data buffer dispatches
    nothing); the keep-alive must carry none, or every open page parses an empty message."""
    lines = KEEPALIVE_MESSAGE.decode().split("\r\n")
    assert lines[0].startswith(":") and lines[1:] == ["", ""]
    assert not any(line.startswith("data") for line in lines)


def raw_messages(response: httpx.Response, count: int) -> list[dict[str, str]]:
    """The first ``count`` messages of a stream as their fields, comments skipped."""
    got: list[dict[str, str]] = []
    fields: dict[str, str] = {}
    for line in response.iter_lines():
        if not line:
            if "data" in fields:
                got.append(fields)
                if len(got) == count:
                    return got
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
    return got


@pytest.mark.parametrize("plain", [False, True])
def test_a_stream_asked_for_a_heartbeat_starts_with_one_that_says_how_often_it_comes(
    base_url: str, plain: bool
) -> None:
    """A page cannot see a comment, so it cannot tell a dead connection from a quiet table
    (a laptop woken from sleep: the browser may hold the dead one "open" for minutes); with
    ``heartbeat=true`` the keep-alive is a message, without an id (Last-Event-ID stays the last
    event's), and the first comes at once."""
    with client(base_url) as http, client(base_url, read=PROMPT) as watcher:
        table = open_campaign(http, players=["Ana"])
        params = {"token": table.tokens[1], "heartbeat": "true", "plain": str(plain).lower()}
        stream = watcher.send(watcher.build_request("GET", table.url("/events/stream"),
                                                    params=params), stream=True)
        try:
            first, second = raw_messages(stream, 2)
        finally:
            stream.close()
    assert msgspec.json.decode(first["data"]) == {"type": "keep-alive", "every": 15.0}
    assert "id" not in first
    assert first.get("event") == (None if plain else "keep-alive")
    assert second["id"] == "1"


def test_with_two_workers_on_redis_a_subscriber_hears_commands_run_by_either(
    tmp_path: Path,
) -> None:
    need_redis()
    environ = {"CAPES_DB": str(tmp_path / "shared.sqlite"), "CAPES_REDIS_URL": REDIS_URL}
    with server(environ, tmp_path / "server.log", workers=2) as base, \
            client(base, read=PROMPT) as watcher:
        with client(base) as http:
            table = open_campaign(http, players=["Ana", "Ben", "Cleo"])
        stream = subscribe(watcher, table)
        try:
            messages = sse_messages(stream)
            read_until(messages, 7)  # created, then three seats and their tokens
            heard: list[Message] = []
            sent: list[dict[str, object]] = []
            # Each command on a connection of its own: the kernel hands each to either worker.
            for narration, command in DEMO_STEPS[:3]:
                with client(base) as http:
                    applied = Table(http, table.campaign_id, table.owner_token,
                                    table.tokens).play(narration, command)
                sent += applied["events"]
                heard += read_until(messages, applied["version"], limit=PROMPT)
        finally:
            stream.close()
    assert [(m.id, m.event) for m in heard] == [(e["position"], e["type"]) for e in sent]


def test_a_stream_that_missed_events_written_elsewhere_reads_them_before_the_next_command(
    tmp_path: Path,
) -> None:
    """Announcements carry a command's events ready to send; another process's write (the CLI
    here) is not announced: the next announcement does not follow what the stream sent, so
    the stream reads the log, and sends every event once, in order."""
    from uuid import UUID

    from application.campaigns import open_campaigns
    from domain.capes import commands as c

    db = tmp_path / "live.sqlite"
    with server({"CAPES_DB": str(db)}, tmp_path / "server.log") as url, \
            client(url) as http, client(url, read=PROMPT) as watcher:
        table = open_campaign(http, players=["Ana", "Ben"])
        version = table.version()
        stream = subscribe(watcher, table)
        cli = open_campaigns({"CAPES_DB": str(db)})
        try:
            messages = sse_messages(stream)
            read_until(messages, version)
            elsewhere = cli.execute(UUID(table.campaign_id), c.Narrate(seat=2, text="Meanwhile"))
            applied = table.send(c.Narrate(seat=1, text="And then")).json()
            live = read_until(messages, applied["version"], limit=PROMPT)
        finally:
            stream.close()
            cli.close()
    assert ids(live) == [elsewhere.version, applied["version"]]
    assert [m.data["event"]["text"] for m in live] == ["Meanwhile", "And then"]


def test_plain_messages_reach_onmessage_and_the_board_follows_each_change(
    base_url: str,
) -> None:
    """``plain=true``: no event names (a browser's ``EventSource.onmessage`` gets them all);
    ``board=true``: after the events of each change, the board as of its last event."""
    with client(base_url) as http, client(base_url, read=PROMPT) as watcher:
        table = open_campaign(http, players=["Ana", "Ben", "Cleo"])
        stream = subscribe_with(watcher, table, plain="true", board="true")
        try:
            messages = sse_messages(stream)
            # Created, then three seats, each with the record of its token (R-X-REC-4).
            backlog = read_until(messages, 7)
            assert [(m.id, m.event) for m in backlog] == [(i, "") for i in range(1, 8)]
            board = next(messages)
            assert (board.id, board.event, board.data["type"]) == (7, "", "board")
            assert board.data["version"] == 7
            assert board.data["board"]["players"] == ["Ana", "Ben", "Cleo"]

            narration, command = DEMO_STEPS[0]
            applied = table.play(narration, command)
            live = read_until(messages, applied["version"], limit=PROMPT)
            after = next(messages)
        finally:
            stream.close()
        assert [m.data["type"] for m in live] == [e["type"] for e in applied["events"]]
        assert after.data["type"] == "board" and after.data["version"] == applied["version"]
        assert after.data["board"] == table.query("board", version=applied["version"])


def subscribe_with(http: httpx.Client, table: Table, **params: str) -> httpx.Response:
    request = http.build_request("GET", table.url("/events/stream"), params=params,
                                 headers=table.as_seat(1))
    response = http.send(request, stream=True)
    assert response.status_code == 200
    return response


def test_a_server_asked_to_stop_ends_its_open_streams_and_exits(tmp_path: Path) -> None:
    """A live stream never ends by itself: ``capes serve`` gives the requests under way
    SHUTDOWN_GRACE seconds, then ends them, instead of waiting for every browser to leave."""
    import os
    import signal
    import socket
    from urllib.parse import urlsplit

    from helpers import RUNNING, capes_serve

    from cli.main import SHUTDOWN_GRACE

    with capes_serve({"CAPES_DB": str(tmp_path / "stop.sqlite")}, tmp_path / "server.log") \
            as base, client(base) as http:
        table = open_campaign(http, players=["Ana"])
        where = urlsplit(base)
        # A browser's stream: a plain socket that keeps reading, as an EventSource does.
        with socket.create_connection((where.hostname, where.port), timeout=TIMEOUT) as s:
            s.sendall(f"GET {table.url('/events/stream')}?token={table.tokens[1]} HTTP/1.1\r\n"
                      f"Host: {where.netloc}\r\n\r\n".encode())
            assert s.recv(65536).startswith(b"HTTP/1.1 200")
            process = RUNNING[base]
            os.killpg(process.pid, signal.SIGINT)
            process.wait(timeout=SHUTDOWN_GRACE + 10)  # raises if it still waits for us
    assert process.returncode == 0
    assert "Exception in ASGI application" not in (tmp_path / "server.log").read_text()
