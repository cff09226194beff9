"""What every writer stores on a PostgreSQL store, heard as it commits (issue 15).

Each commit of the campaigns' recorder notifies the events table's channel, naming the
campaigns it wrote and their last versions (:meth:`CampaignsPostgresRecorder
.insert_events`). A server process's :class:`StoreWatch` listens on its own
connection and keeps, for every campaign, the last version any process is known to have
stored. The writer (:class:`application.committer.Committer`) then knows which of its
campaigns another worker wrote to without asking the store: before, with two workers, each
one's commits left gaps the other filled, so the writer looked at the store (a transaction
that waits for the inserts under way) before almost every group, and every read of a board
went through the writer thread for such a look. Measured with two workers and a thousand
tables (``scripts/bench``'s many-tables run, with and without the watch, one after the other):
the server's CPU 0.71 → 0.53 cores, PostgreSQL's 0.24 → 0.17, command p99 14.3 → 10.0 ms. (Under
the game mix at full load, where the machine's CPU is the limit, throughput did not change.)

What a notification cannot say is that nothing else was stored: one may still be on its way.
So the watch only tells which heads are stale, as soon as their notification arrives (on
this machine a commit was heard within 0.3 ms, or within the interpreter's switch interval,
5 ms, while another thread kept the interpreter busy), and a command decided on a head whose
notification was still on its way is refused by the store (the unique version) and run again,
as before.
The writer trusts the watch only from its first look at the store after the watch began to
listen (its *epoch*): a watch that lost its connection starts a new epoch when it listens
again, and the writer looks at the store as before until then.
"""

from __future__ import annotations

import logging
import threading
from typing import Any
from uuid import UUID

from psycopg.sql import SQL, Identifier

log = logging.getLogger(__name__)

#: Seconds between the watch's looks at whether it is asked to stop.
TICK = 0.5
#: Seconds before a watch that lost its connection listens again.
RETRY = 1.0


def payload(written: dict[Any, int]) -> str:
    """A commit's notification: ``"<campaign id>:<last version>,…"``; ``"*"`` when it
    would not fit PostgreSQL's 8,000 bytes (the watchers then look at the store)."""
    text = ",".join(f"{campaign_id}:{version}" for campaign_id, version in written.items())
    return text if len(text) < 7_900 else "*"


class StoreWatch:
    """Listens to a PostgreSQL recorder's channel on a thread of its own."""

    def __init__(self, recorder: Any, most: int) -> None:
        self.recorder = recorder
        #: The last version of each campaign that any process is known to have stored.
        self.latest: dict[UUID, int] = {}
        #: Bumped whenever the watch (re)starts listening or forgets what it heard.
        self.epoch = 0
        #: Listening now.
        self.live = False
        self._most = most
        self._stopping = threading.Event()
        self._listening = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, wait: float = 1.0) -> None:
        """Listen on a thread of its own; wait up to ``wait`` seconds for it to listen, so
        that the writer's first look at the store already counts (see ``Committer``)."""
        if self._thread is None or not self._thread.is_alive():
            self._stopping.clear()
            self._thread = threading.Thread(target=self._run, name="capes-store-watch",
                                            daemon=True)
            self._thread.start()
        self._listening.wait(wait)

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self.live = False

    def listening_epoch(self) -> int:
        """The epoch if the watch is listening, else -1. Taken *before* a look at the store
        (the writer's, a read of keys), so that whatever the look missed is heard after it."""
        return self.epoch if self.live else -1

    def vouches(self, epoch: int) -> bool:
        """Whether every commit since a look taken in ``epoch`` (:meth:`listening_epoch`) has
        been heard, or is on its way: the watch has listened without a break since."""
        return epoch >= 0 and self.live and self.epoch == epoch

    def newer(self, campaign_id: UUID, version: int) -> bool:
        """Whether a process is known to have stored ``campaign_id`` past ``version``."""
        return self.latest.get(campaign_id, 0) > version

    def _run(self) -> None:
        listen = SQL("LISTEN {0}").format(Identifier(self.recorder.channel_name))
        while not self._stopping.is_set():
            try:
                with self.recorder.datastore.get_connection() as conn:
                    conn.execute(listen)
                    self.epoch += 1
                    self.live = True
                    self._listening.set()
                    while not self._stopping.is_set():
                        for notify in conn.notifies(timeout=TICK):
                            self.heard(notify.payload)
            except Exception:
                if getattr(self.recorder.datastore.pool, "closed", False):
                    return  # the application closed its store: nothing more to hear
                log.warning("the store watch lost its connection; listening again in %s s",
                            RETRY, exc_info=True)
            finally:
                self.live = False
                self._listening.clear()
            self._stopping.wait(RETRY)

    def heard(self, text: str) -> None:
        """Take in one notification's payload (see :func:`payload`)."""
        if not text or text == "*":
            self.epoch += 1  # who wrote what is not known: the writer looks at the store
            return
        latest = self.latest
        for item in text.split(","):
            campaign, _, version = item.partition(":")
            key, number = UUID(campaign), int(version)
            if latest.get(key, 0) < number:
                latest[key] = number
        if len(latest) > self._most:
            latest.clear()
            self.epoch += 1
