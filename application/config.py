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
import re
import tempfile
from collections.abc import Mapping
from typing import TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

T = TypeVar("T")

DATABASE_URL = "CAPES_DATABASE_URL"
DB = "CAPES_DB"
DEFAULT_DB = "./capes.sqlite"
MEMORY = ":memory:"
#: The recorder of the campaigns and of their keys on PostgreSQL (application.postgres_store),
#: by topic: psycopg is loaded only for a PostgreSQL store.
POSTGRES_RECORDER = "application.postgres_store:CampaignsPostgresRecorder"

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


#: Connections each PostgreSQL pool keeps open, and how many more it may open under load
#: (``POSTGRES_POOL_SIZE``, ``POSTGRES_MAX_OVERFLOW``, when the operator sets neither).
#: eventsourcing's defaults keep five open in every pool, and every process of a server holds
#: several pools (the campaigns, their keys, the dice seeds, the read models): measured, an
#: idle ``capes serve --workers 2`` held 84 connections, and ``--workers 3`` took all of
#: PostgreSQL's default 100 and never got ready. One each at rest, with the same fifteen at
#: most under load as before.
POOL_SIZE = "1"
POOL_OVERFLOW = "14"
#: Seconds a PostgreSQL store waits for a connection (``POSTGRES_CONNECT_TIMEOUT``, when the
#: operator does not set it), and for a network gone silent to say so (see
#: :func:`application.postgres_store.bound_waits`). eventsourcing's 30 s, tried ten times,
#: kept a request waiting five minutes for its 503 when PostgreSQL was down.
CONNECT_TIMEOUT = "3"


class SettingError(ValueError):
    """A setting (an environment variable) with a value that cannot work: says which, the
    value, and why, in one line for people."""

    def __init__(self, setting: str, value: str, why: str) -> None:
        super().__init__(f"{setting}={value}: {why}")
        self.setting, self.value, self.why = setting, value, why


def persistence_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The eventsourcing environment for the store named in ``environ`` (default os.environ).

    Raises :class:`SettingError` for a ``CAPES_DATABASE_URL`` that is not a usable PostgreSQL
    URL.
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
        raise SettingError(DATABASE_URL, _redacted(url), "must start with postgresql://")
    dbname = unquote(parts.path.lstrip("/"))
    if not dbname or not parts.hostname:
        raise SettingError(DATABASE_URL, _redacted(url), "needs a host and a database name")
    try:
        port = parts.port or 5432
    except ValueError:
        raise SettingError(DATABASE_URL, _redacted(url), "has a bad port") from None
    env = {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": dbname,
        "POSTGRES_HOST": parts.hostname,
        "POSTGRES_PORT": str(port),
        "POSTGRES_USER": unquote(parts.username or ""),
        # eventsourcing insists on the key; an empty password suits trust or peer auth.
        "POSTGRES_PASSWORD": unquote(parts.password or ""),
        # A server's processes share the database's connections (see POOL_SIZE); the
        # operator's POSTGRES_POOL_SIZE and POSTGRES_MAX_OVERFLOW replace these.
        "POSTGRES_POOL_SIZE": POOL_SIZE,
        "POSTGRES_MAX_OVERFLOW": POOL_OVERFLOW,
        # A request waits this long for PostgreSQL before its 503 (see CONNECT_TIMEOUT).
        "POSTGRES_CONNECT_TIMEOUT": CONNECT_TIMEOUT,
    }
    schema = parse_qs(parts.query).get("schema", [""])[-1].strip()
    if schema:
        env["POSTGRES_SCHEMA"] = schema
    return env


def bounded(factory: T) -> T:
    """``factory`` (an application's store, made by eventsourcing from these settings), its
    waits for PostgreSQL bounded (:func:`application.postgres_store.bound_waits`); other
    stores as they are. Every application of the project and the read models pass their
    factory through here before they first use it."""
    if type(factory).__module__ == "eventsourcing.postgres":
        # Imported here: psycopg is loaded only for a PostgreSQL store.
        from .postgres_store import bound_waits

        bound_waits(factory.datastore)  # type: ignore[attr-defined]
    return factory


def _redacted(url: str) -> str:
    """``url`` without its password, for error messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


#: Who may open campaigns: ``anyone`` or ``host`` (the holder of ``CAPES_HOST_KEY``).
OPEN_CAMPAIGNS = "CAPES_OPEN_CAMPAIGNS"


#: Live streams one token (a seat's, the owner's) may hold open in a server process, unless
#: ``CAPES_STREAMS_PER_TOKEN`` says otherwise: a player's tabs and devices need a few; each is
#: an open socket, and one token could otherwise hold the server's open files.
STREAMS_PER_TOKEN = 16


def whole_number(environ: Mapping[str, str], setting: str, default: int, least: int,
                 most: int | None = None, *, why: str = "") -> int:
    """The whole number ``setting`` holds (``default`` when unset or empty); a
    :class:`SettingError` naming it, for people, when it is not one from ``least`` (to ``most``).
    ``why`` replaces the message's usual wording."""
    text = environ.get(setting, "").strip()
    if not text:
        return default
    if not (text.isascii() and text.isdigit() and least <= int(text)
            and (most is None or int(text) <= most)):
        raise SettingError(setting, text, why or f"must be a whole number, {least} or more")
    return int(text)


def streams_per_token(environ: Mapping[str, str]) -> int:
    """``CAPES_STREAMS_PER_TOKEN`` (default :data:`STREAMS_PER_TOKEN`); a :class:`SettingError`
    for a value that is not a whole number from 1."""
    return whole_number(environ, "CAPES_STREAMS_PER_TOKEN", STREAMS_PER_TOKEN, 1)


#: Requests per second per client, unless ``CAPES_RATE_LIMIT`` says otherwise (0: off).
RATE_LIMIT = 50


def requests_per_second(environ: Mapping[str, str]) -> int:
    """``CAPES_RATE_LIMIT`` (default :data:`RATE_LIMIT`, 0 for off); a :class:`SettingError`
    for a value that is not a whole number. A word here was a traceback in the server's
    startup, after it had said it served."""
    return whole_number(environ, "CAPES_RATE_LIMIT", RATE_LIMIT, 0,
                        why="must be a whole number, 0 (off) or more")


#: An origin as a browser sends it (``Origin``): a scheme, a host, maybe a port; or ``*``.
_ORIGIN = re.compile(r"\*|[a-z][a-z0-9+.-]*://[^/\s:]+(:\d+)?", re.IGNORECASE)


def cors_origins(environ: Mapping[str, str]) -> list[str]:
    """``CAPES_CORS_ORIGINS``, comma-separated (none: CORS off); a :class:`SettingError` for
    one no browser sends, which never matched: CORS stayed off without a word."""
    text = environ.get("CAPES_CORS_ORIGINS", "")
    origins = [o.strip() for o in text.split(",") if o.strip()]
    for origin in origins:
        if not _ORIGIN.fullmatch(origin):
            raise SettingError("CAPES_CORS_ORIGINS", text.strip(), f"{origin!r} is no origin: "
                               "write each as scheme://host or scheme://host:port (no path, no "
                               "slash at the end), or * for any")
    return origins


#: Where ``capes serve`` listens unless ``CAPES_PORT`` (or ``--port``) says otherwise.
PORT = 8000


def serve_port(environ: Mapping[str, str]) -> int:
    """``CAPES_PORT`` (default :data:`PORT`); a :class:`SettingError` for anything but a port.
    Read by ``capes serve`` alone: a word here was a traceback of every command."""
    return whole_number(environ, "CAPES_PORT", PORT, 1, 65535,
                        why="must be a port, a whole number from 1 to 65535")


def who_opens_campaigns(environ: Mapping[str, str]) -> str:
    """``CAPES_OPEN_CAMPAIGNS``: ``anyone`` (the default: a private table) or ``host`` (only
    the holder of ``CAPES_HOST_KEY``). Raises :class:`SettingError` naming a bad value."""
    who = environ.get(OPEN_CAMPAIGNS, "").strip().lower() or "anyone"
    if who not in ("anyone", "host"):
        raise SettingError(OPEN_CAMPAIGNS, who, "must be anyone or host")
    if who == "host" and not environ.get("CAPES_HOST_KEY", "").strip():
        raise SettingError(OPEN_CAMPAIGNS, who, "needs CAPES_HOST_KEY set")
    return who


#: Seconds to wait for PostgreSQL when checking a store before use.
CHECK_TIMEOUT = 3


def check_store(environ: Mapping[str, str] | None = None) -> None:
    """Fail fast, in one line, when the store named in ``environ`` cannot be used.

    Raises :class:`SettingError` naming the setting and its value: an SQLite file in a folder
    that does not exist (or is not a folder, or where no file can be made), a file that is not
    an SQLite database, a PostgreSQL server that does not answer within :data:`CHECK_TIMEOUT`
    seconds or refuses the connection, a PostgreSQL schema that does not exist. Without this
    check the store's own first use fails with a traceback (SQLite, a missing schema), or after
    30 s of retries (PostgreSQL), or in every worker of ``capes serve`` over and over.
    """
    if environ is None:
        environ = os.environ
    env = persistence_env(environ)
    module = env["PERSISTENCE_MODULE"]
    if module == "eventsourcing.sqlite":
        path = env["SQLITE_DBNAME"]
        if path.startswith("file:") or path == MEMORY:
            return
        folder = os.path.dirname(os.path.abspath(path))
        setting = environ.get(DB, "").strip() or DEFAULT_DB
        if not os.path.isdir(folder):
            raise SettingError(DB, setting, f"the folder {folder} does not exist")
        if os.path.isdir(path):
            raise SettingError(DB, setting, "is a folder, not a file")
        if not _can_make_files_in(folder):
            raise SettingError(DB, setting, f"the folder {folder} is not writable")
        if os.path.exists(path):
            _check_sqlite_file(path, setting)
    elif module == "eventsourcing.postgres":
        import psycopg

        url = _redacted(environ.get(DATABASE_URL, "").strip())
        where = f"{env['POSTGRES_HOST']}:{env['POSTGRES_PORT']}"
        try:
            with psycopg.connect(host=env["POSTGRES_HOST"], port=int(env["POSTGRES_PORT"]),
                                 dbname=env["POSTGRES_DBNAME"], user=env["POSTGRES_USER"],
                                 password=env["POSTGRES_PASSWORD"],
                                 connect_timeout=CHECK_TIMEOUT) as conn:
                # eventsourcing creates tables, never the schema they go in (see the module's
                # docstring): a missing one fails every first use, so it is named here.
                schema = env.get("POSTGRES_SCHEMA", "public")
                found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s",
                                     (schema,)).fetchone()
        except psycopg.Error as e:
            reason = " ".join(str(e).split()) or type(e).__name__
            raise SettingError(DATABASE_URL, url,
                               f"cannot connect to PostgreSQL at {where}: {reason}") from None
        if found is None:
            raise SettingError(DATABASE_URL, url, f"the schema {schema} does not exist in the "
                               f"database {env['POSTGRES_DBNAME']}")


#: The first 16 bytes of every SQLite database file (an empty file is a new database too).
SQLITE_HEADER = b"SQLite format 3\x00"


def _can_make_files_in(folder: str) -> bool:
    """Whether a file can be made in ``folder``, by making one that vanishes when closed: the
    store makes its lock and log files there. ``os.access`` answers yes to root for any folder,
    /proc included, where making a file still fails."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def _check_sqlite_file(path: str, setting: str) -> None:
    """A :class:`SettingError` naming ``CAPES_DB`` when the existing file ``path`` cannot be
    read or is not an SQLite database. The header is read from the file itself rather than
    through sqlite3, which would wait for a writer's lock and could not tell the two apart."""
    try:
        with open(path, "rb") as file:
            header = file.read(len(SQLITE_HEADER))
    except OSError as e:
        raise SettingError(DB, setting, f"cannot be read: {e.strerror}") from None
    if header and header != SQLITE_HEADER:
        raise SettingError(DB, setting, "is not an SQLite database")


def describe_store(environ: Mapping[str, str] | None = None) -> str:
    """Which store ``environ`` names, for people: never shows a password."""
    if environ is None:
        environ = os.environ
    url = environ.get(DATABASE_URL, "").strip()
    if url:
        return f"PostgreSQL {_redacted(url)}"
    db = environ.get(DB, "").strip() or DEFAULT_DB
    return "the in-memory store" if db == MEMORY else f"the SQLite file {db}"


def describe_persistence(env: Mapping[str, str]) -> str:
    """Which store eventsourcing's settings ``env`` (:func:`persistence_env`) name, for
    people: where it is, never a password."""
    module = env.get("PERSISTENCE_MODULE", "")
    if module.endswith("postgres"):
        return (f"the store (PostgreSQL at {env.get('POSTGRES_HOST')}:"
                f"{env.get('POSTGRES_PORT')}, database {env.get('POSTGRES_DBNAME')}, "
                f"schema {env.get('POSTGRES_SCHEMA') or 'public'})")
    if module.endswith("sqlite"):
        return f"the store (the SQLite file {env.get('SQLITE_DBNAME')})"
    return "the in-memory store"


def store_kind(env: Mapping[str, str]) -> str:
    """Which kind of store eventsourcing's settings ``env`` name: ``postgresql``, ``sqlite`` or
    ``memory``; what ``GET /health`` says of it, to anyone (:func:`describe_persistence` says
    where it is, for the host's log)."""
    module = env.get("PERSISTENCE_MODULE", "")
    if module.endswith("postgres"):
        return "postgresql"
    return "sqlite" if module.endswith("sqlite") else "memory"


# -- CAPES_WRITER ------------------------------------------------------------------------------

#: ``CAPES_WRITER``: where a server process's writes run (see api/writer.py).
WRITER_MODES = ("thread", "process")
#: The Unix sockets of the writer processes that ``capes serve --workers N`` shares between its
#: workers, joined by ``os.pathsep``: the campaign whose id falls to the k-th is written by it
#: alone (set by ``capes serve`` itself, not by hand: see cli/writer_hub.py).
WRITER_SOCKET = "CAPES_WRITER_SOCKET"
#: ``CAPES_WRITERS``: how many writer processes ``capes serve --workers N`` runs.
WRITERS = "CAPES_WRITERS"


def writer_sockets(environ: Mapping[str, str]) -> list[str]:
    """The shared writer processes' sockets named in ``CAPES_WRITER_SOCKET``, in order
    (none: the server starts a writer of its own)."""
    return [path for path in environ.get(WRITER_SOCKET, "").split(os.pathsep) if path.strip()]


def writer_count(environ: Mapping[str, str], workers: int) -> int:
    """How many writer processes ``capes serve --workers N`` shares between its workers
    (``CAPES_WRITERS``, default 1), each the one writer of the campaigns whose id falls to it
    (api/writer_pool.py).

    A whole number from 1 to ``workers``; more than 1 only on PostgreSQL, whose inserts run
    side by side (an SQLite file takes one writer at a time: more would only take turns at its
    lock). Anything else is a :class:`SettingError` naming the setting. Why 1 by default: on
    two cores, two writers for two workers carried fewer commands than one (they spent more
    CPU a command, and the machine's CPU was the limit: README, "Writers by campaign")."""
    most = max(1, workers)
    count = whole_number(environ, WRITERS, 1, 1, most,
                         why=f"must be a whole number from 1 to the number of workers ({most})")
    if count > 1 and store_kind(persistence_env(environ)) != "postgresql":
        raise SettingError(WRITERS, environ[WRITERS].strip(), "more than one writer needs "
                           "PostgreSQL: an SQLite file takes one writer at a time")
    return count


def writer_mode(environ: Mapping[str, str]) -> str:
    """``CAPES_WRITER`` (default ``thread``; ``capes serve`` makes it ``process``:
    :func:`serve_default`). A value that is not one of :data:`WRITER_MODES`, or ``process`` with an
    in-memory store (which another process cannot see), is refused before anything starts,
    naming the setting."""
    given = environ.get("CAPES_WRITER", "")
    mode = given.strip().lower() or "thread"
    if mode not in WRITER_MODES:
        raise SettingError("CAPES_WRITER", given, "must be 'thread' (the writer is a thread of "
                           "each server process) or 'process' (a process of its own)")
    if mode == "process" and _in_memory(environ):
        raise SettingError("CAPES_WRITER", given, "an in-memory store (CAPES_DB=:memory:) is "
                           "seen by one process only: use 'thread', or a file or PostgreSQL")
    return mode


def serve_writer(environ: Mapping[str, str]) -> str:
    """``CAPES_WRITER`` as ``capes serve`` runs it: as given (checked by :func:`writer_mode`),
    else :func:`serve_default`."""
    return writer_mode(environ) if environ.get("CAPES_WRITER", "").strip() \
        else serve_default(environ)


def serve_default(environ: Mapping[str, str]) -> str:
    """What ``capes serve`` runs when ``CAPES_WRITER`` is unset: ``process``, but for an
    in-memory store."""
    return "thread" if _in_memory(environ) else "process"


def _in_memory(environ: Mapping[str, str]) -> bool:
    return persistence_env(environ)["PERSISTENCE_MODULE"] == "eventsourcing.popo"
