"""Where read models live: tracking recorders that also keep a read model's tables.

A *view* is an eventsourcing ``TrackingRecorder`` subclass (SQLite or PostgreSQL) that owns a
read model's tables and its own tracking table (``{name}_tracking``) in the application's store.
:meth:`View.write` runs a batch of statements and moves the tracking position in **one
transaction**, and only if the tracking position is still the one the caller started from
(compare-and-set): a position already applied is refused with ``IntegrityError`` and nothing of
the batch is applied, so no event is ever counted twice, even with two processes catching up
the same read model (a server and a ``capes projections rebuild``, say).

Beside their tracking, one table (``capes_read_model_layouts``) holds the layout each read
model's tables were built with (:attr:`projections.model.ReadModel.layout`): a reset records
the layout of the code that resets, with the emptied tables, in one transaction. Another
(``capes_read_model_lineage``, :mod:`projections.lineage`) holds the event each read model
applied last, which tells the log it was built from; a reset forgets it.

SQL is written once for both databases: ``?`` placeholders (``%s`` on PostgreSQL) and
``{schema}`` before table names (``"schema".`` on PostgreSQL, nothing on SQLite). Columns use
TEXT, INTEGER and BIGINT only; JSON is stored as TEXT, times as fixed-width ISO text (UTC), so
they sort as text.

The in-memory store (``eventsourcing.popo``) keeps its read models in an in-memory SQLite
database of their own: the same code runs on every store.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Protocol
from uuid import uuid4

from eventsourcing.persistence import (
    InfrastructureFactory,
    IntegrityError,
    TrackingRecorder,
)
from eventsourcing.postgres import PostgresDatastore, PostgresTrackingRecorder
from eventsourcing.sqlite import SQLiteDatastore, SQLiteFactory, SQLiteTrackingRecorder
from eventsourcing.utils import Environment
from psycopg.rows import tuple_row
from psycopg.sql import SQL

from application.config import bounded
from application.schema_lock import creating_tables
from application.sqlite_store import on_each_connection

from .unsynced import Unsynced

#: A statement and the rows of parameters it runs with (``executemany``).
Op = tuple[str, Sequence[Sequence[Any]]]
#: Name of the application whose notification log the read models follow.
APPLICATION = "Campaigns"
#: The layout of read models stored before layouts were recorded (none in their table).
FIRST_LAYOUT = 1
_LAYOUTS_DDL = ("CREATE TABLE IF NOT EXISTS {schema}capes_read_model_layouts "
                "(name TEXT PRIMARY KEY, layout INTEGER NOT NULL)")
_LAYOUT = "SELECT layout FROM {schema}capes_read_model_layouts WHERE name=?"
_RECORD_LAYOUT = ("INSERT INTO {schema}capes_read_model_layouts VALUES (?, ?) "
                  "ON CONFLICT (name) DO UPDATE SET layout = excluded.layout")

#: The event each read model applied last, at its position (:mod:`projections.lineage`).
LINEAGE_TABLE = "capes_read_model_lineage"
_LINEAGE_DDL = (f"CREATE TABLE IF NOT EXISTS {{schema}}{LINEAGE_TABLE} (name TEXT PRIMARY KEY, "
                "position BIGINT NOT NULL, campaign_id TEXT NOT NULL, version BIGINT NOT NULL, "
                "chain TEXT NOT NULL)")
RECORD_LINEAGE = (f"INSERT INTO {{schema}}{LINEAGE_TABLE} VALUES (?, ?, ?, ?, ?) ON CONFLICT "
                  "(name) DO UPDATE SET position = excluded.position, campaign_id = "
                  "excluded.campaign_id, version = excluded.version, chain = excluded.chain")
READ_LINEAGE = (f"SELECT position, campaign_id, version, chain FROM {{schema}}{LINEAGE_TABLE} "
                "WHERE name=?")
#: Run by a reset, with the emptied tables: a read model at 0 has applied no event.
_FORGET_LINEAGE = f"DELETE FROM {{schema}}{LINEAGE_TABLE} WHERE name=?"


def iso(moment: datetime) -> str:
    """A time as stored: UTC, fixed width, so that text order is time order."""
    if moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    # The same text either way; ``timespec`` costs more than the rest of the call (2.8 µs
    # against 1.3, once an event in the read models' process: ``Change.at``), and a time
    # without microseconds, which the default leaves out, is one in a million.
    return moment.isoformat() if moment.microsecond else moment.isoformat(timespec="microseconds")


class View(Protocol):
    """What a read model needs of its storage, whichever the database."""

    name: str
    tables: tuple[str, ...]

    def position(self) -> int:
        """The last notification id applied (0: none)."""

    datastore: Any

    def write(self, expected: int, position: int, ops: Sequence[Op]) -> None:
        """Run ``ops`` and move the tracking from ``expected`` to ``position``, atomically."""

    def transaction(self) -> Any:
        """A write transaction (a context manager giving a cursor)."""

    def apply(self, cursor: Any, expected: int, position: int, ops: Sequence[Op]) -> None:
        """:meth:`write` inside ``cursor``'s transaction."""

    def read(self, template: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of a query."""

    def layout(self) -> int:
        """The layout the tables were built with (:data:`FIRST_LAYOUT` if none is stored)."""

    def reset(self, layout: int) -> None:
        """Empty the tables, set the tracking back to 0, forget the event applied last
        (:mod:`projections.lineage`) and record that they are now built with ``layout``, in
        one transaction."""

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, sorted (for comparing two builds)."""

    def max_tracking_id(self, application_name: str) -> int | None: ...


class ViewSchema:
    """A read model's tables: class attributes of the concrete view classes."""

    #: The read model's name: its tables start with it and its tracking table is
    #: ``capes_{name}_tracking``.
    name: ClassVar[str] = ""
    #: CREATE TABLE / CREATE INDEX statements (``{schema}`` before table names).
    ddl: ClassVar[tuple[str, ...]] = ()
    #: The tables, for resets and dumps.
    tables: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def tracking_table(cls) -> str:
        return f"capes_{cls.name}_tracking"

    @classmethod
    def statements(cls) -> tuple[str, ...]:
        """The read model's DDL and that of the layouts' and lineage's tables (shared by every
        read model; created where missing, so a file of an older release takes them)."""
        return (*cls.ddl, _LAYOUTS_DDL, _LINEAGE_DDL)

    def read(self, template: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError  # each database's view

    def layout(self) -> int:
        found = self.read(_LAYOUT, (self.name,))
        return int(found[0][0]) if found else FIRST_LAYOUT


def _refused(expected: int, found: int | None, position: int) -> IntegrityError:
    return IntegrityError(
        f"tracking is at {found or 0}, not {expected}: position {position} is not applied "
        "(another process moved this read model, or it was applied already)"
    )


class SQLiteView(ViewSchema, SQLiteTrackingRecorder):
    """A read model's tables and tracking in an SQLite database."""

    def __init__(self, datastore: SQLiteDatastore, **kwargs: Any) -> None:
        super().__init__(datastore, **kwargs)
        table = self.tracking_table()
        # The library's statements name one shared "tracking" table; each view has its own.
        self.insert_tracking_statement = (
            f"INSERT INTO {table} VALUES (:application_name, :notification_id) "
            "ON CONFLICT (application_name) DO UPDATE SET notification_id = :notification_id "
            f"WHERE {table}.notification_id < :notification_id RETURNING notification_id"
        )
        self.select_max_tracking_id_statement = (
            f"SELECT MAX(notification_id) FROM {table} WHERE application_name=?"
        )
        self._sql: dict[str, str] = {}

    def construct_create_table_statements(self) -> list[str]:
        return [
            f"CREATE TABLE IF NOT EXISTS {self.tracking_table()} (application_name TEXT, "
            "notification_id INTEGER, PRIMARY KEY (application_name)) WITHOUT ROWID",
            *(statement.format(schema="") for statement in self.statements()),
        ]

    def sql(self, template: str) -> str:
        return template.format(schema="")

    @contextmanager
    def _writing(self) -> Iterator[Any]:
        """A write transaction that holds the database's write lock from its start."""
        with self.datastore.get_connection(commit=True) as conn:
            cursor = conn.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            try:
                yield cursor
            except BaseException:
                conn.rollback()
                raise
            conn.commit()

    def position(self) -> int:
        return self.max_tracking_id(APPLICATION) or 0

    def transaction(self) -> Any:
        return self._writing()

    def write(self, expected: int, position: int, ops: Sequence[Op]) -> None:
        with self._writing() as cursor:
            self.apply(cursor, expected, position, ops)

    def apply(self, cursor: Any, expected: int, position: int, ops: Sequence[Op]) -> None:
        table = self.tracking_table()
        cursor.execute(
            f"SELECT notification_id FROM {table} WHERE application_name=?", (APPLICATION,)
        )
        row = cursor.fetchone()
        found = row[0] if row else None
        if (found or 0) != expected or position <= expected:
            raise _refused(expected, found, position)
        for template, rows in ops:
            if rows:
                cursor.executemany(self.sql(template), rows)
        cursor.execute(
            f"INSERT INTO {table} VALUES (?, ?) ON CONFLICT (application_name) "
            "DO UPDATE SET notification_id = excluded.notification_id",
            (APPLICATION, position),
        )

    def read(self, template: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.datastore.transaction(commit=False) as cursor:
            cursor.execute(self.sql(template), tuple(params))
            return [tuple(row) for row in cursor.fetchall()]

    def reset(self, layout: int) -> None:
        with self._writing() as cursor:
            for table in self.tables:
                cursor.execute(f"DELETE FROM {table}")
            cursor.execute(
                f"INSERT INTO {self.tracking_table()} VALUES (?, 0) ON CONFLICT "
                "(application_name) DO UPDATE SET notification_id = 0", (APPLICATION,)
            )
            cursor.execute(self.sql(_RECORD_LAYOUT), (self.name, layout))
            cursor.execute(self.sql(_FORGET_LINEAGE), (self.name,))

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        return {t: sorted(self.read(f"SELECT * FROM {{schema}}{t}"), key=repr)
                for t in self.tables}


class PostgresView(ViewSchema, PostgresTrackingRecorder):
    """A read model's tables and tracking in a PostgreSQL schema."""

    def __init__(self, datastore: PostgresDatastore, **kwargs: Any) -> None:
        # The factory names the tracking table after its environment; each view has its own.
        kwargs["tracking_table_name"] = self.tracking_table()
        super().__init__(datastore, **kwargs)
        self._prefix = '"' + datastore.schema.replace('"', '""') + '".'
        self._sql: dict[str, str] = {}
        for statement in self.statements():
            self.sql_create_statements.append(SQL(self.sql(statement)))  # type: ignore[arg-type]

    def sql(self, template: str) -> str:
        found = self._sql.get(template)
        if found is None:
            found = self._sql[template] = template.format(schema=self._prefix).replace("?", "%s")
        return found

    @contextmanager
    def _cursor(self, *, commit: bool) -> Iterator[Any]:
        with (
            self.datastore.get_connection() as conn,
            conn.transaction(force_rollback=not commit),
            conn.cursor(row_factory=tuple_row) as cursor,
        ):
            yield cursor

    def position(self) -> int:
        return self.max_tracking_id(APPLICATION) or 0

    def transaction(self) -> Any:
        return self._cursor(commit=True)

    def write(self, expected: int, position: int, ops: Sequence[Op]) -> None:
        with self._cursor(commit=True) as cursor:
            self.apply(cursor, expected, position, ops)

    def apply(self, cursor: Any, expected: int, position: int, ops: Sequence[Op]) -> None:
        table = f"{self._prefix}{self.tracking_table()}"
        # The row exists before it is locked, so two first writers cannot both see none.
        cursor.execute(
            f"INSERT INTO {table} VALUES (%s, 0) ON CONFLICT (application_name) DO NOTHING",
            (APPLICATION,),
        )
        cursor.execute(
            f"SELECT notification_id FROM {table} WHERE application_name=%s FOR UPDATE",
            (APPLICATION,),
        )
        row = cursor.fetchone()
        found = row[0] if row else None
        if (found or 0) != expected or position <= expected:
            raise _refused(expected, found, position)
        for template, rows in ops:
            if rows:
                cursor.executemany(self.sql(template), rows)
        cursor.execute(
            f"UPDATE {table} SET notification_id=%s WHERE application_name=%s",
            (position, APPLICATION),
        )

    def read(self, template: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._cursor(commit=False) as cursor:
            cursor.execute(self.sql(template), tuple(params))
            return list(cursor.fetchall())

    def reset(self, layout: int) -> None:
        table = f"{self._prefix}{self.tracking_table()}"
        with self._cursor(commit=True) as cursor:
            cursor.execute(
                f"INSERT INTO {table} VALUES (%s, 0) ON CONFLICT (application_name) DO NOTHING",
                (APPLICATION,),
            )
            cursor.execute(
                f"SELECT notification_id FROM {table} WHERE application_name=%s FOR UPDATE",
                (APPLICATION,),
            )
            for name in self.tables:
                cursor.execute(f"DELETE FROM {self._prefix}{name}")
            cursor.execute(f"UPDATE {table} SET notification_id=0 WHERE application_name=%s",
                           (APPLICATION,))
            cursor.execute(self.sql(_RECORD_LAYOUT), (self.name, layout))
            cursor.execute(self.sql(_FORGET_LINEAGE), (self.name,))

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        return {t: sorted(self.read(f"SELECT * FROM {{schema}}{t}"), key=repr)
                for t in self.tables}


#: (view, expected position, new position, statements) of one read model's update.
Write = tuple[View, int, int, Sequence[Op]]


def write_all(writes: Sequence[Write]) -> None:
    """Apply several read models' updates, each with its tracking; in one transaction when
    their views share a database (one commit instead of one per read model), so one refused
    tracking position refuses them all (nothing is applied; each caller re-reads)."""
    if not writes:
        return
    first = writes[0][0]
    if all(view.datastore is first.datastore for view, *_ in writes):
        with first.transaction() as cursor:
            for view, expected, position, ops in writes:
                view.apply(cursor, expected, position, ops)
        return
    for view, expected, position, ops in writes:
        view.write(expected, position, ops)


def views_env(app_env: Mapping[str, str]) -> dict[str, str]:
    """The store of the read models: on PostgreSQL, the application's database; beside an
    SQLite file, a file of their own (:func:`read_models_file`); a private in-memory SQLite
    database when the application is in memory."""
    env = dict(app_env)
    module = env.get("PERSISTENCE_MODULE", "eventsourcing.popo") or "eventsourcing.popo"
    if module.endswith("popo"):
        env["PERSISTENCE_MODULE"] = "eventsourcing.sqlite"
        env["SQLITE_DBNAME"] = f"file:capes-read-models-{uuid4().hex}?mode=memory&cache=shared"
    elif module.endswith("sqlite"):
        env["SQLITE_DBNAME"] = read_models_file(env.get("SQLITE_DBNAME", ""))
    return env


def read_models_file(db: str) -> str:
    """Where the read models of the SQLite database ``db`` live: ``capes.sqlite`` ->
    ``capes.read-models.sqlite`` (an in-memory or URI database: ``db`` itself).

    Why a file of their own: SQLite lets one writer at a time into a database file, and its
    lock waits sleep for milliseconds. The read models write after every few commands; in the
    campaigns' file, a command's commit often had to wait for theirs (measured: the p99 of
    commands at half load went from about 15 ms to under 9 ms with the read models apart).
    They are rebuilt from the log, so nothing lives only there."""
    if not db or db == ":memory:" or db.startswith("file:"):
        return db
    path = Path(db)
    return str(path.with_name(f"{path.stem}.read-models{path.suffix or '.sqlite'}"))


def claim_unsynced(app_env: Mapping[str, str]) -> Unsynced | None:
    """This process's claim on the read models' SQLite file for writes that do not wait for
    the disk (:mod:`projections.unsynced`), taken before the file is opened: only for a file
    of their own (not the in-memory store's, not one they share with the campaigns), and only
    where the machine tells its boot; else None."""
    module = app_env.get("PERSISTENCE_MODULE", "") or ""
    db = app_env.get("SQLITE_DBNAME", "") or ""
    own = read_models_file(db)
    if not module.endswith("sqlite") or own == db:
        return None
    return Unsynced.claim(own)


def open_factory(app_env: Mapping[str, str], *,
                 unsynced: bool = False) -> InfrastructureFactory[Any]:
    """The infrastructure factory of the read models' store (SQLite or PostgreSQL); with
    ``unsynced`` (the file claimed by :func:`claim_unsynced`), its SQLite views never wait
    for the disk."""
    factory = bounded(InfrastructureFactory[Any].construct(Environment("ReadModels",
                                                                       views_env(app_env))))
    module = type(factory).__module__
    if not module.endswith(("sqlite", "postgres")):
        raise ValueError(f"read models need SQLite or PostgreSQL, not {module}")
    if isinstance(factory, SQLiteFactory):
        # A read model is rebuilt from the log, and its rows and tracking position commit
        # together: a transaction lost to a power cut is one applied again, so its commits
        # need not wait for the disk (WAL with synchronous=NORMAL never corrupts, it only
        # forgets the last transactions). With the read models caught up after every command,
        # their fsyncs were as many as the commands', on the disk the commands wait for. In a
        # file of their own, claimed (projections/unsynced.py), they never wait for it (OFF):
        # the file is rebuilt if the machine stops while it has writes not on the disk.
        level = "OFF" if unsynced else "NORMAL"
        on_each_connection(factory.datastore, f"PRAGMA synchronous={level}")
    return factory


def open_view(factory: InfrastructureFactory[Any],
              classes: tuple[type[SQLiteView], type[PostgresView]]) -> View:
    """The view of one read model in ``factory``'s store (tables created if missing)."""
    sqlite_class, postgres_class = classes
    view_class: type[TrackingRecorder] = (
        sqlite_class if type(factory).__module__.endswith("sqlite") else postgres_class
    )
    with creating_tables(factory.env):  # one process at a time (issue 13)
        view: View = factory.tracking_recorder(view_class)
    return view
