"""The garbage collector of a server process that holds thousands of streams open (issue 15).

CPython's full collection walks every object the collector tracks that is not frozen. A live
stream is some 120 such objects that live as long as the stream (uvicorn's connection and
request, Litestar's middleware calls, the stream's own): 4,000 streams, a thousand tables,
are half a million objects, and each full collection then paused the whole process for 150
to 400 ms, every few seconds to a minute. Commands queued behind such a pause: it alone put
the command p99 of a thousand tables over 50 ms.

So every :data:`EVERY` seconds the server collects what is not frozen (what came since the
last time: a few milliseconds) and freezes what survived (``gc.freeze``, which costs nothing).
The collector's automatic full collections then walk only what came after, and stay short.

What this gives up: an object frozen here that later becomes garbage in a reference cycle is
not reclaimed while it is frozen (without a cycle, reference counting frees it as usual; a
stream that closes leaves none). Every :data:`THAW_EVERY` seconds, everything is unfrozen and
collected once — one long pause an hour instead of many — so such garbage is bounded by what
an hour makes.

The writer's process (``api.writer_process``) and the read models' (``capes projections
run``) collect the same way between their passes: what they hold long is the campaigns they
fold. For the read models, over a history made like the game mix's (48 campaigns, 41,184
events, read 1,500 at a time): folding took 7.4 to 7.7 µs of CPU an event with the collector
left as it is, 5.3 to 5.9 collected and frozen so, and 5.3 to 5.6 with no collection at all.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time

log = logging.getLogger(__name__)

#: Seconds between two collections of what is not frozen yet, each followed by a freeze.
EVERY = 1.0
#: Seconds between two collections of everything (frozen objects included).
THAW_EVERY = 3600.0


class Collector:
    """Collects and freezes on the event loop every :attr:`every` seconds (:meth:`start`)."""

    def __init__(self, every: float = EVERY, thaw_every: float = THAW_EVERY) -> None:
        self.every = every
        self.thaw_every = thaw_every
        self._handle: asyncio.TimerHandle | None = None
        self._thawed = time.monotonic()
        #: The last pass: seconds it took and whether it collected everything (for tests).
        self.last: tuple[float, bool] | None = None
        #: When the last pass ended (monotonic seconds).
        self.last_at = -float("inf")

    def start(self) -> None:
        """Collect and freeze what the process built so far, then every :attr:`every` s."""
        self.collect(everything=True)
        self._schedule()

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _schedule(self) -> None:
        self._handle = asyncio.get_running_loop().call_later(self.every, self._tick)

    def due(self) -> bool:
        """Whether :attr:`every` seconds have passed since the last pass (for a process with
        no event loop, which calls :meth:`tick_if_due` between its passes)."""
        return self.last_at + self.every <= time.monotonic()

    def tick_if_due(self) -> None:
        """:meth:`tick` if :meth:`due` (a process with no event loop, between its passes)."""
        if self.due():
            self.tick()

    def tick(self) -> None:
        """One pass: what is not frozen, or everything once :attr:`thaw_every` has passed."""
        self.collect(everything=time.monotonic() - self._thawed >= self.thaw_every)

    def _tick(self) -> None:
        try:
            self.tick()
        finally:
            self._schedule()

    def collect(self, everything: bool = False) -> int:
        """Collect what is not frozen (``everything``: thaw and collect all first), then
        freeze what survived. The number of objects found unreachable."""
        began = time.perf_counter()
        if everything:
            gc.unfreeze()
            self._thawed = time.monotonic()
        found = gc.collect()
        gc.freeze()
        took = time.perf_counter() - began
        self.last = (took, everything)
        self.last_at = time.monotonic()
        if log.isEnabledFor(logging.DEBUG):  # counting the frozen walks them all: not for free
            log.debug("collected %d objects in %.1f ms%s; %d frozen", found, took * 1000,
                      " (everything)" if everything else "", gc.get_freeze_count())
        return found
