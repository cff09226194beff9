"""application.config: the project's variables become eventsourcing settings, in one place."""

from __future__ import annotations

import os

import pytest

from application.config import persistence_env


def test_a_database_url_selects_postgresql_with_every_part_of_the_url() -> None:
    env = persistence_env(
        {"CAPES_DATABASE_URL": "postgresql://capes:s%40cret@db.local:6543/tables?schema=live"}
    )

    assert env == {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": "tables",
        "POSTGRES_HOST": "db.local",
        "POSTGRES_PORT": "6543",
        "POSTGRES_USER": "capes",
        "POSTGRES_PASSWORD": "s@cret",
        "POSTGRES_SCHEMA": "live",
        "POSTGRES_POOL_SIZE": "1",
        "POSTGRES_MAX_OVERFLOW": "14",
        "POSTGRES_CONNECT_TIMEOUT": "3",
    }


def test_a_database_url_without_password_port_or_schema_gets_the_defaults() -> None:
    env = persistence_env({"CAPES_DATABASE_URL": "postgres://postgres@127.0.0.1/test"})

    assert env["POSTGRES_PORT"] == "5432"
    assert env["POSTGRES_PASSWORD"] == ""
    assert "POSTGRES_SCHEMA" not in env


def test_the_database_url_wins_over_the_sqlite_file() -> None:
    env = persistence_env(
        {"CAPES_DATABASE_URL": "postgresql://u@h/d", "CAPES_DB": "other.sqlite"}
    )

    assert env["PERSISTENCE_MODULE"] == "eventsourcing.postgres"


@pytest.mark.parametrize(
    "url", ["mysql://u@h/d", "postgresql://u@h/", "postgresql:///d", "postgresql://u@h:port/d"]
)
def test_an_unusable_database_url_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="CAPES_DATABASE_URL"):
        persistence_env({"CAPES_DATABASE_URL": url})


def test_a_refused_url_does_not_show_its_password() -> None:
    with pytest.raises(ValueError) as refused:
        persistence_env({"CAPES_DATABASE_URL": "postgresql://u:hunter2@h:bad/d"})

    assert "hunter2" not in str(refused.value)


def test_capes_db_selects_an_sqlite_file_defaulting_to_capes_sqlite() -> None:
    assert persistence_env({"CAPES_DB": "/var/lib/capes/x.sqlite"}) == {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": "/var/lib/capes/x.sqlite",
    }
    assert persistence_env({})["SQLITE_DBNAME"] == "./capes.sqlite"


def test_memory_selects_the_in_memory_store() -> None:
    assert persistence_env({"CAPES_DB": ":memory:"}) == {
        "PERSISTENCE_MODULE": "eventsourcing.popo"
    }


def test_tuning_settings_pass_through_and_nothing_else_does() -> None:
    env = persistence_env(
        {"CAPES_DB": ":memory:", "POSTGRES_POOL_SIZE": "20", "HOME": "/root", "CAPES_X": "1"}
    )

    assert env == {"PERSISTENCE_MODULE": "eventsourcing.popo", "POSTGRES_POOL_SIZE": "20"}


def test_the_process_environment_is_read_but_never_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CAPES_DB", ":memory:")
    monkeypatch.delenv("CAPES_DATABASE_URL", raising=False)
    before = dict(os.environ)

    env = persistence_env()

    assert env == {"PERSISTENCE_MODULE": "eventsourcing.popo"}
    assert dict(os.environ) == before


def test_postgresql_pools_keep_one_connection_at_rest_unless_the_operator_says_otherwise() -> None:
    """Every process of a server holds several pools: eventsourcing's five connections each
    kept an idle server with three workers from getting ready on PostgreSQL's default 100."""
    url = "postgresql://u@h/d"
    env = persistence_env({"CAPES_DATABASE_URL": url})
    assert (env["POSTGRES_POOL_SIZE"], env["POSTGRES_MAX_OVERFLOW"]) == ("1", "14")

    tuned = persistence_env({"CAPES_DATABASE_URL": url, "POSTGRES_POOL_SIZE": "5",
                             "POSTGRES_MAX_OVERFLOW": "0"})
    assert (tuned["POSTGRES_POOL_SIZE"], tuned["POSTGRES_MAX_OVERFLOW"]) == ("5", "0")


def test_a_request_waits_three_seconds_for_postgresql_unless_the_operator_says_otherwise() -> None:
    """eventsourcing's 30 s, tried ten times, kept a request five minutes from its 503 while
    PostgreSQL was down (application.postgres_store.bound_waits: the wait is not tried again)."""
    url = "postgresql://u@h/d"
    assert persistence_env({"CAPES_DATABASE_URL": url})["POSTGRES_CONNECT_TIMEOUT"] == "3"
    tuned = persistence_env({"CAPES_DATABASE_URL": url, "POSTGRES_CONNECT_TIMEOUT": "10"})
    assert tuned["POSTGRES_CONNECT_TIMEOUT"] == "10"
