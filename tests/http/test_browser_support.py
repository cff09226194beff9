"""What the browser pages need of the server, over HTTP: the pages and their static files
(served here, no CDN, small), the session cookie that lets an EventSource or an <img> in
without a token in its URL (reads only), a lost link replaced (the old token revoked), and
CORS, off unless ``CAPES_CORS_ORIGINS`` names the origins.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from helpers import ROOT, app_client, bearer, open_campaign
from litestar.testing import TestClient

from api.routes.pages import STATIC, TEMPLATES
from api.services import SESSION_COOKIE
from application.config import persistence_env
from application.credentials import Keyring

#: Scripts and styles of the pages, in bytes (the issue's budget: under 100 KB).
PAGE_WEIGHT = 100 * 1024
#: The same, gzipped as a browser receives them (about a third of the raw bytes).
GZIPPED_PAGE_WEIGHT = 40 * 1024


@pytest.fixture
def client() -> Iterator[TestClient[Any]]:
    with app_client(persistence_env({"CAPES_DB": ":memory:"})) as test_client:
        yield test_client


def test_the_lobby_is_at_the_root_and_every_page_keeps_referers_and_other_origins_out(
    client: TestClient[Any],
) -> None:
    lobby = client.get("/")
    assert lobby.status_code == 200 and lobby.headers["content-type"].startswith("text/html")
    assert '<label for="campaign-name">Campaign name</label>' in lobby.text
    table = open_campaign(client, players=["Ana"])
    for path in ("/", f"/play/{table.campaign_id}", f"/play/{table.campaign_id}/analytics"):
        page = client.get(path)
        assert page.status_code == 200, path
        assert page.headers["referrer-policy"] == "no-referrer"
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert '<meta name="referrer" content="no-referrer">' in page.text
    assert client.get("/play/not-a-uuid").status_code == 404


def test_every_script_and_style_comes_from_this_server_and_each_page_loads_under_100_kb(
    client: TestClient[Any],
) -> None:
    """The budget is a page's: what a browser loads for it. A table page loads its own
    edition's script only, so the two editions' scripts together may weigh more. Gzipped, a
    page's files weigh less still (and a browser fetches them once: their URLs carry their
    fingerprints)."""
    assets = sorted(p for p in STATIC.iterdir() if p.suffix in (".js", ".css"))
    assert {p.name for p in assets} >= {"capes.js", "table.js", "lobby.js", "capes.css"}
    pages = ["/"]
    for edition in ("capes", "capees"):
        opened = client.post("/campaigns", json={"name": "Weighed", "edition": edition})
        campaign = opened.json()["campaign_id"]
        pages += [f"/play/{campaign}", f"/play/{campaign}/analytics"]
    loaded: set[str] = set()
    for path in pages:
        page = client.get(path)
        assert page.status_code == 200, path
        urls = re.findall(r'(?:src|href)="(/static/([^"?]+\.(?:js|css))\?v=\w+)"', page.text)
        names = [name for _, name in urls]
        weight = sum((STATIC / name).stat().st_size for name in names)
        assert weight < PAGE_WEIGHT, f"{path} loads {names}: {weight} bytes"
        gzipped = sum(int(client.get(url, headers={"Accept-Encoding": "gzip"})
                          .headers["content-length"]) for url, _ in urls)
        assert gzipped < GZIPPED_PAGE_WEIGHT, f"{path} loads {names}: {gzipped} bytes gzipped"
        loaded |= set(names)
    assert loaded == {p.name for p in assets}, "every script and style is some page's"
    for asset in assets:
        served = client.get(f"/static/{asset.name}")
        assert served.status_code == 200 and served.content == asset.read_bytes()
    for source in [*assets, *TEMPLATES.iterdir()]:
        text = source.read_text()
        # No CDN: nothing is loaded from another host.
        assert not re.search(r"(src|href)=[\"']?(https?:)?//", text), source
        assert not re.search(r"(import|url)\(\s*[\"']?(https?:)?//", text), source


def test_the_templates_and_static_files_are_installed_with_the_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["api"]
    shipped = {p for pattern in patterns for p in (ROOT / "api").glob(pattern)}
    assert shipped == {*TEMPLATES.iterdir(), *STATIC.iterdir()}


def test_a_token_buys_a_session_cookie_that_reads_but_never_writes(
    client: TestClient[Any],
) -> None:
    table = open_campaign(client, players=["Ana"])
    session = client.post(table.url("/session"), headers=table.as_seat(1))
    assert session.status_code == 200 and session.json() == {"seat": 1, "owner": False}
    cookie = session.headers["set-cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}={table.tokens[1]};")
    assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
    assert f"Path=/campaigns/{table.campaign_id}" in cookie
    owner = client.post(table.url("/session"), headers=table.as_owner())
    assert owner.json() == {"seat": None, "owner": True}
    client.cookies.clear()  # each request below names its cookie itself

    cookies = {"Cookie": f"{SESSION_COOKIE}={table.tokens[1]}"}
    for read in ("", "/board", "/ledgers", "/record", "/verify", "/export"):
        assert client.get(table.url(read), headers=cookies).status_code == 200, read
    # A cookie rides along with any request a browser makes: it never authorises a write.
    narrate = {"command": {"type": "narrate", "text": "Hello"}}
    assert client.post(table.url("/commands"), json=narrate, headers=cookies).status_code == 401
    assert client.post(table.url("/session"), headers=cookies).status_code == 401
    other = open_campaign(client, "Elsewhere", players=["Zed"])
    assert client.get(other.url("/board"), headers=cookies).status_code == 401


def test_a_seat_that_lost_its_link_gets_a_new_token_and_the_old_one_stops_working(
    client: TestClient[Any],
) -> None:
    table = open_campaign(client, players=["Ana", "Ben"])
    old = table.tokens[2]
    assert client.post(table.url("/seats/2/token"), headers=bearer(old)).status_code == 403
    issued = client.post(table.url("/seats/2/token"), headers=table.as_owner())
    assert issued.status_code == 201
    new = issued.json()["token"]
    assert client.get(table.url("/board"), headers=bearer(old)).status_code == 401
    assert client.get(table.url("/board"), headers=bearer(new)).status_code == 200
    assert client.get(table.url("/board"), headers=table.as_seat(1)).status_code == 200


def test_a_new_token_of_a_seat_revokes_the_old_one_in_the_stored_keys_too(
    tmp_path: Path,
) -> None:
    from uuid import uuid4

    env = persistence_env({"CAPES_DB": str(tmp_path / "keys.sqlite")})
    campaign = uuid4()
    keys = Keyring(env)
    owner = keys.open_campaign(campaign)
    first, other = keys.issue(campaign, 1), keys.issue(campaign, 2)
    second = keys.issue(campaign, 1)
    keys.close()
    reread = Keyring(env)  # what another worker reads from the store
    try:
        assert reread.authenticate(campaign, first) is None
        assert reread.authenticate(campaign, second) is not None
        assert reread.authenticate(campaign, second).seat == 1  # type: ignore[union-attr]
        assert reread.authenticate(campaign, other).seat == 2  # type: ignore[union-attr]
        assert reread.authenticate(campaign, owner).owner  # type: ignore[union-attr]
    finally:
        reread.close()


def test_cors_is_off_unless_origins_are_configured() -> None:
    preflight = {"Origin": "https://table.example", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization,content-type"}
    env = persistence_env({"CAPES_DB": ":memory:"})
    with app_client(env) as client:
        assert "access-control-allow-origin" not in client.get(
            "/", headers={"Origin": "https://table.example"}).headers
        assert "access-control-allow-origin" not in client.options(
            "/campaigns", headers=preflight).headers
    from litestar.testing import TestClient as Client

    from api.app import create_app
    from application.campaigns import Campaigns

    app = create_app(Campaigns(env), environ={"CAPES_CORS_ORIGINS": "https://table.example"},
                     rate_limit=0)
    with Client(app) as client:
        answer = client.options("/campaigns", headers=preflight)
        assert answer.status_code in (200, 204)
        assert answer.headers["access-control-allow-origin"] == "https://table.example"
        assert "authorization" in answer.headers["access-control-allow-headers"].lower()
        opened = client.post("/campaigns", json={"name": "Far away"},
                             headers={"Origin": "https://table.example"})
        assert opened.headers["access-control-allow-origin"] == "https://table.example"
        stranger = client.options("/campaigns", headers={**preflight,
                                                         "Origin": "https://evil.example"})
        assert stranger.headers.get("access-control-allow-origin") != "https://evil.example"


def test_a_client_from_a_configured_origin_may_patch_the_options() -> None:
    """The browser asks before a PATCH from another origin (a preflight): without PATCH among
    the methods allowed, a page there could not change some of the table's options."""
    from litestar.testing import TestClient as Client

    from api.app import create_app
    from application.campaigns import Campaigns

    app = create_app(Campaigns(persistence_env({"CAPES_DB": ":memory:"})),
                     environ={"CAPES_CORS_ORIGINS": "https://table.example"}, rate_limit=0)
    with Client(app) as client:
        answer = client.options(
            f"/campaigns/{uuid4()}/options",
            headers={"Origin": "https://table.example", "Access-Control-Request-Method": "PATCH",
                     "Access-Control-Request-Headers": "authorization,content-type"})
        assert answer.status_code in (200, 204), answer.text
        assert "PATCH" in answer.headers["access-control-allow-methods"]
