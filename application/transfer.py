"""Exporting a campaign's whole log, and reading an export back (R-FAIR-7).

An export holds every event, one row each, oldest first, with these columns:

========== ==================================================================================
campaign   the campaign's id
position   the event's position in the log (1, 2, …)
type       the event's type (``DieRolled``, ``DiceRevealed``…)
family     ``capes`` (the edition's events) or ``record`` (the record of play's)
time       when the command was accepted, UTC (in NDJSON the exact string that is hashed)
seat       the acting seat; null for the owner, the lobby or the server
narration  what the player said, on the first event of a command
schema     version of the event's schema
command    position of the first event of the command this one belongs to
reverted   whether an undo or a rewind reverted it since (R-REC-5): for analytics only, it is
           not hashed (the record is)
chain      the event's hash chain, hex (R-FAIR-6)
payload    the event's fields and its ``type``: an object in NDJSON, JSON text in Parquet
========== ==================================================================================

NDJSON writes one JSON object per line. Parquet (pyarrow) has the same columns, ``time`` as a
timestamp in microseconds UTC. No secret is ever in an export: an unrevealed seed is not in the
log at all (R-FAIR-1).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, Literal
from uuid import UUID

import msgspec
from eventsourcing.persistence import StoredEvent

from domain.record import Record, is_reverted

from .extras import MissingExtra
from .log import Entry, entry
from .mapper import MsgspecMapper

Format = Literal["ndjson", "parquet"]
FORMATS: tuple[Format, ...] = ("ndjson", "parquet")
MEDIA_TYPES: dict[Format, str] = {
    "ndjson": "application/x-ndjson",
    "parquet": "application/vnd.apache.parquet",
}
#: The columns of an export, in order.
COLUMNS = ("campaign", "position", "type", "family", "time", "seat", "narration", "schema",
           "command", "reverted", "chain", "payload")


class ExportError(ValueError):
    """A file that is not an export of one campaign's log."""


class Row(msgspec.Struct, frozen=True, kw_only=True):
    """One exported event (NDJSON: one line)."""

    campaign: UUID
    position: int
    type: str
    family: str
    time: str
    seat: int | None
    narration: str
    schema: int
    command: int
    reverted: bool
    chain: str
    payload: msgspec.Raw


def rows(campaign_id: UUID, log: Iterable[Entry],
         record: Record | None = None) -> Iterator[dict[str, Any]]:
    """The export's rows of a campaign's stored events (as :func:`application.log.stored_log` reads
    them); ``record`` (the campaign's now) marks the reverted ones."""
    for item in log:
        body, position = item.body, item.position
        if body is None or item.record is None:
            raise ExportError(f"event {position} of campaign {campaign_id} cannot be read: "
                              f"{item.problem}")
        yield {
            "campaign": str(campaign_id),
            "position": position,
            "type": type(item.record.event).__name__,
            "family": item.topic.partition(":")[0],
            "time": body["timestamp"],
            "seat": body["seat"],
            "narration": body["narration"],
            "schema": body["schema"],
            "command": body["command"],
            "reverted": record is not None and is_reverted(record, position),
            "chain": item.chain,
            "payload": body["event"],
        }


def to_ndjson(items: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """One line of JSON per row, keys in the order of :data:`COLUMNS`."""
    encoder = msgspec.json.Encoder(order="sorted")
    for item in items:
        yield b"{" + b",".join(
            encoder.encode(key) + b":" + encoder.encode(item[key]) for key in COLUMNS
        ) + b"}\n"


def to_parquet(items: Iterable[dict[str, Any]]) -> bytes:
    """The rows as a Parquet file (payload as JSON text, time as a UTC timestamp)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:
        raise MissingExtra("parquet", "Parquet files") from e

    encoder = msgspec.json.Encoder(order="sorted")
    columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    for item in items:
        for name in COLUMNS:
            value = item[name]
            if name == "payload":
                value = encoder.encode(value).decode()
            elif name == "time":
                value = msgspec.convert(value, datetime)
            columns[name].append(value)
    schema = pa.schema([
        ("campaign", pa.string()), ("position", pa.int64()), ("type", pa.string()),
        ("family", pa.string()), ("time", pa.timestamp("us", tz="UTC")), ("seat", pa.int64()),
        ("narration", pa.string()), ("schema", pa.int32()), ("command", pa.int64()),
        ("reverted", pa.bool_()), ("chain", pa.string()), ("payload", pa.string()),
    ])
    table = pa.Table.from_pydict(columns, schema=schema)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def export(campaign_id: UUID, log: Iterable[Entry], record: Record | None,
           fmt: Format) -> bytes:
    """The whole export of a campaign's log in ``fmt``."""
    items = rows(campaign_id, log, record)
    if fmt == "parquet":
        return to_parquet(items)
    return b"".join(to_ndjson(items))


# -- reading an export back ---------------------------------------------------------------------


def detect(path: Path) -> Format:
    """The format of an export file, from its first bytes."""
    with path.open("rb") as f:
        return "parquet" if f.read(4) == b"PAR1" else "ndjson"


def read(path: Path, fmt: Format | None = None) -> tuple[UUID, list[Entry]]:
    """The campaign id and the events of an export file (ExportError if it is not one).

    Each event is rebuilt as it was stored — its JSON body, decoded the way the store decodes
    it (older shapes upcast) — for :func:`application.audit.verify` to check against the campaign id
    and for an import to store again as it was.
    """
    fmt = fmt or detect(path)
    raw_rows = _parquet_rows(path) if fmt == "parquet" else _ndjson_rows(path)
    mapper = MsgspecMapper()
    campaign: UUID | None = None
    log: list[Entry] = []
    for number, row in enumerate(raw_rows, start=1):
        if campaign is None:
            campaign = row.campaign
        elif row.campaign != campaign:
            raise ExportError(f"row {number} belongs to campaign {row.campaign}, not {campaign}")
        try:
            payload = msgspec.json.decode(row.payload)
        except msgspec.DecodeError as e:
            raise ExportError(f"row {number} (event {row.position}): {e}") from None
        body = {"timestamp": row.time, "seat": row.seat, "narration": row.narration,
                "schema": row.schema, "command": row.command, "event": payload,
                "chain": row.chain}
        plain = msgspec.json.encode(body)
        stored = StoredEvent(originator_id=campaign, originator_version=row.position,
                             topic=f"{row.family}:{row.type}", state=plain)
        log.append(entry(mapper, stored, plain))
    if campaign is None:
        raise ExportError(f"{path} holds no event")
    return campaign, log


def _ndjson_rows(path: Path) -> Iterator[Row]:
    decoder = msgspec.json.Decoder(Row)
    with path.open("rb") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                yield decoder.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError) as e:
                raise ExportError(f"line {number} of {path}: {e}") from None


def _parquet_rows(path: Path) -> Iterator[Row]:
    try:
        import pyarrow.parquet as pq
    except ImportError as e:
        raise MissingExtra("parquet", "Parquet files") from e

    try:
        table = pq.read_table(path)
    except Exception as e:
        raise ExportError(f"{path} is not a readable Parquet file: {e}") from None
    missing = [name for name in COLUMNS if name not in table.column_names]
    if missing:
        raise ExportError(f"{path} lacks the columns {', '.join(missing)}")
    for number, item in enumerate(table.to_pylist(), start=1):
        time = item["time"]
        try:
            yield msgspec.convert({
                **item,
                "time": msgspec.to_builtins(time) if isinstance(time, datetime) else time,
                "payload": msgspec.Raw((item["payload"] or "").encode()),
            }, Row)
        except msgspec.ValidationError as e:
            raise ExportError(f"row {number} of {path}: {e}") from None
