"""Read models know which log they were built from: with each read model's position they
record the event they applied there (its campaign, version and hash chain, R-FAIR-6), and
whoever runs them, on opening them, rebuilds from the log each one whose event the store does
not hold at that position (a backup restored beside the read models of the later log, even
once the restored store has passed their position; the read models of another store); a
plain restart keeps them."""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from readmodel_helpers import check_read_models, dump, open_table, play
from stores import MakeApp, conninfo

from application.backup import backup_sqlite
from application.campaigns import Campaigns
from application.config import persistence_env
from application.dice import SeededDice
from cli.main import main
from projections import lineage
from projections.service import MODELS, ReadModels

#: Puts a copy of a store, taken earlier, in the place of the store of the settings given.
Restore = Callable[[dict[str, str]], None]


def copy_sqlite(env: dict[str, str], folder: Path) -> Restore:
    """``capes backup`` of the store; restoring puts it in a store's place as the README says
    (its ``-wal`` and ``-shm`` removed; the read models' file left where it is)."""
    folder.mkdir(exist_ok=True)
    copy = folder / f"backup-{len(list(folder.iterdir()))}.sqlite"
    backup_sqlite(env["SQLITE_DBNAME"], copy)

    def restore(into: dict[str, str]) -> None:
        store = Path(into["SQLITE_DBNAME"])
        for suffix in ("-wal", "-shm"):
            Path(f"{store}{suffix}").unlink(missing_ok=True)
        store.write_bytes(copy.read_bytes())

    return restore


def copy_postgres(env: dict[str, str]) -> Restore:
    """The rows of the store's own tables (not the read models', ``capes_…``) and where its
    sequences are, as a ``pg_dump`` of them has; restoring puts them in a schema's store
    tables, whose read models' tables stay as they are."""
    schema = env["POSTGRES_SCHEMA"]
    with psycopg.connect(**conninfo(env)) as conn:
        tables = [name for (name,) in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema=%s "
            "AND table_name NOT LIKE 'capes%%'", (schema,))]
        rows = {name: conn.execute(f'SELECT * FROM "{schema}"."{name}"').fetchall()
                for name in tables}
        sequences = conn.execute("SELECT sequencename, last_value FROM pg_sequences "
                                 "WHERE schemaname=%s", (schema,)).fetchall()

    def restore(into: dict[str, str]) -> None:
        target = into["POSTGRES_SCHEMA"]
        with psycopg.connect(**conninfo(into)) as conn:
            for name, found in rows.items():
                conn.execute(f'TRUNCATE "{target}"."{name}"')
                if found:
                    marks = ", ".join(["%s"] * len(found[0]))
                    with conn.cursor() as cursor:
                        cursor.executemany(
                            f'INSERT INTO "{target}"."{name}" VALUES ({marks})', found)
            for sequence, last in sequences:
                conn.execute("SELECT setval(%s, %s, %s)",
                             (f'"{target}"."{sequence}"', last or 1, last is not None))

    return restore


@pytest.fixture
def copy_store(tmp_path: Path) -> Iterator[Callable[[dict[str, str]], Restore]]:
    """Takes a copy of a store (its applications may be open); the copy restores it later."""

    def copy(env: dict[str, str]) -> Restore:
        if "POSTGRES_SCHEMA" in env:
            return copy_postgres(env)
        return copy_sqlite(env, tmp_path / "backups")

    yield copy


def head(app: Campaigns) -> int:
    return app.recorder.max_notification_id() or 0


def built_to_the_head(app: Campaigns) -> int:
    """The read models of ``app`` caught up with its log and closed; their position."""
    read_models = ReadModels(app)
    try:
        assert read_models.runner.catch_up()
        return read_models.runner.position()
    finally:
        read_models.close()


def played_past(app: Campaigns, position: int, name: str, seed: int) -> Any:
    """A new campaign played until the store's head is past ``position``; its id."""
    rng = random.Random(seed)
    campaign = open_table(app, name, players=3)
    while head(app) <= position + 3:
        play(app, campaign, rng, 10)
    return campaign


def rebuilt(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "rebuilding" in r.getMessage()]


def assert_as_a_fresh_build(read_models: ReadModels, app: Campaigns,
                            campaigns: list[Any]) -> None:
    """The read models, caught up, hold what the fold of the store's log says, as a rebuild
    from nothing does."""
    assert read_models.runner.catch_up()
    check_read_models(app, read_models, campaigns)
    caught_up = dump(read_models)
    read_models.rebuild()
    assert dump(read_models) == caught_up


def test_read_models_of_the_later_log_are_rebuilt_once_a_restored_backup_passed_their_position(
        shared_store_env: dict[str, str], make_app: MakeApp,
        copy_store: Callable[[dict[str, str]], Restore],
        caplog: pytest.LogCaptureFixture) -> None:
    """The backup restored, the store took commands before any read model opened, past the
    position the read models of the replaced log were at: their position names an event of
    the store, but not the one they applied there. Kept, they listed a campaign the store no
    longer has and passed over every event the store took up to their position."""
    app = make_app(shared_store_env, dice=SeededDice(5))
    kept = open_table(app, "Kept", players=2)
    restore = copy_store(shared_store_env)
    lost = open_table(app, "Lost after the backup", players=3)
    play(app, lost, random.Random(5), 30)
    reached = built_to_the_head(app)
    app.close()

    restore(shared_store_env)  # the server stopped, the backup put in the store's place
    again = make_app(shared_store_env, dice=SeededDice(6))
    assert head(again) < reached
    made = played_past(again, reached, "Made after the restore", 6)
    caplog.set_level(logging.WARNING, logger="projections.service")
    read_models = ReadModels(again)
    try:
        assert read_models.runner.refresh() == dict.fromkeys(MODELS, 0)
        assert len(rebuilt(caplog)) == len(MODELS)
        for name, line in zip(MODELS, rebuilt(caplog), strict=True):
            assert line.startswith(f"read model {name}: rebuilding it from the log (it was "
                                   f"built from another log: its event at position {reached} "
                                   "is not the store's event there"), line
        assert_as_a_fresh_build(read_models, again, [kept, made])
        assert read_models.board.board(lost) is None
        assert read_models.directory.get(lost) is None
    finally:
        read_models.close()


def test_read_models_opened_against_another_store_are_rebuilt(
        shared_store_env: dict[str, str], other_shared_store_env: dict[str, str],
        make_app: MakeApp, copy_store: Callable[[dict[str, str]], Restore],
        caplog: pytest.LogCaptureFixture) -> None:
    """The read models' file of one store beside another store (another ``CAPES_DB``; on
    PostgreSQL, another store's tables put beside them) whose log is longer."""
    app = make_app(shared_store_env, dice=SeededDice(3))
    mine = open_table(app, "This store's", players=2)
    play(app, mine, random.Random(3), 20)
    reached = built_to_the_head(app)
    app.close()

    other = make_app(other_shared_store_env, dice=SeededDice(4))
    theirs = played_past(other, reached, "The other store's", 4)
    put_in_place = copy_store(other_shared_store_env)
    other.close()

    put_in_place(shared_store_env)
    again = make_app(shared_store_env, dice=SeededDice(4))
    caplog.set_level(logging.WARNING, logger="projections.service")
    read_models = ReadModels(again)
    try:
        assert read_models.runner.refresh() == dict.fromkeys(MODELS, 0)
        lines = rebuilt(caplog)
        assert len(lines) == len(MODELS)
        assert all("it was built from another log" in line for line in lines), lines
        assert_as_a_fresh_build(read_models, again, [theirs])
        assert read_models.board.board(mine) is None
    finally:
        read_models.close()


def test_read_models_are_kept_at_their_position_across_a_restart(
        shared_store_env: dict[str, str], make_app: MakeApp,
        caplog: pytest.LogCaptureFixture) -> None:
    """Whether their changes were written at once (a catch-up) or gathered by the background
    runner and written as it stopped: the event each recorded is the store's, nothing is
    rebuilt."""
    app = make_app(shared_store_env, dice=SeededDice(2))
    campaign = open_table(app, "Harbor", players=2)
    built_to_the_head(app)
    play(app, campaign, random.Random(2), 25)
    background = ReadModels(app, poll=0.05, linger=0, latest_every=600)
    background.start()
    assert background.runner.wait(head(app), ["timeline"], drive=False, timeout=30)
    assert background.runner.refresh()["board"] < head(app)  # gathered, not written yet
    background.close()  # writes what it gathered
    reached = head(app)
    app.close()

    caplog.set_level(logging.WARNING, logger="projections.service")
    again = make_app(shared_store_env, dice=SeededDice(3))
    read_models = ReadModels(again)
    try:
        assert rebuilt(caplog) == []
        assert read_models.runner.refresh() == dict.fromkeys(MODELS, reached)
        check_read_models(again, read_models, [campaign])
    finally:
        read_models.close()


def forget_marks(read_models: ReadModels) -> None:
    """The read models as a release before marks left them: positions, no marks."""
    view = read_models.board.store
    with view.transaction() as cursor:
        cursor.execute(view.sql(f"DELETE FROM {{schema}}{lineage.TABLE}"))


def test_read_models_of_a_release_before_marks_are_kept_and_marked_by_their_next_write(
        shared_store_env: dict[str, str], make_app: MakeApp,
        caplog: pytest.LogCaptureFixture) -> None:
    """Without a mark the log they were built from is unknown: they are checked as before
    (their position an event the store has, not past its head), not rebuilt on the chance."""
    app = make_app(shared_store_env, dice=SeededDice(8))
    campaign = open_table(app, "Harbor", players=2)
    read_models = ReadModels(app)
    read_models.runner.catch_up()
    forget_marks(read_models)
    read_models.close()
    reached = head(app)

    caplog.set_level(logging.WARNING, logger="projections.service")
    read_models = ReadModels(app)
    try:
        assert rebuilt(caplog) == []
        assert read_models.runner.refresh() == dict.fromkeys(MODELS, reached)
        assert {lineage.recorded(m.store) for m in read_models.models.values()} == {None}
        play(app, campaign, random.Random(8), 10)
        read_models.runner.catch_up()
        marks = {lineage.recorded(m.store) for m in read_models.models.values()}
        assert marks == {lineage.in_store(app, head(app))} and None not in marks
    finally:
        read_models.close()


def test_read_models_of_a_release_before_marks_past_a_restored_store_s_head_are_rebuilt(
        shared_store_env: dict[str, str], make_app: MakeApp,
        copy_store: Callable[[dict[str, str]], Restore],
        caplog: pytest.LogCaptureFixture) -> None:
    app = make_app(shared_store_env, dice=SeededDice(9))
    kept = open_table(app, "Kept", players=2)
    restore = copy_store(shared_store_env)
    open_table(app, "Lost after the backup", players=3)
    read_models = ReadModels(app)
    read_models.runner.catch_up()
    forget_marks(read_models)
    read_models.close()
    app.close()

    restore(shared_store_env)
    again = make_app(shared_store_env, dice=SeededDice(9))
    caplog.set_level(logging.WARNING, logger="projections.service")
    read_models = ReadModels(again)
    try:
        lines = rebuilt(caplog)
        assert len(lines) == len(MODELS)
        assert all("past the store's last event" in line for line in lines), lines
        assert_as_a_fresh_build(read_models, again, [kept])
    finally:
        read_models.close()



def model_lines(out: str) -> dict[str, str]:
    """Each read model's line of ``capes projections status``, by its name."""
    return {line.split()[0]: line for line in out.splitlines()
            if line.startswith("  ") and line.split()[0] in MODELS}


def test_capes_projections_status_says_whether_each_read_model_was_built_from_the_store_s_log(
        tmp_path: Path, make_app: MakeApp, copy_store: Callable[[dict[str, str]], Restore],
        capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Their mark is the store's event at their position (matches), or they have none yet (a
    release before marks), or it is another event: a restored backup, rebuilt at the next
    start, not by ``status``, which only looks."""
    db = tmp_path / "capes.sqlite"
    monkeypatch.setenv("CAPES_DB", str(db))
    env = persistence_env({"CAPES_DB": str(db)})

    def status() -> dict[str, str]:
        capsys.readouterr()
        assert main(["projections", "status"]) == 0
        out = capsys.readouterr().out
        shown = model_lines(out)
        assert set(shown) == set(MODELS), out
        return shown

    app = make_app(env, dice=SeededDice(10))
    open_table(app, "Kept", players=2)
    restore = copy_store(env)
    lost = open_table(app, "Lost after the backup", players=3)
    play(app, lost, random.Random(10), 20)
    built_to_the_head(app)
    assert all(line.endswith("  log: matches") for line in status().values())

    read_models = ReadModels(app)
    forget_marks(read_models)
    read_models.close()
    assert all(line.endswith("  log: unknown (no mark yet)") for line in status().values())
    play(app, lost, random.Random(11), 5)
    reached = built_to_the_head(app)  # marked again by their next write
    assert all(line.endswith("  log: matches") for line in status().values())
    app.close()

    restore(env)
    again = make_app(env, dice=SeededDice(11))
    played_past(again, reached, "Made after the restore", 11)
    again.close()
    for _ in range(2):  # looks only: nothing is rebuilt by it
        shown = status()
        assert all(re.search(rf"at +{reached}  layout \d+  \(\d+ behind\)  log: ANOTHER LOG "
                             "— rebuilt at next start$", line) for line in shown.values()), shown
    assert main(["projections", "status"]) == 0
    assert (f"    (it was built from another log: its event at position {reached} is not the "
            "store's event there; the store was restored from a backup or replaced)"
            ) in capsys.readouterr().out.splitlines()
