"""A player's phone fetches the pages' scripts and styles once: each page names an asset by the
fingerprint of its bytes (``/static/table.js?v=<12 hex digits of its SHA-256>``), answered with
a year's immutable ``Cache-Control``; one asked otherwise is revalidated on each use (its
``ETag`` or ``Last-Modified``: a 304, no body). Pages and assets are gzipped for a browser that
takes gzip; the API's JSON answers and the live event stream never are.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from helpers import app_client, bearer, client, open_campaign, server, sse_messages, subscribe
from litestar import Litestar
from litestar.static_files import create_static_files_router
from litestar.testing import TestClient

from api.routes.pages import STATIC
from api.static_assets import FOR_A_YEAR, GZIPPED, AssetCaching, Fingerprints
from application.config import persistence_env

#: What a browser that takes gzip sends (httpx's own default also offers it).
GZIP = {"Accept-Encoding": "gzip"}
#: What a client that takes no compression sends.
IDENTITY = {"Accept-Encoding": "identity"}
#: A static file's URL in a page: its name and its fingerprint, if any.
ASSET_URL = re.compile(r'(?:src|href)="/static/([^"?]+)(?:\?v=([^"]*))?"')


@pytest.fixture
def http() -> Iterator[TestClient[Any]]:
    with app_client(persistence_env({"CAPES_DB": ":memory:"})) as test_client:
        yield test_client


def sha256_prefix(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def directives(cache_control: str) -> set[str]:
    return {d.strip() for d in cache_control.split(",")}


def page_paths(http: TestClient[Any]) -> list[str]:
    """The lobby, and each edition's table and analytics pages."""
    paths = ["/"]
    for edition in ("capes", "capees"):
        table = open_campaign(http, edition=edition)
        paths += [f"/play/{table.campaign_id}", f"/play/{table.campaign_id}/analytics"]
    return paths


def asset_url(http: TestClient[Any], name: str) -> str:
    """The URL the lobby or a table page names ``name`` by."""
    for path in page_paths(http):
        for found, fingerprint in ASSET_URL.findall(http.get(path).text):
            if found == name:
                return f"/static/{found}?v={fingerprint}"
    raise AssertionError(f"no page names {name}")


def test_every_asset_a_page_names_carries_the_sha256_of_its_bytes(
    http: TestClient[Any],
) -> None:
    named: set[str] = set()
    for path in page_paths(http):
        urls = ASSET_URL.findall(http.get(path).text)
        assert urls, path
        for name, fingerprint in urls:
            assert fingerprint == sha256_prefix(STATIC / name), f"{path} names {name}"
        named |= {name for name, _ in urls}
    assert named == {p.name for p in STATIC.iterdir()}


def test_a_files_fingerprint_changes_when_its_bytes_change(tmp_path: Path) -> None:
    script = tmp_path / "table.js"
    script.write_text("let seats = 3;")
    before = Fingerprints.of(tmp_path, "/static")
    script.write_text("let seats = 4;")
    after = Fingerprints.of(tmp_path, "/static")
    assert after.url("table.js") == f"/static/table.js?v={sha256_prefix(script)}"
    assert before.url("table.js") != after.url("table.js")
    with pytest.raises(LookupError, match=r"nothing\.js"):
        after.url("nothing.js")


def test_an_asset_asked_by_its_fingerprint_is_cached_for_a_year_as_immutable(
    http: TestClient[Any],
) -> None:
    for name in ("table.js", "capes.css", "favicon.svg"):
        served = http.get(asset_url(http, name))
        assert served.status_code == 200 and served.content == (STATIC / name).read_bytes()
        assert directives(served.headers["cache-control"]) == {
            "public", "max-age=31536000", "immutable"}, name
        assert served.headers["etag"] and served.headers["last-modified"]


def test_an_asset_asked_without_its_current_fingerprint_is_revalidated_on_each_use(
    http: TestClient[Any],
) -> None:
    """An old page's URL (or none) may name other bytes than those served: never kept."""
    for url in ("/static/table.js", "/static/table.js?v=000000000000"):
        served = http.get(url)
        assert served.status_code == 200 and served.headers["cache-control"] == "no-cache"


def test_a_browser_revalidating_an_asset_by_its_etag_or_its_date_gets_304_and_no_body(
    http: TestClient[Any],
) -> None:
    url = asset_url(http, "capes.css")
    served = http.get(url, headers=GZIP)
    etag, modified = served.headers["etag"], served.headers["last-modified"]
    for conditions in ({"If-None-Match": etag}, {"If-None-Match": f'"other", W/{etag}'},
                       {"If-None-Match": "*"}, {"If-Modified-Since": modified}):
        again = http.get(url, headers={**GZIP, **conditions})
        assert again.status_code == 304, conditions
        assert again.content == b"" and "content-encoding" not in again.headers
        assert again.headers["etag"] == etag
        assert again.headers["cache-control"] == served.headers["cache-control"]
    # HEAD has no body to compress: it answers for the plain file, by the plain file's tag.
    plain = http.head(url, headers=IDENTITY).headers["etag"]
    for conditions in ({"If-None-Match": plain}, {"If-Modified-Since": modified}):
        head = http.head(url, headers=conditions)
        assert head.status_code == 304, conditions
    # An ETag that does not match is a full answer, whatever the date says (RFC 9110 13.2.2).
    for conditions in ({"If-None-Match": '"other"'},
                       {"If-None-Match": '"other"', "If-Modified-Since": modified},
                       {"If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"},
                       {"If-Modified-Since": "not a date"}):
        changed = http.get(url, headers=conditions)
        assert changed.status_code == 200 and changed.content == (STATIC / "capes.css").read_bytes()


def test_a_gzipped_asset_and_the_plain_file_carry_two_etags_each_revalidating_only_itself(
    http: TestClient[Any],
) -> None:
    """Two representations, two strong tags (RFC 9110 8.8.3): a cache that kept the gzipped
    bytes never gets a 304 meant for the plain ones, nor the other way round."""
    url = asset_url(http, "table.js")
    gzipped, plain = http.get(url, headers=GZIP), http.get(url, headers=IDENTITY)
    assert gzipped.headers["content-encoding"] == "gzip"
    assert "content-encoding" not in plain.headers
    assert gzipped.headers["etag"] == plain.headers["etag"][:-1] + '-gzip"'
    for tag, accept, status in ((gzipped.headers["etag"], GZIP, 304),
                                (plain.headers["etag"], IDENTITY, 304),
                                (gzipped.headers["etag"], IDENTITY, 200),
                                (plain.headers["etag"], GZIP, 200)):
        again = http.get(url, headers={**accept, "If-None-Match": tag})
        assert again.status_code == status, (tag, accept)
        if status == 200:
            assert again.content == (STATIC / "table.js").read_bytes()


def test_an_asset_asked_by_its_fingerprint_is_read_and_gzipped_once_then_sent_from_memory(
    tmp_path: Path,
) -> None:
    """Under its fingerprint a file's bytes never change: each coding of it is read (and
    gzipped) on its first download only. Proved by changing the file afterwards: the current
    URL still sends what was first sent, whole and with its length; a URL without the
    fingerprint, never kept, sends the file as it is now."""
    script = tmp_path / "table.js"
    first = b"let seats = [" + b", ".join(b"%d" % n for n in range(2000)) + b"];"
    script.write_bytes(first)
    fingerprints = Fingerprints.of(tmp_path, "/static")
    files = create_static_files_router(path="/static", directories=[tmp_path],
                                       middleware=[AssetCaching(fingerprints), GZIPPED])
    with TestClient(Litestar(route_handlers=[files])) as http:
        url = fingerprints.url("table.js")
        sent = {}
        for name, accept in (("gzip", GZIP), ("plain", IDENTITY)):
            with http.stream("GET", url, headers=accept) as served:
                sent[name] = (b"".join(served.iter_raw()), served.headers)
        script.write_bytes(b"let seats = 0;")
        for name, accept in (("gzip", GZIP), ("plain", IDENTITY)):
            with http.stream("GET", url, headers=accept) as served:
                raw = b"".join(served.iter_raw())
            assert raw == sent[name][0], name
            assert int(served.headers["content-length"]) == len(raw), name
            assert served.headers["etag"] == sent[name][1]["etag"], name
            assert served.headers["cache-control"] == FOR_A_YEAR, name
            again = http.get(url, headers={**accept, "If-None-Match": served.headers["etag"]})
            assert again.status_code == 304 and again.content == b"", name
        assert gzip.decompress(sent["gzip"][0]) == sent["plain"][0] == first
        assert sent["gzip"][1]["content-encoding"] == "gzip"
        assert http.get("/static/table.js", headers=GZIP).content == b"let seats = 0;"


def test_pages_and_assets_are_gzipped_for_a_browser_that_accepts_gzip(
    http: TestClient[Any],
) -> None:
    for path in page_paths(http):
        page = http.get(path, headers=GZIP)
        assert page.headers["content-encoding"] == "gzip", path
        assert "accept-encoding" in page.headers["vary"].lower()
        assert "default-src 'self'" in page.headers["content-security-policy"]
    for name in ("table.js", "edition-capes.js", "capes.css"):
        with http.stream("GET", asset_url(http, name), headers=GZIP) as served:
            raw = b"".join(served.iter_raw())
            assert served.headers["content-encoding"] == "gzip", name
            assert served.headers["content-type"].startswith(("text/javascript", "text/css"))
        original = (STATIC / name).read_bytes()
        assert gzip.decompress(raw) == original and len(raw) < len(original) / 2, name
        assert int(served.headers["content-length"]) == len(raw)


def test_nothing_is_compressed_for_a_browser_that_does_not_accept_gzip(
    http: TestClient[Any],
) -> None:
    for path in [*page_paths(http), asset_url(http, "table.js")]:
        with http.stream("GET", path, headers=IDENTITY) as served:
            raw = b"".join(served.iter_raw())
        assert "content-encoding" not in served.headers, path
        assert int(served.headers["content-length"]) == len(raw)
    assert raw == (STATIC / "table.js").read_bytes()


def test_the_apis_json_answers_are_never_compressed(http: TestClient[Any]) -> None:
    """They are small and latency-bound (benchmarked): gzip would cost more than it saves."""
    table = open_campaign(http, players=["Ana", "Ben"])
    for route in ("", "/board", "/ledgers", "/state", "/events?limit=500"):
        answer = http.get(table.url(route), headers={**GZIP, **bearer(table.owner_token)})
        assert answer.status_code == 200, route
        assert answer.headers["content-type"].startswith("application/json")
        assert "content-encoding" not in answer.headers, route
    opened = http.post("/campaigns", json={"name": "Gzip?"}, headers=GZIP)
    assert opened.status_code == 201 and "content-encoding" not in opened.headers


def test_the_live_event_stream_is_never_compressed(tmp_path: Path) -> None:
    """A compressor would hold events back in its buffer; a proxy would too."""
    with server({"CAPES_DB": str(tmp_path / "live.sqlite")}, tmp_path / "server.log") as url, \
            client(url) as http:
        table = open_campaign(http, players=["Ana"])
        stream = subscribe(http, table, **GZIP)
        try:
            assert stream.headers["content-type"].startswith("text/event-stream")
            assert "content-encoding" not in stream.headers
            assert next(sse_messages(stream)).event == "CampaignCreated"
        finally:
            stream.close()


# -- the docs page (/schema): Swagger UI's files, served from the swagger-ui-py package -------

#: Swagger UI's built files, as the swagger-ui-py package installs them.
SWAGGER = Path(str(resources.files("swagger_ui") / "static"))
#: A script or style the docs page names: its name and its fingerprint, if any.
DOCS_ASSET_URL = re.compile(r"""(?:src|href)=['"]/schema-assets/([^'"?]+)(?:\?v=([^'"]*))?['"]""")


def docs_assets(http: TestClient[Any]) -> dict[str, str]:
    """Each file the docs page names, with the fingerprint it names it by."""
    return dict(DOCS_ASSET_URL.findall(http.get("/schema").text))


def test_every_file_the_docs_page_names_carries_the_sha256_of_its_bytes_and_is_kept_a_year(
    http: TestClient[Any],
) -> None:
    """Swagger UI's ~1.9 MB of scripts and styles are fetched once per version, not per visit."""
    named = docs_assets(http)
    assert set(named) >= {"swagger-ui-bundle.js", "swagger-ui-standalone-preset.js",
                          "swagger-ui.css"}
    for name, fingerprint in named.items():
        assert fingerprint == sha256_prefix(SWAGGER / name), name
        served = http.get(f"/schema-assets/{name}?v={fingerprint}")
        assert served.status_code == 200 and served.content == (SWAGGER / name).read_bytes()
        assert directives(served.headers["cache-control"]) == {
            "public", "max-age=31536000", "immutable"}, name
        again = http.get(f"/schema-assets/{name}?v={fingerprint}",
                         headers={"If-None-Match": served.headers["etag"]})
        assert again.status_code == 304 and again.content == b"", name
    bare = http.get("/schema-assets/swagger-ui.css")
    assert bare.status_code == 200 and bare.headers["cache-control"] == "no-cache"


def test_the_docs_page_its_files_and_the_schema_are_gzipped_for_a_browser_that_accepts_gzip(
    http: TestClient[Any],
) -> None:
    for path in ("/schema", "/schema/openapi.json"):
        with http.stream("GET", path, headers=GZIP) as served:
            raw = b"".join(served.iter_raw())
        assert served.status_code == 200 and served.headers["content-encoding"] == "gzip", path
        assert "accept-encoding" in served.headers["vary"].lower()
        plain = http.get(path, headers=IDENTITY)
        assert "content-encoding" not in plain.headers, path
        assert gzip.decompress(raw) == plain.content and len(raw) < len(plain.content) / 3
    for name, fingerprint in docs_assets(http).items():
        if not name.endswith((".js", ".css")):
            continue  # the favicon, a PNG: already compressed
        with http.stream("GET", f"/schema-assets/{name}?v={fingerprint}", headers=GZIP) as served:
            raw = b"".join(served.iter_raw())
        assert served.headers["content-encoding"] == "gzip", name
        original = (SWAGGER / name).read_bytes()
        assert gzip.decompress(raw) == original and len(raw) < len(original) / 2, name
