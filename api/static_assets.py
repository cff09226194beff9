"""The pages' scripts and styles, cheap for browsers: fingerprinted URLs, kept for a year,
revalidated otherwise, gzipped.

- :class:`Fingerprints`: each static file's fingerprint (12 hex digits of its bytes' SHA-256),
  computed once when the app is built. The templates name a file by ``asset("table.js")``:
  ``/static/table.js?v=<fingerprint>``. New bytes make a new URL, so what a browser fetched
  under a URL may be kept for good.
- :class:`AssetCaching`: the static files' ``Cache-Control`` (a year, ``immutable``, when asked
  by the current fingerprint; ``no-cache``, revalidated on each use, otherwise: an old page
  or a bare URL may name other bytes), and the 304 of a conditional GET. Litestar's static
  files send ``ETag`` and ``Last-Modified`` but never answer 304: this middleware compares
  the request's ``If-None-Match`` (or ``If-Modified-Since``) with them. It sits outside the
  gzip middleware, so it sees the answer as sent: a gzipped answer's ``ETag`` gets ``-gzip``
  within its quotes, since its bytes are another representation than the plain file's
  (RFC 9110 8.8.3: a strong tag names one representation's bytes), so a cache holding one
  never revalidates it with the other's tag. An asset asked by its current fingerprint is
  kept in memory as first sent, per coding (:class:`Kept`): its bytes never change under that
  URL, so it is read and gzipped once per process, not on every download (Swagger UI's
  1.5 MB bundle took some 60 ms of the event loop's CPU to gzip each time).
- :data:`GZIPPED`: Litestar's own gzip middleware, for the pages and their files only. The
  API's JSON answers are small and latency-bound, and the live event stream is never held in
  a compressor's buffer; Litestar's brotli needs a package this project does not install.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import parse_qs

from litestar.config.compression import CompressionConfig
from litestar.datastructures import CacheControlHeader, Headers, MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware, DefineMiddleware
from litestar.middleware.compression import CompressionMiddleware
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.types import ASGIApp, Message, Receive, Scope, Send

#: Hex digits of a file's SHA-256 in its URL (48 bits: no two versions of a file collide).
FINGERPRINT_DIGITS = 12
#: An asset asked by its current fingerprint: its bytes never change under that URL.
FOR_A_YEAR = CacheControlHeader(public=True, max_age=365 * 24 * 3600, immutable=True).to_header()
#: Any other: kept, but revalidated on each use (a 304 when unchanged).
REVALIDATED = CacheControlHeader(no_cache=True).to_header()
#: The headers a 304 repeats from the full answer (RFC 9110 15.4.5); it has no body.
KEPT_BY_304 = ("cache-control", "etag", "last-modified", "vary", "date")
#: The last (or only) body message of an answer without one: a 304's.
NO_BODY: Message = {"type": "http.response.body", "body": b"", "more_body": False}
#: Gzip for pages and assets (level 6: table.js in ~4 ms, within 1% of level 9's size).
GZIPPED = DefineMiddleware(CompressionMiddleware, config=CompressionConfig(
    backend="gzip", gzip_compress_level=6))


def fingerprint(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()[:FINGERPRINT_DIGITS]


@dataclass(frozen=True)
class Fingerprints:
    """The fingerprint of each file under a directory served at ``prefix``, by its path
    relative to the directory (``table.js``)."""

    prefix: str
    of_file: Mapping[str, str]

    @classmethod
    def of(cls, directory: Path, prefix: str, names: Iterable[str] | None = None
           ) -> Fingerprints:
        """Every file under ``directory``, or only those ``names`` (a package's directory
        holding megabytes the page never names: not read as each app is built)."""
        files = (p for p in sorted(directory.rglob("*")) if p.is_file()) if names is None \
            else (directory / name for name in names)
        return cls(prefix, {p.relative_to(directory).as_posix(): fingerprint(p.read_bytes())
                            for p in files})

    def url(self, name: str) -> str:
        """The URL naming the file ``name`` with its fingerprint; a page naming a file that is
        not there fails as it is rendered (a test renders every page)."""
        if name not in self.of_file:
            raise LookupError(f"no static file {name!r} under {self.prefix}")
        return f"{self.prefix}/{name}?v={self.of_file[name]}"

    def current(self, name: str, query_string: bytes) -> bool:
        """Whether a request's query string names the current fingerprint of ``name``."""
        asked = parse_qs(query_string.decode("latin-1")).get("v", [])
        return name in self.of_file and asked == [self.of_file[name]]

    def into_templates(self, engine: JinjaTemplateEngine) -> None:
        """A ``TemplateConfig.engine_callback``: the templates' ``asset(name)`` global."""
        engine.engine.globals["asset"] = self.url


def _opaque(tag: str) -> str:
    """An entity tag without its weakness: If-None-Match compares weakly (RFC 9110 13.1.2)."""
    tag = tag.strip()
    return tag[2:] if tag[:2] in ("W/", "w/") else tag


def coded_etag(tag: str, coding: str) -> str:
    """The entity tag of a file's bytes sent with a content coding: ``"abc"`` gzipped is
    ``"abc-gzip"`` (a weak tag stays weak)."""
    weak, opaque = ("W/", tag[2:]) if tag[:2] in ("W/", "w/") else ("", tag)
    return f'{weak}{opaque[:-1]}-{coding}"' if opaque.endswith('"') else tag


def not_modified(request: Headers, response: MutableScopeHeaders) -> bool:
    """Whether the browser's copy is the answer's: its ``If-None-Match`` names the ETag, or,
    when it sends none, its ``If-Modified-Since`` is no older than ``Last-Modified``."""
    etag = response.get("etag")
    asked = request.get("if-none-match")
    if asked is not None:
        tags = {_opaque(t) for t in asked.split(",")}
        return etag is not None and ("*" in tags or _opaque(etag) in tags)
    since, modified = request.get("if-modified-since"), response.get("last-modified")
    if since is None or modified is None:
        return False
    try:
        return parsedate_to_datetime(modified) <= parsedate_to_datetime(since)
    except (TypeError, ValueError):  # not a date: the full answer
        return False


@dataclass(frozen=True)
class Kept:
    """A full answer as first sent: its headers (a length, not chunks) and its body."""

    headers: list[tuple[bytes, bytes]]
    body: bytes

    @classmethod
    def of(cls, headers: list[tuple[bytes, bytes]], parts: list[bytes]) -> Kept:
        body = b"".join(parts)
        kept = [(k, v) for k, v in headers
                if k.lower() not in (b"content-length", b"transfer-encoding")]
        return cls([*kept, (b"content-length", str(len(body)).encode())], body)


def _304(headers: Iterable[tuple[bytes, bytes]]) -> Message:
    return {"type": "http.response.start", "status": 304,
            "headers": [(k, v) for k, v in headers if k.lower().decode() in KEPT_BY_304]}


class AssetCaching(ASGIMiddleware):
    """Cache-Control by fingerprint, and 304 for a browser whose copy is current, on the
    static files' router (whose ``file_path`` parameter names the file); outside the gzip
    middleware. What a GET by the current fingerprint answers is kept, per coding."""

    scopes = (ScopeType.HTTP,)

    def __init__(self, fingerprints: Fingerprints) -> None:
        self.fingerprints = fingerprints
        #: (file, coding: "gzip" or "") -> its answer to a GET by its current fingerprint.
        self.kept: dict[tuple[str, str], Kept] = {}

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        path: Any = scope["path_params"].get("file_path", PurePath())
        name = PurePath(path).as_posix().lstrip("/")
        current = self.fingerprints.current(name, scope["query_string"])
        cache_control = FOR_A_YEAR if current else REVALIDATED
        request = Headers.from_scope(scope)
        # The gzip middleware inside compresses when the request names gzip at all (its test).
        key = (name, "gzip" if "gzip" in request.get("accept-encoding", "") else "")
        keep = current and scope.get("method") == "GET"
        kept = self.kept.get(key) if keep else None
        if kept is not None:
            if not_modified(request, MutableScopeHeaders({"headers": kept.headers})):
                await send(_304(kept.headers))
                await send(NO_BODY)
                return
            await send({"type": "http.response.start", "status": 200, "headers": kept.headers})
            await send({"type": "http.response.body", "body": kept.body, "more_body": False})
            return
        unchanged = False
        started: list[tuple[bytes, bytes]] | None = None
        parts: list[bytes] = []

        async def send_cached(message: Message) -> None:
            nonlocal unchanged, started
            if message["type"] == "http.response.start" and message["status"] == 200:
                headers = MutableScopeHeaders.from_message(message)
                headers["Cache-Control"] = cache_control
                coding = headers.get("content-encoding")
                if coding and "etag" in headers:
                    headers["ETag"] = coded_etag(headers["etag"], coding)
                if keep and (coding or "") == key[1]:
                    started = list(message["headers"])
                if not_modified(request, headers):
                    unchanged = True
                    message = _304(message["headers"])
            elif message["type"] == "http.response.body":
                if started is not None:
                    parts.append(message.get("body", b""))
                    if not message.get("more_body", False):
                        self.kept[key] = Kept.of(started, parts)
                if unchanged:
                    if message.get("more_body", False):
                        return  # the file's bytes, which the browser has
                    message = NO_BODY
            await send(message)

        await next_app(scope, receive, send_cached)
