"""Helpers for tests against the real stores (imported by conftest and the store tests)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from datetime import datetime, timedelta, timezone
from functools import cache
from pathlib import Path
from typing import Any

import psycopg
import pytest
import redis

from application.campaigns import Campaigns
from application.config import persistence_env

#: The PostgreSQL server the postgres tests use.
POSTGRES_URL = os.environ.get("CAPES_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")

#: The Redis server the tests of live events across workers use.
REDIS_URL = "redis://127.0.0.1:6379/0"

#: ``make_app(env, **kwargs)``: a Campaigns application closed when the test ends.
MakeApp = Callable[..., Campaigns]


def in_ci() -> bool:
    """Whether this is a CI run, where a test that needs a service must not be skipped."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def conninfo(env: dict[str, str]) -> dict[str, Any]:
    """psycopg connection arguments from eventsourcing's PostgreSQL settings."""
    return {
        "host": env["POSTGRES_HOST"],
        "port": int(env["POSTGRES_PORT"]),
        "dbname": env["POSTGRES_DBNAME"],
        "user": env["POSTGRES_USER"],
        "password": env["POSTGRES_PASSWORD"],
    }


@cache
def postgres_problem() -> str | None:
    """Why PostgreSQL cannot be used, or None; asked once per test session."""
    try:
        env = persistence_env({"CAPES_DATABASE_URL": POSTGRES_URL})
        with psycopg.connect(**conninfo(env), connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except Exception as e:
        return f"{type(e).__name__}: {' '.join(str(e).split())}"
    return None


class TickingClock:
    """A clock that moves 1.5 ms per reading, in a non-UTC zone (the store must normalise)."""

    def __init__(self) -> None:
        self.now = datetime(2025, 3, 14, 15, 9, 26, 535897, tzinfo=timezone(timedelta(hours=2)))
        self.readings: list[datetime] = []

    def __call__(self) -> datetime:
        self.now += timedelta(microseconds=1500)
        self.readings.append(self.now)
        return self.now


def need_redis() -> None:
    """Skip the test when Redis is not reachable at :data:`REDIS_URL`; fail it under CI."""
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2, socket_timeout=2).ping()
    except redis.RedisError as e:
        reason = f"Redis not reachable at {REDIS_URL}: {type(e).__name__}: {e}"
        if in_ci():
            pytest.fail(reason + " (CI=true: the Redis test may not be skipped)")
        pytest.skip(reason)


@contextmanager
def sqlite_file(path: str | Path, **kwargs: Any) -> Iterator[sqlite3.Connection]:
    """A connection to an SQLite file of a test's, committed and *closed* on leaving.

    ``sqlite3``'s own ``with`` commits but leaves the connection open until the garbage
    collector frees it (its statement cache refers back to it). One left open to a store
    that is then written over, its log removed (a backup put back), keeps SQLite's view of
    that file, which the next connection shares: "disk I/O error" (one run in ten to twenty
    of tests/projections, every run with the collector off, when ``application.backup``
    left its connection so)."""
    with closing(sqlite3.connect(path, **kwargs)) as connection, connection:
        yield connection
