"""Which CPU each of the server's processes runs on (``CAPES_CPUS``; issue 15).

``capes serve`` with one worker is three processes that hand each request along: the event
loop (HTTP), the writer process (deciding and storing every command) and the read models'
process (at idle priority, :mod:`cli.priority`). Left to the scheduler on a machine of two
CPUs, the loop and the writer wake each other a thousand times a second and keep changing
places: each wakes on whichever CPU looks free (the read models' CPU counts as free, being
idle priority), runs there on caches the other left cold, and is moved back. Pinned, the loop
keeps one CPU and the writer the other, with the read models in the writer's gaps. Measured
under the game mix (``scripts/bench``'s, fresh servers, alternated, the bare route beside each
round): 0.395, 0.438 and 0.430 of the bare route pinned against 0.374, 0.354 and 0.361 left to
the scheduler (the README, "Where the targets stand").

The setting:

- ``auto`` (unset): pin where that was measured, one worker on exactly two CPUs (the ones this
  process may use); elsewhere leave it to the scheduler.
- ``off``: never pin.
- ``A,B`` (two CPU numbers): the event loop on CPU ``A``, the writer and the read models on
  CPU ``B``; for a larger machine, where the host knows which CPUs are free of its other work.

The server's own process pins itself before it starts the others, and each of them pins itself
first thing (:func:`pin_here`), before it starts a thread: a thread takes its CPUs from the one
that starts it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass

from application.config import SettingError

#: The setting a host sets.
ENV = "CAPES_CPUS"
#: What ``capes serve`` tells the processes it starts: the CPU of the writer and read models.
SIDE_ENV = "CAPES_CPU_BESIDE"


@dataclass(frozen=True, slots=True)
class Placement:
    """The CPU of the event loop, and the CPU of the writer and the read models."""

    loop: int
    beside: int

    def describe(self) -> str:
        return f"the event loop on CPU {self.loop}, the writer and read models on CPU {self.beside}"


def _usable() -> set[int] | None:
    """The CPUs this process may run on, or None where the system cannot pin."""
    if not hasattr(os, "sched_getaffinity") or not hasattr(os, "sched_setaffinity"):
        return None
    return set(os.sched_getaffinity(0))


def placement(environ: Mapping[str, str], workers: int = 1,
              usable: set[int] | None = None) -> Placement | None:
    """Where ``capes serve`` puts its processes, by ``CAPES_CPUS`` (None: the scheduler
    decides). ``usable``: the CPUs this process may use (default: asked of the system).

    Raises :class:`SettingError` naming ``CAPES_CPUS`` for a value that cannot work: not
    ``auto``, ``off`` or two distinct CPU numbers, a CPU this process may not use, several
    workers (one loop's placement is all it says), or a system that cannot pin."""
    raw = environ.get(ENV, "")
    value = raw.strip().lower()
    cpus = _usable() if usable is None else usable
    if value in ("", "auto"):
        if workers == 1 and cpus is not None and len(cpus) == 2:
            first, second = sorted(cpus)
            return Placement(loop=first, beside=second)
        return None
    if value == "off":
        return None
    parts = [p.strip() for p in value.split(",")]
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise SettingError(ENV, raw, "must be auto, off, or two CPU numbers as LOOP,BESIDE "
                                     "(e.g. 0,1)")
    loop, beside = int(parts[0]), int(parts[1])
    if loop == beside:
        raise SettingError(ENV, raw, "the event loop and the writer need two different CPUs")
    if workers != 1:
        raise SettingError(ENV, raw, f"places one worker's processes; with --workers "
                                     f"{workers} set it to auto or off")
    if cpus is None:
        raise SettingError(ENV, raw, "this system cannot pin a process to a CPU")
    missing = sorted({loop, beside} - cpus)
    if missing:
        raise SettingError(ENV, raw, f"CPU {', '.join(map(str, missing))} is not one this "
                                     f"process may use ({', '.join(map(str, sorted(cpus)))})")
    return Placement(loop=loop, beside=beside)


def pin_server(where: Placement, environ: MutableMapping[str, str]) -> None:
    """Pin this process (the event loop) and tell the processes it starts, through
    ``environ``, where to pin themselves (:func:`pin_here`)."""
    os.sched_setaffinity(0, {where.loop})
    environ[SIDE_ENV] = str(where.beside)


def pin_here(environ: Mapping[str, str]) -> int | None:
    """Pin this process (the writer or the read models) where ``capes serve`` said; the CPU,
    or None if it said nothing. Call it before starting any thread."""
    found = environ.get(SIDE_ENV, "").strip()
    if not found.isdigit() or _usable() is None:
        return None
    cpu = int(found)
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:  # the CPU went away (a container's CPUs changed): the scheduler decides
        return None
    return cpu
