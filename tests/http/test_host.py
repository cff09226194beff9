"""The host controls their server (issue 14, item 6): who may open campaigns
(``CAPES_OPEN_CAMPAIGNS``), analytics across campaigns for the host key only."""

from __future__ import annotations

import pytest
from helpers import bearer
from litestar.testing import TestClient

from api.app import create_app
from application.campaigns import Campaigns
from application.config import SettingError

HOST = "the-host-key"
CAMPAIGN = {"name": "Harbor City"}


def client(memory_env: dict[str, str], **environ: str) -> TestClient:  # type: ignore[type-arg]
    return TestClient(create_app(Campaigns(memory_env), rate_limit=0, environ=environ))


def test_anyone_may_open_a_campaign_by_default(memory_env: dict[str, str]) -> None:
    with client(memory_env, CAPES_HOST_KEY=HOST) as c:
        assert c.post("/campaigns", json=CAMPAIGN).status_code == 201


def test_the_host_may_keep_opening_campaigns_to_the_host_key(memory_env: dict[str, str]) -> None:
    with client(memory_env, CAPES_HOST_KEY=HOST, CAPES_OPEN_CAMPAIGNS="host") as c:
        refused = c.post("/campaigns", json=CAMPAIGN)
        assert refused.status_code == 401 and "host key" in refused.json()["detail"]
        assert c.post("/campaigns", json=CAMPAIGN, headers=bearer("guess")).status_code == 401
        opened = c.post("/campaigns", json=CAMPAIGN, headers=bearer(HOST))
        assert opened.status_code == 201
        # Seats still join with the campaign id alone: the invitation.
        seats = f"/campaigns/{opened.json()['campaign_id']}/seats"
        seated = c.post(seats, json={"name": "Ana"})
        assert seated.status_code == 201
        # A fork is a new campaign: the owner's to make, not a seat's (anyone may take a seat
        # who knows the id, and its forks' owner tokens forked again without the key).
        forks = f"/campaigns/{opened.json()['campaign_id']}/forks"
        refused = c.post(forks, json={}, headers=bearer(seated.json()["token"]))
        assert refused.status_code == 403
        assert "CAPES_OPEN_CAMPAIGNS=host" in refused.json()["detail"]
        owned = c.post(forks, json={}, headers=bearer(opened.json()["owner_token"]))
        assert owned.status_code == 201, owned.text


def test_without_the_restriction_a_seat_may_fork(memory_env: dict[str, str]) -> None:
    """R-REC-6: whoever forks owns the fork."""
    with client(memory_env) as c:
        opened = c.post("/campaigns", json=CAMPAIGN).json()
        seat = c.post(f"/campaigns/{opened['campaign_id']}/seats", json={"name": "Ana"}).json()
        forked = c.post(f"/campaigns/{opened['campaign_id']}/forks", json={},
                        headers=bearer(seat["token"]))
        assert forked.status_code == 201, forked.text


@pytest.mark.parametrize("environ, message", [
    ({"CAPES_OPEN_CAMPAIGNS": "host"}, "CAPES_OPEN_CAMPAIGNS=host: needs CAPES_HOST_KEY set"),
    ({"CAPES_OPEN_CAMPAIGNS": "friends"}, "CAPES_OPEN_CAMPAIGNS=friends: must be anyone or host"),
])
def test_a_restriction_that_cannot_work_is_refused_at_start(
    memory_env: dict[str, str], environ: dict[str, str], message: str
) -> None:
    with pytest.raises(SettingError, match=message):
        create_app(Campaigns(memory_env), rate_limit=0, environ=environ)


def test_analytics_across_campaigns_are_the_hosts(memory_env: dict[str, str]) -> None:
    with client(memory_env) as c:
        assert c.get("/analytics").status_code == 403, "off without a host key"
    with client(memory_env, CAPES_HOST_KEY=HOST) as c:
        assert c.get("/analytics").status_code == 401
        assert c.get("/analytics", headers=bearer("guess")).status_code == 401
        assert c.get("/analytics", headers=bearer(HOST)).status_code == 200


def test_the_lobby_asks_for_the_host_key_only_where_only_the_host_opens_campaigns(
    memory_env: dict[str, str],
) -> None:
    with client(memory_env, CAPES_HOST_KEY=HOST) as c:
        assert 'id="host-key"' not in c.get("/").text
    with client(memory_env, CAPES_HOST_KEY=HOST, CAPES_OPEN_CAMPAIGNS="host") as c:
        page = c.get("/")
        assert page.status_code == 200
        assert 'id="host-key"' in page.text and 'type="password"' in page.text
        assert HOST not in page.text, "the page never carries the key itself"
