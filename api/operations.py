"""The writes other than game commands, by name: opening a campaign, its keys, seats, forks.

Each takes the process's ``Campaigns`` and ``Keyring`` first. Being module-level functions,
they name what to do in a way that reaches another process (pickled by reference): the writer
runs them in turn with the commands (:meth:`api.services.Services.call`), whether it is a
thread of this process or a process of its own (:mod:`api.writer`).
"""

from __future__ import annotations

from functools import partial
from typing import Any
from uuid import UUID

from application.campaigns import Campaigns, Outcome
from application.credentials import Keyring


def open_keys(campaigns: Campaigns, keyring: Keyring, campaign_id: UUID) -> str:
    """Keys for a new campaign; the owner's token."""
    return keyring.open_campaign(campaign_id)


def create(campaigns: Campaigns, keyring: Keyring, command: Any, campaign_id: UUID) -> Outcome:
    """The campaign's first event."""
    return campaigns.create(command, campaign_id=campaign_id)


def fork(campaigns: Campaigns, keyring: Keyring, campaign_id: UUID, version: int | None, *,
         name: str | None, seat: int | None) -> Outcome:
    """A new campaign from this one's game at ``version`` (R-REC-6)."""
    return campaigns.fork(campaign_id, version, name=name, seat=seat)


def issue_token(campaigns: Campaigns, keyring: Keyring, campaign_id: UUID,
                seat: int) -> tuple[Outcome, str]:
    """A new token for ``seat``, recorded in the log as SeatTokenIssued (R-X-REC-4)."""
    return campaigns.issue_token(campaign_id, seat, partial(keyring.issue, campaign_id))


def seat_player(campaigns: Campaigns, keyring: Keyring, campaign_id: UUID,
                command: Any) -> tuple[Outcome, str]:
    """A seat and its token's record, stored in one step (see ``Campaigns.seat_player``)."""
    return campaigns.seat_player(campaign_id, command, partial(keyring.issue, campaign_id))
