"""Each campaign's log is verified once per process before the process extends it (issue 13).

A store can be damaged or edited behind the server's back. The first time a server process
touches a campaign, :class:`Integrity` walks its stored log (:func:`application.audit.
verify_stored`: positions, hash chain, dice, and every snapshot against the fold of the log):

- a log that does not verify marks the campaign broken (``Campaigns.broken``): every answer
  about it says so and it takes no command (HTTP 423) until the host repairs or forks it;
- a snapshot that disagrees with the log is never used again (``Campaigns.distrust``): the
  campaign is folded from its events instead, and it plays on.

The check runs before the first request about the campaign is answered (in a worker thread,
never the writer's): once per campaign and process, it reads the whole log once.
"""

from __future__ import annotations

import logging
import threading
from uuid import UUID

from .audit import verify_stored
from .campaigns import Campaigns
from .errors import CampaignNotFound

log = logging.getLogger(__name__)


class Integrity:
    """Verifies each campaign of ``campaigns`` once, and marks what it finds."""

    def __init__(self, campaigns: Campaigns) -> None:
        self.campaigns = campaigns
        self._checked: set[UUID] = set()
        self._lock = threading.Lock()
        self._locks: dict[UUID, threading.Lock] = {}
        #: Campaigns checked (for the figures and the tests).
        self.checks = 0

    def checked(self, campaign_id: UUID) -> bool:
        return campaign_id in self._checked

    def ensure(self, campaign_id: UUID) -> None:
        """Verify the campaign now, unless done already (blocking: not on the writer)."""
        if campaign_id in self._checked:
            return
        with self._lock:
            lock = self._locks.setdefault(campaign_id, threading.Lock())
        with lock:
            if campaign_id in self._checked:
                return
            try:
                report = verify_stored(self.campaigns, campaign_id)
            except CampaignNotFound:
                return  # nothing to check (yet): the command will say so
            self.checks += 1
            found = report.discrepancy
            if found is not None and found.check == "snapshot":
                log.error("campaign %s: %s", campaign_id, found)
                self.campaigns.distrust(campaign_id)
            elif found is not None and report.events > 0:
                log.error("campaign %s: its log does not verify: %s", campaign_id, found)
                self.campaigns.broken[campaign_id] = (found.position, found.message)
            self._checked.add(campaign_id)
        with self._lock:
            self._locks.pop(campaign_id, None)
