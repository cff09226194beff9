"""The read models of one Campaigns application, opened together: what the server and the CLI
use. :func:`open_read_models` makes their views in the application's store, the projections
and one :class:`~projections.runner.Catchup` for them. Opened to be run here, read models
whose tables were built with another layout than the code's, or from another log than the
store's (:mod:`projections.lineage`), are rebuilt from the log (:meth:`ReadModels.upgrade`)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from application.schema_lock import creating_tables

from . import lineage
from .analytics import Analytics, AnalyticsModel
from .board import Board, BoardModel
from .directory import DirectoryModel
from .election import STANDBY_RETRY, Election, Holder, election_for
from .ledgers import Ledgers, LedgersModel
from .model import Folds, ReadModel
from .runner import BATCH, LATEST_EVERY, LINGER, Catchup, Progress
from .timeline import TimelineModel
from .views import claim_unsynced, open_factory, open_view
from .wake import ENV as WAKE_ENV
from .wake import Wake

if TYPE_CHECKING:
    from application.campaigns import Campaigns

#: Every read model, by name, in the order they are run.
MODELS: dict[str, type[ReadModel]] = {
    m.name: m for m in (BoardModel, LedgersModel, TimelineModel, DirectoryModel, AnalyticsModel)
}
#: ``process`` (the default of ``capes serve``): ``capes serve`` runs the read models in one
#: process of its own beside its workers (elsewhere, as ``internal``); ``internal``: the
#: server runs them in a background thread of each worker; ``external``: another process does
#: (``capes projections run``), the server only reads. Whichever runs them, one runner of a
#: store runs at a time (:mod:`projections.election`): the others stand by.
MODE = "CAPES_PROJECTIONS"
MODES = ("process", "internal", "external")

M = TypeVar("M", bound=ReadModel)

log = logging.getLogger(__name__)


def internal(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process is to run the read models (``CAPES_PROJECTIONS``)."""
    return mode(environ) != "external"


def mode(environ: Mapping[str, str] | None = None) -> str:
    """``CAPES_PROJECTIONS``: one of :data:`MODES` (unset: ``process``)."""
    found = (os.environ if environ is None else environ).get(MODE, "").strip().lower()
    if found not in ("", *MODES):
        raise ValueError(f"{MODE} must be {', '.join(MODES)}, not {found!r}")
    return found or "process"


class ReadModels:
    """The read models of ``app``: their projections, runner, and the queries on them."""

    def __init__(self, app: Campaigns, names: Sequence[str] | None = None, *,
                 runs: bool = True, batch: int = BATCH, poll: float = 0.2,
                 linger: float = LINGER, latest_every: float = LATEST_EVERY,
                 wake: Wake | None = None, woken_at: str | None = None,
                 standby_retry: float = STANDBY_RETRY) -> None:
        unknown = set(names or ()) - set(MODELS)
        if unknown:
            raise ValueError(f"no read model {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(MODELS)}")
        self.app = app
        #: Whether this process runs them (else another process does; this one only reads).
        self.runs = runs
        # Claimed before the file is opened: a file the machine stopped writing is deleted
        # first, and these read models start again from the log (projections/unsynced.py).
        self.unsynced = claim_unsynced(dict(app.env))
        try:
            self.factory = open_factory(dict(app.env), unsynced=self.unsynced is not None)
        except BaseException:
            if self.unsynced is not None:
                self.unsynced.release()  # not left holding a file it never opened
            raise
        folds = Folds(app)
        self.models: dict[str, ReadModel] = {
            name: model(open_view(self.factory, model.views), folds)
            for name, model in MODELS.items() if names is None or name in names
        }
        #: The store's election of the one runner that runs these read models (None: a store
        #: in memory, only this process's). ``woken_at``: the wake socket this process listens
        #: on (``capes projections run``), which it tells the others when it runs them.
        self.election: Election | None = election_for(
            self.factory, "all" if len(self.models) == len(MODELS) else "+".join(self.models),
            woken_at)
        self.runner = Catchup(app, list(self.models.values()), folds, batch=batch, poll=poll,
                              linger=linger, latest_every=latest_every,
                              election=self.election if runs else None,
                              standby_retry=standby_retry)
        self._across: tuple[float, Analytics] | None = None
        #: Tells the process that runs the read models that a reader waits (None: it polls).
        self.wake = wake
        if runs:
            try:
                self.upgrade()
            except BaseException:
                self.close()
                raise

    def upgrade(self) -> list[str]:
        """Reset each read model whose tables were built with another layout than its code's
        (:attr:`ReadModel.layout`), or from another log than the store's (the store was
        restored from a backup, or is another store: :func:`~projections.lineage.astray`):
        the runner then rebuilds it from the log, as a rebuild does. The read models it reset
        (logged, with why).

        Several processes may open the read models at once (the workers of ``internal`` mode,
        a server and ``capes projections run``): under the lock their tables are created with
        (:func:`~application.schema_lock.creating_tables`), the first resets and records the
        new layout, and the others find it current."""
        with creating_tables(self.factory.env):
            stored = {name: model.store.layout() for name, model in self.models.items()}
            stale = [name for name, model in self.models.items()
                     if stored[name] != model.layout]
            built = self.runner.refresh()
            # Read after the positions: they never pass the store's last event, unless the
            # store was replaced under them. Read models of another log list what the store
            # does not have, and would pass over the events it takes next, as if applied.
            head = self.runner.head()
            astray = {name: why for name, model in self.models.items() if name not in stale
                      and (why := lineage.astray(self.app, model.store, built[name], head))}
            if stale or astray:
                self.runner.reset(stale + list(astray))
        for name in stale:
            if built[name]:  # (empty tables, as in a new store, are only marked)
                log.warning("read model %s: rebuilding it from the log (its tables were built "
                            "with layout %s, this release writes layout %s)", name,
                            stored[name], self.models[name].layout)
        for name, why in astray.items():
            log.warning("read model %s: rebuilding it from the log (%s)", name, why)
        return stale + list(astray)

    def model(self, kind: type[M]) -> M:
        found = self.models[kind.name]
        assert isinstance(found, kind)
        return found

    @property
    def board(self) -> BoardModel:
        return self.model(BoardModel)

    @property
    def ledgers(self) -> LedgersModel:
        return self.model(LedgersModel)

    @property
    def timeline(self) -> TimelineModel:
        return self.model(TimelineModel)

    @property
    def directory(self) -> DirectoryModel:
        return self.model(DirectoryModel)

    @property
    def analytics(self) -> AnalyticsModel:
        return self.model(AnalyticsModel)

    # -- running -----------------------------------------------------------------------------

    def start(self) -> None:
        """Follow the log in a background thread, if this process runs the read models (when
        another runner of the store runs, the thread stands by until it stops)."""
        if self.runs:
            self.runner.start()

    def close(self) -> None:
        self.runner.stop()
        if self.election is not None:
            self.election.close()  # (the runner let go of it as it stopped: belt and braces)
        self.factory.close()
        if self.unsynced is not None:
            self.unsynced.release()  # after the connections: the last one syncs the file
        if self.wake is not None:
            self.wake.close()

    def wait(self, position: int | None, names: Sequence[str], timeout: float) -> bool:
        """Whether the named read models have caught up with ``position`` (None: the store's
        head now) within ``timeout`` seconds. Run by another process, they are polled and that
        process is woken: through this server's wake socket (its read models' process, which
        passes it on if it stands by), else through the store's election."""
        nudge: Callable[[], None] | None = self.wake
        if nudge is None and self.election is not None and not self.runs:
            nudge = self.election.nudge
        return self.runner.wait(self._target(position), names, timeout, drive=self.runs,
                                nudge=nudge)

    def beyond(self, position: int | None) -> int | None:
        """The store's head when ``position`` is past it (no wait can reach a position the
        store does not have: a query for one is refused at once, not after its timeout);
        None for a position the store has, for None (its head) and for 0 (as it is)."""
        if not position:
            return None
        head = self.runner.head()
        return head if position > head else None

    def progress(self) -> tuple[int, int]:
        """The lowest position of the read models and the store's head, for ``GET /health``:
        this process's runner's own positions when it runs them, else their tracking rows (one
        small read each, another process moves them), then the store's last position. The
        head is read after the positions, as :meth:`status` does, so it is never below."""
        runner = self.runner
        mine = self.runs and not runner.standing_by
        positions = runner.positions() if mine else runner.refresh()
        return min(positions.values()), runner.head()

    def _target(self, position: int | None) -> int:
        """The position a query asks for: ``position``, or the store's head now (None)."""
        return self.runner.head() if position is None else position

    def _current(self, position: int | None, name: str, timeout: float) -> bool:
        """Whether read model ``name`` has ``position`` (None: the store's head), for a
        document the caller can also render from the campaign's state.

        When this process runs the read models (or stands by to run them, another runner of
        the store running them), a query does not wait for them nor do their work: behind, it
        is answered from the campaign's state, which is the same document (and is in memory).
        Catching up in the request made every query right after a command do the read models'
        work, on the request's thread, in turn with the background thread (measured: a board
        query cost several times a command). Another process's read models are waited for, up
        to ``timeout``."""
        if not self.runs:
            return self.wait(position, [name], timeout)
        if self.runner.position([name]) >= self._target(position):
            return True
        self.runner.poke()
        return False

    # -- queries -----------------------------------------------------------------------------

    def board_of(self, campaign_id: UUID, position: int | None = None,
                 timeout: float = 2.0) -> Board | None:
        """The campaign's board from the read model if it has ``position`` (None: the store's
        head now; 0: as it is; read models of another process are waited for up to
        ``timeout`` seconds); None if not, or if it has no board of this campaign (the caller
        renders it from the campaign's state)."""
        if "board" not in self.models or not self._current(position, "board", timeout):
            return None
        return self.board.board(campaign_id)

    def ledgers_of(self, campaign_id: UUID, position: int | None = None,
                   timeout: float = 2.0) -> Ledgers | None:
        """The campaign's ledgers from the read model, like :meth:`board_of`."""
        if "ledgers" not in self.models or not self._current(position, "ledgers", timeout):
            return None
        return self.ledgers.ledgers(campaign_id)

    def all_analytics(self, max_age: float = 5.0) -> Analytics:
        """The figures across every campaign, recomputed at most every ``max_age`` seconds
        (and only when the read model has moved)."""
        position = self.analytics.store.position()
        cached = self._across
        now = time.monotonic()
        if cached is not None and (cached[1].position == position or now - cached[0] < max_age):
            return cached[1]
        figures = self.analytics.analytics(None)
        assert figures is not None
        self._across = (now, figures)
        return figures

    def rebuild(self, names: Sequence[str] | None = None,
                progress: Progress | None = None) -> tuple[int, float]:
        """Empty the named read models (default: all) and replay the whole log into them;
        (the position reached, seconds taken)."""
        started = time.perf_counter()
        self.runner.reset(names)
        self.runner.catch_up(progress=progress)
        return self.runner.position(), time.perf_counter() - started

    def status(self) -> dict[str, Any]:
        """Each read model's position, stored layout and log (``logs``: whether its mark is
        the store's event, :func:`~projections.lineage.standing`), the store's head, and who
        runs them (``runner``: a :class:`~projections.election.Holder`, None when nobody does
        now; ``election``: where the lock is, None for a store only this process sees)."""
        election = self.election
        # The head read after the positions, as upgrade() does: a runner moving them meanwhile
        # never puts one past the head (which says another log).
        positions = self.runner.refresh()
        head = self.runner.head()
        return {"head": head, "positions": positions,
                "layouts": {name: m.store.layout() for name, m in self.models.items()},
                "logs": {name: lineage.standing(self.app, m.store, positions[name], head)
                         for name, m in self.models.items()},
                "runner": self._runner(),
                "election": election.where if election is not None else None}

    def _runner(self) -> Holder | None:
        """Who runs these read models now: the runner of this set of them (``capes projections
        run --name``) or, when there is none, the runner of them all (``capes serve``'s), which
        runs this set too (a look at this set's lock alone said "nobody" while it ran)."""
        if self.election is None:
            return None
        holder = self.election.holder()
        if holder is not None or len(self.models) == len(MODELS):
            return holder
        everyone = election_for(self.factory, "all")
        try:
            return everyone.holder() if everyone is not None else None
        finally:
            if everyone is not None:
                everyone.close()


def open_read_models(app: Campaigns, names: Sequence[str] | None = None, *,
                     environ: Mapping[str, str] | None = None, **kwargs: Any) -> ReadModels:
    """The read models of ``app``; run in this process unless ``CAPES_PROJECTIONS=external``
    (then waited for, with a wake for their process when ``CAPES_READ_MODELS_WAKE`` names
    its socket)."""
    environ = os.environ if environ is None else environ
    kwargs.setdefault("runs", internal(environ))
    path = environ.get(WAKE_ENV, "").strip()
    if path and not kwargs["runs"]:
        kwargs.setdefault("wake", Wake(path))
    return ReadModels(app, names, **kwargs)
