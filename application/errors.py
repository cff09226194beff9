"""Errors of the application layer, as DomainError subclasses so the API maps them by kind."""

from __future__ import annotations

from uuid import UUID

from domain.errors import InvalidReference, StaleVersion


class CampaignNotFound(InvalidReference):
    """No campaign has this id (HTTP 404)."""

    kind = "not_found"

    def __init__(self, campaign_id: UUID) -> None:
        super().__init__(f"no campaign {campaign_id}")
        self.campaign_id = campaign_id


class VersionNotFound(InvalidReference):
    """The campaign exists but has no such version (asked for time travel past its end)."""

    kind = "not_found"

    def __init__(self, campaign_id: UUID, version: int, current: int) -> None:
        super().__init__(f"campaign {campaign_id} has no version {version} (it is at {current})")
        self.campaign_id = campaign_id
        self.version = version
        self.current = current


class CampaignConflict(StaleVersion):
    """The command was decided against an older version than the stored one (HTTP 409).

    ``expected`` is the version the command was decided against; ``current`` the stored one
    when known, so a client can fetch what it missed and decide again.
    """

    def __init__(self, campaign_id: UUID, expected: int, current: int | None = None) -> None:
        found = f"it is at {current}" if current is not None else "another write got there first"
        super().__init__(f"campaign {campaign_id} changed since version {expected}: {found}")
        self.campaign_id = campaign_id
        self.expected = expected
        self.current = current
