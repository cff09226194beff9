"""One process at a time creates a store's tables (issue 13, item 8).

eventsourcing creates its tables when an application or a recorder is constructed, with
``CREATE TABLE IF NOT EXISTS``, but two processes doing so at the same moment still collide:
PostgreSQL raised ``UniqueViolation`` on its catalogue (a worker of ``--workers 2`` crashed on
every fresh start) and SQLite's tracking tables raised ``IntegrityError`` recording their
migration (one of two servers started together exited). :func:`creating_tables` serialises
that step across processes: a PostgreSQL advisory lock (per schema), or an exclusive
``flock`` on a file beside the SQLite database. Once the tables exist the step is a no-op, so
the lock is held for milliseconds.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg


def _setting(env: Mapping[str, str], key: str, default: str = "") -> str:
    value = env.get(key)
    return default if value is None else str(value)


def connect_postgres(env: Mapping[str, Any], **options: Any) -> psycopg.Connection[Any]:
    """A connection of its own (autocommit, outside the store's pools) to the PostgreSQL
    database of eventsourcing's settings ``env``, for a session-level lock: the lock is the
    session's, and goes with the connection. ``options``: more of libpq's connection
    parameters."""
    import psycopg

    return psycopg.connect(
        host=_setting(env, "POSTGRES_HOST"), port=int(_setting(env, "POSTGRES_PORT", "5432")),
        dbname=_setting(env, "POSTGRES_DBNAME"), user=_setting(env, "POSTGRES_USER"),
        password=_setting(env, "POSTGRES_PASSWORD"), autocommit=True,
        connect_timeout=int(float(_setting(env, "POSTGRES_CONNECT_TIMEOUT", "30"))), **options)


@contextlib.contextmanager
def creating_tables(env: Mapping[str, Any]) -> Iterator[None]:
    """Hold the store's table-creation lock (none for an in-memory store)."""
    module = _setting(env, "PERSISTENCE_MODULE", "eventsourcing.popo")
    if module.endswith("postgres"):
        schema = _setting(env, "POSTGRES_SCHEMA") or "public"
        with connect_postgres(env) as conn:
            key = f"capes: creating tables in {schema}"
            conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (key,))
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))
        return
    db = _setting(env, "SQLITE_DBNAME")
    if not module.endswith("sqlite") or not db or db == ":memory:" or "mode=memory" in db:
        yield
        return
    with sqlite_file_lock(db.removeprefix("file:").split("?", 1)[0]):
        yield


@contextlib.contextmanager
def sqlite_file_lock(path: str) -> Iterator[None]:
    """Hold the exclusive ``flock`` of SQLite file ``path``'s lock file, ``<path>.lock``
    (what :func:`creating_tables` takes for it; the read models' marker takes it too)."""
    with open(f"{path}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
