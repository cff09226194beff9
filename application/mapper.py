"""Stores events through msgspec instead of eventsourcing's stdlib-JSON transcoder.

The library's default mapper passes ``vars(event)`` through a transcoder, which msgspec Structs
do not fit (and a plain msgspec transcoder would turn UUIDs and datetimes into strings). This
mapper encodes the :class:`~application.records.Recorded` envelope itself, minus ``originator_id``
and
``originator_version`` (the store keeps those in columns), as JSON: readable in the database,
and msgspec decodes it at hundreds of thousands of events per second.

Topics are ``"{edition}:{EventClassName}"`` (e.g. ``capes:PlayerSeated``), so notification
readers can select events by kind, and ``"snapshot:{edition}"`` for snapshots. Each topic gets
its own cached decoder, typed for exactly that event class (or that edition's state), built
from ``get_edition(name).event_types``: any registered edition works with no change here.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from datetime import datetime
from typing import Any, Generic
from uuid import UUID

import msgspec
from eventsourcing.persistence import (
    Cipher,
    Compressor,
    Mapper,
    MapperDeserialisationError,
    StoredEvent,
    Transcoder,
)

from domain.editions import get_edition
from domain.record import RECORD_EVENT_TYPES, Record

from .records import RECORD, EventT, Recorded, Snapshot, family_of

__all__ = ["SNAPSHOT_TOPIC_PREFIX", "EventDecodeError", "MsgspecMapper", "Recorded",
           "SnapshotDecodeError", "topic"]

SNAPSHOT_TOPIC_PREFIX = "snapshot:"
#: zlib's level for a snapshot's bytes when the store has no compressor of its own (0: none).
#: Why: a snapshot is a campaign's whole state with the past states an undo may return to,
#: 13 to 26 KB of JSON at the game mix's hundredth events, against some 250 bytes an event:
#: each a row spread over several pages of the library's snapshots table (which keeps its
#: rows in its index), written to the store's log and copied by its checkpoints. Level 1
#: makes them a seventh of that (12,860 bytes to 1,817) for some 27 µs of the writer's CPU
#: each (one every hundred events). It did not shorten the half load's tail (issue 15's
#: probes after run AY): it is kept for the disk and the log it saves.
SNAPSHOT_LEVEL = 1
#: The first byte of zlib's output (its header): a snapshot stored as JSON starts with "{",
#: so snapshots stored before they were compressed still load.
ZLIB = b"x"


class SnapshotDecodeError(MapperDeserialisationError):
    """A stored snapshot no longer decodes (its state's shape changed): replay events instead."""


class EventDecodeError(MapperDeserialisationError):
    """A stored event does not decode (the store was damaged or edited): it names the event."""

    def __init__(self, message: str, originator_id: UUID, originator_version: int) -> None:
        super().__init__(message)
        self.originator_id = originator_id
        self.originator_version = originator_version


class _Body(msgspec.Struct, Generic[EventT], frozen=True, kw_only=True):
    """What is stored of an envelope: all but the columns the store keeps itself."""

    timestamp: datetime
    seat: int | None
    narration: str
    schema: int
    command: int = 0
    event: EventT
    chain: str = ""


class _Hashed(msgspec.Struct, Generic[EventT], frozen=True):
    """What the hash chain hashes of an envelope (:mod:`application.chain`): the fields of
    :class:`_Body` but its chain, in its order, then the position; encoded with every key
    sorted."""

    timestamp: datetime
    seat: int | None
    narration: str
    schema: int
    command: int
    event: EventT
    position: int


class _SnapshotBody(msgspec.Struct, Generic[EventT], frozen=True, kw_only=True):
    timestamp: datetime
    created_on: datetime
    edition: str
    rules_version: str
    state: EventT
    record: Record = Record()
    chain: str = ""
    past: tuple[tuple[int, EventT], ...] = ()


def topic(event_type: type[Any]) -> str:
    """The stored topic of a domain event class: ``"{edition}:{ClassName}"``."""
    return f"{family_of(event_type)}:{event_type.__name__}"


class MsgspecMapper(Mapper[UUID]):
    """Maps :class:`Recorded` envelopes and :class:`Snapshot` objects to stored events.

    Takes the same arguments as eventsourcing's ``Mapper`` (so ``MAPPER_TOPIC`` can name it);
    the transcoder is accepted and ignored. Compression and encryption, when configured, apply
    to the encoded bytes as usual.
    """

    def __init__(
        self,
        transcoder: Transcoder | None = None,
        compressor: Compressor | None = None,
        cipher: Cipher | None = None,
    ) -> None:
        super().__init__(transcoder=transcoder, compressor=compressor, cipher=cipher)  # type: ignore[arg-type]
        self._encoder = msgspec.json.Encoder()
        self._sorted = msgspec.json.Encoder(order="sorted")
        self._topics: dict[type[Any], str] = {}
        self._decoders: dict[str, Callable[[bytes], Any]] = {}
        self._body_types: dict[str, Any] = {}
        self._schemas: dict[str, int] = {}

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        """Encode an envelope or a snapshot (TypeError for anything else)."""
        body: msgspec.Struct
        if isinstance(domain_event, Recorded):
            stored_topic, body = self._body(domain_event)
        elif isinstance(domain_event, Snapshot):
            stored_topic = SNAPSHOT_TOPIC_PREFIX + domain_event.edition
            body = _SnapshotBody(
                timestamp=domain_event.timestamp,
                created_on=domain_event.created_on,
                edition=domain_event.edition,
                rules_version=domain_event.rules_version,
                state=domain_event.state,
                record=domain_event.record,
                chain=domain_event.chain,
                past=domain_event.past,
            )
        else:
            raise TypeError(f"cannot store {type(domain_event).__qualname__}: not Recorded")
        data = self._encoder.encode(body)
        if self.compressor:
            data = self.compressor.compress(data)
        elif SNAPSHOT_LEVEL and stored_topic.startswith(SNAPSHOT_TOPIC_PREFIX):
            data = zlib.compress(data, SNAPSHOT_LEVEL)
        if self.cipher:
            data = self.cipher.encrypt(data)
        return StoredEvent(
            originator_id=domain_event.originator_id,
            originator_version=domain_event.originator_version,
            topic=stored_topic,
            state=data,
        )

    def canonical(self, record: Recorded[Any]) -> bytes | None:
        """The canonical bytes of ``record`` as this mapper stores it (R-FAIR-6): what
        ``chain.canonical`` makes of its stored JSON, encoded at once instead of stored, read
        back and encoded again (a command's events are chained on the writer's path). The
        same fields and values as :meth:`to_stored_event`, so the same JSON, keys sorted.

        None for an event holding a mapping whose keys are not strings (a conflict's claims
        by side): JSON writes them as strings, sorted as strings, which only the stored JSON
        read back gives."""
        _, body = self._body(record)
        # Its fields but the chain (the last), in their order, then the position.
        hashed = _Hashed(*(*msgspec.structs.astuple(body)[:-1], record.originator_version))
        try:
            return self._sorted.encode(hashed)
        except TypeError:
            return None

    def _body(self, record: Recorded[Any]) -> tuple[str, _Body[Any]]:
        """The topic of ``record``'s event, and what is stored of ``record``."""
        event_type = type(record.event)
        stored_topic = self._topics.get(event_type) or self._topic_for(event_type)
        return stored_topic, _Body(
            timestamp=record.timestamp,
            seat=record.seat,
            narration=record.narration,
            # Written in the current shape of its type, whatever the envelope says.
            schema=self.current_schema(stored_topic),
            command=record.command,
            event=record.event,
            chain=record.chain,
        )

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        """Decode a stored event into a :class:`Recorded` envelope or a :class:`Snapshot`."""
        stored_topic = stored_event.topic
        decode = self._decoders.get(stored_topic) or self._decoder_for(stored_topic)
        data = stored_event.state
        try:
            if self.cipher:
                data = self.cipher.decrypt(data)
            if self.compressor:
                data = self.compressor.decompress(data)
            elif data[:1] == ZLIB and stored_topic.startswith(SNAPSHOT_TOPIC_PREFIX):
                data = zlib.decompress(data)
            try:
                body = decode(data)
            except msgspec.ValidationError:
                if stored_topic.startswith(SNAPSHOT_TOPIC_PREFIX):
                    raise
                body = self._upcast(stored_topic, data)  # an older shape, perhaps
            if isinstance(body, _Body) and body.schema < self.current_schema(stored_topic):
                body = self._upcast(stored_topic, data)
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError, zlib.error) as e:
            message = (f"cannot decode {stored_topic} {stored_event.originator_id}"
                       f" v{stored_event.originator_version}: {e}")
            if stored_topic.startswith(SNAPSHOT_TOPIC_PREFIX):
                raise SnapshotDecodeError(message) from e
            originator = stored_event.originator_id
            raise EventDecodeError(
                message, originator if isinstance(originator, UUID) else UUID(str(originator)),
                stored_event.originator_version) from e
        originator_id = stored_event.originator_id
        if not isinstance(originator_id, UUID):
            originator_id = UUID(originator_id)
        if isinstance(body, _Body):
            return Recorded(
                originator_id=originator_id,
                originator_version=stored_event.originator_version,
                timestamp=body.timestamp,
                seat=body.seat,
                narration=body.narration,
                schema=body.schema,
                command=body.command,
                event=body.event,
                chain=body.chain,
            )
        return Snapshot(
            originator_id=originator_id,
            originator_version=stored_event.originator_version,
            timestamp=body.timestamp,
            created_on=body.created_on,
            edition=body.edition,
            rules_version=body.rules_version,
            state=body.state,
            record=body.record,
            chain=body.chain,
            past=body.past,
        )

    def _topic_for(self, event_type: type[Any]) -> str:
        # TypeError here (an event of no registered edition) is a programming error.
        stored_topic = self._topics[event_type] = topic(event_type)
        return stored_topic

    def _decoder_for(self, stored_topic: str) -> Callable[[bytes], Any]:
        """Build and cache the decoder of one topic, typed for exactly its class."""
        body_type: Any = _Body
        snapshot_type: Any = _SnapshotBody
        try:
            if stored_topic.startswith(SNAPSHOT_TOPIC_PREFIX):
                edition = get_edition(stored_topic.removeprefix(SNAPSHOT_TOPIC_PREFIX))
                body_type = snapshot_type[type(edition.initial_state())]
            else:
                family, _, class_name = stored_topic.partition(":")
                types = RECORD_EVENT_TYPES if family == RECORD else get_edition(family).event_types
                by_name = {cls.__name__: cls for cls in types}
                body_type = body_type[by_name[class_name]]
        except KeyError as e:
            raise MapperDeserialisationError(f"unknown topic {stored_topic!r}: {e}") from None
        self._body_types[stored_topic] = body_type
        if not stored_topic.startswith(SNAPSHOT_TOPIC_PREFIX):
            family, _, class_name = stored_topic.partition(":")
            self._schemas[stored_topic] = (
                1 if family == RECORD else get_edition(family).schema_version(by_name[class_name])
            )
        decode = self._decoders[stored_topic] = msgspec.json.Decoder(body_type).decode
        return decode

    def current_schema(self, stored_topic: str) -> int:
        """The schema version events of this topic are written with now."""
        if stored_topic not in self._schemas:
            self._decoder_for(stored_topic)
        return self._schemas[stored_topic]

    def _upcast(self, stored_topic: str, data: bytes) -> Any:
        """Decode an event stored in an older shape, upcast to the current one (see
        ``domain.capes.upcasts``)."""
        raw = msgspec.json.decode(data)
        current = self.current_schema(stored_topic)
        family, _, class_name = stored_topic.partition(":")
        schema = int(raw.get("schema", 1))
        if schema < current and family != RECORD:
            raw["event"] = get_edition(family).upcast(class_name, schema, raw["event"])
        raw["schema"] = current
        return msgspec.convert(raw, self._body_types[stored_topic])
