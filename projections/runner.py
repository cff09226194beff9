"""Catching read models up with the Campaigns notification log.

eventsourcing's ``ProjectionRunner`` needs the application recorder's ``subscribe()``, which
its SQLite recorder does not have, and runs one projection per subscription. :class:`Catchup`
pulls instead, on every store: it reads a batch of notifications after the lowest tracking
position of its read models (``select_notifications``), decodes each once, folds each
campaign forward once (:class:`~projections.model.Folds`), and hands every read model the
changes after its own position, which it applies with its tracking in one transaction. In the
background, the read models of each campaign's latest state (board, ledgers, directory) are
gathered between writes (:data:`LATEST_EVERY`), and written at once when someone waits.

The same object serves three uses: a background thread in the server (:meth:`start`), the
foreground loop of ``capes projections run`` (:meth:`run_forever`) and a rebuild
(:meth:`catch_up` to the head). :meth:`wait` gives read-your-writes: in the process that runs
the read models it catches them up itself, at once; elsewhere it polls their tracking.

The first two take part in the store's election (:mod:`projections.election`): one runner of
a store runs at a time, the others stand by and take over when it stops.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

import msgspec
from eventsourcing.persistence import DataError, IntegrityError, MapperDeserialisationError

from . import lineage
from .election import STANDBY_RETRY, Election, Holder
from .lineage import Mark
from .model import Change, Folds, ReadModel
from .views import Op, Write, write_all

if TYPE_CHECKING:
    from application.campaigns import Campaigns

log = logging.getLogger(__name__)

#: Notifications read (and applied per read model in one transaction) at a time. Why 2,000:
#: a batch's commit writes every page its rows touched, and under load a batch touches the
#: index pages of most campaigns in play whatever its size, so fewer, larger batches write
#: the same pages less often. Measured on a history made like the HTTP mix's (128 campaigns
#: interleaved, 51,254 events), stepped as the background runner steps: 32.3 µs of CPU an event
#: against 36.7 with 500 (the kernel's share 3.8 against 6.6); under the game mix the read
#: models' process used 8% less CPU a command (alternated, see the README).
BATCH = 2000
#: Seconds between polls of the store when there is nothing new.
POLL = 0.2
#: Seconds to wait, when poked, for more events to come (fewer, larger transactions). The
#: server answers the board and ledgers of now from its writer's campaigns and a query that
#: needs more of the timeline or analytics catches them up itself, so the background thread
#: need not hurry: a quarter of a second gathers a busy table's commands into one fold and
#: render per campaign (with 20 ms, each command of the benchmark's mix cost its own render
#: of the campaign's board and ledgers: a fifth of the server's Python time under load).
LINGER = 0.25
#: Seconds to wait after a failure before trying again (doubling up to 30 s).
RETRY = 0.5
#: Seconds between polls when the store wakes the runner itself (PostgreSQL's NOTIFY): a
#: poll is then only a safety net.
LISTENING_POLL = 5.0
#: Seconds the background runner gathers the changes of the read models of each campaign's
#: latest state (board, ledgers, directory: ``ReadModel.latest_only``) before it writes them,
#: unless someone waits for them (``hurry``, ``wait``) or a catch-up asks for them. Why: under
#: load a batch of the log touches most of the campaigns in play, and each batch rendered and
#: wrote every one of their boards and ledgers again, though only the last of them is ever
#: read and the server answers the board and ledgers of now from its writer anyway. Measured
#: under the game mix on SQLite, alternated: the read models' process used 0.24-0.28 cores
#: against 0.31-0.34, its time in renders from 17% to 5% (the mix's commands a second did not
#: move beyond the noise).
LATEST_EVERY = 1.0

Progress = Callable[[int], None]

#: What an event a read model cannot apply raises (anything else: the store failed, retry).
POISON = (ValueError, TypeError, LookupError, AttributeError, AssertionError,
          msgspec.MsgspecError, MapperDeserialisationError, DataError)


class Stopped(msgspec.Struct, frozen=True, kw_only=True):
    """A campaign the read models left out: the first event of it they could not apply."""

    #: The event's position in the store, and in its campaign.
    position: int
    version: int
    error: str


def _originator(notification: Any) -> UUID:
    originator = notification.originator_id
    return originator if isinstance(originator, UUID) else UUID(str(originator))


class Catchup:
    """Runs ``models`` over ``app``'s notification log."""

    def __init__(self, app: Campaigns, models: Sequence[ReadModel], folds: Folds | None = None,
                 *, batch: int = BATCH, poll: float = POLL, linger: float = LINGER,
                 latest_every: float = LATEST_EVERY, election: Election | None = None,
                 standby_retry: float = STANDBY_RETRY) -> None:
        if not models:
            raise ValueError("no read models to run")
        self.app = app
        self.models = list(models)
        self.folds = folds or Folds(app)
        for model in self.models:
            model.folds = self.folds
        self.batch = batch
        self.poll = poll
        self.error: BaseException | None = None
        self._positions: dict[str, int] = {}
        #: Campaigns left out of the read models since this runner started, and why.
        self.stopped: dict[UUID, Stopped] = {}
        self._lock = threading.RLock()
        self._wake = threading.Event()
        #: Set when a reader waits for the read models: the linger is cut short.
        self._hurry = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._needs_state = any(m.needs_state for m in self.models)
        self._names = {id(m.store): m.name for m in self.models}
        #: Seconds to wait after being poked, for more events to process in the same batch.
        self.linger = linger
        #: Seconds the background thread gathers the latest-state read models' changes.
        self.latest_every = latest_every
        #: The latest-state read models' changes read but not yet written, by model: the last
        #: change of each campaign, and the position they cover (their tracking in the store
        #: is still the one in ``_positions``). Written by a step asked to ``flush``.
        self._pending: dict[str, dict[UUID, Change]] = {}
        self._covered: dict[str, int] = {}
        #: The mark of the event at each ``_covered`` position, recorded when it is written.
        self._covered_marks: dict[str, Mark] = {}
        #: When the oldest change pending was read (None: nothing pending).
        self._pending_since: float | None = None
        #: Set by hurry(): the next step of the background thread writes what is pending.
        self._hurried = False
        #: The store's election of the runner that runs (None: this one always does).
        self.election = election
        #: Seconds between two tries of the election while another runner runs.
        self.standby_retry = standby_retry
        #: Whether another process runs the read models and this runner waits its turn.
        self.standing_by = False
        #: Who ran them when this runner began to stand by (for the line it logs).
        self._holder: Holder | None = None
        #: Whether the thread that listens to the store (PostgreSQL) runs.
        self._listening = False

    # -- positions ---------------------------------------------------------------------------

    def refresh(self) -> dict[str, int]:
        """Read every read model's tracking position from the store (changes gathered for one
        that another process moved are dropped: they are read again from where it is)."""
        with self._lock:
            known = self._positions
            self._positions = {m.name: m.store.position() for m in self.models}
            for name in list(self._pending):
                if known.get(name) != self._positions[name]:
                    self._drop(name)
            return dict(self._positions)

    def _drop(self, name: str | None = None) -> None:
        """Forget the changes gathered for read model ``name`` (default: every one)."""
        for key in [name] if name is not None else list(self._pending):
            self._pending.pop(key, None)
            self._covered.pop(key, None)
            self._covered_marks.pop(key, None)
        if not self._pending:
            self._pending_since = None

    def positions(self) -> dict[str, int]:
        """The read models' positions as this runner last knew them."""
        with self._lock:
            if not self._positions:
                self.refresh()
            return dict(self._positions)

    def position(self, names: Sequence[str] | None = None) -> int:
        """The lowest position of the named read models (default: all)."""
        positions = self.positions()
        return min(positions[n] for n in (names or positions))

    # -- processing --------------------------------------------------------------------------

    def step(self, limit: int | None = None, *, flush: bool = True) -> int:
        """Process the next batch; the number of notifications read (0: all caught up).

        ``flush``: write the latest-state read models' changes with the others (the default);
        if False, gather them (only the background thread does, see :data:`LATEST_EVERY`).

        An event a read model cannot take (it does not decode, or its text is one the read
        models' database refuses) never wedges them: the batch is applied again one event at
        a time, and the event that fails is reported (logged, and in :attr:`stopped`) and its
        campaign left out of the read models from there on, while every other campaign goes
        on (issue 13). A failure of the store itself (it is down) is raised, and retried."""
        with self._lock:
            positions = self.positions()
            start = min(self._covered.get(name, at) for name, at in positions.items())
            notifications = self.app.recorder.select_notifications(
                start, limit or self.batch, inclusive_of_start=False)
            if not notifications:
                if flush and self._pending:
                    self._flush(positions)
                return 0
            try:
                self._apply(notifications, positions, flush=flush)
            except IntegrityError:
                # Another process moved one (a rebuild, another runner): start from there.
                log.info("a read model moved under us; re-reading their positions")
                self._drop()
                self.refresh()
            except POISON:
                self.folds.clear()
                if self._pending:
                    # What was gathered may hold the change that failed: read again from the
                    # read models' tracking, to be written event by event (below).
                    self._drop()
                    positions = self.positions()
                    notifications = self.app.recorder.select_notifications(
                        min(positions.values()), limit or self.batch, inclusive_of_start=False)
                for notification in notifications:
                    try:
                        self._apply([notification], self.positions())
                    except POISON as error:
                        self._stop(notification, error)
            return len(notifications)

    def _apply(self, notifications: Sequence[Any], positions: dict[str, int], *,
               flush: bool = True) -> None:
        """Apply ``notifications`` to every read model behind them, in one transaction
        (``flush`` False: the latest-state read models' changes are gathered instead)."""
        decode = self.app.mapper.to_domain_event
        stopped = self.stopped  # campaigns left out after an event the read models refused
        items: list[tuple[int, Any]] = [
            (n.id, decode(n)) for n in notifications
            if not stopped or _originator(n) not in stopped]
        changes = (self.folds.changes(items) if self._needs_state
                   else [Change(position=p, record=r) for p, r in items])
        last = notifications[-1].id
        # The event every read model written here applied last, recorded with its position
        # (projections/lineage.py): decoded already, unless its campaign was left out.
        mark = (lineage.mark_of(last, items[-1][1]) if items and items[-1][0] == last
                else lineage.mark_of_notification(self.app, notifications[-1]))
        writes: list[Write] = []
        for model in self.models:
            name = model.name
            after = self._covered.get(name, positions[name])
            if after >= last:
                continue
            mine = [c for c in changes if c.position > after]
            if model.latest_only and (self._pending or not flush):
                pending = self._pending.setdefault(name, {})
                for change in mine:  # only each campaign's last change is ever written
                    pending[change.campaign_id] = change
                self._covered[name] = last
                self._covered_marks[name] = mark
                if self._pending_since is None:
                    self._pending_since = time.monotonic()
                if not flush:
                    continue
                mine = list(pending.values())
            writes.append((model.store, positions[name], last, self._ops(model, mine, mark)))
        write_all(writes)
        self._written(writes)

    def _flush(self, positions: dict[str, int]) -> None:
        """Write the latest-state read models' changes gathered, each with its tracking."""
        writes: list[Write] = [
            (model.store, positions[model.name], self._covered[model.name],
             self._ops(model, list(self._pending[model.name].values()),
                       self._covered_marks[model.name]))
            for model in self.models if model.name in self._pending]
        write_all(writes)
        self._written(writes)

    @staticmethod
    def _ops(model: ReadModel, changes: Sequence[Change], mark: Mark) -> list[Op]:
        """The statements that apply ``changes`` to ``model`` and record ``mark``, the event
        at the position its tracking moves to."""
        return [*model.operations(changes), lineage.record(model.name, mark)]

    def _written(self, writes: Sequence[Write]) -> None:
        """The read models of ``writes`` are stored at their new positions."""
        for view, _, position, _ in writes:
            name = self._names[id(view)]
            self._positions[name] = position
            self._drop(name)

    def _stop(self, notification: Any, error: BaseException) -> None:
        """Leave the campaign of ``notification`` out of the read models from it on, and move
        their tracking past it (the log is never edited: the event stays, unapplied)."""
        campaign_id = _originator(notification)
        self.stopped[campaign_id] = Stopped(position=notification.id,
                                            version=notification.originator_version,
                                            error=f"{type(error).__name__}: {error}")
        log.error("read models: campaign %s is left out from its event %s (store position %s), "
                  "which they cannot apply: %s", campaign_id, notification.originator_version,
                  notification.id, error)
        self.folds.clear()
        positions = self.positions()
        mark = lineage.mark_of_notification(self.app, notification)
        write_all([(m.store, positions[m.name], notification.id, self._ops(m, [], mark))
                   for m in self.models if positions[m.name] < notification.id])
        for model in self.models:
            self._positions[model.name] = max(positions[model.name], notification.id)

    def catch_up(self, until: int | None = None, progress: Progress | None = None,
                 deadline: float | None = None) -> bool:
        """Process until every read model is at ``until`` (default: the store's head when
        called) or ``deadline`` (a ``time.monotonic()``) passes; whether it got there.
        ``progress`` is told the lowest position after every batch."""
        target = self.head() if until is None else until
        while self.position() < target:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            if self.step() == 0:
                break  # nothing more is stored (yet)
            if progress is not None:
                progress(self.position())
        return self.position() >= target

    def head(self) -> int:
        """The store's last notification id (0: empty)."""
        return self.app.recorder.max_notification_id() or 0

    def reset(self, names: Sequence[str] | None = None) -> None:
        """Empty the named read models (default: all), to rebuild them from the start."""
        with self._lock:
            for model in self.models:
                if names is None or model.name in names:
                    model.reset()
            self.folds.clear()
            self._drop()
            self.stopped.clear()
            self.refresh()

    # -- waiting (read-your-writes) ----------------------------------------------------------

    def wait(self, position: int, names: Sequence[str] | None = None,
             timeout: float = 2.0, *, drive: bool = True,
             nudge: Callable[[], None] | None = None) -> bool:
        """Whether the named read models reached ``position`` within ``timeout`` seconds.

        ``drive``: this process runs the read models, so catch them up now rather than wait
        for the background thread. Otherwise poll their tracking in the store (another process
        runs them), every 5 ms at first, backing off to 100 ms, calling ``nudge`` before each
        look (it tells that process someone waits: :class:`~projections.wake.Wake`).
        A runner that stands by never drives: it waits for the one that runs, and nudges it
        (:meth:`~projections.election.Election.nudge`) unless told another way.
        """
        deadline = time.monotonic() + timeout
        if self.standing_by:
            drive = False  # one runner at a time: the other process's
            if nudge is None and self.election is not None:
                nudge = self.election.nudge
        if not drive:
            pause = 0.005
            while True:
                if nudge is not None:
                    nudge()
                current = min(m.store.position() for m in self.models
                              if names is None or m.name in names)
                if current >= position:
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                time.sleep(min(pause, remaining))
                pause = min(pause * 2, 0.1)
        while self.position(names) < position:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._lock.acquire(timeout=remaining):
                return False
            try:
                if self.position(names) < position and self.step() == 0:
                    self.refresh()  # nothing new to read: another process may be ahead
                    if self.position(names) < position:
                        return False
            except Exception:
                log.exception("catching the read models up failed")
                return False
            finally:
                self._lock.release()
        return True

    # -- running -----------------------------------------------------------------------------

    def start(self) -> None:
        """Follow the log in a background thread until :meth:`stop`, when this runner is
        elected; else stand by in it, and take over when the runner that runs stops."""
        if self._thread is not None:
            return
        self._stopping.clear()
        # At once, not in the thread's first round: a query that comes before it must know
        # whether this process runs the read models (it catches them up itself) or not.
        self.elect()
        self._thread = threading.Thread(target=self._loop, name="capes-read-models",
                                        daemon=True)
        self._thread.start()

    def elect(self) -> bool:
        """Whether this runner is to run the read models now: it holds the store's election
        (:mod:`projections.election`; without one, it always runs). Tried without waiting.

        A runner that begins to stand by logs one line saying who runs them, and one more
        when it takes over; either way what it gathered is dropped and its positions are read
        again from the store (the other runner moved them)."""
        election = self.election
        if election is None:
            return True
        if election.claim():
            if self.standing_by:
                with self._lock:
                    self.standing_by = False
                    self.folds.clear()
                    self._drop()
                    self._positions = {}  # read at the first step
                log.warning("read models: %s runs them now, taking over from %s", election.me,
                            self._holder or "another process")
            return True
        if not self.standing_by:
            with self._lock:
                self.standing_by = True
                self.folds.clear()
                self._drop()
                self._positions = {}
            try:
                self._holder = election.holder()
            except Exception:  # the store is down: the next tries will tell
                self._holder = None
            log.warning("read models: standing by: %s runs them (%s); this process takes over "
                        "when it stops (it tries every %g s)", self._holder or "another process",
                        election.where, self.standby_retry)
        return False

    def _listen(self) -> None:
        """On PostgreSQL, wake up when the store says something was stored (LISTEN on the
        channel its recorder NOTIFYs in every insert, by any process), rather than poll every
        ``poll`` seconds: the read models follow other processes' writes at once, and the
        poll becomes a safety net (:data:`LISTENING_POLL`). And when a reader in another
        process waits for them (LISTEN on the election's wake channel:
        :meth:`~projections.election.Election.nudge`). Other stores: nothing to do."""
        recorder = self.app.recorder
        channel = getattr(recorder, "channel_name", None)
        datastore = getattr(recorder, "datastore", None)
        if channel is None or not hasattr(datastore, "get_connection"):
            return
        from psycopg.sql import SQL, Identifier

        wake: str | None = getattr(self.election, "channel", None)

        def listen() -> None:
            try:
                while not self._stopping.is_set():
                    try:
                        # A connection of the store's pool, as eventsourcing's own subscription
                        # does (autocommit: the LISTEN takes effect at once).
                        with datastore.get_connection() as conn:  # type: ignore[union-attr]
                            for name in (channel, wake) if wake else (channel,):
                                conn.execute(SQL("LISTEN {0}").format(Identifier(name)))
                            self.poke()  # whatever was stored before the LISTEN
                            while not self._stopping.is_set():
                                for notify in conn.notifies(timeout=0.5, stop_after=1):
                                    if notify.channel != wake:
                                        self.poke()
                                    elif not self.standing_by:  # (never passed on: see hurry)
                                        self._hurry_here()
                    except Exception:
                        log.exception("listening to the store failed; polling meanwhile")
                        self._stopping.wait(RETRY)
            finally:
                self._listening = False

        self.poll = max(self.poll, LISTENING_POLL)
        self._listening = True
        threading.Thread(target=listen, name="capes-read-models-listen", daemon=True).start()

    def poke(self) -> None:
        """Something was stored: look now rather than at the next poll (after the linger)."""
        if not self._wake.is_set():  # once per batch, not a lock and a notify per command
            self._wake.set()

    def hurry(self) -> None:
        """A reader waits for the read models (read-your-writes, in another process): look now,
        without the linger, and write what is gathered. A runner that stands by passes it on
        to the one that runs (the servers' readers wake the read models' process of their
        own server, whichever runs)."""
        if self.standing_by and self.election is not None:
            self.election.nudge()
            return
        self._hurry_here()

    def _hurry_here(self) -> None:
        self._hurried = True
        self._hurry.set()
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self._hurry.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def run_forever(self, stop: threading.Event | None = None,
                    between: Callable[[], None] | None = None) -> None:
        """Follow the log in this thread until ``stop`` is set (or :meth:`stop` is called);
        ``between`` is called after every step (``capes projections run``: its collector)."""
        if stop is not None:
            self._stopping = stop
        self._loop(between)

    def _loop(self, between: Callable[[], None] | None = None) -> None:
        retry = RETRY
        while not self._stopping.is_set():
            if not self.elect():
                # Another process runs them: try again in a while (its lock goes with it).
                if between is not None:
                    between()
                self._stopping.wait(self.standby_retry)
                continue
            if not self._listening:
                self._listen()
            hurried, self._hurried = self._hurried, False
            try:
                read = self.step(flush=hurried or self._latest_due())
                if between is not None:
                    between()
                retry = RETRY
                self.error = None
            except Exception as error:
                self.error = error
                log.exception("read models failed; retrying in %.1f s", retry)
                self._stopping.wait(retry)
                retry = min(retry * 2, 30.0)
                with self._lock:
                    self.folds.clear()
                    self._drop()
                    # Read again at the next step, inside this try: a store still down then
                    # fails that step and is tried again after a longer pause. Read here, its
                    # failure ended the thread for good (PostgreSQL unreachable, its wait for a
                    # connection failing fast) and the read models never moved again.
                    self._positions = {}
                continue
            if read >= self.batch:
                continue  # more is waiting: read on at once
            if read == 0:
                # Idle: see whether another process moved the read models (a rebuild).
                with contextlib.suppress(Exception):
                    self.refresh()
            # Caught up with the log as it was. Whatever was stored since (we are poked) is
            # read after a short linger, in one batch: reading again at once took a few events
            # at a time, each batch a transaction of its own, and kept this thread busy and the
            # GIL from requests (measured: most of its time under load went to such batches).
            poked = self._wake.wait(self._idle_for())
            self._wake.clear()
            if poked and self.linger:
                self._hurry.wait(min(self.linger, self._idle_for()))  # cut short by hurry()
            self._hurry.clear()
        # Stopping: what is gathered is written (else it is read again at the next start),
        # then the next runner may take over.
        if not self.standing_by:
            with contextlib.suppress(Exception):
                self.step(flush=True)
        if self.election is not None:
            self.election.release()

    def _latest_due(self) -> bool:
        """Whether the latest-state read models' changes are to be written now (not gathered)."""
        since = self._pending_since
        return self.latest_every <= 0 or (
            since is not None and time.monotonic() - since >= self.latest_every)

    def _idle_for(self) -> float:
        """Seconds to wait for news: the poll, or less when gathered changes fall due."""
        since = self._pending_since
        if since is None:
            return self.poll
        return max(0.0, min(self.poll, since + self.latest_every - time.monotonic()))

    def __enter__(self) -> Catchup:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
