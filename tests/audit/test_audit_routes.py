"""``GET /campaigns/{id}/verify`` (R-FAIR-7): any token of the campaign; the same report as
``capes verify``; every event the API shows carries its chain (R-FAIR-6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fair_play import blob, played, positions_of, sqlite_env, write
from litestar.testing import TestClient

from api.app import create_app
from application.campaigns import Campaigns
from application.credentials import Keyring


def test_the_verify_route_reports_for_any_token_and_finds_a_tampered_event(
    tmp_path: Path,
) -> None:
    db = tmp_path / "routes.sqlite"
    campaigns = Campaigns(sqlite_env(db))
    keyring = Keyring(dict(campaigns.env))
    campaign = played(campaigns, scenes=1, min_rolls=1)
    owner = keyring.open_campaign(campaign)
    seat = keyring.issue(campaign, 2)
    log = campaigns.history(campaign, limit=100_000)
    url = f"/campaigns/{campaign}/verify"
    with TestClient(create_app(campaigns, keyring, rate_limit=0)) as client:

        def get(token: str | None, **params: Any) -> Any:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            return client.get(url, params=params, headers=headers)

        for token in (owner, seat):
            report = get(token)
            assert report.status_code == 200, report.text
            body = report.json()
            assert body["ok"] and body["fair"] and body["discrepancy"] is None
            assert (body["head_position"], body["head"]) == (len(log), log[-1].chain)
            assert body["scenes"][0]["status"] == "verified"
        assert get(None).status_code == 401
        assert client.get("/campaigns/00000000-0000-0000-0000-000000000001/verify",
                          headers={"Authorization": f"Bearer {owner}"}).status_code in (401, 404)
        assert get(owner, head="12:nothex").status_code == 400
        # A malformed head is refused as input, never reported as a rewritten log.
        for malformed in (f"\u00b2:{'a' * 64}", f"2:{'z' * 64}", f"0:{'a' * 64}",
                          f"-2:{'a' * 64}", f"{2**63}:{'a' * 64}"):
            refused = get(owner, head=malformed)
            assert refused.status_code == 400, (malformed, refused.text)
            assert "head" in refused.json()["detail"]
        wrong = get(owner, head=f"3:{'0' * 64}").json()
        assert not wrong["ok"] and wrong["discrepancy"]["check"] == "head"
        assert get(owner, head=f"3:{log[2].chain}").json()["ok"]

        events = client.get(f"/campaigns/{campaign}/events", params={"limit": 1000},
                            headers={"Authorization": f"Bearer {seat}"}).json()["events"]
        assert [e["chain"] for e in events] == [r.chain for r in log[:1000]]

        position = next(positions_of(log, "DiceRevealed"))
        topic, state = blob(db, campaign, position)
        write(db, campaign, position, topic, state.replace(b'"scene":1', b'"scene":7'))
        broken = get(seat).json()
        assert not broken["ok"]
        assert broken["discrepancy"]["position"] == position
        assert broken["discrepancy"]["type"] == "DiceRevealed"
    keyring.close()
    campaigns.close()
