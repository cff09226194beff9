"""Tokens (issue 14, item 3): a reissued token revokes the one before, ``capes tokens`` issues
them on the host's store, ``GET /campaigns/{id}/me`` tells a holder who they are, and no token
ever reaches the server's log."""

from __future__ import annotations

import logging
import re
import time
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
import pytest
from helpers import TIMEOUT, app_client, bearer, capes_serve, demo_table, open_campaign
from litestar.testing import TestClient
from stores import MakeApp

from api.app import TokensOutOfLog, create_app
from application.campaigns import Campaigns
from application.config import persistence_env
from application.credentials import OWNER, Actor, Keyring
from cli.main import main
from domain.capes import commands as c


def test_a_reissued_seat_token_revokes_the_one_before(
    shared_store_env: dict[str, str], make_app: MakeApp,
) -> None:
    store_env = shared_store_env
    keyring = Keyring(store_env)
    try:
        campaign = make_app(store_env).create(c.CreateCampaign(name="Keys")).campaign_id
        owner = keyring.open_campaign(campaign)
        first = keyring.issue(campaign, 1)
        second = keyring.issue(campaign, 1)
        assert keyring.authenticate(campaign, first) is None
        assert keyring.authenticate(campaign, second) is not None
        assert keyring.authenticate(campaign, second).seat == 1  # type: ignore[union-attr]
        new_owner = keyring.issue(campaign, OWNER)
        assert keyring.authenticate(campaign, owner) is None
        assert keyring.authenticate(campaign, new_owner).owner  # type: ignore[union-attr]
        assert keyring.authenticate(campaign, second) is not None, "other seats keep theirs"
        # Read again from the store (another process's view): the same.
        again = Keyring(store_env)
        try:
            assert again.authenticate(campaign, first) is None
            assert again.authenticate(campaign, owner) is None
            assert again.authenticate(campaign, second) is not None
        finally:
            again.close()
    finally:
        keyring.close()


def test_a_token_revoked_by_another_process_stops_working_once_the_keys_go_stale(
    sqlite_env: dict[str, str], make_app: MakeApp,
) -> None:
    server, host = Keyring(sqlite_env), Keyring(sqlite_env)
    try:
        campaign = make_app(sqlite_env).create(c.CreateCampaign(name="Keys")).campaign_id
        host.open_campaign(campaign)
        old = host.issue(campaign, 1)
        assert server.authenticate(campaign, old) is not None  # now in the server's memory
        host.issue(campaign, 1)
        server.fresh_for = 0.0  # as if its keys were older than that
        assert server.cached(campaign, old) is None
        assert server.authenticate(campaign, old) is None
    finally:
        server.close()
        host.close()


def test_reissuing_a_seat_token_over_http_revokes_the_old_one(
    memory_env: dict[str, str],
) -> None:
    with app_client(memory_env) as client:
        table = open_campaign(client, players=["Ana"])
        old = table.tokens[1]
        response = client.post(table.url("/seats/1/token"), headers=table.as_owner())
        assert response.status_code == 201, response.text
        new = response.json()["token"]
        assert client.get(table.url("/board"), headers=bearer(old)).status_code == 401
        assert client.get(table.url("/board"), headers=bearer(new)).status_code == 200


def test_a_token_tells_its_holder_the_campaign_and_seat(memory_env: dict[str, str]) -> None:
    with app_client(memory_env) as client:
        table = open_campaign(client, "Harbor City", players=["Ana", "Ben"])
        me = client.get(table.url("/me"), headers=table.as_seat(2)).json()
        assert me == {"campaign_id": table.campaign_id, "campaign": "Harbor City",
                      "owner": False, "seat": 2, "player": "Ben"}
        me = client.get(table.url("/me"), headers=table.as_owner()).json()
        assert me["owner"] is True and me["seat"] is None and me["player"] is None
        assert client.get(table.url("/me"), headers=bearer("nope")).status_code == 401


def test_capes_tokens_issues_owner_and_seat_tokens_on_the_configured_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """A campaign played from the console has no tokens: the host issues them."""
    monkeypatch.setenv("CAPES_DB", str(tmp_path / "capes.sqlite"))
    monkeypatch.delenv("CAPES_DATABASE_URL", raising=False)
    env = persistence_env({"CAPES_DB": str(tmp_path / "capes.sqlite")})
    app = Campaigns(env)
    campaign = app.create(c.CreateCampaign(name="From the console")).campaign_id
    app.execute(campaign, c.SeatPlayer(name="Ana"))
    app.execute(campaign, c.SeatPlayer(name="Ben"))
    app.close()

    assert main(["tokens", str(campaign)]) == 0
    out = capsys.readouterr().out
    tokens = dict(re.findall(r"^  (owner|seat \d \(\w+\)): +(\S+)$", out, re.MULTILINE))
    assert set(tokens) == {"owner", "seat 1 (Ana)", "seat 2 (Ben)"}

    assert main(["tokens", str(campaign), "--seat", "2"]) == 0
    reissued = dict(re.findall(r"^  (seat \d \(\w+\)): +(\S+)$", capsys.readouterr().out,
                               re.MULTILINE))
    assert set(reissued) == {"seat 2 (Ben)"}

    with app_client(env) as client:
        def me(token: str) -> Any:
            return client.get(f"/campaigns/{campaign}/me", headers=bearer(token))

        assert me(tokens["owner"]).json()["owner"] is True
        assert me(tokens["seat 1 (Ana)"]).json()["player"] == "Ana"
        assert me(tokens["seat 2 (Ben)"]).status_code == 401, "revoked by the reissue"
        assert me(reissued["seat 2 (Ben)"]).json()["seat"] == 2

    assert main(["tokens", str(campaign), "--seat", "9"]) == 1
    assert "no seat 9" in capsys.readouterr().err


def test_capes_tokens_owner_issues_the_owners_alone_and_the_players_keep_theirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """``--owner`` alone reissued every seat's token too: a host who had lost the owner's
    token took every player's link away."""
    monkeypatch.setenv("CAPES_DB", str(tmp_path / "capes.sqlite"))
    monkeypatch.delenv("CAPES_DATABASE_URL", raising=False)
    app = Campaigns(persistence_env({"CAPES_DB": str(tmp_path / "capes.sqlite")}))
    campaign = app.create(c.CreateCampaign(name="From the console")).campaign_id
    app.execute(campaign, c.SeatPlayer(name="Ana"))
    version = app.get(campaign).version
    app.close()

    assert main(["tokens", str(campaign), "--owner"]) == 0
    issued = re.findall(r"^  (\w[^:]*): +\S+$", capsys.readouterr().out, re.MULTILINE)
    assert issued == ["owner"]
    app = Campaigns(persistence_env({"CAPES_DB": str(tmp_path / "capes.sqlite")}))
    assert app.get(campaign).version == version, "no SeatTokenIssued"
    app.close()


def test_no_token_reaches_the_servers_log(tmp_path: Path) -> None:
    """Every way of passing a token (the header, ``?token=`` on the live stream and on a
    chart, the host key), against ``capes serve`` with its access log on."""
    host_key = "host-key-" + "k" * 40
    environ = {"CAPES_DB": str(tmp_path / "capes.sqlite"), "CAPES_HOST_KEY": host_key}
    log = tmp_path / "server.log"
    with capes_serve(environ, log, "--log-level", "info") as base, \
            httpx.Client(base_url=base, timeout=TIMEOUT) as client:
        table = demo_table(client)
        secrets = [table.owner_token, *table.tokens.values(), host_key]
        seat = table.tokens[1]
        assert client.get(table.url("/board"), headers=bearer(seat)).status_code == 200
        assert client.get(table.url("/analytics/dice.png"),
                          params={"token": seat}).status_code == 200
        with client.stream("GET", table.url("/events/stream"), params={"token": seat}) as live:
            assert live.status_code == 200
            next(live.iter_lines())
        reissued = client.post(table.url("/seats/2/token"), headers=table.as_owner())
        secrets.append(reissued.json()["token"])
        assert client.get("/campaigns", headers=bearer(host_key)).status_code == 200
        assert client.get("/analytics", headers=bearer(host_key)).status_code == 200
        # A wrong token in the query string is kept out too.
        client.get(table.url("/events/stream"), params={"token": "wrong-" + seat})
        # And one under a percent-encoded name, which the server takes as ``token``.
        assert client.get(table.url(f"/analytics/dice.png?%74oken={seat}")).status_code == 200
    written = log.read_text()
    assert "/events/stream?token=" in written, "the access log was on"
    for secret in secrets:
        assert secret not in written


#: ``token`` as a client may spell it in a query string: the server decodes the name.
ENCODED_TOKEN_NAMES = ("token", "%74oken", "tok%65n", "%74%6F%6B%65%6E")


@pytest.mark.parametrize("name", ENCODED_TOKEN_NAMES)
def test_a_token_is_blanked_in_the_access_log_however_its_parameter_name_is_encoded(
    name: str,
) -> None:
    """The server takes ``?%74oken=`` as ``?token=``: the access log's filter matched only the
    literal ``token=`` and wrote such a token out. The rest of the line is kept."""
    with app_client({"CAPES_DB": ":memory:"}) as client:
        table = open_campaign(client, players=["Ana"])
        accepted = client.get(table.url("/analytics/dice.png") + f"?{name}={table.tokens[1]}")
        assert accepted.status_code == 200, "the server took it as the seat's token"
    path = f"/campaigns/x/analytics/dice.png?after=2&{name}=s3cret&Token=s3cret&tokens=kept"
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 0,
                               '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5000", "GET", path, "1.1", 200), None)
    assert TokensOutOfLog().filter(record)
    assert record.getMessage() == (
        f'127.0.0.1:5000 - "GET /campaigns/x/analytics/dice.png?after=2&{name}=[redacted]'
        '&Token=[redacted]&tokens=kept HTTP/1.1" 200')


def age(keyring: Keyring, campaign: Any, share: float) -> None:
    """Make the keys in ``keyring``'s memory as old as ``share`` of its ``fresh_for``."""
    keys, _, epoch = keyring._cache[campaign]
    keyring._cache[campaign] = (keys, time.monotonic() - share * keyring.fresh_for, epoch)


@pytest.mark.postgres
def test_a_busy_servers_keys_are_read_again_ahead_of_time_once_and_off_the_requests_path(
    postgres_env: dict[str, str], make_app: MakeApp,
) -> None:
    """On a store over the network, past half of ``fresh_for`` a request is answered from the
    keys in memory and starts one read of them in the background (issue 15: when keys expired
    under load, every request of the campaign made that read itself, in a worker thread, and
    the board's p99 was ten times the control's). So a token revoked by another process stops
    working here without any request waiting for the store. This is what a server does while
    its store watch is not listening (see the tests of the watch below)."""
    server, host = Keyring(postgres_env), Keyring(postgres_env)
    assert not server.local
    campaigns = make_app(postgres_env)
    try:
        campaign = campaigns.create(c.CreateCampaign(name="Keys")).campaign_id
        host.open_campaign(campaign)
        old = host.issue(campaign, 1)
        assert server.authenticate(campaign, old) is not None
        assert not server.due(campaign)  # fresh: nothing to read
        with TestClient(create_app(campaigns, server, rate_limit=0), timeout=TIMEOUT) as client:
            assert server.watch is not None and server.watch.live, "the server started it"
            server.watch.stop()  # as when it lost its connection
            # Aged once the app is up: its start, on a busy machine, must not age them more.
            age(server, campaign, 0.6)  # past half of fresh_for, 0.8 s before its end
            host.issue(campaign, 1)  # revoked elsewhere
            assert server.cached(campaign, old) is not None  # still within fresh_for
            first = client.get(f"/campaigns/{campaign}/board", headers=bearer(old))
            assert first.status_code == 200  # answered at once; the keys are read meanwhile
            for _ in range(100):
                later = client.get(f"/campaigns/{campaign}/board", headers=bearer(old))
                if later.status_code == 401:
                    break
                time.sleep(0.02)
            assert later.status_code == 401
        assert not server.due(campaign)  # just read: fresh again
    finally:
        server.close()
        host.close()


def test_only_one_ahead_of_time_read_of_a_campaigns_keys_runs_at_once(
    sqlite_env: dict[str, str], make_app: MakeApp,
) -> None:
    keyring = Keyring(sqlite_env)
    try:
        campaign = make_app(sqlite_env).create(c.CreateCampaign(name="Keys")).campaign_id
        keyring.open_campaign(campaign)
        age(keyring, campaign, 0.75)
        assert (keyring.due(campaign), keyring.due(campaign)) == (True, False)
        keyring.refresh(campaign)
        assert not keyring.due(campaign)  # just read
        age(keyring, campaign, 0.75)
        assert keyring.due(campaign)  # the read is over: the next one may start
        assert not keyring.due(uuid4())  # keys never read here: the request path reads them
    finally:
        keyring.close()


def test_stale_keys_in_a_local_store_are_confirmed_by_one_read_and_not_read_again(
    sqlite_env: dict[str, str], make_app: MakeApp,
) -> None:
    """On SQLite (or in memory) keys past ``fresh_for`` are confirmed on the event loop by a
    look at their last event: a table whose players paused for a few seconds no longer has its
    next request read the keys again in a worker thread (issue 15: at half load those reads,
    64 at once, made the slowest requests of a round)."""
    server, host = Keyring(sqlite_env), Keyring(sqlite_env)
    try:
        assert server.local
        campaign = make_app(sqlite_env).create(c.CreateCampaign(name="Keys")).campaign_id
        host.open_campaign(campaign)
        token = host.issue(campaign, 1)
        assert server.confirmed(campaign, token) is None, "nothing in memory: authenticate"
        assert server.authenticate(campaign, token) is not None
        keys = server._cache[campaign][0]
        age(server, campaign, 1.5)
        assert server.cached(campaign, token) is None  # stale
        assert server.confirmed(campaign, token) == Actor(seat=1)
        assert server._cache[campaign][0] is keys, "the same keys, not read again"
        assert server.cached(campaign, token) is not None  # fresh again
        assert server.confirmed(campaign, "a guess") is None
    finally:
        server.close()
        host.close()


def test_a_token_revoked_by_another_process_is_refused_once_the_keys_are_stale_on_sqlite(
    sqlite_env: dict[str, str], make_app: MakeApp,
) -> None:
    """The look at the last keys event sees the new token: the keys are read again."""
    server, host = Keyring(sqlite_env), Keyring(sqlite_env)
    campaigns = make_app(sqlite_env)
    try:
        campaign = campaigns.create(c.CreateCampaign(name="Keys")).campaign_id
        host.open_campaign(campaign)
        old = host.issue(campaign, 1)
        with TestClient(create_app(campaigns, server, rate_limit=0), timeout=TIMEOUT) as client:
            board = f"/campaigns/{campaign}/board"
            assert client.get(board, headers=bearer(old)).status_code == 200
            new = host.issue(campaign, 1)  # revoked elsewhere
            assert server.cached(campaign, old) is not None, "trusted within fresh_for"
            age(server, campaign, 1.5)
            assert server.confirmed(campaign, old) is None  # changed since
            refused = client.get(board, headers=bearer(old))
            assert refused.status_code == 401, refused.text
            assert client.get(board, headers=bearer(new)).status_code == 200
    finally:
        server.close()
        host.close()


@pytest.mark.postgres
def test_on_postgresql_keys_are_trusted_until_a_change_to_them_is_heard(
    postgres_env: dict[str, str], make_app: MakeApp,
) -> None:
    """A server's store watch hears every commit of keys (issue 15): the keys in memory need
    no read every second, and a token revoked by another process is refused here as soon as
    that commit is heard, long before ``fresh_for`` would have run out."""
    server, host = Keyring(postgres_env), Keyring(postgres_env)
    try:
        server.watch_store()
        assert server.watch is not None and server.watch.live
        campaign = make_app(postgres_env).create(c.CreateCampaign(name="Keys")).campaign_id
        host.open_campaign(campaign)
        old = host.issue(campaign, 1)
        assert server.authenticate(campaign, old) is not None
        age(server, campaign, 10)  # far past fresh_for: trusted on the watch's word alone
        assert server.cached(campaign, old) is not None
        assert not server.due(campaign), "nothing to read ahead of time"
        new = host.issue(campaign, 1)  # revoked by another process
        for _ in range(250):
            if server.cached(campaign, old) is None:
                break
            time.sleep(0.02)
        assert server.cached(campaign, old) is None, "the change was heard"
        assert server.authenticate(campaign, old) is None
        assert server.authenticate(campaign, new) is not None
        assert server.cached(campaign, new) is not None, "read again: trusted again"
    finally:
        server.close()
        host.close()


@pytest.mark.postgres
def test_keys_read_while_the_watch_was_not_listening_go_stale_after_fresh_for(
    postgres_env: dict[str, str], make_app: MakeApp,
) -> None:
    """The watch vouches only for keys read while it listened, in the same epoch: keys read
    before it listened, or before it listened again after losing its connection, may have
    missed a change, and are trusted for ``fresh_for`` seconds as without a watch."""
    server, host = Keyring(postgres_env), Keyring(postgres_env)
    try:
        campaign = make_app(postgres_env).create(c.CreateCampaign(name="Keys")).campaign_id
        host.open_campaign(campaign)
        token = host.issue(campaign, 1)
        assert server.authenticate(campaign, token) is not None  # read with no watch
        server.watch_store()
        assert server.watch is not None and server.watch.live
        age(server, campaign, 0.75)
        assert server.cached(campaign, token) is not None, "within fresh_for"
        assert server.due(campaign), "read ahead of time, as without a watch"
        server.refresh(campaign)  # read while it listens
        age(server, campaign, 10)
        assert server.cached(campaign, token) is not None
        server.watch.heard("*")  # a commit it cannot attribute: a new epoch
        assert server.cached(campaign, token) is None, "stale: older than fresh_for"
        assert server.authenticate(campaign, token) is not None  # read again, in the new epoch
        age(server, campaign, 10)
        assert server.cached(campaign, token) is not None
    finally:
        server.close()
        host.close()


def test_a_keyring_on_sqlite_has_no_store_watch(sqlite_env: dict[str, str]) -> None:
    keyring = Keyring(sqlite_env)
    try:
        keyring.watch_store()
        assert keyring.watch is None, "its stale keys are confirmed by one local read instead"
    finally:
        keyring.close()
