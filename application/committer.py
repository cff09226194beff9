"""The writer of a server process: every write runs on one thread, in arrival order, and the
commands that arrive while a commit is under way are committed together (a group commit).

Why: the store takes one writer at a time anyway; threads racing for it only add contention.
And a commit is the expensive part of a command (a transaction, an fsync): the commands that
queue up behind one are decided one after another on the campaigns as the earlier ones leave
them, then stored in one transaction, so a busy server pays for one commit per group instead
of one per command. No answer leaves before its command's events are stored: nothing
acknowledged is lost.

The writer keeps the campaigns it wrote last (its *heads*), so a command needs no read of the
store. Other processes may write too (the CLI, other workers): the writer forgets the heads of
the campaigns they wrote to, as soon as a commit of its own does not directly follow the last
position it knew, and before a group when it has not known that for a few milliseconds (an
idle server asks the store before every command); if another
writer still gets in between, the group's commit fails as a whole (the store's unique
(campaign, version) key) and each of its commands is run again on its own from a fresh load,
which is what it would have met had it come a moment later. A command given an
``expected_version`` then gets its 409 as it should.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from queue import Empty, SimpleQueue
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.persistence import PersistenceError

from .aggregate import Campaign
from .campaigns import Campaigns, Outcome, Staged
from .errors import CampaignConflict
from .integrity import Integrity
from .postgres_store import CampaignsPostgresRecorder
from .sqlite_store import local
from .store_watch import StoreWatch

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Commands committed together at most (a group's transaction stays short).
MAX_GROUP = 64
#: Seconds after which the writer, before a group, asks the store whether another process
#: wrote (a commit whose events directly follow the last known position tells it no).
SYNC_AFTER = 0.005
#: Campaigns whose heads are kept (least recently used go). A host with a thousand tables
#: open keeps every one of them: a head that was let go costs a load from the store.
MAX_HEADS = 10_000


class Job:
    """One write waiting for the writer: a command (``command``) or any call (``call``).

    ``loop`` and ``future``: where the writer thread answers it; None for a job that the
    caller runs itself (:meth:`Committer.process`, the writer process's loop), which reads
    the answer from the results and knows the job by its ``tag``."""

    __slots__ = ("call", "campaign_id", "command", "expected_version", "future", "invalidates",
                 "loop", "narration", "position", "read", "since", "tag")

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None,
                 future: asyncio.Future[Any] | None = None, tag: Hashable = 0) -> None:
        self.loop = loop
        self.future = future
        self.tag = tag
        self.call: Callable[[], Any] | None = None
        self.invalidates: UUID | None = None
        self.campaign_id: UUID | None = None
        self.command: Any = None
        self.narration = ""
        self.expected_version: int | None = None
        #: A read of the campaign as stored (``Committer.latest``): the store position it
        #: must include (None: the store's last when it was asked, at ``since``).
        self.read = False
        self.position: int | None = None
        self.since = 0.0


#: What became of a job: (job, result, exception).
Result = tuple[Job, Any, BaseException | None]


class Committer:
    """Runs a process's writes on one thread of its own and commits commands in groups."""

    def __init__(self, campaigns: Campaigns, *, max_group: int = MAX_GROUP,
                 max_heads: int = MAX_HEADS, integrity: Integrity | None = None) -> None:
        self.campaigns = campaigns
        #: Verifies a campaign's log before this process first extends it (issue 13).
        self.integrity = integrity
        self.max_group = max_group
        self.max_heads = max_heads
        self._queue: SimpleQueue[Job | None] = SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._heads: OrderedDict[UUID, Campaign] = OrderedDict()
        #: The store's last position known to hold nothing written behind the writer's back.
        self._seen = -1
        self._synced_at = -math.inf
        #: When a reader last found the store's last position to be ``_seen`` (current()).
        self._verified_at = -math.inf
        #: A store a reader may ask on its own thread: an SQLite file or memory, never a
        #: server over the network (the event loop would wait for it).
        self._local_store = local(campaigns.recorder)
        #: When a query last asked for a campaign of now (the writer then keeps up to date).
        self._asked_at = -math.inf
        #: Commands and groups committed (for the figures of scripts/bench and the tests).
        self.commands = 0
        self.groups = 0
        #: Campaigns being made ready for their first command (see :meth:`_prepare`).
        self._preparing: dict[UUID, asyncio.Future[None]] = {}
        #: On PostgreSQL: what the other workers store, heard as they commit (see
        #: :mod:`application.store_watch`), trusted from the writer's first look at the store
        #: in the watch's epoch (``_watch_epoch``).
        self.watch = (StoreWatch(campaigns.recorder, most=4 * max_heads)
                      if isinstance(campaigns.recorder, CampaignsPostgresRecorder) else None)
        self._watch_epoch = -1

    # -- the event loop's side ---------------------------------------------------------------

    async def execute(self, campaign_id: UUID, command: Any, *, narration: str = "",
                      expected_version: int | None = None) -> Outcome:
        """``Campaigns.execute`` on the writer thread; answered once the events are stored."""
        if not self.ready(campaign_id):
            await self._prepare(campaign_id)
        job = self._job()
        job.campaign_id = campaign_id
        job.command = command
        job.narration = narration
        job.expected_version = expected_version
        return await self._submit(job)  # type: ignore[no-any-return]

    def ready(self, campaign_id: UUID) -> bool:
        """Whether the writer holds the campaign's head and this process verified its log: a
        command on it needs no preparation (:meth:`prepare`) first."""
        return campaign_id in self._heads and (
            self.integrity is None or self.integrity.checked(campaign_id))

    def prepare(self, campaign_id: UUID) -> bool:
        """Make a campaign ready for its first command here, off the writer's thread: verify
        its log (once per process; a log that does not verify is not extended: the command
        gets a 423 from the writer) and load it into the application's cache, so that the
        writer only brings it up to date. Loading a long campaign on the writer's thread
        would hold up every other campaign's writes (issue 13). A campaign that is not there
        is the writer's to report. Returns whether the writer must forget its head (it came
        from a snapshot the check distrusts: :meth:`forget`, on the writer's thread)."""
        distrusted = False
        if self.integrity is not None and not self.integrity.checked(campaign_id):
            self.integrity.ensure(campaign_id)
            distrusted = campaign_id in self.campaigns.distrusted
        if campaign_id not in self._heads:
            with contextlib.suppress(Exception):
                self.campaigns.get(campaign_id)
        return distrusted

    def forget(self, campaign_id: UUID) -> None:
        """Read the campaign anew from the store at its next command (writer's thread only)."""
        self._heads.pop(campaign_id, None)

    async def _prepare(self, campaign_id: UUID) -> None:
        """Make a campaign the writer does not hold ready, off the writer thread; the commands
        for it that arrive meanwhile wait for the same preparation, and asyncio wakes them in
        the order they came, so they still queue in arrival order."""
        pending = self._preparing.get(campaign_id)
        if pending is None:
            pending = asyncio.ensure_future(self._load(campaign_id))
            self._preparing[campaign_id] = pending
            pending.add_done_callback(lambda _: self._preparing.pop(campaign_id, None))
        await asyncio.shield(pending)

    async def _load(self, campaign_id: UUID) -> None:
        if await asyncio.to_thread(self.prepare, campaign_id):
            await self.call(lambda: None, invalidates=campaign_id)  # a head from a bad snapshot

    async def call(self, func: Callable[..., T], *args: Any, invalidates: UUID | None = None,
                   **kwargs: Any) -> T:
        """Any other write (open a campaign, issue a token, fork), in turn with the commands.

        ``invalidates``: a campaign the call may append to, whose head is then read anew.
        """
        job = self._job()
        job.call = lambda: func(*args, **kwargs)
        job.invalidates = invalidates
        return await self._submit(job)  # type: ignore[no-any-return]

    # -- reads of now (the queries' side) -----------------------------------------------------

    def current(self, campaign_id: UUID, position: int | None = None) -> Campaign | None:
        """The campaign as stored, from the writer's heads in memory (no store read, no hop
        to another thread), if the writer knows its head is current; else None.

        ``position``: a store position the answer must include (a command's ``position``:
        read-your-writes): exact, the head is used only if the writer knows nothing was
        stored up to there that its heads lack. None: the store as it is now, which the writer
        knows within :data:`SYNC_AFTER` (its own commands at once; other processes' from when
        it last looked at the store or committed right behind its last known position). Past
        that, on a store that is a local file or memory, the caller asks the store's last
        position itself (a read of some 20 µs, never a wait: WAL readers take no lock): if
        it is the one the writer knows, nothing was stored since, and the head is current.
        Why: under a load of reads the writer thread, waiting for the interpreter's lock,
        often looked at the store less often than every :data:`SYNC_AFTER`, and every read
        then became a trip through the writer thread.

        Safe on any thread: the writer updates a head before it moves its known position on,
        and forgets a head before moving that position past another writer's event; reading
        in the other order never pairs a stale head with a position it does not cover."""
        self._asked_at = time.monotonic()
        seen, synced_at = self._seen, self._synced_at
        head = self._heads.get(campaign_id)
        if head is None:
            return None
        if position is None:
            if self._watching():
                # Stale as soon as another worker's commit to it is heard (store_watch).
                return None if self._heard_newer(head) else head
            now = time.monotonic()
            if now - max(synced_at, self._verified_at) <= SYNC_AFTER:
                return head
            if self._local_store and self._nothing_after(seen):
                self._verified_at = now
                return head
            return None
        return head if 0 < position <= seen else None

    def _watching(self) -> bool:
        """Whether the store watch has listened since before the writer's last look at the
        store: every commit since is heard (or on its way, see :mod:`application.store_watch`)."""
        watch = self.watch
        return watch is not None and watch.vouches(self._watch_epoch)

    def _heard_newer(self, head: Campaign) -> bool:
        """Whether the store watch heard of a version of the campaign past ``head``'s."""
        return self.watch is not None and self.watch.newer(head.id, head.version)

    def _nothing_after(self, seen: int) -> bool:
        """Whether the store's last position is ``seen`` (a position the writer knew)."""
        try:
            return seen >= 0 and (self.campaigns.recorder.max_notification_id() or 0) == seen
        except Exception:  # the store is busy or down: the writer thread will say
            return False

    async def latest(self, campaign_id: UUID, position: int | None = None) -> Campaign | None:
        """:meth:`current`, or else the campaign from the writer thread once it has looked at
        the store (in turn with the commands: after the ones queued before it). None when
        ``position`` is beyond the store's last one. Raises CampaignNotFound."""
        found = self.current(campaign_id, position)
        if found is not None:
            return found
        job = self._job()
        job.read = True
        job.campaign_id = campaign_id
        job.position = position
        job.since = time.monotonic()
        return await self._submit(job)  # type: ignore[no-any-return]

    def _job(self) -> Job:
        loop = asyncio.get_running_loop()
        return Job(loop, loop.create_future())

    async def _submit(self, job: Job) -> Any:
        self.start()
        self._queue.put(job)
        # Shielded: a client that goes away does not take its command back once it is queued.
        assert job.future is not None
        return await asyncio.shield(job.future)

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the writer thread (done by the first write if not before)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self.start_watch()
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="capes-commands",
                                                daemon=True)
                self._thread.start()

    #: What :meth:`running` tells about, for people.
    kind = "the writer thread"

    def running(self) -> bool:
        """Whether the writer thread runs (``GET /health``; :meth:`start` starts it again)."""
        return self._thread is not None and self._thread.is_alive()

    def start_watch(self) -> None:
        """On PostgreSQL, start hearing the other workers' commits (see :attr:`watch`)."""
        if self.watch is not None:
            self.watch.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Finish the writes already queued, then stop the thread."""
        thread = self._thread
        if thread is not None and thread.is_alive():
            self._queue.put(None)
            thread.join(timeout)
        self._thread = None
        if self.watch is not None:
            self.watch.stop()

    # -- the writer thread -------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            try:
                job = self._queue.get(timeout=self._idle_timeout())
            except Empty:
                # Idle while queries ask for campaigns of a PostgreSQL store: look at it now
                # and then, so that they are answered from memory (see current()) rather than
                # each coming here for a look of its own.
                try:
                    self._sync()
                except Exception:  # pragma: no cover - the store is down: the next job says so
                    log.exception("the writer could not look at the store")
                continue
            if job is None:
                return
            jobs = [job]
            stopping = False
            while len(jobs) < self.max_group:
                try:
                    more = self._queue.get_nowait()
                except Empty:
                    break
                if more is None:
                    stopping = True
                    break
                jobs.append(more)
            try:
                results = self._process(jobs)
            except BaseException as e:  # pragma: no cover - a bug: answer rather than hang
                log.exception("the writer failed on a group of %d", len(jobs))
                results = [(j, None, e) for j in jobs]
            self._settle(results)
            if stopping:
                return

    def _idle_timeout(self) -> float | None:
        """How long to wait for a job: for ever, unless queries came in the last second and
        the store is a server's (PostgreSQL).

        A local store's readers look for themselves (see :meth:`current`), and a writer that
        woke every few milliseconds to look as well only took the interpreter's lock from
        them: measured under a load of board reads alone, 7,000 → 8,000 a second without it."""
        if self._local_store or self._watching():
            return None
        return SYNC_AFTER / 2 if time.monotonic() - self._asked_at < 1.0 else None

    def process(self, jobs: list[Job]) -> list[Result]:
        """Run ``jobs`` on the calling thread, which must be the only one writing through this
        committer (the writer process runs its own loop, :mod:`api.writer`): commands decided
        in order and committed together, calls in turn, reads after the writes. What became of
        each: (job, result, exception)."""
        return self._process(jobs)

    def _process(self, jobs: list[Job]) -> list[Result]:
        results: list[Result] = []
        group: list[Job] = []
        reads: list[Job] = []
        if time.monotonic() - self._synced_at > SYNC_AFTER and not self._watching():
            try:
                self._sync()
            except PersistenceError as e:
                # The store cannot be reached: nothing of these is decided, each gets the
                # error (a 503 naming the store), and the next jobs look again. Raised, it
                # ended the writer process, failing every request waiting on it.
                return [(job, None, e) for job in jobs]
        for job in jobs:
            if job.read:
                reads.append(job)  # answered after the writes of the group (see _reads)
                continue
            if job.call is None:
                group.append(job)
                continue
            # A call runs after the commands queued before it are stored, and before the ones
            # queued after it are decided.
            results += self._commit(group)
            group = []
            try:
                results.append((job, job.call(), None))
            except Exception as e:
                results.append((job, None, e))
            if job.invalidates is not None:
                self._heads.pop(job.invalidates, None)
        results += self._commit(group)
        if reads:
            results += self._reads(reads)
        return results

    def _reads(self, jobs: list[Job]) -> list[Result]:
        """Answer reads of now: each campaign as stored when it was asked, or later."""
        watching = self._watching()
        if any((job.position is None and self._synced_at < job.since and not watching)
               or (job.position is not None and job.position > self._seen) for job in jobs):
            try:
                self._sync()
            except PersistenceError as e:
                return [(job, None, e) for job in jobs]  # the store cannot be reached
        results: list[Result] = []
        for job in jobs:
            assert job.campaign_id is not None
            if job.position is not None and job.position > self._seen:
                results.append((job, None, None))  # beyond the store's last position
                continue
            try:
                results.append((job, self._head(job.campaign_id), None))
            except Exception as e:
                results.append((job, None, e))
        return results

    def _commit(self, jobs: list[Job], *, again: bool = True) -> list[Result]:
        """Decide ``jobs`` in order, each on the campaign as the ones before left it, and store
        the accepted ones in one transaction.

        ``again``: if another writer took one of the group's versions first, look at the store
        and run the whole group again once (as a group) before running each command on its
        own."""
        if not jobs:
            return []
        results: list[Result] = []
        staged: list[tuple[Job, Staged]] = []
        working: dict[UUID, Campaign] = {}
        for job in jobs:
            assert job.campaign_id is not None
            try:
                base = working.get(job.campaign_id) or self._head(job.campaign_id)
                done = self.campaigns.prepare(base, job.command, narration=job.narration,
                                              expected_version=job.expected_version)
            except Exception as e:
                results.append((job, None, e))
                continue
            working[job.campaign_id] = done.campaign
            staged.append((job, done))
        if not staged:
            return results
        try:
            outcomes = self.campaigns.commit([s for _, s in staged])
        except CampaignConflict as e:
            # The store refused the group (another writer took one of its versions): nothing
            # of it was stored. Every command of it, refused ones included (they may have been
            # judged on a campaign that is not the stored one), is decided again on the
            # campaigns as stored now: first the group again, in one commit, once the writer
            # has forgotten the heads another process wrote to (each command on its own cost
            # a commit per command, while another busy worker kept writing); if the store
            # refuses it again, each on its own.
            log.info("a group of %d commands was not stored (%s): running it again",
                     len(jobs), e)
            if again:
                try:
                    self._sync()
                except PersistenceError as lost:
                    return results + [(job, None, lost) for job, _ in staged]
                return self._commit(jobs, again=False)
            return self._one_by_one(jobs)
        except Exception as e:
            # Any other failure of the store (a full disk, a lock held too long): the
            # transaction is rolled back and each command of the group gets the error.
            for _, done in staged:
                self._heads.pop(done.campaign_id, None)
            return results + [(job, None, e) for job, _ in staged]
        for (job, done), outcome in zip(staged, outcomes, strict=True):
            results.append((job, outcome, None))
            if done.records:
                self._put(done.campaign_id, done.campaign)
        # One transaction stores the group at consecutive positions: if they follow the last
        # position known, nobody wrote in between and the heads are still the stored campaigns.
        stored = sum(len(done.records) for _, done in staged)
        last = max(o.position for o in outcomes)
        if stored and last - stored == self._seen:
            self._seen = last
            self._synced_at = time.monotonic()
        # Else another process wrote in between: the writer forgets the campaigns it wrote to
        # at its next look at the store, before a group once SYNC_AFTER has passed (a look
        # after every such commit doubled a busy worker's trips to the store, and on
        # PostgreSQL waits for the other workers' commits under way). Meanwhile current()
        # vouches for nothing past the last position known; a command decided on a head that
        # is no longer the stored one is refused by the store and run again.
        self.groups += 1
        self.commands += len(staged)
        return results

    def _one_by_one(self, jobs: list[Job]) -> list[Result]:
        results: list[Result] = []
        for job in jobs:
            assert job.campaign_id is not None
            self._heads.pop(job.campaign_id, None)
            try:
                outcome = self.campaigns.execute(job.campaign_id, job.command,
                                                 narration=job.narration,
                                                 expected_version=job.expected_version)
                results.append((job, outcome, None))
            except Exception as e:
                results.append((job, None, e))
        self._synced_at = -math.inf  # look at the store again before the next group
        return results

    def _head(self, campaign_id: UUID) -> Campaign:
        head = self._heads.get(campaign_id)
        if head is not None and not self._heard_newer(head):
            self._heads.move_to_end(campaign_id)
            return head
        head = self.campaigns.get(campaign_id)  # brought up to date from the store
        self._put(campaign_id, head)
        return head

    def _put(self, campaign_id: UUID, campaign: Campaign) -> None:
        self._heads[campaign_id] = campaign
        self._heads.move_to_end(campaign_id)
        while len(self._heads) > self.max_heads:
            self._heads.popitem(last=False)

    def _sync(self) -> None:
        """Forget the heads of campaigns another process wrote to since the last group.

        A head that already holds the event a notification stands for (this writer's own,
        committed since) is kept: with another worker writing in between, each of this
        writer's commits shows a gap, and forgetting its own campaigns then made every next
        command on them a load from the store."""
        watch = self.watch
        epoch = watch.listening_epoch() if watch is not None else -1
        top, changed = _changes_since(self.campaigns.recorder, self._seen, self.max_heads)
        if self._seen < 0 or top - self._seen > self.max_heads:
            self._heads.clear()  # first look, or too much to go through: load anew
        for originator, version in changed:
            key = originator if isinstance(originator, UUID) else UUID(str(originator))
            head = self._heads.get(key)
            if head is not None and head.version < version:
                del self._heads[key]
        self._seen = max(self._seen, top)
        self._synced_at = time.monotonic()
        self._watch_epoch = epoch

    @staticmethod
    def _settle(results: list[Result]) -> None:
        """Hand the results to their event loops: one wake-up per loop for the whole group."""
        by_loop: dict[asyncio.AbstractEventLoop, list[Result]] = {}
        for result in results:
            loop = result[0].loop
            if loop is not None:
                by_loop.setdefault(loop, []).append(result)
        for loop, mine in by_loop.items():
            # A loop that is gone has nobody waiting on it.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_set_all, mine)


def _changes_since(recorder: Any, position: int, most: int) -> tuple[int, list[tuple[Any, int]]]:
    """The store's last position and each campaign written to after ``position`` with its last
    version (none when ``position`` is -1, nothing known yet, or more than ``most`` positions
    passed). PostgreSQL's recorder answers in one round trip without the events' bodies
    (``CampaignsPostgresRecorder.changes_since``); other stores from their notifications."""
    if position >= 0 and hasattr(recorder, "changes_since"):
        found: tuple[int, list[tuple[Any, int]]] = recorder.changes_since(position, most)
        return found
    top = recorder.max_notification_id() or 0
    if position < 0 or top <= position or top - position > most:
        return top, []
    return top, [(n.originator_id, n.originator_version) for n in recorder.select_notifications(
        position, limit=top - position, stop=top, inclusive_of_start=False)]


def _set_all(results: list[Result]) -> None:
    for job, value, error in results:
        future = job.future
        if future is None or future.done():
            continue
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)
