"""The boards and ledgers that the writer process rendered, held by the server (issue 15).

Why: with the writer in a process of its own (:mod:`api.writer`), every read of the board of
now was a trip to that process and back: a frame out, the writer woken, a frame back, a future
resolved. Under a load of board reads alone, answering from what the server holds instead
carried 1.09 to 1.19 times as many reads (the median pair of three probes, each of six or eight
pairs alternated), and the writer's core had nothing to do.

So the server keeps the last board and ledgers it was given for each campaign, with the version
they show, and answers a read of now from them while that version is the campaign's last stored
one, whoever stored what since (another worker, ``capes tokens``): the same board the writer
would have sent. It tells from the store itself, on the event loop
(:class:`application.sqlite_store.LastVersions`): a campaign's last version is one indexed read
of some microseconds; once that read has confirmed a view, a mark of the whole file (SQLite's
``data_version``: the same mark, nothing committed by anyone in between) confirms it again,
taken once per turn of the event loop and shared by every read of that turn (see :meth:`_mark`).
A view at an exact version (a live stream's ``board`` message) never goes stale. What cannot be
told here still goes to the writer: a read that names a store position to include
(read-your-writes: the writer knows whether the store has reached it), and every read of now on
PostgreSQL, whose reads would be round trips the event loop waited for.
"""

from __future__ import annotations

import asyncio
from uuid import UUID

from application.sqlite_store import LastVersions

#: The views held (the writer renders them: :data:`api.routes.queries.RENDERERS`).
KINDS = ("board_of", "ledgers_of")


class _Held:
    """One view held: the version it shows, its JSON, and the store's mark when it was last
    confirmed to be of now (None: not yet)."""

    __slots__ = ("confirmed", "shown", "version")

    def __init__(self, version: int, shown: bytes) -> None:
        self.version = version
        self.shown = shown
        self.confirmed: tuple[int, int] | None = None


class HeldViews:
    """The views (:data:`KINDS`) the writer process rendered last, by campaign."""

    def __init__(self, store: LastVersions | None, size: int = 20_000) -> None:
        #: None: nothing tells here what is current (PostgreSQL): only exact versions.
        self.store = store
        self._size = size
        self._held: dict[tuple[UUID, str], _Held] = {}
        #: The store's mark taken in this turn of the event loop (see :meth:`_mark`).
        self._turn_mark: tuple[int, int] | None = None

    def get(self, campaign_id: UUID, kind: str, position: int | None,
            version: int | None) -> bytes | None:
        """The view ``kind`` of the campaign held here, if it is the one asked for: at
        ``version`` exactly when given, else of now; None when this cannot be told here."""
        if position is not None:
            return None  # whether the store has reached ``position``: the writer knows
        held = self._held.get((campaign_id, kind))
        if held is None:
            return None
        if version is not None:
            return held.shown if held.version == version else None
        store = self.store
        if store is None:
            return None
        mark = self._mark(store)
        if mark is not None and mark == held.confirmed:
            return held.shown  # nobody committed anything since it was confirmed
        # The mark first, then the version: a commit in between leaves a mark already stale.
        if store(campaign_id) != held.version:
            return None
        held.confirmed = mark
        return held.shown

    def _mark(self, store: LastVersions) -> tuple[int, int] | None:
        """The store's mark, taken at the first read of a turn of the event loop and shared by
        the reads of the rest of that turn.

        Why it is still the board of now for each of them: a request whose read runs in this
        turn arrived before the turn began (a callback queued after the mark was taken runs
        after the one that forgets it, queued then), so the mark was taken between its arrival
        and its answer, as a read of its own would have been."""
        mark = self._turn_mark
        if mark is None:
            mark = self._turn_mark = store.mark()
            if mark is not None:
                asyncio.get_running_loop().call_soon(self._forget_mark)
        return mark

    def _forget_mark(self) -> None:
        self._turn_mark = None

    def put(self, campaign_id: UUID, kind: str, version: int, shown: bytes) -> None:
        """Hold what the writer rendered of the campaign at ``version`` (not over a newer
        view held already)."""
        key = (campaign_id, kind)
        held = self._held.get(key)
        if held is not None and held.version > version:
            return
        if held is None and len(self._held) >= self._size:
            self._held.clear()  # a host past this many tables asks the writer once more each
        self._held[key] = _Held(version, shown)

    def drop(self, campaign_id: UUID) -> None:
        """Forget the campaign's views: it changed, and its next read goes to the writer
        without a look at the store first."""
        for kind in KINDS:
            self._held.pop((campaign_id, kind), None)

    def close(self) -> None:
        """Close the store's connection (it opens again if asked)."""
        if self.store is not None:
            self.store.close()
