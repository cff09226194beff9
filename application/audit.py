"""Verifying a campaign's log (R-FAIR-6, R-FAIR-7): its hash chain, its commitments, its dice.

:func:`verify` walks a log in order and stops at the first discrepancy, naming the event
(position and type), the check that failed, what was expected and what was found:

- **positions** run 1, 2, 3… with none missing or repeated;
- **stored form**: each event's JSON decodes into an event of the type its topic names;
- **chain**: each event's ``chain`` is SHA-256(previous chain ‖ the canonical bytes of its
  stored JSON), from the campaign id (:mod:`application.chain`), so one byte changed anywhere is
  found
  at its event; an import also re-derives its source's chain and checks it ends at the head
  ``ImportedFrom`` names;
- **dice**: a scene's start commits to a seed in the same command and its end reveals it; seats'
  seeds come after the commitment and before the seeds close; a derived die comes after they
  closed, its roll counter above every earlier one; the revealed seed hashes to the commitment,
  and every die drawn under it is recomputed (:func:`application.fair.derive`);
- **heads**: an optional known (position, chain), such as a player's last seen event or the
  store's latest snapshot, is part of the log: the log was not cut short or rewritten.

Dice the server did not derive (an explicit dice source: tests, the demo) are reported as not
provably fair, which is not a discrepancy; ``Report.fair`` says whether every die was proven.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

import msgspec

from domain.edition import Edition
from domain.editions import get_edition
from domain.record import RecordEvent
from domain.record.events import (
    DiceCommitted,
    DiceRevealed,
    ImportedFrom,
    SeatSeedAdded,
    SeedsClosed,
)
from domain.text import MAX_INT

from .aggregate import prune_past
from .chain import genesis, link
from .fair import derive
from .log import Entry, stored_log
from .records import Recorded, edition_of

if TYPE_CHECKING:
    from .campaigns import Campaigns

HEX64 = re.compile(r"[0-9a-f]{64}")

Check = Literal["position", "stored", "chain", "import", "commitment", "seeds", "counter",
                "die", "reveal", "head", "snapshot"]


class Discrepancy(msgspec.Struct, frozen=True, kw_only=True):
    """The first thing found wrong, at the event at ``position``."""

    position: int
    #: The event's type ("" when it cannot be read).
    type: str
    check: Check
    expected: str
    found: str
    message: str

    def __str__(self) -> str:
        what = f"event {self.position}" + (f" ({self.type})" if self.type else "")
        return (f"{what}: {self.message}\n  expected: {self.expected}\n  found:    "
                f"{self.found}")


class SceneDice(msgspec.Struct, frozen=True, kw_only=True):
    """What became of the dice of one commitment."""

    scene: int
    committed_at: int
    commitment: str
    #: Seats that added a seed (R-FAIR-2).
    seats: tuple[int, ...]
    closed_at: int | None
    revealed_at: int | None
    #: Dice rolled under this commitment, and how many of them the server derived.
    rolls: int
    derived: int
    status: Literal["verified", "pending", "not derived", "superseded"]
    note: str


class Report(msgspec.Struct, frozen=True, kw_only=True):
    campaign_id: UUID
    #: No discrepancy: the chain holds, every commitment and every derived die checks.
    ok: bool
    events: int
    #: The last event's position and chain: keep it to detect a later rewrite.
    head_position: int
    head: str
    discrepancy: Discrepancy | None
    scenes: tuple[SceneDice, ...]
    #: Dice rolled outside any committed scene without derivation.
    loose_rolls: int
    #: Every die rolled was derived and recomputed from a revealed seed.
    fair: bool
    #: The campaigns these events were imported from: (source, events, head of its chain).
    imported_from: tuple[tuple[UUID, int, str], ...] = ()

    def summary(self) -> str:
        """The report for people, one finding per line."""
        lines = [f"campaign {self.campaign_id}: "
                 + ("OK" if self.ok else "FAILED")
                 + f" — {self.events} events, chain head {self.head_position}:{self.head}"]
        if self.discrepancy is not None:
            lines.append(f"  {self.discrepancy}".replace("\n", "\n  "))
        for source, version, chain in self.imported_from:
            lines.append(f"  events 1..{version} are campaign {source}'s, whose chain was "
                         f"verified to end at {chain}")
        for s in self.scenes:
            lines.append(f"  scene {s.scene} (dice committed at event {s.committed_at}): "
                         f"{s.status}: {s.note}")
        if self.loose_rolls:
            lines.append(f"  {self.loose_rolls} dice rolled outside any committed scene: not "
                         "provably fair: dice were not derived")
        if self.ok:
            lines.append("  every die was derived and checked" if self.fair else
                         "  not every die is proven fair (see above)")
        return "\n".join(lines)


class _Epoch:
    """The dice of one commitment while walking the log."""

    def __init__(self, event: DiceCommitted, position: int) -> None:
        self.scene = event.scene
        self.commitment = event.commitment
        self.committed_at = position
        self.seeds: dict[int, str] = {}
        self.closed_at: int | None = None
        #: (position, type, counter, value, campaign id the die was derived for)
        self.derived: list[tuple[int, str, int, int, UUID]] = []
        self.underived = 0

    def report(self, status: Any, revealed_at: int | None, note: str) -> SceneDice:
        return SceneDice(
            scene=self.scene, committed_at=self.committed_at, commitment=self.commitment,
            seats=tuple(sorted(self.seeds)), closed_at=self.closed_at, revealed_at=revealed_at,
            rolls=len(self.derived) + self.underived, derived=len(self.derived), status=status,
            note=note)


class _Failed(Exception):
    def __init__(self, discrepancy: Discrepancy) -> None:
        self.discrepancy = discrepancy


def _type(record: Recorded[Any]) -> str:
    return type(record.event).__name__


def _fail(record: Recorded[Any] | None, position: int, check: Check, message: str,
          expected: object, found: object) -> _Failed:
    return _Failed(Discrepancy(
        position=position, type=_type(record) if record is not None else "", check=check,
        expected=str(expected), found=str(found), message=message))


class _Walk:
    def __init__(self, campaign_id: UUID, imports: Sequence[ImportedFrom]) -> None:
        self.campaign_id = campaign_id
        self.previous = genesis(campaign_id)
        #: Each import's source chain, re-derived over the events it copied.
        self.sources = {i.source: genesis(i.source) for i in imports}
        self.imports = sorted(imports, key=lambda i: i.version)
        self.edition: Edition | None = None
        self.epoch: _Epoch | None = None
        self.scenes: list[SceneDice] = []
        self.loose = 0
        self.last_counter = 0
        self.position = 0
        self.last: Recorded[Any] | None = None
        # Obligations of the command being walked (R-FAIR-1, R-FAIR-5).
        self.command = 0
        self.started: Recorded[Any] | None = None
        self.ended: Recorded[Any] | None = None
        self.committed = self.revealed = False

    def dice_id(self, position: int) -> UUID:
        """The campaign id a die at ``position`` was derived for: its import's source, if any."""
        for imported in self.imports:
            if position <= imported.version:
                return imported.source
        return self.campaign_id

    def step(self, entry: Entry) -> None:
        expected = self.position + 1
        if entry.position != expected:
            if entry.position > expected:
                raise _Failed(Discrepancy(
                    position=expected, type="", check="position",
                    message=f"event {expected} is missing: the log goes from event "
                    f"{expected - 1} to event {entry.position}",
                    expected=str(expected), found=str(entry.position)))
            raise _fail(entry.record, entry.position, "position",
                        f"event {entry.position} appears again after event {self.position}",
                        expected, entry.position)
        record = entry.record
        if record is None or entry.problem:
            raise _Failed(Discrepancy(
                position=entry.position, type=entry.type, check="stored",
                message=f"the stored event was altered: {entry.problem}",
                expected="an event as the server writes it", found="something else"))
        self.position = entry.position
        self._chain(entry, record)
        self._obligations(record)
        self._dice(record)
        self.last = record

    def _chain(self, entry: Entry, record: Recorded[Any]) -> None:
        chained = link(self.previous, entry.canonical)
        if entry.chain != chained.hex():
            hint = (" (no chain: recorded before hash chains)" if not entry.chain else
                    ": it or an event before it was altered, removed or moved")
            raise _fail(record, entry.position, "chain",
                        f"the hash chain does not match{hint}", chained.hex(),
                        entry.chain or "(none)")
        self.previous = chained
        for imported in self.imports:
            if entry.position <= imported.version:
                self.sources[imported.source] = link(self.sources[imported.source],
                                                     entry.canonical)

    def _obligations(self, record: Recorded[Any]) -> None:
        command = record.command or record.originator_version
        if command != self.command:
            self.finish_command()
            self.command = command
        if self.edition is None:
            self.edition = edition_of(type(record.event))
        event = record.event
        if isinstance(event, RecordEvent):
            return
        if self.edition.starts_scene(event):
            self.started = record
        if self.edition.ends_scene(event):
            self.ended = record

    def finish_command(self) -> None:
        if self.started is not None and not self.committed:
            raise _fail(self.started, self.started.originator_version, "commitment",
                        "a scene started without a commitment to its dice in the same command",
                        "DiceCommitted in this command", "none")
        if self.ended is not None and not self.revealed:
            raise _fail(self.ended, self.ended.originator_version, "reveal",
                        "a scene ended without its dice revealed in the same command",
                        "DiceRevealed in this command", "none")
        self.started = self.ended = None
        self.committed = self.revealed = False

    def _dice(self, record: Recorded[Any]) -> None:
        event, position = record.event, record.originator_version
        epoch = self.epoch
        if isinstance(event, ImportedFrom):
            self._imported(record, event)
        elif isinstance(event, DiceCommitted):
            if not HEX64.fullmatch(event.commitment):
                raise _fail(record, position, "commitment", "a commitment is a SHA-256 in hex",
                            "64 lowercase hex digits", event.commitment)
            if epoch is not None:
                imported = self.last is not None and isinstance(self.last.event, ImportedFrom)
                if not imported:
                    raise _fail(record, position, "commitment",
                                f"new dice committed while those of scene {epoch.scene} "
                                f"(committed at event {epoch.committed_at}) were never revealed",
                                "DiceRevealed first", "DiceCommitted")
                self.scenes.append(epoch.report(
                    "superseded", None, "imported while the scene was played: its seed stayed "
                    "with the source campaign"))
            self.epoch = _Epoch(event, position)
            self.committed = True
        elif isinstance(event, SeatSeedAdded):
            if epoch is None or epoch.closed_at is not None or event.seat in epoch.seeds:
                state = ("no dice are committed to" if epoch is None else
                         f"the seeds closed at event {epoch.closed_at}" if epoch.closed_at
                         else f"seat {event.seat} added a seed already")
                raise _fail(record, position, "seeds", f"a seed added when {state} (R-FAIR-2)",
                            "open seeds, one per seat", state)
            epoch.seeds[event.seat] = event.seed
        elif isinstance(event, SeedsClosed):
            if epoch is None or epoch.closed_at is not None or epoch.scene != event.scene:
                raise _fail(record, position, "seeds", "seeds closed that were not open",
                            f"open seeds of scene {epoch.scene}" if epoch else "open seeds",
                            f"scene {event.scene}")
            epoch.closed_at = position
        elif isinstance(event, DiceRevealed):
            self._revealed(record, event)
        elif not isinstance(event, RecordEvent):
            assert self.edition is not None
            roll = self.edition.rolled(event)
            if roll is not None:
                self._rolled(record, *roll)

    def _rolled(self, record: Recorded[Any], counter: int, value: int) -> None:
        position, epoch = record.originator_version, self.epoch
        if counter == 0:
            if epoch is None:
                self.loose += 1
            else:
                epoch.underived += 1
            return
        if counter <= self.last_counter:
            raise _fail(record, position, "counter",
                        "a roll counter is used once and only goes up (R-FAIR-4)",
                        f"above {self.last_counter}", counter)
        if epoch is None or epoch.closed_at is None:
            raise _fail(record, position, "seeds",
                        "a derived die was rolled before its scene's seeds closed (R-FAIR-3)",
                        "SeedsClosed before the roll",
                        "no commitment" if epoch is None else "seeds still open")
        self.last_counter = counter
        epoch.derived.append((position, _type(record), counter, value, self.dice_id(position)))

    def _revealed(self, record: Recorded[Any], event: DiceRevealed) -> None:
        position, epoch = record.originator_version, self.epoch
        if epoch is None or epoch.scene != event.scene:
            raise _fail(record, position, "reveal", "a seed revealed for dice never committed "
                        "to", f"scene {epoch.scene}" if epoch else "no reveal",
                        f"scene {event.scene}")
        if not HEX64.fullmatch(event.seed):
            raise _fail(record, position, "reveal", "a seed is 32 bytes in hex",
                        "64 lowercase hex digits", event.seed)
        seed = bytes.fromhex(event.seed)
        hashed = hashlib.sha256(seed).hexdigest()
        if hashed != epoch.commitment:
            raise _fail(record, position, "commitment",
                        f"the revealed seed is not the one committed to at event "
                        f"{epoch.committed_at}: its SHA-256 differs", epoch.commitment, hashed)
        seeds = tuple(epoch.seeds.items())
        for at, kind, counter, value, dice_id in epoch.derived:
            should = derive(seed, dice_id, epoch.scene, counter, seeds)
            if should != value:
                raise _Failed(Discrepancy(
                    position=at, type=kind, check="die",
                    message=f"roll {counter} of scene {epoch.scene} does not follow from the "
                    f"seed revealed at event {position}",
                    expected=str(should), found=str(value)))
        derived = len(epoch.derived)
        if epoch.underived:
            status, note = "not derived", (
                f"not provably fair: dice were not derived ({epoch.underived} of "
                f"{epoch.underived + derived} rolls); the seed matches its commitment")
        else:
            status, note = "verified", (
                f"{derived} dice recomputed from the seed revealed at event {position}, "
                f"{len(seeds)} seat seed(s)")
        self.scenes.append(epoch.report(status, position, note))
        self.epoch = None
        self.revealed = True

    def _imported(self, record: Recorded[Any], event: ImportedFrom) -> None:
        position = record.originator_version
        if event.version != position - 1:
            raise _fail(record, position, "import", "an import's record follows the events "
                        "it copied", f"version {position - 1}", f"version {event.version}")
        source_chain = self.sources[event.source].hex()
        if source_chain != event.chain:
            raise _fail(record, position, "import",
                        f"the copied events do not re-derive campaign {event.source}'s chain",
                        event.chain, source_chain)

    def end(self) -> None:
        self.finish_command()
        if self.epoch is not None:
            rolls = len(self.epoch.derived) + self.epoch.underived
            self.scenes.append(self.epoch.report(
                "pending", None, f"the scene is being played: its {rolls} dice so far are "
                "checked when it ends and its seed is revealed"))
            self.epoch = None


def verify(campaign_id: UUID, log: Iterable[Entry], *,
           heads: Iterable[tuple[int, str, str]] = ()) -> Report:
    """Check ``log`` (every event of the campaign, in order) and report the first discrepancy.

    ``heads``: known (position, chain, where it is known from) that must be in the log.
    """
    entries = list(log)
    imports = [e.record.event for e in entries
               if e.record is not None and isinstance(e.record.event, ImportedFrom)]
    walk = _Walk(campaign_id, imports)
    discrepancy: Discrepancy | None = None
    try:
        if not entries:
            raise _Failed(Discrepancy(position=1, type="", check="position",
                                      message="the log is empty", expected="events",
                                      found="none"))
        for entry in entries:
            walk.step(entry)
        known = list(heads)
        # R-FAIR-6, before the last command is judged: a cut that splits a command leaves it
        # half there, and "events were removed from the end" is what happened, not a command
        # missing parts.
        for position, chain, source in known:
            if position > walk.position:
                raise _Failed(Discrepancy(
                    position=position, type="", check="head",
                    message=f"the log ends at event {walk.position}, but {source} knows "
                    f"event {position}: events were removed from the end",
                    expected=f"{position}:{chain}", found=f"{walk.position}:{walk.previous.hex()}"))
        walk.end()
        chains = {e.position: e.chain for e in entries}
        for position, chain, source in known:
            if chains.get(position) != chain:
                raise _Failed(Discrepancy(
                    position=position, type="", check="head",
                    message=f"the chain at event {position} is not the one {source} knows: the "
                    "log was rewritten", expected=chain, found=chains.get(position, "")))
    except _Failed as failed:
        discrepancy = failed.discrepancy
    scenes = tuple(walk.scenes)
    fair = (discrepancy is None and not walk.loose
            and all(s.status in ("verified", "superseded") for s in scenes)
            and not any(s.status == "superseded" and s.rolls for s in scenes))
    return Report(
        campaign_id=campaign_id, ok=discrepancy is None, events=walk.position,
        head_position=walk.position, head=walk.previous.hex() if walk.position else "",
        discrepancy=discrepancy, scenes=scenes, loose_rolls=walk.loose, fair=fair,
        imported_from=tuple((i.source, i.version, i.chain) for i in imports))


#: A head as players and hosts write it: the event's position, a colon, its chain.
_HEAD = re.compile(r"([0-9]{1,19}):([0-9a-fA-F]{64})", re.ASCII)


def parse_head(text: str) -> tuple[int, str]:
    """``POSITION:CHAIN`` (an event's position, from 1, and its chain in 64 hex digits) as
    ``(position, chain)``, the chain in lower case; ValueError naming what is wrong.

    Strict, because a head is evidence: a malformed one must be refused as input, never
    compared with the log and reported as a rewritten log (``verify``'s ``head`` check)."""
    found = _HEAD.fullmatch(text)
    if found is None:
        raise ValueError(f"a head is POSITION:CHAIN, POSITION an event's position (1, 2, …) "
                         f"and CHAIN its chain in 64 hex digits, not {text[:100]!r}")
    position = int(found.group(1))
    if not 1 <= position <= MAX_INT:
        raise ValueError(f"a head's position is from 1 to {MAX_INT}, not {position}")
    return position, found.group(2).lower()


# -- reading a store ---------------------------------------------------------------------------


def verify_stored(app: Campaigns, campaign_id: UUID,
                  heads: Iterable[tuple[int, str, str]] = ()) -> Report:
    """Verify a campaign of ``app``'s store from its stored bytes (not through any cache).

    The store's latest snapshot of the campaign, if it has a chain head, is a known head: cutting
    events off the end of the log is found while the snapshot is there. Then every snapshot is
    checked against the campaign its log folds to at its version: a snapshot is a cache, not
    evidence, and one that disagrees (its state edited) is a discrepancy (check ``snapshot``).
    """
    known = list(heads)
    snapshots: list[Any] = []
    if app.snapshots is not None:
        try:
            snapshots = list(app.snapshots.get(campaign_id))
        except Exception:  # an unreadable snapshot is only a cache: ignored, like on loading
            snapshots = []
        if snapshots and snapshots[-1].chain:
            known.append((snapshots[-1].originator_version, snapshots[-1].chain,
                          "the store's latest snapshot"))
    entries = stored_entries(app, campaign_id)
    report = verify(campaign_id, entries, heads=known)
    if not report.ok or not snapshots:
        return report
    found = check_snapshots(app, [e.record for e in entries if e.record is not None], snapshots)
    if found is None:
        return report
    return msgspec.structs.replace(report, ok=False, discrepancy=found, fair=False)


def check_snapshots(app: Campaigns, records: Sequence[Recorded[Any]],
                    snapshots: Sequence[Any]) -> Discrepancy | None:
    """The first snapshot (oldest first) that is not the campaign ``records`` (its whole,
    verified log) fold to at its version, as a discrepancy; None if they all agree.

    A snapshot taken under another version of its edition's rules is left out: what the rules
    fold to may differ between versions (that is why the version changed), and such a
    snapshot is never used, as loading one raises ``StaleSnapshot`` (the campaign is replayed
    from its log). Checked, every honest store was reported damaged after an upgrade."""
    folded: Any = None
    done = 0
    for snapshot in sorted(snapshots, key=lambda s: s.originator_version):
        version = snapshot.originator_version
        if version > len(records):
            continue  # past the log's end: the head check reports that
        if snapshot.rules_version != get_edition(snapshot.edition).rules_version:
            continue
        folded = app.advance(folded, records[done:version])
        done = version
        expected = type(snapshot).take(folded)
        for field in ("state", "record", "chain", "past"):
            mine, theirs = getattr(expected, field), getattr(snapshot, field)
            if field == "past":
                if not theirs:
                    continue  # written before snapshots kept it: loads then fold the past anew
                # What a load keeps of it (older snapshots reached back to the scene's start).
                theirs = prune_past(theirs, snapshot.record)
                if 0 < len(theirs) <= len(mine):
                    # A past that reaches back less far is a shorter cache, not a wrong one:
                    # the campaign keeps what it kept when a dispute named a move older than
                    # that (R-REC-2), and a revert past it loads the game as it was. Only
                    # states that a revert would take from it must be the log's.
                    mine = mine[len(mine) - len(theirs):]
            if mine != theirs:
                where, want, got = _first_difference(msgspec.to_builtins(mine),
                                                     msgspec.to_builtins(theirs), field)
                return Discrepancy(
                    position=version, type="snapshot", check="snapshot",
                    message=f"the stored snapshot at event {version} is not what the log folds "
                    f"to there ({where}): it is never used", expected=want, found=got)
    return None


def _first_difference(mine: Any, theirs: Any, path: str) -> tuple[str, str, str]:
    """Where two plain values first differ, and the two values there (shortened)."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in sorted(set(mine) | set(theirs), key=str):
            if mine.get(key) != theirs.get(key):
                return _first_difference(mine.get(key), theirs.get(key), f"{path}.{key}")
    elif (isinstance(mine, list | tuple) and isinstance(theirs, list | tuple)
          and len(mine) == len(theirs)):
        for index, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{path}[{index}]")
    return path, repr(mine)[:200], repr(theirs)[:200]


def stored_entries(app: Campaigns, campaign_id: UUID) -> list[Entry]:
    """Every event of a campaign as stored in ``app``'s store, oldest first."""
    return list(stored_log(app.mapper, app.recorder.select_events(campaign_id)))


def stored_campaign_ids(app: Campaigns) -> list[UUID]:
    """Every campaign in ``app``'s store, oldest first: each stream that has a first event."""
    ids: list[UUID] = []
    start = 0
    while True:
        page = app.recorder.select_notifications(start, limit=500, inclusive_of_start=False)
        for notification in page:
            if notification.originator_version == 1:
                found = notification.originator_id
                ids.append(found if isinstance(found, UUID) else UUID(str(found)))
        if len(page) < 500:
            return ids
        start = page[-1].id
