"""A store written by an earlier release opens with this one: a host upgrades in place.

``tests/fixtures/store-<commit>.sql.gz`` is the SQLite store that release's ``capes demo`` and
``capes demo --edition capees`` made (``sqlite3 store .dump | gzip``), snapshots and dice
seeds included. With this code each campaign must verify (hash chain, fair dice, and every
snapshot the old code wrote against the log's fold: ``application.audit.verify_stored``),
load as a full replay of its log does, and take new commands whose events extend the chain.
When the store's tables or an event's stored shape change, add a fixture of the release before
the change (and an upcast, ``domain/*/upcasts.py``): these tests then prove the old one still
opens.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest
from stores import MakeApp, sqlite_file

from application.aggregate import project_campaign
from application.audit import verify_stored
from application.campaigns import Campaigns
from application.config import persistence_env
from domain.capees import moves as capees_moves
from domain.capes import moves as capes_moves
from domain.errors import ChoiceRequired, DomainError

MOVES: dict[str, Any] = {"capes": capes_moves, "capees": capees_moves}
FIXTURES = sorted((Path(__file__).parent.parent / "fixtures").glob("store-*.sql.gz"))


def restored(fixture: Path, to: Path) -> Path:
    with sqlite_file(to) as db:
        db.executescript(gzip.decompress(fixture.read_bytes()).decode())
    db.close()
    return to


def some_legal_command(app: Campaigns, campaign_id: Any) -> int:
    """Play the first command the edition's candidates offer that the rules accept; the
    version it reached."""
    campaign = app.get(campaign_id)
    moves = MOVES[campaign.edition]
    for command in moves.candidates(campaign.state):
        try:
            return app.execute(campaign_id, command).version
        except ChoiceRequired as asked:
            if asked.field and asked.choices:
                choice = moves.with_choice(command, asked.field, next(iter(asked.choices)))
                try:
                    return app.execute(campaign_id, choice).version
                except DomainError:
                    continue
        except DomainError:
            continue
    raise AssertionError(f"no legal command in campaign {campaign_id}")


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_a_store_of_an_earlier_release_verifies_loads_as_replayed_and_plays_on(
    make_app: MakeApp, tmp_path: Path, fixture: Path
) -> None:
    env = persistence_env({"CAPES_DB": str(restored(fixture, tmp_path / "old.sqlite"))})
    app = make_app(env)
    campaigns = app.campaign_ids()
    assert {app.get(c).edition for c in campaigns} == {"capes", "capees"}
    for campaign_id in campaigns:
        report = verify_stored(app, campaign_id)
        assert report.ok, report.summary()
        records = app.history(campaign_id, limit=100_000)
        replayed = project_campaign(None, records)
        loaded = app.get(campaign_id)  # from the old release's snapshot
        assert replayed is not None
        assert (loaded.state, loaded.record, loaded.chain) == (
            replayed.state, replayed.record, replayed.chain)
        version = some_legal_command(app, campaign_id)
        assert version > loaded.version
        assert verify_stored(app, campaign_id).ok


def test_a_log_holding_blank_names_and_narration_from_before_still_loads_replays_moves_and_verifies(
    make_app: MakeApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any,
) -> None:
    """R-X-SRV-1 refuses names and narration of blanks alone from now on; a log that took them
    before must still load, replay, list, export, import and verify, and play on. Its events
    are written directly, as the release before stored them (no command of today gives them)."""
    from application.transfer import read
    from cli.main import main
    from domain.capes import commands as c
    from domain.capes.events import CampaignCreated, PlayerSeated
    from domain.editions import get_edition

    db = tmp_path / "old.sqlite"
    monkeypatch.setenv("CAPES_DB", str(db))
    app = make_app(persistence_env({"CAPES_DB": str(db)}))
    edition = get_edition("capes")
    campaign_id = uuid4()
    app._append(campaign_id, None, edition, (CampaignCreated(
        name="   ", edition="capes", rules_version=edition.rules_version),), None, "  ")
    app._append(campaign_id, app.get(campaign_id), edition,
                (PlayerSeated(seat=1, name="\u3000", tokens=0),), None, " \n\t")
    app.execute(campaign_id, c.SeatPlayer(name="Ben"), narration="Ben sits down.")
    app.close()

    again = make_app(persistence_env({"CAPES_DB": str(db)}))
    try:
        loaded = again.get(campaign_id)
        assert loaded.state.name == "   "
        assert [p.name for p in loaded.state.players] == ["\u3000", "Ben"]
        assert [r.narration for r in again.history(campaign_id)] == [
            "  ", " \n\t", "Ben sits down."]
        replayed = project_campaign(None, again.history(campaign_id, limit=100_000))
        assert replayed is not None and replayed.state == loaded.state
        assert verify_stored(again, campaign_id).ok
        # And it plays on: an ability stored with a name of blanks can still be named.
        assert msgspec.json.decode(
            b'{"type": "roll_die", "seat": 1, "ability": "   ", "conflict": 1, "die": 1}',
            type=c.RollDie).ability == "   "
        again.execute(campaign_id, c.SeatPlayer(name="Cleo"))
        assert verify_stored(again, campaign_id).ok
    finally:
        again.close()

    assert main(["campaigns"]) == 0  # the read models take it in
    assert f"{campaign_id}  '   '" in capsys.readouterr().out
    export = tmp_path / "old.ndjson"
    assert main(["export", str(campaign_id), "--output", str(export)]) == 0
    assert [e.record.narration for e in read(export)[1] if e.record][:2] == ["  ", " \n\t"]
    assert main(["verify", "--file", str(export)]) == 0
    assert main(["import", str(export)]) == 0
    out = capsys.readouterr().out
    copy = UUID(out.split("imported as campaign ")[1].split()[0])
    assert main(["verify", str(copy)]) == 0
    assert main(["state", str(copy)]) == 0
