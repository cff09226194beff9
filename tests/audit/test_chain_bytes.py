"""The bytes the hash chain hashes (R-FAIR-6), made at once by the mapper on the writer's path,
are exactly those of the event's stored JSON, keys sorted, with its position: what ``capes
verify`` and anyone with an export recompute (``application.chain``). An event holding a
mapping keyed by numbers (JSON makes the keys strings, sorted as strings) is hashed from its
stored JSON instead."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest
from fair_play import MEMORY, played

from application.audit import verify_stored
from application.campaigns import Campaigns
from application.chain import canonical, stored_body
from application.mapper import MsgspecMapper
from application.records import Recorded
from scripts import liveness_capees


def envelopes(campaign: UUID, events: list[Any]) -> list[Recorded[Any]]:
    """``events`` in envelopes whose other fields vary as a command's events do."""
    at = datetime(2026, 11, 27, 19, 2, 3, 123456, tzinfo=UTC)
    return [Recorded(originator_id=campaign, originator_version=n, timestamp=at + timedelta(
        microseconds=n), seat=None if n % 5 == 0 else n % 4 + 1,
        narration="" if n % 3 else f"Line {n}: «quoted», \"escaped\" \\ and \u2603",
        command=n - n % 3, event=event) for n, event in enumerate(events, start=1)]


def test_every_event_of_a_played_campaign_hashes_the_bytes_of_its_stored_json() -> None:
    """Every event kind a played Capes campaign stores, its dice's commitments, seeds and
    reveals included, read back from the store."""
    app = Campaigns(MEMORY)
    campaign = played(app, scenes=2, min_rolls=3)
    mapper = MsgspecMapper()
    stored = app.recorder.select_events(campaign)
    assert len(stored) > 50
    direct = 0
    for item in stored:
        record = app.mapper.to_domain_event(item)
        made = mapper.canonical(record)
        if made is None:
            assert any(not isinstance(k, str) for k in keys_in(msgspec.to_builtins(
                record.event, str_keys=False))), type(record.event).__name__
            continue
        direct += 1
        assert made == canonical(json.loads(item.state), item.originator_version), \
            type(record.event).__name__
    assert direct > 0.9 * len(stored)


@pytest.mark.parametrize("seed", range(3))
def test_every_capees_event_of_random_play_hashes_the_bytes_it_is_stored_as(seed: int) -> None:
    mapper = MsgspecMapper()
    events = liveness_capees.play(seed, commands=300).table.events
    for record in envelopes(uuid4(), list(events)):
        made = mapper.canonical(record)
        assert made is None or made == canonical(
            stored_body(mapper, record), record.originator_version), type(record.event).__name__


def test_the_chain_of_a_played_campaign_still_verifies() -> None:
    """R-FAIR-6: the chain written with the direct bytes is the one ``verify`` recomputes from
    the stored JSON."""
    app = Campaigns(MEMORY)
    campaign = played(app, scenes=1, min_rolls=2)
    report = verify_stored(app, campaign)
    assert report.ok, report


def keys_in(value: Any) -> list[Any]:
    """Every key of every mapping inside ``value``."""
    if isinstance(value, dict):
        return [*value, *(k for v in value.values() for k in keys_in(v))]
    if isinstance(value, list | tuple):
        return [k for v in value for k in keys_in(v)]
    return []
