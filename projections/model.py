"""The projection side's shared parts: a change (one stored event with the campaign before and
after it), the incremental fold that makes changes, and the base of every read model.

A read model is an eventsourcing :class:`~eventsourcing.projection.Projection` whose view is a
:class:`~projections.views.View`. It turns a batch of changes into SQL statements
(:meth:`ReadModel.operations`), and the view runs them together with the tracking update in
one transaction. ``process_event(event, tracking)`` (the library's interface) processes one
event; the runner (:mod:`projections.runner`) calls :meth:`ReadModel.process_changes` with many.

Each read model has a *layout* (:attr:`ReadModel.layout`), the version of what it writes: bump
it in the same change that makes it write something else (a new field in a document, a figure
computed otherwise, a new column), never otherwise. Rows already written stay as they were
until their campaign's next event, or for ever; so whoever runs the read models, on opening
them, rebuilds from the log each one whose tables were built with another layout
(:meth:`projections.service.ReadModels.upgrade`), and the host need not know which changed.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import UUID

import msgspec
from eventsourcing.persistence import Tracking
from eventsourcing.projection import Projection

from . import lineage
from .views import PostgresView, SQLiteView, View, iso

if TYPE_CHECKING:
    from application.aggregate import Campaign
    from application.campaigns import Campaigns
    from application.records import Recorded
    from domain.record import Record

    from .views import Op


@dataclass(frozen=True, slots=True)
class Change:
    """One stored event, where it is in the store, and the campaign around it."""

    #: The event's notification id: its position in the store's whole sequence.
    position: int
    record: Recorded[Any]
    #: The campaign before the event (None before its first) and after it; both None for read
    #: models that need no state (``needs_state = False``).
    before: Campaign | None = None
    after: Campaign | None = None
    #: The campaign's id and the event's time as the tables store them: made once here for
    #: every read model that writes them (a tenth of the read models' CPU when each made its
    #: own).
    campaign: str = field(init=False)
    at: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "campaign", str(self.record.originator_id))
        object.__setattr__(self, "at", iso(self.record.timestamp))

    @property
    def campaign_id(self) -> UUID:
        return self.record.originator_id

    @property
    def version(self) -> int:
        return self.record.originator_version


class Folds:
    """The campaigns as of the events seen last, folded forward one event at a time.

    A campaign not held (a cold start, or one pushed out by the ``size`` most recently used
    ones) is loaded from the application as it was just before the event (snapshots make that
    cheap) and folded forward from there.
    """

    def __init__(self, app: Campaigns, size: int = 1000) -> None:
        self.app = app
        self.size = size
        self._last: OrderedDict[UUID, Change] = OrderedDict()
        #: Campaigns loaded from the application rather than folded (cold starts).
        self.loads = 0

    def change(self, record: Recorded[Any], position: int) -> Change:
        """The change of ``record`` (its campaign before and after it)."""
        campaign_id, version = record.originator_id, record.originator_version
        last = self._last.get(campaign_id)
        if last is not None and last.version == version and last.position == position:
            return last  # asked again (another read model of the same batch)
        before: Campaign | None
        if last is not None and last.after is not None and last.after.version == version - 1:
            before = last.after
        elif version == 1:
            before = None
        else:
            before = self.app.get(campaign_id, version - 1)
            self.loads += 1
        after = self.app.advance(before, [record])
        assert after is not None
        return self._remember(Change(position=position, record=record, before=before,
                                     after=after))

    def _remember(self, change: Change) -> Change:
        """Hold ``change`` as its campaign's last (the ``size`` most recently used)."""
        self._last[change.campaign_id] = change
        self._last.move_to_end(change.campaign_id)
        if len(self._last) > self.size:
            self._last.popitem(last=False)
        return change

    def changes(self, items: Sequence[tuple[int, Recorded[Any]]]) -> list[Change]:
        """The changes of ``items`` ((position, record), in store order), as :meth:`change`
        makes them one by one, but with each campaign's records of the batch folded in one
        go: one aggregate built and pruned per campaign, not per event. The fold is the largest
        part of the read models' work: over a history made like the game mix's (48 campaigns,
        41,184 events, read 1,500 at a time) it took 8.6 to 8.7 µs of CPU an event folded one
        by one, 6.4 to 6.5 so; 3.5 against 6.2 with the events decoded beforehand.

        The campaign after each event but the last of its campaign is the game's state, record
        and bookkeeping after it, without the past states an undo looks up (``past`` empty: a
        fold from it would load them); the last one, which the next batch folds from, is whole.
        """
        by: dict[UUID, list[tuple[int, Recorded[Any]]]] = {}
        for item in items:
            by.setdefault(item[1].originator_id, []).append(item)
        made = {campaign_id: iter(self._fold(mine)) for campaign_id, mine in by.items()}
        return [next(made[record.originator_id]) for _, record in items]

    def _fold(self, items: list[tuple[int, Recorded[Any]]]) -> list[Change]:
        """The changes of one campaign's ``items``, its next events in order."""
        position, record = items[0]
        first = self.change(record, position)  # from the last fold, or loaded
        rest = items[1:]
        if not rest or rest[-1][1].originator_version - first.version != len(rest):
            return [first, *(self.change(r, p) for p, r in rest)]  # not in one run: one by one
        base = first.after
        assert base is not None
        steps: list[Campaign] = []

        def each(version: int, modified: datetime, state: Any, rec: Record,
                 chain: str) -> None:
            steps.append(msgspec.structs.replace(
                base, version=version, modified_on=modified, state=state, record=rec,
                chain=chain, past=()))

        after = self.app.advance(base, [r for _, r in rest], each)
        assert after is not None
        steps[-1] = after
        made = [first]
        before = base
        for (position, record), step in zip(rest, steps, strict=True):
            made.append(Change(position=position, record=record, before=before, after=step))
            before = step
        self._remember(made[-1])
        return made

    def clear(self) -> None:
        self._last.clear()


class ReadModel(Projection[Any]):
    """Base of the read models: a projection over the Campaigns notification log."""

    #: The read model's name (``board``, ``ledgers``…), for the CLI and the tables.
    name = ""
    #: The view classes: (SQLite, PostgreSQL).
    views: ClassVar[tuple[type[SQLiteView], type[PostgresView]]]
    #: The version of what it writes: bumped by whoever changes that (see the module's
    #: docstring); tables built with another layout are rebuilt when the read models start.
    layout: ClassVar[int] = 1
    #: Whether its changes need the campaign before and after each event.
    needs_state: ClassVar[bool] = True
    #: Whether it holds each campaign's latest state only (its rows come from the last change
    #: of each campaign in a batch): the background runner may then gather its changes and
    #: write them less often (``projections.runner.LATEST_EVERY``).
    latest_only: ClassVar[bool] = False

    def __init__(self, view: View, folds: Folds | None = None) -> None:
        super().__init__(view)
        self.folds = folds

    @property
    def store(self) -> View:
        view: View = self.view
        return view

    def process_event(self, domain_event: Any, tracking: Tracking) -> None:
        """Process one event (eventsourcing's Projection interface) in its own transaction."""
        if self.needs_state:
            if self.folds is None:
                raise RuntimeError(f"the {self.name} read model needs Folds for its state")
            change = self.folds.change(domain_event, tracking.notification_id)
        else:
            change = Change(position=tracking.notification_id, record=domain_event)
        self.process_changes([change], self.store.position())

    def process_changes(self, changes: Sequence[Change], expected: int) -> int:
        """Apply ``changes`` (in store order, all after ``expected``) and track the last one,
        in one transaction; the new position. IntegrityError if the tracking is not at
        ``expected`` (nothing applied)."""
        position = changes[-1].position
        mark = lineage.record(self.name, lineage.mark_of(position, changes[-1].record))
        self.store.write(expected, position, [*self.operations(changes), mark])
        return position

    def operations(self, changes: Sequence[Change]) -> list[Op]:
        """The statements that apply ``changes`` to the tables."""
        raise NotImplementedError

    def reset(self) -> None:
        """Empty the read model (a rebuild starts here), built from now on with its layout."""
        self.store.reset(self.layout)


def last_per_campaign(changes: Sequence[Change]) -> list[Change]:
    """The last change of each campaign in ``changes`` (for read models of the latest state)."""
    last: dict[str, Change] = {}
    for change in changes:
        last[change.campaign] = change  # a str's hash is kept; a UUID's is computed each time
    return list(last.values())


class DocumentModel(ReadModel):
    """A read model of one JSON document per campaign, rendered from its latest state.

    Its table (``capes_{name}``) has the campaign's id, version, the store position of the
    event it is as of, and the document. Only the last change of each campaign in a batch is
    rendered: the earlier ones would be overwritten in the same transaction anyway.
    """

    latest_only = True

    def render(self, campaign: Campaign) -> bytes | None:
        """The document of the campaign (None: this read model has none for its edition)."""
        raise NotImplementedError

    def operations(self, changes: Sequence[Change]) -> list[Op]:
        rows = []
        for change in last_per_campaign(changes):
            assert change.after is not None
            body = self.render(change.after)
            if body is not None:
                rows.append((change.campaign, change.version, change.position,
                             body.decode()))
        return [(document_upsert(self.name), rows)]

    def document(self, campaign_id: UUID) -> tuple[int, bytes] | None:
        """The campaign's (version, document), or None if it has none (yet)."""
        found = self.store.read(
            f"SELECT version, body FROM {{schema}}capes_{self.name} WHERE campaign_id=?",
            (str(campaign_id),),
        )
        if not found:
            return None
        version, body = found[0]
        return int(version), body.encode()


def document_ddl(name: str) -> tuple[str, ...]:
    """The table of a DocumentModel called ``name``."""
    return (
        f"CREATE TABLE IF NOT EXISTS {{schema}}capes_{name} (campaign_id TEXT PRIMARY KEY, "
        "version INTEGER NOT NULL, position BIGINT NOT NULL, body TEXT NOT NULL)",
    )


def document_upsert(name: str) -> str:
    return (
        f"INSERT INTO {{schema}}capes_{name} (campaign_id, version, position, body) "
        "VALUES (?, ?, ?, ?) ON CONFLICT (campaign_id) DO UPDATE SET "
        "version = excluded.version, position = excluded.position, body = excluded.body"
    )
