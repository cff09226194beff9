"""Fixtures: a Campaigns application on each real store (never a mocked one).

``memory_app`` (eventsourcing's in-memory store), ``sqlite_app`` (a temporary file),
``postgres_app`` (the PostgreSQL server named by ``CAPES_TEST_POSTGRES``, default
``postgresql://postgres@127.0.0.1:5432/test``, in a fresh schema dropped afterwards) and
``store_app``, parametrised over all three. ``shared_store_env`` gives the settings of a store
that several applications can open at once (SQLite file, PostgreSQL), for concurrency tests.

PostgreSQL unreachable: the postgres tests are skipped, except under CI=true, where they fail,
so CI can never go green without having run them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import uuid4

import psycopg
import pytest
from hypothesis import settings
from psycopg import sql
from stores import POSTGRES_URL, MakeApp, TickingClock, conninfo, in_ci, postgres_problem

from application.campaigns import Campaigns
from application.config import persistence_env
from application.dice import SeededDice

# httpx logs every request at INFO. An app made in process (TestClient) has Litestar set up
# logging once, through a queue whose thread writes to the stderr of the test that set it up:
# a later test's request logged there wrote to a closed capture ("--- Logging error ---" in
# the run's output, seen in CI). The tests' requests need no log.
logging.getLogger("httpx").setLevel(logging.WARNING)

# CI replays the same examples every run (a submission must not pass or fail by chance);
# local runs keep exploring new ones, and hypothesis keeps any failure it finds.
settings.register_profile("ci", derandomize=True, print_blob=True)
if in_ci():
    settings.load_profile("ci")


@pytest.fixture
def clock() -> TickingClock:
    return TickingClock()


@pytest.fixture
def make_app() -> Iterator[MakeApp]:
    """Open Campaigns applications (seeded dice), closed when the test ends."""
    opened: list[Campaigns] = []

    def make(env: dict[str, str], **kwargs: Any) -> Campaigns:
        kwargs.setdefault("dice", SeededDice(7))
        app = Campaigns(env, **kwargs)
        opened.append(app)
        return app

    yield make
    for app in reversed(opened):
        app.close()


@pytest.fixture
def memory_env() -> dict[str, str]:
    return persistence_env({"CAPES_DB": ":memory:"})


@pytest.fixture
def sqlite_env(tmp_path: Any) -> dict[str, str]:
    return persistence_env({"CAPES_DB": str(tmp_path / "capes.sqlite")})


@contextmanager
def fresh_postgres_schema() -> Iterator[dict[str, str]]:
    """Settings for a fresh schema in the test database, dropped afterwards."""
    problem = postgres_problem()
    if problem is not None:
        reason = f"PostgreSQL not reachable at {POSTGRES_URL}: {problem}"
        if in_ci():
            pytest.fail(reason + " (CI=true: postgres tests may not be skipped)")
        pytest.skip(reason)
    env = persistence_env({"CAPES_DATABASE_URL": POSTGRES_URL})
    schema = f"capes_test_{uuid4().hex[:12]}"
    env["POSTGRES_SCHEMA"] = schema
    with psycopg.connect(**conninfo(env), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield env
    finally:
        with psycopg.connect(**conninfo(env), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture
def postgres_env() -> Iterator[dict[str, str]]:
    """Settings for a fresh schema in the test database, dropped after the test."""
    with fresh_postgres_schema() as env:
        yield env


@pytest.fixture(scope="module")
def module_postgres_env() -> Iterator[dict[str, str]]:
    """A fresh schema for a whole test module (fixtures of module scope)."""
    with fresh_postgres_schema() as env:
        yield env


@pytest.fixture
def memory_app(make_app: MakeApp, memory_env: dict[str, str]) -> Campaigns:
    return make_app(memory_env)


@pytest.fixture
def sqlite_app(make_app: MakeApp, sqlite_env: dict[str, str]) -> Campaigns:
    return make_app(sqlite_env)


@pytest.fixture
def postgres_app(make_app: MakeApp, postgres_env: dict[str, str]) -> Campaigns:
    return make_app(postgres_env)


@pytest.fixture(
    params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def store_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """The settings of each store in turn."""
    env: dict[str, str] = request.getfixturevalue(f"{request.param}_env")
    return env


@pytest.fixture
def store_app(make_app: MakeApp, store_env: dict[str, str]) -> Campaigns:
    """A Campaigns application on each store in turn."""
    return make_app(store_env)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def shared_store_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """Settings of a store that several applications (processes) can open at once."""
    env: dict[str, str] = request.getfixturevalue(f"{request.param}_env")
    return env


@pytest.fixture
def other_shared_store_env(shared_store_env: dict[str, str],
                           tmp_path: Any) -> Iterator[dict[str, str]]:
    """A second store of the kind of ``shared_store_env``: another SQLite file beside it, or
    another PostgreSQL schema (dropped after the test)."""
    if "POSTGRES_SCHEMA" in shared_store_env:
        with fresh_postgres_schema() as env:
            yield env
    else:
        yield persistence_env({"CAPES_DB": str(tmp_path / "other.sqlite")})
