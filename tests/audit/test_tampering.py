"""``capes verify`` catches every way of editing a SQLite store behind the server's back and
names the event (R-FAIR-6, R-FAIR-7); an untouched campaign passes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import msgspec
import pytest
from fair_play import (
    blob,
    delete,
    forge,
    played,
    positions_of,
    rewrite_raw,
    sqlite_env,
    write,
)

from application.audit import stored_entries, verify, verify_stored
from application.campaigns import Campaigns
from cli.main import main
from domain.capes import commands as c
from domain.record.events import DiceRevealed


class Stored:
    """A campaign with a revealed scene of derived dice, in a SQLite file."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.env = sqlite_env(db)
        app = Campaigns(self.env)
        self.id = played(app, scenes=1, min_rolls=3)
        self.log = app.history(self.id, limit=100_000)
        app.close()

    def first(self, name: str) -> int:
        return next(positions_of(self.log, name))

    def verify(self, capsys: Any, *args: str) -> tuple[int, str]:
        status = main(["verify", str(self.id), *args])
        return status, capsys.readouterr().out

    def report(self) -> Any:
        app = Campaigns(self.env)
        try:
            return verify_stored(app, self.id)
        finally:
            app.close()


@pytest.fixture
def stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stored]:
    db = tmp_path / "audit.sqlite"
    monkeypatch.setenv("CAPES_DB", str(db))
    monkeypatch.delenv("CAPES_DATABASE_URL", raising=False)
    yield Stored(db)


def test_an_untouched_campaign_verifies(stored: Stored, capsys: Any) -> None:
    """R-FAIR-7: exit status 0, the chain head printed, every die checked."""
    status, out = stored.verify(capsys)
    assert status == 0, out
    assert f"campaign {stored.id}: OK — {len(stored.log)} events" in out
    assert f"chain head {len(stored.log)}:{stored.log[-1].chain}" in out
    assert "every die was derived and checked" in out
    assert stored.verify(capsys, "--strict")[0] == 0


def test_flipping_one_byte_of_one_stored_event_is_caught_and_the_event_named(
    stored: Stored, capsys: Any,
) -> None:
    """R-FAIR-6: a die's value changed in the database."""
    position = stored.first("DieRolled")
    topic, state = blob(stored.db, stored.id, position)
    rolled = re.search(rb'"rolled":(\d)', state)
    assert rolled is not None
    at = rolled.start(1)
    flipped = state[:at] + bytes([state[at] ^ 0x01]) + state[at + 1:]
    write(stored.db, stored.id, position, topic, flipped)
    status, out = stored.verify(capsys)
    assert status == 1
    assert "FAILED" in out and f"event {position} (DieRolled)" in out
    assert "hash chain does not match" in out


def test_every_single_byte_flip_of_an_event_is_caught_at_that_event(stored: Stored) -> None:
    """R-FAIR-6: wherever the byte is — a value, a key, a quote, the chain itself."""
    position = stored.first("DiceCommitted")
    topic, state = blob(stored.db, stored.id, position)
    for at in range(len(state)):
        write(stored.db, stored.id, position, topic,
              state[:at] + bytes([state[at] ^ 0x01]) + state[at + 1:])
        report = stored.report()
        assert not report.ok, f"byte {at} of {state!r}"
        assert report.discrepancy.position == position, (at, report.discrepancy)
    write(stored.db, stored.id, position, topic, state)
    assert stored.report().ok


def test_deleting_an_event_is_caught_and_the_missing_event_named(
    stored: Stored, capsys: Any,
) -> None:
    """R-FAIR-6: a gap in the positions."""
    position = stored.first("SeedsClosed")
    delete(stored.db, stored.id, position)
    status, out = stored.verify(capsys)
    assert status == 1
    assert f"event {position} is missing" in out


def test_deleting_the_last_events_is_caught_against_a_head_kept_from_before(
    stored: Stored, capsys: Any,
) -> None:
    """R-FAIR-6: cutting the end off leaves a shorter valid chain; a known head catches it."""
    app = Campaigns(stored.env)
    last = app.execute(stored.id, c.Narrate(seat=1, text="The last word")).events[-1]
    app.close()
    head = f"{last.originator_version}:{last.chain}"
    assert stored.verify(capsys, "--head", head)[0] == 0
    delete(stored.db, stored.id, last.originator_version)
    status, out = stored.verify(capsys, "--head", head)
    assert status == 1
    assert f"but --head knows event {last.originator_version}" in out


def test_a_malformed_head_is_refused_as_a_usage_error_not_reported_as_a_rewritten_log(
    stored: Stored, capsys: Any,
) -> None:
    """R-FAIR-6: a head is evidence; one that is not POSITION:CHAIN is not compared at all."""
    for malformed in (f"\u00b2:{'a' * 64}", f"3:{'z' * 64}", f"0:{'a' * 64}"):
        with pytest.raises(SystemExit) as exited:
            stored.verify(capsys, "--head", malformed)
        assert exited.value.code == 2
        assert "--head: a head" in capsys.readouterr().err


def test_reordering_two_events_is_caught_at_the_first_of_them(
    stored: Stored, capsys: Any,
) -> None:
    """R-FAIR-6: the positions are inside the hash, and so is the previous chain."""
    position = stored.first("DieRolled")
    one, two = blob(stored.db, stored.id, position - 1), blob(stored.db, stored.id, position)
    write(stored.db, stored.id, position - 1, *two)
    write(stored.db, stored.id, position, *one)
    status, out = stored.verify(capsys)
    assert status == 1
    assert f"event {position - 1} (DieRolled)" in out and "hash chain does not match" in out


def test_changing_a_revealed_seed_is_caught(stored: Stored, capsys: Any) -> None:
    """R-FAIR-6: edited in place, the chain breaks at the reveal."""
    position = stored.first("DiceRevealed")
    topic, state = blob(stored.db, stored.id, position)
    seed = msgspec.json.decode(state)["event"]["seed"]
    other = ("0" if seed[0] != "0" else "1") + seed[1:]
    write(stored.db, stored.id, position, topic, state.replace(seed.encode(), other.encode()))
    status, out = stored.verify(capsys)
    assert status == 1
    assert f"event {position} (DiceRevealed)" in out


def test_a_revealed_seed_changed_by_a_forger_who_rewrites_the_chain_fails_its_commitment(
    stored: Stored, capsys: Any,
) -> None:
    """R-FAIR-5, R-FAIR-7: the chain can be recomputed, a SHA-256 preimage cannot be found."""
    position = stored.first("DiceRevealed")
    app = Campaigns(stored.env)
    forge(stored.db, app, stored.id, position, lambda r: msgspec.structs.replace(
        r, event=DiceRevealed(scene=r.event.scene, seed="00" * 32)))
    app.close()
    status, out = stored.verify(capsys)
    assert status == 1
    assert f"event {position} (DiceRevealed)" in out
    assert "not the one committed to" in out


def test_a_die_changed_by_a_forger_who_rewrites_the_chain_fails_its_recomputation(
    stored: Stored, capsys: Any,
) -> None:
    """R-FAIR-4, R-FAIR-7: the die no longer follows from the revealed seed."""
    position = stored.first("DieRolled")
    app = Campaigns(stored.env)
    forge(stored.db, app, stored.id, position, lambda r: msgspec.structs.replace(
        r, event=msgspec.structs.replace(r.event, rolled=r.event.rolled % 6 + 1)))
    app.close()
    status, out = stored.verify(capsys, "--json")
    assert status == 1
    report = msgspec.json.decode(out)
    assert report["discrepancy"]["position"] == position
    assert report["discrepancy"]["check"] == "die"
    assert report["discrepancy"]["type"] == "DieRolled"


def test_without_a_campaign_id_every_campaign_in_the_store_is_checked(
    stored: Stored, capsys: Any,
) -> None:
    """R-FAIR-7: one bad campaign fails the run; each is reported."""
    app = Campaigns(stored.env)
    second: UUID = played(app, scenes=1, min_rolls=1, seed=9)
    app.close()
    status = main(["verify"])
    out = capsys.readouterr().out
    assert status == 0 and "FAILED" not in out
    assert f"campaign {stored.id}: OK" in out and f"campaign {second}: OK" in out
    position = stored.first("DiceCommitted")
    topic, state = blob(stored.db, second, position)
    write(stored.db, second, position, topic, state.replace(b'"scene":1', b'"scene":2'))
    status = main(["verify"])
    out = capsys.readouterr().out
    assert status == 1
    assert f"campaign {stored.id}: OK" in out and f"campaign {second}: FAILED" in out


def test_an_unknown_campaign_is_an_error(stored: Stored, capsys: Any) -> None:
    assert main(["verify", "00000000-0000-0000-0000-000000000001"]) == 1
    assert "no campaign" in capsys.readouterr().err


def test_an_event_stored_in_an_older_shape_keeps_its_chain(stored: Stored, capsys: Any) -> None:
    """R-FAIR-6: the chain is over the stored JSON, so an event that newer code reads in a newer
    shape (a roll written before rolls had a counter, say) still verifies as it was written."""
    position = stored.first("DieRolled")

    def older(body: dict[str, Any]) -> dict[str, Any]:
        event = {k: v for k, v in body["event"].items() if k != "draw"}
        return {**body, "schema": 1, "event": event}

    rewrite_raw(stored.db, stored.id, position, older)
    status, out = stored.verify(capsys)
    assert "hash chain does not match" not in out
    app = Campaigns(stored.env)
    rolled = app.history(stored.id, position - 1, 1)[0]
    app.close()
    assert rolled.event.draw == 0, "read back in the current shape"
    # Without its counter the die counts as not derived, which is reported, not an error.
    assert status == 0, out
    assert "not provably fair: dice were not derived (1 of" in out


def test_cutting_the_log_below_the_latest_snapshot_is_caught(stored: Stored,
                                                             capsys: Any) -> None:
    """R-FAIR-6: the store's snapshots know the chain head of their version."""
    app = Campaigns(stored.env)
    while app.get(stored.id).version < 205:
        app.execute(stored.id, c.Narrate(seat=1, text="filler"))
    last = app.get(stored.id).version
    app.close()
    for position in range(200, last + 1):
        delete(stored.db, stored.id, position)
    status, out = stored.verify(capsys)
    assert status == 1
    snapshot = last // 100 * 100  # one every 100 events
    assert (f"the log ends at event 199, but the store's latest snapshot knows event {snapshot}: "
            "events were removed from the end") in out, out


def test_a_cut_that_splits_a_command_is_reported_as_a_cut(stored: Stored) -> None:
    """R-FAIR-6: with the scene's end kept and its reveal cut off, a known head past the end
    names the cut, not the half command it leaves behind."""
    reveal = stored.first("DiceRevealed")
    for position in range(reveal, len(stored.log) + 1):
        delete(stored.db, stored.id, position)
    app = Campaigns(stored.env)
    try:
        head = (len(stored.log), stored.log[-1].chain, "the test's copy")
        cut = verify_stored(app, stored.id, heads=[head])
        # Without the store's snapshots either (one could lie past the cut).
        alone = verify(stored.id, stored_entries(app, stored.id))
    finally:
        app.close()
    assert cut.discrepancy is not None and alone.discrepancy is not None
    assert cut.discrepancy.check == "head"
    assert (f"the log ends at event {reveal - 1}, but the test's copy knows event "
            f"{len(stored.log)}: events were removed from the end") == cut.discrepancy.message
    # Without a head that knows more, the half command is what there is to report.
    assert "without its dice revealed in the same command" in alone.discrepancy.message
