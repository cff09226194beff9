"""The CPU priority of the read models' process (``capes projections run --priority``,
``CAPES_READ_MODELS_PRIORITY`` for the one ``capes serve`` starts).

Why ``idle`` under ``capes serve``: on a machine of two cores the server's event loop, its
writer process and the read models' process take turns at the CPU. The read models fold a
batch of events in one go (every poll, 0.2 s apart on SQLite): tens of milliseconds in which a
core is theirs while the requests and the writer share the other, and the answers fall behind.
The read models can wait: what a table sees of *now* (the board, the ledgers, a command's
answer) comes from the writer, and a read model only lags. At ``idle`` (Linux ``SCHED_IDLE``,
else nice 19) they take only the CPU that requests and writes leave; a query that waits for
a position still wakes them (``projections.wake``), and they run as soon as a core is free.
Measured under the benchmark's game mix at half load (alternated; the README, "Who runs
them"): the commands' p99 10 to 15 ms at ``idle`` against 13 to 28 ms at ``normal``; under the
closed-loop mix the read models still caught up within 0.2 s of the load's end.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from application.config import SettingError

#: The setting that tells ``capes serve`` its read models' process's priority.
ENV = "CAPES_READ_MODELS_PRIORITY"
#: ``idle``: only the CPU the rest leaves (the default of ``capes serve``); ``normal``: as
#: any process.
PRIORITIES = ("idle", "normal")
#: The niceness where ``SCHED_IDLE`` does not exist (the lowest there is).
LOWEST_NICE = 19


def serve_priority(environ: Mapping[str, str]) -> str:
    """``CAPES_READ_MODELS_PRIORITY`` (unset: ``idle``); a :class:`SettingError` naming it
    for any other value."""
    found = environ.get(ENV, "").strip().lower()
    if found not in ("", *PRIORITIES):
        raise SettingError(ENV, environ.get(ENV, ""), f"must be {' or '.join(PRIORITIES)}")
    return found or "idle"


def lower_to_idle() -> str:
    """Make this process run only when a core is free of other work: ``SCHED_IDLE`` on Linux,
    else the lowest niceness. Both need no privilege (a process may always lower itself).
    Returns what was done, for the process's first line."""
    if hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        return "SCHED_IDLE"
    os.nice(LOWEST_NICE - os.nice(0))
    return f"nice {os.nice(0)}"
