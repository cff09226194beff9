"""application.mapper: events stored as msgspec JSON, typed back per topic."""

from __future__ import annotations

import json
import zlib
from datetime import UTC, datetime, timedelta, timezone
from uuid import UUID, uuid4

import pytest
from eventsourcing.compressor import ZlibCompressor
from eventsourcing.persistence import MapperDeserialisationError, StoredEvent

from application.mapper import MsgspecMapper, SnapshotDecodeError, topic
from application.records import Recorded, Snapshot
from domain.capes.events import CampaignClosed, PlayerSeated
from domain.editions import get_edition


@pytest.fixture
def mapper() -> MsgspecMapper:
    return MsgspecMapper()


def seated(**changes: object) -> Recorded[PlayerSeated]:
    fields: dict[str, object] = {
        "originator_id": uuid4(),
        "originator_version": 4,
        "timestamp": datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
        "seat": 2,
        "narration": "Brook takes a seat.",
        "event": PlayerSeated(seat=2, name="Brook", tokens=1),
    }
    fields.update(changes)
    return Recorded(**fields)  # type: ignore[arg-type]


def test_an_envelope_round_trips_with_its_uuid_and_datetime(mapper: MsgspecMapper) -> None:
    record = seated()

    stored = mapper.to_stored_event(record)
    back = mapper.to_domain_event(stored)

    assert back == record
    assert isinstance(back.originator_id, UUID)
    assert back.timestamp.tzinfo is not None
    assert back.timestamp.microsecond == 678901


def test_the_stored_topic_is_the_edition_and_the_event_class(mapper: MsgspecMapper) -> None:
    assert mapper.to_stored_event(seated()).topic == "capes:PlayerSeated"
    assert topic(CampaignClosed) == "capes:CampaignClosed"


def test_the_stored_state_is_readable_json_without_the_column_values(
    mapper: MsgspecMapper,
) -> None:
    stored = mapper.to_stored_event(seated())

    body = json.loads(stored.state)

    assert body["event"] == {"type": "PlayerSeated", "seat": 2, "name": "Brook", "tokens": 1}
    assert body["timestamp"] == "2025-01-02T03:04:05.678901Z"
    assert "originator_id" not in body and "originator_version" not in body


def test_a_text_originator_id_from_the_store_comes_back_as_a_uuid(
    mapper: MsgspecMapper,
) -> None:
    record = seated()
    stored = mapper.to_stored_event(record)
    as_text = StoredEvent(
        originator_id=str(stored.originator_id),
        originator_version=stored.originator_version,
        topic=stored.topic,
        state=stored.state,
    )

    assert mapper.to_domain_event(as_text) == record


def test_a_non_utc_timestamp_keeps_its_instant(mapper: MsgspecMapper) -> None:
    local = datetime(2025, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2)))

    back = mapper.to_domain_event(mapper.to_stored_event(seated(timestamp=local)))

    assert back.timestamp == local


def a_snapshot() -> Snapshot:
    now = datetime.now(UTC)
    return Snapshot(
        originator_id=uuid4(), originator_version=100, timestamp=now, created_on=now,
        edition="capes", rules_version="capes-1.0", state=get_edition("capes").initial_state(),
    )


def test_a_snapshot_round_trips_with_the_editions_state_type(mapper: MsgspecMapper) -> None:
    snapshot = a_snapshot()

    stored = mapper.to_stored_event(snapshot)

    assert stored.topic == "snapshot:capes"
    assert mapper.to_domain_event(stored) == snapshot
    assert type(mapper.to_domain_event(stored).state) is type(snapshot.state)


def test_a_snapshot_is_stored_compressed_and_one_stored_as_json_before_still_loads(
    mapper: MsgspecMapper,
) -> None:
    snapshot = a_snapshot()

    stored = mapper.to_stored_event(snapshot)
    as_json = zlib.decompress(stored.state)

    assert json.loads(as_json)["edition"] == "capes"
    assert len(stored.state) < len(as_json)
    before = StoredEvent(stored.originator_id, 100, stored.topic, as_json)  # an older server's
    assert mapper.to_domain_event(before) == snapshot


def test_a_store_with_its_own_compressor_compresses_a_snapshot_once() -> None:
    compressing = MsgspecMapper(compressor=ZlibCompressor())
    snapshot = a_snapshot()

    stored = compressing.to_stored_event(snapshot)

    assert json.loads(zlib.decompress(stored.state))["edition"] == "capes"
    assert compressing.to_domain_event(stored) == snapshot


def test_a_damaged_compressed_snapshot_is_a_snapshot_decode_error(mapper: MsgspecMapper) -> None:
    stored = mapper.to_stored_event(a_snapshot())
    damaged = StoredEvent(stored.originator_id, 100, stored.topic, stored.state[:-8])

    with pytest.raises(SnapshotDecodeError):
        mapper.to_domain_event(damaged)


def test_an_unknown_topic_or_a_bad_body_cannot_be_decoded(mapper: MsgspecMapper) -> None:
    good = mapper.to_stored_event(seated())

    for bad in (
        StoredEvent(good.originator_id, 1, "capes:NoSuchEvent", good.state),
        StoredEvent(good.originator_id, 1, "nowhere:PlayerSeated", good.state),
        StoredEvent(good.originator_id, 1, "capes:PlayerSeated", b'{"event": 1}'),
    ):
        with pytest.raises(MapperDeserialisationError):
            mapper.to_domain_event(bad)
    with pytest.raises(SnapshotDecodeError):
        mapper.to_domain_event(StoredEvent(good.originator_id, 1, "snapshot:capes", b"{}"))


def test_only_envelopes_and_snapshots_can_be_stored(mapper: MsgspecMapper) -> None:
    with pytest.raises(TypeError):
        mapper.to_stored_event(PlayerSeated(seat=1, name="Ada", tokens=0))
