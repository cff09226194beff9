"""Errors of the application layer, as DomainError subclasses so the API maps them by kind
(but for :class:`StoreUnreachable`, the store's failure rather than the command's)."""

from __future__ import annotations

from uuid import UUID

from eventsourcing.persistence import PersistenceError

from domain.errors import DomainError, InvalidReference, RuleViolation, StaleVersion


class StoreUnreachable(PersistenceError):
    """No connection to the store could be had in the time allowed (``POSTGRES_CONNECT_TIMEOUT``):
    a 503 naming the store, like the library's ``OperationalError``. Not one of those: the
    library tries each of its reads and writes again after one of those, ten times, and each
    try would wait as long again (see :func:`application.postgres_store.bound_waits`)."""


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


class CampaignBroken(DomainError):
    """The campaign's log does not verify (HTTP 423): it takes no command until the host
    repairs it or forks it (issue 13). ``position`` is the first event found wrong."""

    kind = "locked"

    def __init__(self, campaign_id: UUID, position: int, reason: str) -> None:
        super().__init__(f"campaign {campaign_id}'s log does not verify at event {position}: "
                         f"{reason}; it takes no command until the host repairs or forks it")
        self.campaign_id = campaign_id
        self.position = position


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


class SeatRemoved(RuleViolation):
    """R-X-REC-8: the token's seat was taken away by an upheld dispute (HTTP 403): the game
    went back to before the player sat down. Every request made with the token is refused,
    naming the dispute, until the seat is taken again (with a new token)."""

    kind = "forbidden"

    def __init__(self, seat: int, dispute: int) -> None:
        super().__init__(
            "R-X-REC-8",
            f"seat {seat} was removed from this campaign by dispute #{dispute}, upheld: the "
            "game went back to before this seat was taken, so this link no longer works; "
            "to play on, take a seat again between scenes")
        self.seat = seat
        self.dispute = dispute
