"""``Campaigns``: the event-sourced application that stores campaigns and runs commands on them.

The command path is load → (check the expected version) → draw dice → ``decide`` → wrap the
events in :class:`~application.records.Recorded` envelopes → save. A campaign is an immutable
:class:`~application.aggregate.Campaign`, folded by
:func:`~application.aggregate.project_campaign`, cached by
the library's aggregate cache and snapshotted every :data:`SNAPSHOT_INTERVAL` events.

Nothing here reads ``os.environ`` except :func:`open_campaigns`, through :mod:`application.config`:
``Campaigns(env)`` uses exactly the settings it is given (none: the in-memory store).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache, partial
from threading import Lock
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast
from uuid import UUID, uuid4

import msgspec
from eventsourcing.application import AggregateNotFoundError, ProcessingEvent
from eventsourcing.persistence import IntegrityError, Mapper, StoredEvent
from eventsourcing.utils import Environment, EnvType, get_topic

from domain.edition import Edition
from domain.editions import EDITIONS, get_edition, play_of
from domain.errors import InvalidReference, RuleViolation
from domain.record import RecordCommand, RecordEvent
from domain.record import decide as record_decide
from domain.record.commands import (
    ExpireDispute,
    IssueToken,
    OpenDispute,
    SettleDispute,
    Vote,
    WithdrawDispute,
)
from domain.record.decider import check_disputable, guard, may_dispute
from domain.record.events import (
    DiceCommitted,
    DiceRevealed,
    ForkedFrom,
    ForkMade,
    ImportedFrom,
    Rewound,
    SeedsClosed,
)
from domain.text import NAME_LENGTH

from .aggregate import Campaign, StaleSnapshot, Step, UnfoldableLog, project_campaign
from .bounded import BoundedApplication
from .chain import genesis, link, linked
from .config import POSTGRES_RECORDER, persistence_env
from .dice import DiceSource, SecretsDice
from .errors import CampaignBroken, CampaignConflict, CampaignNotFound, VersionNotFound
from .fair import DiceSeeds, derive
from .mapper import MsgspecMapper, SnapshotDecodeError, topic
from .records import Recorded, Snapshot
from .schema_lock import creating_tables
from .sqlite_store import CampaignsSQLiteRecorder, Checkpointer

if TYPE_CHECKING:
    from .log import Entry

log = logging.getLogger(__name__)

#: Events between snapshots: a load replays at most this many events after the last one.
SNAPSHOT_INTERVAL = 100
#: Times an unversioned command is decided when other processes' writes keep getting in
#: between its decision and its commit (two workers on one campaign: about 4% of commands
#: lost a race twice in scripts/soak, none three times).
UNVERSIONED_ATTEMPTS = 3
#: Commands on one campaign are serialised in-process by one of these locks (by id hash).
_LOCK_STRIPES = 64

Clock = Callable[[], datetime]


#: Each edition's commands, for the check that a campaign takes only its own edition's.
_COMMANDS: dict[str, frozenset[type[Any]]] = {
    name: frozenset(edition.command_types) for name, edition in EDITIONS.items()}


def _tag(command: Any) -> str:
    """The ``type`` a client sends for ``command``."""
    config = getattr(type(command), "__struct_config__", None)
    return str(getattr(config, "tag", None) or type(command).__name__)


def _snapshot_failed(campaign_id: UUID, version: int | None) -> None:
    """Log (with the exception being handled) a snapshot that could not be taken or stored:
    never raised, since the command it follows is recorded and a snapshot only saves time."""
    log.exception("snapshot of campaign %s at version %s failed", campaign_id, version)


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


class Staged(msgspec.Struct, frozen=True, kw_only=True):
    """A command decided on a campaign but not yet stored (see ``Campaigns.prepare``)."""

    campaign_id: UUID
    #: The campaign it was decided on (None: it creates the campaign).
    base: Campaign | None
    #: The campaign as it will be once the records are stored.
    campaign: Campaign
    records: tuple[Recorded[Any], ...]
    #: Where the command's own records start: before them, steps of the server's own (a
    #: dispute expiring, the dice's seeds closing) that are stored with them.
    own: int = 0


#: The record's commands that act on the open dispute: after its time ran out, each is answered
#: with the expiry (R-X-REC-7).
_ENDING_A_DISPUTE = (Vote, WithdrawDispute, SettleDispute, ExpireDispute)


def utc_now() -> datetime:
    """The default clock."""
    return datetime.now(UTC)


#: Campaigns whose moves :meth:`Campaigns.disputable_moves` keeps at most.
_MOVE_STARTS_KEPT = 10_000


class Campaigns(BoundedApplication):
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
        checkpoints: bool = True,
    ) -> None:
        """A store of campaigns configured by ``env`` (see
        :func:`application.config.persistence_env`).

        ``dice`` draws every die; by default the dice are provably fair, derived from each
        scene's committed seed (R-FAIR-4, :mod:`application.fair`), while a source given here
        (tests,
        the demo) is used as it is and its rolls are recorded as not derived. ``clock`` stamps
        the events (default: now, UTC); ``snapshot_interval`` is the number of events between
        snapshots (lowered by tests). The scenes' secret seeds are kept in a
        :class:`~application.fair.DiceSeeds` application on the same store. ``checkpoints``:
        whether this process may checkpoint an SQLite file's log (a :class:`Checkpointer`);
        a process that must hold no writer (the read models' at idle priority) says no.
        """
        if snapshot_interval < 1:
            raise ValueError("snapshot_interval must be at least 1")
        #: Whether dice are derived from the scenes' committed seeds (no ``dice`` given).
        self.fair = dice is None
        self.dice: DiceSource = dice or SecretsDice()
        self.clock: Clock = clock or utc_now
        # Shadows the class variable for this instance only; the library reads it via self.
        self.snapshotting_intervals = {Campaign: snapshot_interval}  # type: ignore[misc]
        self._locks = tuple(Lock() for _ in range(_LOCK_STRIPES))
        #: Campaigns whose log was found not to verify (see application.integrity): the first
        #: event found wrong and why. They take no command (CampaignBroken, HTTP 423).
        self.broken: dict[UUID, tuple[int, str]] = {}
        #: By campaign: the scene's start, the log read to, the first events of its game moves
        #: (:meth:`disputable_moves`).
        self._move_starts: dict[UUID, tuple[int, int, tuple[int, ...]]] = {}
        #: Campaigns with a snapshot that disagrees with their log: loaded from their events
        #: alone, never from a snapshot (snapshots are a cache, not evidence).
        self.distrusted: set[UUID] = set()
        # A rewind to a move older than a campaign's kept past loads the game as it was
        # (R-REC-5): the projector needs this app. A state at a version never changes, so
        # such loads are remembered: rewinds whose loads fold more rewinds to old moves cost
        # a load each, never a cascade of the same loads.
        self._past_states = lru_cache(maxsize=256)(self._game_at)
        self._project = partial(project_campaign, game_at=self._past_states)
        # Tables are created by one process at a time (several workers start together).
        with creating_tables(env or {}):
            super().__init__(env)
            self.seeds = DiceSeeds(dict(env or {}))
        #: Encodes events as stored, without compression or encryption, for the hash chain.
        self._bodies = MsgspecMapper()
        #: Told of the seats a stored rewind took away (R-X-REC-8): (campaign, seats,
        #: dispute). A server hands them to its keys (``Keyring.remove_seats``).
        self.on_seats_removed: Callable[[UUID, tuple[int, ...], int], None] | None = None
        #: An SQLite file's write-ahead log is checkpointed here, never by a command's commit
        #: (see application.sqlite_store).
        self.checkpointer: Checkpointer | None = None
        if checkpoints and isinstance(self.recorder, CampaignsSQLiteRecorder) \
                and not self.recorder.datastore.pool.is_sqlite_memory_mode:
            self.checkpointer = Checkpointer(self.recorder.datastore.pool.db_name, self).start()

    def close(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.stop()
        super().close()
        self.seeds.close()

    # -- eventsourcing hooks -----------------------------------------------------------------

    def construct_env(self, name: str, env: EnvType | None = None) -> Environment:
        """The class defaults plus ``env``; unlike the library's, os.environ is not merged in.

        Storage settings come from application.config alone, so a stray ``POSTGRES_*`` or
        ``CAMPAIGNS_*`` variable in the process environment cannot redirect the store.
        """
        settings = dict(type(self).env)
        settings["IS_SNAPSHOTTING_ENABLED"] = "y"
        settings.update(env or {})
        if settings.get("PERSISTENCE_MODULE") == "eventsourcing.sqlite":
            # The same table, a commit's events inserted in one call (see application.sqlite_store).
            settings.setdefault("APPLICATION_RECORDER_TOPIC", get_topic(CampaignsSQLiteRecorder))
        elif settings.get("PERSISTENCE_MODULE") == "eventsourcing.postgres":
            # The same table; inserts without the table lock, readers that wait for the
            # inserts under way instead (see application.postgres_store). A topic, not an
            # import: psycopg is loaded only for a PostgreSQL store.
            settings.setdefault("APPLICATION_RECORDER_TOPIC", POSTGRES_RECORDER)
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
            _snapshot_failed(aggregate_id, version)

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
            for attempt in range(1, UNVERSIONED_ATTEMPTS + 1):
                try:
                    staged = self.prepare(self._load(campaign_id), command, narration=narration,
                                          expected_version=expected_version)
                    return self.commit((staged,))[0]
                except CampaignConflict as conflict:
                    if conflict.current is not None:
                        raise  # a stale expected_version: it says where the campaign is
                    if expected_version is None and attempt < UNVERSIONED_ATTEMPTS:
                        # The client asked for no version check: another process's write
                        # got in between, so decide once more on the campaign as it is now.
                        continue
                    # Lost the race: say where the campaign is now, to decide again from.
                    raise CampaignConflict(campaign_id, conflict.expected,
                                           self._load(campaign_id).version) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def prepare(
        self,
        campaign: Campaign,
        command: Any,
        *,
        narration: str = "",
        expected_version: int | None = None,
    ) -> Staged:
        """What ``command`` would append to ``campaign``: decided, wrapped and folded, not yet
        stored (:meth:`commit` stores it). Raises what :meth:`execute` raises for a refusal.

        ``campaign`` must be the campaign as stored (or as a staged command left it, when
        several are committed together): a stale one is caught by :meth:`commit`.
        """
        campaign_id = campaign.id
        if campaign_id in self.broken:
            raise CampaignBroken(campaign_id, *self.broken[campaign_id])
        if expected_version is not None and expected_version != campaign.version:
            raise CampaignConflict(campaign_id, expected_version, campaign.version)
        base = campaign
        campaign, records = self._expire_dispute(campaign)
        if records and isinstance(command, _ENDING_A_DISPUTE):
            # R-X-REC-7: the dispute it is about expired first; the expiry is its answer.
            return Staged(campaign_id=campaign_id, base=base, campaign=campaign,
                          records=records)
        edition = get_edition(campaign.edition)
        events: tuple[Any, ...]
        if isinstance(command, RecordCommand):
            command = self._complete(campaign, command)
            events = record_decide(campaign.record, edition.seats(campaign.state), command,
                                   closed=edition.closed(campaign.state))  # R-X-REC-3
        else:
            if type(command) not in _COMMANDS[edition.name]:
                # Each campaign takes its own edition's commands only.
                raise InvalidReference(
                    f"{type(command).__name__} ({_tag(command)}) is not a command of edition "
                    f"{edition.name}, this campaign's edition")
            guard(campaign.record, command)  # R-REC-2: the game waits for a dispute
            command, closing = self._roll(campaign, edition, command)
            events = edition.decide(campaign.state, command)
            if closing:
                # R-FAIR-3: the roll is accepted; first the server closes the seeds, as a
                # step of its own (the roll's command stays the player's alone).
                campaign, more = self._stage(campaign_id, campaign, edition, closing, None, "")
                records += more
        seat = getattr(command, "seat", None)
        seat = seat if isinstance(seat, int) and seat > 0 else None
        campaign, more = self._stage(campaign_id, campaign, edition, events, seat, narration)
        return Staged(campaign_id=campaign_id, base=base, campaign=campaign,
                      records=records + more, own=len(records))

    def commit(self, staged: Sequence[Staged]) -> list[Outcome]:
        """Store the records of ``staged`` commands in one transaction (a group commit): all
        of them or, raising CampaignConflict, none (another writer appended first).

        Several may stage commands on one campaign, each from the one before it, in order.
        """
        records = [r for s in staged for r in s.records]
        if records:
            heads = {s.campaign_id: s.campaign for s in staged if s.records}
            positions = self._store(heads, records)
            self._snapshot(staged)
            if self.on_seats_removed is not None:
                self._tell_seats_removed(staged)
        outcomes = []
        done = 0
        for s in staged:
            done += len(s.records)
            outcomes.append(Outcome(
                campaign_id=s.campaign_id, version=s.campaign.version, events=s.records[s.own:],
                state=s.campaign.state, position=positions[done - 1] if s.records else 0,
            ))
        return outcomes

    def _tell_seats_removed(self, staged: Sequence[Staged]) -> None:
        """R-X-REC-8: tell :attr:`on_seats_removed` of the seats each stored rewind took
        away. Told after the rewind is stored, never before: told first, a rewind whose
        commit failed would have shut a seat out that still plays; this way a server that
        stops in between leaves a token that still reads the table, as before this rule."""
        assert self.on_seats_removed is not None
        for s in staged:
            # A rewind adds to what is reverted; the rest of the record keeps that tuple.
            if s.base is None or s.base.record.reverted is s.campaign.record.reverted:
                continue
            disputes = [r.event.dispute for r in s.records if isinstance(r.event, Rewound)]
            if not disputes:
                continue
            edition = get_edition(s.campaign.edition)
            gone = set(edition.seats(s.base.state)) - set(edition.seats(s.campaign.state))
            if not gone:
                continue
            try:
                self.on_seats_removed(s.campaign_id, tuple(sorted(gone)), disputes[-1])
            except Exception:
                # The rewind is stored: its answer stands. The seats' tokens still read.
                log.exception("campaign %s: the seats %s removed by dispute %s could not be "
                              "told to the keys", s.campaign_id, sorted(gone), disputes[-1])

    def _roll(self, campaign: Campaign, edition: Edition,
              command: Any) -> tuple[Any, tuple[SeedsClosed, ...]]:
        """Draw the dice of a rolling command (R-ROLL-1), derived when fair (R-FAIR-4), and
        the ``SeedsClosed`` to append before the scene's first roll (R-FAIR-3)."""
        dice = campaign.record.dice
        seed = None
        if self.fair and dice is not None:
            seed = self.seeds.seed(campaign.id, dice.commitment)
            if seed is None:
                log.warning("campaign %s: no seed behind the commitment of scene %s: its dice "
                            "are drawn without derivation", campaign.id, dice.scene)
        first = campaign.record.rolls + 1
        drawn = 0

        def draw() -> int:
            nonlocal drawn
            drawn += 1
            if seed is None or dice is None:
                return self.dice()
            return derive(seed, campaign.id, dice.scene, first + drawn - 1, dice.seeds)

        command = edition.with_dice(command, draw, first if seed is not None else 0)
        if drawn and dice is not None and not dice.closed:
            return command, (SeedsClosed(scene=dice.scene),)
        return command, ()

    def _fair_dice(self, campaign: Campaign, edition: Edition,
                   events: tuple[Any, ...]) -> tuple[Any, ...]:
        """After a command: reveal the dice of a scene no longer played (R-FAIR-5), and commit
        to a new seed when a scene is being played without one (R-FAIR-1): it has started, an
        undo or a rewind went back into it, or it came from a fork or an import."""
        found: list[Any] = []
        dice = campaign.record.dice
        scene = edition.scene_of(campaign.state)
        if dice is not None and any(isinstance(e, ImportedFrom) for e in events):
            dice = None  # an imported scene's seed stayed with its source: start afresh
        elif dice is not None and (scene != dice.scene or any(
                not isinstance(e, RecordEvent) and edition.starts_scene(e) for e in events)):
            seed = self.seeds.seed(campaign.id, dice.commitment)
            if seed is None:
                log.error("campaign %s: the seed of scene %s cannot be revealed: it is not in "
                          "this store", campaign.id, dice.scene)
            else:
                found.append(DiceRevealed(scene=dice.scene, seed=seed.hex()))
            dice = None
        if scene is not None and dice is None:
            found.append(DiceCommitted(scene=scene, commitment=self.seeds.draw(campaign.id)))
        return tuple(found)

    def _complete(self, campaign: Campaign, command: RecordCommand) -> RecordCommand:
        """Fill in what only the server knows: the disputed event's actor, the time."""
        if isinstance(command, OpenDispute):
            return self._disputed(campaign, command)
        if isinstance(command, ExpireDispute):
            return msgspec.structs.replace(command, at=self.clock())
        return command

    def _disputed(self, campaign: Campaign, command: OpenDispute) -> OpenDispute:
        move = self._move(campaign, command.position)
        return msgspec.structs.replace(
            command,
            position=move.originator_version if move else command.position,
            actor=move.seat if move else None,
            # R-REC-2: a move of the game, whichever of its events is named (a record
            # event, such as the dice's commitment, may follow a move's game events).
            disputable=move is not None and not isinstance(move.event, RecordEvent),
            at=self.clock(),
        )

    def disputed_move(self, campaign_id: UUID, position: int) -> int:
        """The first event of the move a dispute naming ``position`` would be about, or the
        refusal that dispute would get for the move (R-REC-2): what a preview shows."""
        campaign = self._load(campaign_id)
        command = self._disputed(campaign, OpenDispute(position=position, reason="preview"))
        check_disputable(campaign.record, command.position, command.disputable)
        return command.position

    def disputable_moves(self, campaign: Campaign) -> tuple[int, ...]:
        """The first events of the moves a dispute may be about in ``campaign`` (R-REC-2, the
        check of :meth:`disputed_move`), oldest first.

        Read from the log since the scene's start once, then only what came after: every
        seat's page asks after every change (``GET /record``), and a long scene's log was read
        whole each time. Which events start a move of the game never changes (the log only
        grows); whether each may still be disputed (an undo, a rewind) is checked anew."""
        campaign_id, record = campaign.id, campaign.record
        if record.scene_start is None:
            return ()
        start, read, starts = self._move_starts.get(campaign_id, (0, 0, ()))
        if start != record.scene_start or read > campaign.version:
            read, starts = record.scene_start - 1, ()
        found: list[int] = []
        while read < campaign.version:
            page = self.history(campaign_id, read, 1000)
            found.extend(r.originator_version for r in page
                         if (r.command or r.originator_version) == r.originator_version
                         and not isinstance(r.event, RecordEvent))
            if not page:
                break
            read = page[-1].originator_version
        starts += tuple(found)
        if len(self._move_starts) >= _MOVE_STARTS_KEPT:
            self._move_starts.clear()  # bounded: a host of many campaigns starts again
        self._move_starts[campaign_id] = (record.scene_start, read, starts)
        return tuple(p for p in starts if may_dispute(record, p, True))

    def _move(self, campaign: Campaign, position: int) -> Recorded[Any] | None:
        """The first event of the command the event at ``position`` belongs to (R-REC-2: a
        dispute is about the whole move), or None if the log has no such event."""
        if not 1 <= position <= campaign.version:
            return None
        found = self.history(campaign.id, position - 1, 1)
        first = found[0].command or position
        if first != position:
            found = self.history(campaign.id, first - 1, 1)
        return found[0]

    def _expire_dispute(self, campaign: Campaign) -> tuple[Campaign, tuple[Any, ...]]:
        """R-REC-4: a dispute past its time expires, changing nothing, before anything else.

        The campaign after the expiry, and the expiry's records (none if nothing expired)."""
        dispute = campaign.record.dispute
        if dispute is None:
            return campaign, ()
        now = self.clock()
        if now < dispute.expires:
            return campaign, ()
        edition = get_edition(campaign.edition)
        events = record_decide(campaign.record, edition.seats(campaign.state),
                               ExpireDispute(at=now))
        return self._stage(campaign.id, campaign, edition, events, None, "")

    def fork(self, campaign_id: UUID, version: int | None = None, *, name: str | None = None,
             seat: int | None = None) -> Outcome:
        """A new campaign starting from this one's game at ``version`` (R-REC-6).

        Both campaigns record the link: the fork's log starts with the source's state and
        ``ForkedFrom``; the source's log gets ``ForkMade``. Returns the fork's outcome.
        """
        source = self._load(campaign_id, version)
        if version is not None:
            self._check_move_ended(source, version)
        broken = self.broken.get(campaign_id)
        if broken is not None and source.version >= broken[0]:
            # The fork would carry the game as folded from the damaged event on, under a new
            # chain that verifies: the damage laundered (issue 13: fork from before it).
            raise CampaignBroken(campaign_id, broken[0], f"{broken[1]}; a fork starts before "
                                 f"that event (version {broken[0] - 1} at most)")
        edition = get_edition(source.edition)
        fork_id = uuid4()
        if not name:
            # Cut the source's name, not the mark, to fit a name's length: a source named with
            # all of it would give a fork a name no command, the API's included, could give.
            mark = f" (fork at {source.version})"
            name = source.state.name[:NAME_LENGTH - len(mark)] + mark
        events = (edition.fork_event(source.state, name),
                  ForkedFrom(source=campaign_id, version=source.version))
        with self._locks[hash(campaign_id) % _LOCK_STRIPES]:
            current = self._load(campaign_id)
            fork, records = self._stage(fork_id, None, edition, events, seat, "")
            made, more = self._stage(campaign_id, current, edition,
                                     (ForkMade(fork=fork_id, version=source.version),), seat, "")
            staged = [Staged(campaign_id=fork_id, base=None, campaign=fork, records=records)]
            if campaign_id not in self.broken:  # a log that does not verify is not extended
                staged.append(Staged(campaign_id=campaign_id, base=current, campaign=made,
                                     records=more))
            # One transaction: the fork and the source's ForkMade are stored together or, if
            # another writer got to the source first (CampaignConflict), neither is.
            return self.commit(staged)[0]

    def _check_move_ended(self, campaign: Campaign, version: int) -> None:
        """R-X-REC-6: raise unless the game at ``version`` is one a move left, not one in the
        middle of a move (the campaign as loaded at ``version``)."""
        at = self.history(campaign.id, version - 1, 1)[0]
        move = at.command or version
        last = None
        after = version
        while True:
            page = self.history(campaign.id, after, 100)
            mine = [r for r in page if (r.command or r.originator_version) == move]
            last = max((r.originator_version for r in mine
                        if not isinstance(r.event, RecordEvent)), default=last)
            if len(mine) < len(page) or not page:
                break
            after = page[-1].originator_version
        if last is not None:
            raise RuleViolation(
                "R-X-REC-6", f"version {version} is in the middle of a move (events {move} to "
                f"{last}): no game was left there; fork at {move - 1} or at {last}")

    def seat_player(self, campaign_id: UUID, command: Any,
                    issue: Callable[[int], str]) -> tuple[Outcome, str]:
        """Seat a player (``command``: the edition's seating command) and make its token with
        ``issue(seat)``: the seat and its ``SeatTokenIssued`` (R-X-REC-4) are stored in one
        transaction, after the token. A crash in between leaves a token nobody was shown, never
        a seat without a token. The outcome of both, and the token."""
        with self._locks[hash(campaign_id) % _LOCK_STRIPES]:
            seated = self.prepare(self._load(campaign_id), command)
            seat = get_edition(seated.campaign.edition).seats(seated.campaign.state)[-1]
            return self._with_token(seated, IssueToken(seat=seat, holder=seat), issue)

    def issue_token(self, campaign_id: UUID, seat: int,
                    issue: Callable[[int], str]) -> tuple[Outcome, str]:
        """The owner issues ``seat`` a token with ``issue(seat)``, recorded as
        ``SeatTokenIssued`` (R-X-REC-4, refused like any command: no such seat, closed)."""
        with self._locks[hash(campaign_id) % _LOCK_STRIPES]:
            return self._with_token(None, IssueToken(holder=seat), issue,
                                    self._load(campaign_id))

    def _with_token(self, before: Staged | None, command: IssueToken,
                    issue: Callable[[int], str],
                    campaign: Campaign | None = None) -> tuple[Outcome, str]:
        staged = [before] if before is not None else []
        base = before.campaign if before is not None else campaign
        assert base is not None
        staged.append(self.prepare(base, command))
        token = issue(command.holder)  # stored first: see seat_player
        outcomes = self.commit(staged)
        last = outcomes[-1]
        events = tuple(e for o in outcomes for e in o.events)
        return msgspec.structs.replace(last, events=events), token

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

    def import_log(self, source: UUID, log: Sequence[Entry]) -> Outcome:
        """Store a copy of campaign ``source``'s whole log under a new id (R-FAIR-7).

        ``log`` must be the source's events from position 1 as read from an export and verified
        already (:func:`application.audit.verify`). Each copy is stored with the very JSON body of
        the
        original, only chained anew from the new id, so the original's chain can still be
        re-derived from it; ``ImportedFrom`` then records the source, how many of its events
        were copied and the head of its verified chain, all in one transaction. A scene that
        was being played gets a fresh commitment: its seed stayed with the source.

        Raises :class:`UnfoldableLog`, storing nothing, when the events make no game (a chain
        can hold over events no rules wrote).
        """
        campaign_id = uuid4()
        previous = genesis(campaign_id)
        stored: list[StoredEvent] = []
        copies: list[Recorded[Any]] = []
        for entry in log:
            assert entry.record is not None and entry.body is not None, "a verified log"
            previous = link(previous, entry.canonical)
            body = msgspec.json.encode({**entry.body, "chain": previous.hex()})
            if self.mapper.compressor:
                body = self.mapper.compressor.compress(body)
            if self.mapper.cipher:
                body = self.mapper.cipher.encrypt(body)
            stored.append(StoredEvent(originator_id=campaign_id,
                                      originator_version=entry.position, topic=entry.topic,
                                      state=body))
            copies.append(msgspec.structs.replace(entry.record, originator_id=campaign_id,
                                                  chain=previous.hex()))

        def game_at(_: UUID, version: int) -> Any:
            folded = project_campaign(None, copies[:version], game_at)
            if folded is None or folded.version != version:
                raise UnfoldableLog(f"the game after event {version} cannot be folded")
            return folded.state

        try:
            base = project_campaign(None, copies, game_at)
        except UnfoldableLog:
            raise
        except Exception as e:
            # The rules' folds trust their events (the rules decided them); events from a file
            # were decided by no one, so any failure of the fold is the file's, not a bug here.
            raise UnfoldableLog(f"the events cannot be folded into a game "
                                f"({type(e).__name__}: {e})") from e
        if base is None or base.version != len(copies):
            raise UnfoldableLog("an import needs the events of a log from position 1, in order")
        edition = get_edition(base.edition)
        imported = ImportedFrom(source=source, version=base.version, chain=log[-1].chain)
        return self._append(campaign_id, base, edition, (imported,), None, "",
                            prior=tuple(stored))

    def _append(
        self,
        campaign_id: UUID,
        base: Campaign | None,
        edition: Edition,
        events: tuple[Any, ...],
        seat: int | None,
        narration: str,
        prior: tuple[StoredEvent, ...] = (),
    ) -> Outcome:
        """Stage ``events`` after ``base`` (None: a new campaign) and store them at once.

        ``prior``: events already stored as they are that lead up to ``base`` (an import),
        inserted in the same transaction.
        """
        campaign, records = self._stage(campaign_id, base, edition, events, seat, narration)
        if not prior:
            return self.commit((Staged(campaign_id=campaign_id, base=base, campaign=campaign,
                                       records=records),))[0]
        stored = [*prior, *(self.mapper.to_stored_event(r) for r in records)]
        try:
            positions = list(self.recorder.insert_events(stored) or ())
        except IntegrityError:
            raise CampaignConflict(campaign_id, 0) from None
        if self.repository.cache is not None:
            self.repository.cache.put(campaign_id, campaign)
        return Outcome(campaign_id=campaign_id, version=campaign.version, events=records,
                       state=campaign.state, position=max(positions, default=0))

    def _stage(
        self,
        campaign_id: UUID,
        base: Campaign | None,
        edition: Edition,
        events: tuple[Any, ...],
        seat: int | None,
        narration: str,
    ) -> tuple[Campaign, tuple[Recorded[Any], ...]]:
        """``events`` after ``base`` (None: a new campaign) wrapped in their envelopes, and
        the campaign with them folded in; nothing is stored.

        The envelopes are hash-chained (R-FAIR-6) and followed by the dice's commitment or
        reveal when the command started or ended a scene (R-FAIR-1, R-FAIR-5).
        """
        if not events:
            assert base is not None, "creating a campaign must record an event"
            return base, ()
        now = self.clock()
        if now.utcoffset() is None:
            raise ValueError("the clock must return an aware datetime")
        now = now.astimezone(UTC)
        start = base.version if base is not None else 0
        schema = cast("MsgspecMapper", self.mapper).current_schema

        def wrap(after: Campaign | None, number: int, more: tuple[Any, ...]) -> tuple[Any, ...]:
            return tuple(linked(self._bodies, campaign_id, after.chain if after else "", (
                Recorded(
                    originator_id=campaign_id,
                    originator_version=start + n,
                    timestamp=now,
                    seat=seat,
                    narration=narration if n == 1 else "",
                    command=start + 1,
                    schema=schema(topic(type(event))),
                    event=event,
                )
                for n, event in enumerate(more, start=number)
            )))

        records = wrap(base, 1, events)
        campaign = self._project(base, records)
        assert campaign is not None
        dice = self._fair_dice(campaign, edition, events)
        if dice:
            more = wrap(campaign, len(records) + 1, dice)
            campaign = self._project(campaign, more)
            assert campaign is not None
            records += more
        return campaign, records

    def _store(self, heads: Mapping[UUID, Campaign], records: Sequence[Recorded[Any]]) -> list[int]:
        """Save ``records`` in one transaction and cache ``heads`` (each campaign as the records
        leave it); the records' positions. The library's ``save`` without its runtime protocol
        checks (a measurable share of a command): we know what we pass it."""
        processing = ProcessingEvent[UUID]()
        processing.events.extend(records)
        processing.aggregates.update(heads)
        try:
            recordings = self._record(processing)
        except IntegrityError:
            # Someone appended at one of our versions first. Nothing of ours was stored, and
            # the cache still holds the (older, still true) campaigns: the next load
            # fast-forwards them.
            first = records[0]
            raise CampaignConflict(first.originator_id, first.originator_version - 1) from None
        # Only now, with the events stored, may the new campaigns be cached.
        if self.repository.cache is not None:
            for campaign_id, campaign in heads.items():
                self.repository.cache.put(campaign_id, campaign)
        self._notify(recordings)
        return [r.notification.id for r in recordings]

    def _snapshot(self, staged: Sequence[Staged]) -> None:
        """Snapshot each campaign at every version of the records that is a multiple of the
        interval, and after a rewind, from the campaigns in memory (the library would load each
        from the store). A rewind's state may have come from a load of the past (a dispute on
        a move older than the campaign keeps, R-REC-5): a later load starts after it instead of
        loading that past again.

        After the commit, like the library: a failure is logged, not raised (the command is
        recorded; a missing snapshot only costs time).

        The group's snapshots are stored in one transaction, not one each: each transaction
        waits for the disk (an ``fdatasync`` on SQLite), and the campaigns of a busy server
        reach their hundredth events together (a table's players move in turn; a benchmark's
        campaigns in step): 128 snapshots stored one by one held the writer, and every
        command behind it, for some 85 ms (0.66 ms each, measured at half load; issue 15)."""
        interval = self.snapshotting_intervals[Campaign]
        taken: list[Snapshot] = []
        for s in staged:
            rewound = any(isinstance(r.event, Rewound) for r in s.records)
            for n, record in enumerate(s.records, start=1):
                if record.originator_version % interval and not (rewound and n == len(s.records)):
                    continue
                try:
                    at = s.campaign if n == len(s.records) else self._project(
                        s.base, s.records[:n])
                    assert at is not None
                    taken.append(Snapshot.take(at))
                except Exception:
                    _snapshot_failed(s.campaign_id, record.originator_version)
        self._put_snapshots(taken)

    def _put_snapshots(self, taken: Sequence[Snapshot]) -> None:
        """Store ``taken`` in one transaction; if that fails, each on its own, so that one
        snapshot the store refuses costs only itself (each failure is logged)."""
        assert self.snapshots is not None, "snapshotting is always enabled"
        if not taken:
            return
        try:
            self.snapshots.put(list(taken))
            return
        except Exception:
            if len(taken) == 1:
                _snapshot_failed(taken[0].originator_id, taken[0].originator_version)
                return
        for snapshot in taken:  # the store refused the group: each on its own
            try:
                self.snapshots.put([snapshot])
            except Exception:
                _snapshot_failed(snapshot.originator_id, snapshot.originator_version)

    # -- queries -----------------------------------------------------------------------------

    def get(self, campaign_id: UUID, version: int | None = None) -> Campaign:
        """The campaign, now or at ``version`` (CampaignNotFound, VersionNotFound)."""
        return self._load(campaign_id, version)

    def edition_of(self, campaign_id: UUID) -> str:
        """The name of the campaign's edition (CampaignNotFound)."""
        return self._load(campaign_id, None).edition

    def state(self, campaign_id: UUID, version: int | None = None) -> Any:
        """The edition's state of the campaign, now or at ``version`` (time travel)."""
        return self._load(campaign_id, version).state

    def advance(self, campaign: Campaign | None, records: Sequence[Recorded[Any]],
                each: Step | None = None) -> Campaign | None:
        """``campaign`` with ``records`` (its next stored events, in order) folded in.

        None starts from nothing (the first record must be the campaign's first event). For
        read models that keep their own fold: undos and rewinds load the past from this store;
        ``each`` is told the campaign after every record but a first one (see
        :func:`~application.aggregate.project_campaign`).
        """
        return self._project(campaign, records, each=each)

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
        topics = [topic(play_of(name).created_event) for name in EDITIONS]
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
        if campaign_id in self.distrusted and not self._cached(campaign_id, version):
            # Folded from its events alone; once in the cache, it is brought up to date there.
            replayed = self._replay(campaign_id, version)
            if version is None and self.repository.cache is not None:
                self.repository.cache.put(campaign_id, replayed)
            elif version is not None and replayed.version != version:
                raise VersionNotFound(campaign_id, version, replayed.version)
            return replayed
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

    def _cached(self, campaign_id: UUID, version: int | None) -> bool:
        if version is not None or self.repository.cache is None:
            return False
        try:
            self.repository.cache.get(campaign_id)
        except KeyError:
            return False
        return True

    def distrust(self, campaign_id: UUID) -> None:
        """Never again load the campaign from a snapshot (one disagreed with its log)."""
        self.distrusted.add(campaign_id)
        self._past_states.cache_clear()  # some may have come from its snapshots
        if self.repository.cache is not None:
            with contextlib.suppress(KeyError):
                self.repository.cache.get(campaign_id, evict=True)

    def _exists(self, campaign_id: UUID) -> bool:
        return next(iter(self.events.get(campaign_id, limit=1)), None) is not None


def open_campaigns(
    environ: Mapping[str, str] | None = None,
    *,
    dice: DiceSource | None = None,
    clock: Clock | None = None,
    snapshot_interval: int = SNAPSHOT_INTERVAL,
    checkpoints: bool = True,
    **settings: str,
) -> Campaigns:
    """The Campaigns store named by the process environment (or ``environ``).

    See :mod:`application.config` for the variables read. ``settings`` are eventsourcing settings
    laid
    over those (e.g. ``AGGREGATE_CACHE_MAXSIZE="0"``); the other arguments go to Campaigns.
    """
    env = persistence_env(environ)
    env.update(settings)
    return Campaigns(env, dice=dice, clock=clock, snapshot_interval=snapshot_interval,
                     checkpoints=checkpoints)


__all__ = [
    "SNAPSHOT_INTERVAL",
    "Campaign",
    "Campaigns",
    "Outcome",
    "Recorded",
    "Staged",
    "open_campaigns",
    "topic",
]
