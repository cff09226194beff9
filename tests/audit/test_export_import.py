"""Export and import (R-FAIR-6, R-FAIR-7): the chain travels with the events; an import is
verified before anything is stored, and proves the original's chain."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any
from uuid import UUID

import pyarrow.parquet as pq
import pytest
from fair_play import new_table, play_until, played, sqlite_env

from application.audit import stored_campaign_ids, stored_entries, verify, verify_stored
from application.campaigns import Campaigns
from application.transfer import COLUMNS, read
from cli.main import main
from domain.record.commands import Undo
from domain.record.events import ImportedFrom


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    db = tmp_path / "transfer.sqlite"
    monkeypatch.setenv("CAPES_DB", str(db))
    monkeypatch.delenv("CAPES_DATABASE_URL", raising=False)
    return sqlite_env(db)


def _played(env: dict[str, str], scenes: int = 1) -> UUID:
    app = Campaigns(env)
    try:
        return played(app, scenes=scenes, min_rolls=2)
    finally:
        app.close()


def _export(campaign: UUID, path: Path, fmt: str, capsys: Any) -> None:
    assert main(["export", str(campaign), "--format", fmt, "--output", str(path)]) == 0
    capsys.readouterr()


def canonical(row: dict[str, Any]) -> bytes:
    """The bytes an export's row adds to the chain, by the README's recipe ("The hash
    chain")."""
    hashed = {"position": row["position"], "timestamp": row["time"], "seat": row["seat"],
              "narration": row["narration"], "schema": row["schema"],
              "command": row["command"], "event": row["payload"]}
    return json.dumps(hashed, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def test_an_ndjson_export_has_one_event_per_line_with_its_chain(
    store: dict[str, str], tmp_path: Path, capsys: Any,
) -> None:
    """R-FAIR-6: anyone can recompute the whole chain from the export with any JSON library."""
    campaign = _played(store)
    path = tmp_path / "campaign.ndjson"
    _export(campaign, path, "ndjson", capsys)
    lines = path.read_text(encoding="utf-8").splitlines()
    app = Campaigns(store)
    log = app.history(campaign, limit=100_000)
    app.close()
    assert len(lines) == len(log)
    previous = campaign.bytes
    for line, record in zip(lines, log, strict=True):
        row = json.loads(line)
        assert list(row) == list(COLUMNS)
        assert row["campaign"] == str(campaign)
        assert (row["position"], row["type"]) == (record.originator_version,
                                                  type(record.event).__name__)
        assert row["payload"]["type"] == row["type"]
        previous = hashlib.sha256(previous + canonical(row)).digest()
        assert previous.hex() == row["chain"] == record.chain, row["position"]


def test_the_http_export_is_the_cli_export(
    store: dict[str, str], tmp_path: Path, capsys: Any,
) -> None:
    """The route and the command write the same bytes; parquet over HTTP too."""
    from litestar.testing import TestClient

    from api.app import create_app
    from application.credentials import Keyring

    campaigns = Campaigns(store)
    keyring = Keyring(dict(campaigns.env))
    campaign = played(campaigns, scenes=1, min_rolls=1)
    token = keyring.open_campaign(campaign)
    path = tmp_path / "cli.ndjson"
    _export(campaign, path, "ndjson", capsys)
    with TestClient(create_app(campaigns, keyring, rate_limit=0)) as client:
        got = client.get(f"/campaigns/{campaign}/export", params={"format": "ndjson"},
                         headers={"Authorization": f"Bearer {token}"})
        assert got.status_code == 200
        assert got.headers["content-type"].startswith("application/x-ndjson")
        assert got.content == path.read_bytes()
        parquet = client.get(f"/campaigns/{campaign}/export", params={"format": "parquet"},
                             headers={"Authorization": f"Bearer {token}"})
        assert parquet.status_code == 200 and parquet.content[:4] == b"PAR1"
        assert client.get(f"/campaigns/{campaign}/export").status_code == 401


def test_a_parquet_export_has_the_same_rows_and_reads_back_the_same_events(
    store: dict[str, str], tmp_path: Path, capsys: Any,
) -> None:
    """R-FAIR-7: pyarrow reads it; the events it holds are exactly the stored ones."""
    campaign = _played(store)
    _export(campaign, tmp_path / "c.ndjson", "ndjson", capsys)
    _export(campaign, tmp_path / "c.parquet", "parquet", capsys)
    table = pq.read_table(tmp_path / "c.parquet")
    assert table.column_names == list(COLUMNS)
    rows = table.to_pylist()
    lines = [json.loads(line) for line in (tmp_path / "c.ndjson").read_text().splitlines()]
    assert [(r["position"], r["type"], r["chain"]) for r in rows] == [
        (r["position"], r["type"], r["chain"]) for r in lines]
    assert [json.loads(r["payload"]) for r in rows] == [r["payload"] for r in lines]
    source, from_parquet = read(tmp_path / "c.parquet")
    _, from_ndjson = read(tmp_path / "c.ndjson")
    assert source == campaign and from_parquet == from_ndjson
    app = Campaigns(store)
    assert [e.record for e in from_parquet] == app.history(campaign, limit=100_000)
    assert [(e.body, e.canonical) for e in from_parquet] == [
        (e.body, e.canonical) for e in stored_entries(app, campaign)], "stored as it was"
    app.close()
    assert verify(source, from_parquet).ok


@pytest.mark.parametrize("fmt", ["ndjson", "parquet"])
def test_an_import_verifies_first_then_stores_a_rechained_copy_under_a_new_id(
    fmt: str, store: dict[str, str], tmp_path: Path, capsys: Any,
) -> None:
    """R-FAIR-7: the copy proves the original's chain, and plays on with its own dice."""
    campaign = _played(store)
    path = tmp_path / f"campaign.{fmt}"
    _export(campaign, path, fmt, capsys)
    assert main(["verify", "--file", str(path)]) == 0
    capsys.readouterr()
    assert main(["import", str(path)]) == 0
    out = capsys.readouterr().out
    assert "imported as campaign" in out and "owner:" in out and "seat 3 (P3):" in out
    app = Campaigns(store)
    try:
        copy = UUID(out.split("imported as campaign ")[1].split()[0])
        original = app.history(campaign, limit=100_000)
        copied = app.history(copy, limit=100_000)
        assert [r.event for r in copied[:len(original)]] == [r.event for r in original]
        assert all(a.chain != b.chain for a, b in zip(copied, original, strict=False))
        imported = copied[len(original)].event
        assert imported == ImportedFrom(source=campaign, version=len(original),
                                        chain=original[-1].chain)
        assert app.state(copy) == app.state(campaign)
        report = verify_stored(app, copy)
        assert report.ok and report.fair, report.summary()
        assert report.imported_from == ((campaign, len(original), original[-1].chain),)
        rng = random.Random(8)
        play_until(app, copy, lambda a, cid: a.state(cid).scenes_played >= 2, rng)
        assert verify_stored(app, copy).ok
    finally:
        app.close()
    assert main(["verify", str(copy)]) == 0


def test_a_tampered_export_is_refused_and_nothing_is_stored(
    store: dict[str, str], tmp_path: Path, capsys: Any,
) -> None:
    """R-FAIR-7: one die changed in the file: the import names the event and stores nothing."""
    campaign = _played(store)
    path = tmp_path / "campaign.ndjson"
    _export(campaign, path, "ndjson", capsys)
    lines = path.read_text(encoding="utf-8").splitlines()
    index = next(i for i, line in enumerate(lines) if '"type":"DieRolled"' in line)
    row = json.loads(lines[index])
    row["payload"]["rolled"] = row["payload"]["rolled"] % 6 + 1
    lines[index] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    app = Campaigns(store)
    before = stored_campaign_ids(app)
    app.close()
    assert main(["import", str(path)]) == 1
    captured = capsys.readouterr()
    assert f"event {row['position']} (DieRolled)" in captured.out
    assert "nothing was imported" in captured.err
    app = Campaigns(store)
    assert stored_campaign_ids(app) == before
    app.close()
    assert main(["verify", "--file", str(path)]) == 1


@pytest.mark.parametrize("first", [1, 0, "after it"])
def test_an_export_whose_chain_holds_over_events_that_make_no_game_imports_nothing(
    first: int | str, store: dict[str, str], tmp_path: Path, capsys: Any,
) -> None:
    """An undo of the campaign's creation, of nothing or of an event after it, chained anew so the
    file verifies: the import refuses it in one line, without a traceback (it was an
    ``assert``'s, which ``python -O`` would not even have stopped), and stores nothing."""
    app = Campaigns(store)
    campaign = new_table(app)
    app.execute(campaign, Undo(seat=3))
    before = stored_campaign_ids(app)
    app.close()
    path = tmp_path / "campaign.ndjson"
    _export(campaign, path, "ndjson", capsys)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    undone = next(row for row in rows if row["type"] == "Undone")
    undone["payload"]["first"] = undone["position"] + 1 if first == "after it" else first
    previous = campaign.bytes
    for row in rows:
        previous = hashlib.sha256(previous + canonical(row)).digest()
        row["chain"] = previous.hex()
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert main(["verify", "--file", str(path)]) == 0, "the chain holds"
    capsys.readouterr()
    assert main(["import", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith("nothing was imported: "), captured.err
    assert len(captured.err.strip().splitlines()) == 1, captured.err
    assert f"event {undone['position']} reverts" in captured.err
    app = Campaigns(store)
    assert stored_campaign_ids(app) == before
    app.close()


def test_an_export_taken_in_the_middle_of_a_scene_imports_with_fresh_dice(
    store: dict[str, str], tmp_path: Path, capsys: Any,
) -> None:
    """R-FAIR-1, R-FAIR-7: the source's secret seed stays with it; the copy commits anew."""
    app = Campaigns(store)

    def rolled_in_a_scene(app: Campaigns, campaign: UUID) -> bool:
        dice = app.get(campaign).record.dice
        return dice is not None and dice.closed

    def rolled_or_ended(app: Campaigns, campaign: UUID) -> bool:
        return rolled_in_a_scene(app, campaign) or app.state(campaign).scenes_played > 0

    # A roll in the first scene: random play may end a scene before anyone rolls (a turn can
    # end without acting, R-STAKE-4); then a fresh campaign is tried.
    rng = random.Random(1)
    for _ in range(40):
        campaign = new_table(app)
        if play_until(app, campaign, rolled_or_ended, rng) and rolled_in_a_scene(app, campaign):
            break
    app.close()
    path = tmp_path / "mid.ndjson"
    _export(campaign, path, "ndjson", capsys)
    assert main(["import", str(path)]) == 0
    out = capsys.readouterr().out
    copy = UUID(out.split("imported as campaign ")[1].split()[0])
    app = Campaigns(store)
    try:
        names = [type(r.event).__name__ for r in app.history(copy, limit=100_000)]
        # Then the seats' new tokens, issued by the owner (R-X-REC-4).
        tail = [n for n in names if n != "SeatTokenIssued"][-2:]
        assert tail == ["ImportedFrom", "DiceCommitted"]
        assert names[-3:] == ["SeatTokenIssued"] * 3
        report = verify_stored(app, copy)
        assert report.ok and not report.fair, report.summary()
        assert [s.status for s in report.scenes] == ["superseded", "pending"]
        ended = play_until(app, copy, lambda a, cid: a.state(cid).scenes_played >= 1, rng)
        report = verify_stored(app, copy)
        assert report.ok, report.summary()
        if ended:  # random play may get stuck; when the scene ends, its new dice verify
            assert report.scenes[1].status == "verified"
    finally:
        app.close()


def test_the_demo_campaign_verifies_exports_and_imports(
    store: dict[str, str], tmp_path: Path, capsys: Any,
) -> None:
    """R-FAIR-7: scripted dice are reported as not derived, and nothing else is wrong."""
    assert main(["demo"]) == 0
    capsys.readouterr()
    assert main(["verify"]) == 0
    out = capsys.readouterr().out
    assert ": OK" in out and "not provably fair: dice were not derived" in out
    assert main(["verify", "--strict"]) == 1
    capsys.readouterr()
    app = Campaigns(store)
    (campaign,) = stored_campaign_ids(app)
    app.close()
    _export(campaign, tmp_path / "demo.parquet", "parquet", capsys)
    assert main(["import", str(tmp_path / "demo.parquet")]) == 0
    assert main(["verify"]) == 0
