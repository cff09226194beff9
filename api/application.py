"""``Campaigns``: the event-sourced application that stores campaigns and runs commands on them.

The command path is load → (check the expected version) → draw dice → ``decide`` → wrap the
events in :class:`~api.records.Recorded` envelopes → save. A campaign is an immutable
:class:`~api.aggregate.Campaign`, folded by :func:`~api.aggregate.project_campaign`, cached by
the library's aggregate cache and snapshotted every :data:`SNAPSHOT_INTERVAL` events.

Nothing here reads ``os.environ`` except :func:`open_campaigns`, through :mod:`api.config`:
``Campaigns(env)`` uses exactly the settings it is given (none: the in-memory store).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from threading import Lock
from typing import Any, ClassVar, Protocol, cast
from uuid import UUID, uuid4

import msgspec
from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError, Mapper
from eventsourcing.utils import Environment, EnvType

from domain.edition import Edition
from domain.editions import EDITIONS, get_edition
from domain.record import RecordCommand, RecordEvent
from domain.record import decide as record_decide
from domain.record.commands import ExpireDispute, OpenDispute
from domain.record.decider import guard
from domain.record.events import ForkedFrom, ForkMade

from .aggregate import Campaign, StaleSnapshot, project_campaign
from .config import persistence_env
from .dice import DiceSource, SecretsDice
from .errors import CampaignConflict, CampaignNotFound, VersionNotFound
from .mapper import MsgspecMapper, SnapshotDecodeError, topic
from .records import Recorded, Snapshot

log = logging.getLogger(__name__)

#: Events between snapshots: a load replays at most this many events after the last one.
SNAPSHOT_INTERVAL = 100
#: Name of each edition's creation event, for listing campaigns from the notification log.
CREATED_EVENT = "CampaignCreated"
#: Commands on one campaign are serialised in-process by one of these locks (by id hash).
_LOCK_STRIPES = 64

Clock = Callable[[], datetime]


class CreatesCampaign(Protocol):
    """A command that creates a campaign (``CreateCampaign``): it names its edition."""

    @property
    def edition(self) -> str: ...


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """What an accepted command did: the events appended and the state after them."""

    campaign_id: UUID
    #: The campaign's version after the command (unchanged if it caused no event).
    version: int
    events: tuple[Recorded[Any], ...]
    state: Any
    #: Position of the last appended event in the store's whole sequence (its notification
    #: id), for read models to catch up to (read-your-writes); 0 when nothing was appended.
    position: int = 0


def utc_now() -> datetime:
    """The default clock."""
    return datetime.now(UTC)


class Campaigns(Application[UUID]):
    """Campaigns of every edition, each an event stream in one store."""

    name = "Campaigns"
    env: ClassVar[dict[str, str]] = {
        # Immutable aggregates: the cache may hand the same object to every reader, no copies.
        "AGGREGATE_CACHE_MAXSIZE": "1000",
        "DEEPCOPY_FROM_AGGREGATE_CACHE": "n",
        # A cached campaign is brought up to date from the store on each load, so writes by
        # another process (or a lost race) are seen; see _load for why we re-cache it.
        "AGGREGATE_CACHE_FASTFORWARD": "y",
    }
    snapshotting_intervals: ClassVar[dict[type[Any], int]] = {Campaign: SNAPSHOT_INTERVAL}
    # With a custom aggregate the library cannot project snapshots by itself (9.5.6 raises
    # ProgrammingError when the events lack a mutate() method): give it our projector.
    snapshotting_projectors: ClassVar[dict[type[Any], Any]] = {Campaign: project_campaign}
    snapshot_class = Snapshot

    def __init__(
        self,
        env: EnvType | None = None,
        dice: DiceSource | None = None,
        clock: Clock | None = None,
        *,
        snapshot_interval: int = SNAPSHOT_INTERVAL,
    ) -> None:
        """A store of campaigns configured by ``env`` (see :func:`api.config.persistence_env`).

        ``dice`` draws every die (default: :class:`~api.dice.SecretsDice`); ``clock`` stamps
        the events (default: now, UTC); ``snapshot_interval`` is the number of events between
        snapshots (lowered by tests).
        """
        if snapshot_interval < 1:
            raise ValueError("snapshot_interval must be at least 1")
        self.dice: DiceSource = dice or SecretsDice()
        self.clock: Clock = clock or utc_now
        # Shadows the class variable for this instance only; the library reads it via self.
        self.snapshotting_intervals = {Campaign: snapshot_interval}  # type: ignore[misc]
        self._locks = tuple(Lock() for _ in range(_LOCK_STRIPES))
        # Undos and rewinds fold by loading the game as it was: the projector needs this app.
        self._project = partial(project_campaign, game_at=self._game_at)
        super().__init__(env)

    # -- eventsourcing hooks -----------------------------------------------------------------

    def construct_env(self, name: str, env: EnvType | None = None) -> Environment:
        """The class defaults plus ``env``; unlike the library's, os.environ is not merged in.

        Storage settings come from api.config alone, so a stray ``POSTGRES_*`` or
        ``CAMPAIGNS_*`` variable in the process environment cannot redirect the store.
        """
        settings = dict(type(self).env)
        settings["IS_SNAPSHOTTING_ENABLED"] = "y"
        settings.update(env or {})
        return Environment(name, settings)

    def construct_mapper(self) -> Mapper[UUID]:
        """The msgspec mapper (with the configured compressor and cipher, if any)."""
        return self.factory.mapper(mapper_class=MsgspecMapper)

    def take_snapshot(
        self, aggregate_id: UUID, version: int | None = None, projector_func: Any = None
    ) -> None:
        """Snapshot the campaign at ``version`` (default: now); a failure is logged, not raised.

        The library snapshots after the events are committed: raising here would report a
        command as failed that has in fact been recorded. A missing snapshot only costs time.
        Loading through ``_load`` (not the library's path) means a stale earlier snapshot is
        replayed around rather than blocking every later snapshot.
        """
        try:
            assert self.snapshots is not None, "snapshotting is always enabled"
            self.snapshots.put([Snapshot.take(self._load(aggregate_id, version))])
        except Exception:
            log.exception("snapshot of campaign %s at version %s failed", aggregate_id, version)

    # -- commands ----------------------------------------------------------------------------

    def create(
        self,
        command: CreatesCampaign,
        *,
        seat: int | None = None,
        narration: str = "",
        campaign_id: UUID | None = None,
    ) -> Outcome:
        """Create a campaign (its edition is ``command.edition``) with a new id, or this one."""
        edition = get_edition(command.edition)
        command = edition.with_dice(command, self.dice)
        events = edition.decide(edition.initial_state(), command)
        return self._append(campaign_id or uuid4(), None, edition, events, seat, narration)

    def execute(
        self,
        campaign_id: UUID,
        command: Any,
        *,
        narration: str = "",
        expected_version: int | None = None,
    ) -> Outcome:
        """Decide ``command`` on the campaign and append its events.

        Raises a DomainError when refused (nothing appended): CampaignNotFound, the rules'
        RuleViolation / NotPermitted / InvalidReference, or StaleVersion (CampaignConflict)
        when ``expected_version`` is not the current version or another writer got there first.
        The acting seat recorded is ``command.seat`` when it has one above 0.
        """
        # In-process, one command per campaign at a time: threads of one server never race
        # each other into a spurious conflict. Across processes the store's unique
        # (id, version) key still decides, and the loser gets a CampaignConflict.
        with self._locks[hash(campaign_id) % _LOCK_STRIPES]:
            campaign = self._load(campaign_id)
            if expected_version is not None and expected_version != campaign.version:
                raise CampaignConflict(campaign_id, expected_version, campaign.version)
            campaign = self._expire_dispute(campaign)
            edition = get_edition(campaign.edition)
            events: tuple[Any, ...]
            if isinstance(command, RecordCommand):
                command = self._complete(campaign, command)
                events = record_decide(campaign.record, edition.seats(campaign.state), command)
            else:
                guard(campaign.record, command)  # R-REC-2: the game waits for a dispute
                command = edition.with_dice(command, self.dice)
                events = edition.decide(campaign.state, command)
            seat = getattr(command, "seat", None)
            seat = seat if isinstance(seat, int) and seat > 0 else None
            return self._append(campaign_id, campaign, edition, events, seat, narration)

    def _complete(self, campaign: Campaign, command: RecordCommand) -> RecordCommand:
        """Fill in what only the server knows: the disputed event's actor, the time."""
        if isinstance(command, OpenDispute):
            disputed = self.history(campaign.id, command.position - 1, 1)
            found = disputed[0] if disputed and command.position <= campaign.version else None
            return msgspec.structs.replace(
                command,
                # A dispute is about a move: it reaches back to the command's first event.
                position=(found.command or found.originator_version) if found else
                command.position,
                actor=found.seat if found else None,
                disputable=found is not None and not isinstance(found.event, RecordEvent),
                at=self.clock(),
            )
        if isinstance(command, ExpireDispute):
            return msgspec.structs.replace(command, at=self.clock())
        return command

    def _expire_dispute(self, campaign: Campaign) -> Campaign:
        """R-REC-4: a dispute past its time expires, changing nothing, before anything else."""
        dispute = campaign.record.dispute
        if dispute is None:
            return campaign
        now = self.clock()
        if now < dispute.expires:
            return campaign
        edition = get_edition(campaign.edition)
        events = record_decide(campaign.record, edition.seats(campaign.state),
                               ExpireDispute(at=now))
        self._append(campaign.id, campaign, edition, events, None, "")
        return self._load(campaign.id)

    def fork(self, campaign_id: UUID, version: int | None = None, *, name: str | None = None,
             seat: int | None = None) -> Outcome:
        """A new campaign starting from this one's game at ``version`` (R-REC-6).

        Both campaigns record the link: the fork's log starts with the source's state and
        ``ForkedFrom``; the source's log gets ``ForkMade``. Returns the fork's outcome.
        """
        source = self._load(campaign_id, version)
        edition = get_edition(source.edition)
        fork_id = uuid4()
        name = name or f"{source.state.name} (fork at {source.version})"
        events = (edition.fork_event(source.state, name),
                  ForkedFrom(source=campaign_id, version=source.version))
        outcome = self._append(fork_id, None, edition, events, seat, "")
        with self._locks[hash(campaign_id) % _LOCK_STRIPES]:
            current = self._load(campaign_id)
            self._append(campaign_id, current, edition,
                         (ForkMade(fork=fork_id, version=source.version),), seat, "")
        return outcome

    def version_at(self, campaign_id: UUID, at: datetime) -> int:
        """The campaign's version at time ``at``: its last event stamped no later than it."""
        found = 0
        after = 0
        while True:
            page = self.history(campaign_id, after, 1000)
            for record in page:
                if record.timestamp > at:
                    return found
                found = record.originator_version
            if len(page) < 1000:
                return found
            after = page[-1].originator_version

    def _append(
        self,
        campaign_id: UUID,
        base: Campaign | None,
        edition: Edition,
        events: tuple[Any, ...],
        seat: int | None,
        narration: str,
    ) -> Outcome:
        """Wrap ``events`` after ``base`` (None: a new campaign), save them, cache the result."""
        if not events:
            assert base is not None, "creating a campaign must record an event"
            return Outcome(
                campaign_id=campaign_id, version=base.version, events=(), state=base.state
            )
        now = self.clock()
        if now.utcoffset() is None:
            raise ValueError("the clock must return an aware datetime")
        now = now.astimezone(UTC)
        start = base.version if base is not None else 0
        records = tuple(
            Recorded(
                originator_id=campaign_id,
                originator_version=start + number,
                timestamp=now,
                seat=seat,
                narration=narration if number == 1 else "",
                command=start + 1,
                event=event,
            )
            for number, event in enumerate(events, start=1)
        )
        campaign = self._project(base, records)
        assert campaign is not None
        try:
            recordings = self.save(campaign, *records)
        except IntegrityError:
            # Someone appended at our version first. Nothing of ours was stored, and the
            # cache still holds the (older, still true) base: the next load fast-forwards it.
            raise CampaignConflict(campaign_id, start) from None
        # Only now, with the events stored, may the new aggregate be cached.
        if self.repository.cache is not None:
            self.repository.cache.put(campaign_id, campaign)
        position = max((r.notification.id for r in recordings), default=0)
        return Outcome(
            campaign_id=campaign_id, version=campaign.version, events=records,
            state=campaign.state, position=position,
        )

    # -- queries -----------------------------------------------------------------------------

    def get(self, campaign_id: UUID, version: int | None = None) -> Campaign:
        """The campaign, now or at ``version`` (CampaignNotFound, VersionNotFound)."""
        return self._load(campaign_id, version)

    def state(self, campaign_id: UUID, version: int | None = None) -> Any:
        """The edition's state of the campaign, now or at ``version`` (time travel)."""
        return self._load(campaign_id, version).state

    def advance(self, campaign: Campaign | None,
                records: Sequence[Recorded[Any]]) -> Campaign | None:
        """``campaign`` with ``records`` (its next stored events, in order) folded in.

        None starts from nothing (the first record must be the campaign's first event). For
        read models that keep their own fold: undos and rewinds load the past from this store.
        """
        return self._project(campaign, records)

    def history(self, campaign_id: UUID, after: int = 0, limit: int = 100) -> list[Recorded[Any]]:
        """Up to ``limit`` recorded events with a version above ``after``, oldest first."""
        records = cast(
            "list[Recorded[Any]]",
            list(self.events.get(campaign_id, gt=after or None, limit=limit)),
        )
        if not records and not self._exists(campaign_id):
            raise CampaignNotFound(campaign_id)
        return records

    def campaign_ids(self) -> list[UUID]:
        """Every campaign's id, oldest first (read from the notification log)."""
        topics = [f"{name}:{CREATED_EVENT}" for name in EDITIONS]
        ids: list[UUID] = []
        start = 0
        while True:
            page = self.recorder.select_notifications(
                start, limit=500, topics=topics, inclusive_of_start=False
            )
            for notification in page:
                originator_id = notification.originator_id
                ids.append(
                    originator_id if isinstance(originator_id, UUID) else UUID(originator_id)
                )
            if len(page) < 500:
                return ids
            start = page[-1].id

    # -- loading -----------------------------------------------------------------------------

    def _game_at(self, campaign_id: UUID, version: int) -> Any:
        """The game state of the campaign at ``version`` (what an undo or rewind returns to)."""
        return self._load(campaign_id, version).state

    def _load(self, campaign_id: UUID, version: int | None = None) -> Campaign:
        if version is not None and version < 1:
            raise VersionNotFound(campaign_id, version, self._load(campaign_id).version)
        try:
            campaign: Campaign = self.repository.get(
                campaign_id, version=version, projector_func=self._project
            )
        except AggregateNotFoundError:
            raise CampaignNotFound(campaign_id) from None
        except (StaleSnapshot, SnapshotDecodeError) as e:
            log.warning("ignoring snapshot of campaign %s: %s", campaign_id, e)
            campaign = self._replay(campaign_id, version)
        if version is None:
            # The library fast-forwards a cached aggregate but, expecting it to be mutable,
            # never puts the new object back: re-cache it, or every load replays the same tail.
            if self.repository.cache is not None:
                self.repository.cache.put(campaign_id, campaign)
        elif campaign.version != version:
            raise VersionNotFound(campaign_id, version, campaign.version)
        return campaign

    def _replay(self, campaign_id: UUID, version: int | None) -> Campaign:
        """Fold every event, ignoring snapshots."""
        events = cast("list[Recorded[Any]]", list(self.events.get(campaign_id, lte=version)))
        campaign = self._project(None, events)
        if campaign is None:
            raise CampaignNotFound(campaign_id)
        return campaign

    def _exists(self, campaign_id: UUID) -> bool:
        return next(iter(self.events.get(campaign_id, limit=1)), None) is not None


def open_campaigns(
    environ: Mapping[str, str] | None = None,
    *,
    dice: DiceSource | None = None,
    clock: Clock | None = None,
    snapshot_interval: int = SNAPSHOT_INTERVAL,
    **settings: str,
) -> Campaigns:
    """The Campaigns store named by the process environment (or ``environ``).

    See :mod:`api.config` for the variables read. ``settings`` are eventsourcing settings laid
    over those (e.g. ``AGGREGATE_CACHE_MAXSIZE="0"``); the other arguments go to Campaigns.
    """
    env = persistence_env(environ)
    env.update(settings)
    return Campaigns(env, dice=dice, clock=clock, snapshot_interval=snapshot_interval)


__all__ = [
    "SNAPSHOT_INTERVAL",
    "Campaign",
    "Campaigns",
    "Outcome",
    "Recorded",
    "open_campaigns",
    "topic",
]
