"""The one place where the project's environment variables become eventsourcing settings.

The project speaks of ``CAPES_DATABASE_URL`` and ``CAPES_DB``; eventsourcing wants
``PERSISTENCE_MODULE`` and per-store keys. :func:`persistence_env` translates the former into a
plain dict that is handed to the application's constructor, so nothing else in the project reads
``os.environ`` for storage settings, and nothing here writes to it.

- ``CAPES_DATABASE_URL=postgresql://user:pass@host:port/dbname[?schema=name]`` → PostgreSQL
  (the schema must exist; default ``public``).
- else ``CAPES_DB=path.sqlite`` (default ``./capes.sqlite``) → an SQLite file.
- ``CAPES_DB=:memory:`` → the in-memory store (eventsourcing's "popo"), for unit tests.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import parse_qs, unquote, urlsplit

DATABASE_URL = "CAPES_DATABASE_URL"
DB = "CAPES_DB"
DEFAULT_DB = "./capes.sqlite"
MEMORY = ":memory:"

#: eventsourcing tuning keys passed through unchanged when set (pool sizes, timeouts, cache),
#: so an operator can tune the store without a code change.
PASSTHROUGH = (
    "AGGREGATE_CACHE_MAXSIZE",
    "POSTGRES_CONNECT_TIMEOUT",
    "POSTGRES_POOL_SIZE",
    "POSTGRES_MAX_OVERFLOW",
    "POSTGRES_MAX_WAITING",
    "POSTGRES_LOCK_TIMEOUT",
    "POSTGRES_CONN_MAX_AGE",
    "POSTGRES_PRE_PING",
    "SQLITE_LOCK_TIMEOUT",
)


def persistence_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The eventsourcing environment for the store named in ``environ`` (default os.environ).

    Raises ValueError for a ``CAPES_DATABASE_URL`` that is not a usable PostgreSQL URL.
    """
    if environ is None:
        environ = os.environ
    url = environ.get(DATABASE_URL, "").strip()
    if url:
        env = postgres_env(url)
    else:
        db = environ.get(DB, "").strip() or DEFAULT_DB
        if db == MEMORY:
            env = {"PERSISTENCE_MODULE": "eventsourcing.popo"}
        else:
            env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": db}
    env.update({key: environ[key] for key in PASSTHROUGH if environ.get(key)})
    return env


def postgres_env(url: str) -> dict[str, str]:
    """The eventsourcing settings for ``postgresql://user:pass@host:port/dbname?schema=s``."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ValueError(f"{DATABASE_URL} must start with postgresql://, got {parts.scheme!r}")
    dbname = unquote(parts.path.lstrip("/"))
    if not dbname or not parts.hostname:
        raise ValueError(f"{DATABASE_URL} needs a host and a database name: {_redacted(url)}")
    try:
        port = parts.port or 5432
    except ValueError:
        raise ValueError(f"{DATABASE_URL} has a bad port: {_redacted(url)}") from None
    env = {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": dbname,
        "POSTGRES_HOST": parts.hostname,
        "POSTGRES_PORT": str(port),
        "POSTGRES_USER": unquote(parts.username or ""),
        # eventsourcing insists on the key; an empty password suits trust or peer auth.
        "POSTGRES_PASSWORD": unquote(parts.password or ""),
    }
    schema = parse_qs(parts.query).get("schema", [""])[-1].strip()
    if schema:
        env["POSTGRES_SCHEMA"] = schema
    return env


def _redacted(url: str) -> str:
    """``url`` without its password, for error messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


def describe_store(environ: Mapping[str, str] | None = None) -> str:
    """Which store ``environ`` names, for people: never shows a password."""
    if environ is None:
        environ = os.environ
    url = environ.get(DATABASE_URL, "").strip()
    if url:
        return f"PostgreSQL {_redacted(url)}"
    db = environ.get(DB, "").strip() or DEFAULT_DB
    return "the in-memory store" if db == MEMORY else f"the SQLite file {db}"
