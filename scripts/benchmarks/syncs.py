"""The store's own syncs, timed inside the server under the half load (``scripts/sync_timer.c``).

The half load's tail is the commands that waited longest for their commit. The disk's control
(``scripts/disk_control.py``) syncs a file of its own beside the store; this times the syncs the
store itself makes (SQLite's ``fdatasync`` of its write-ahead log, in the writer process), so a
round's tail can be set beside the syncs it waited for. The timer is a small C library preloaded
into the server (``LD_PRELOAD``), built here with the machine's C compiler; without one, the
figures are left out and the bench says so.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from disk_control import STALL_MS  # a stall, as the disk's control counts them

from benchmarks import SCRIPTS
from benchmarks.common import percentile, say

#: Syncs at least this slow count in the time the store's syncs held their commits up.
SLOW_MS = 10.0


def build(tmp: Path) -> Path | None:
    """The timer built into ``tmp`` (a shared library), or None (no C compiler, or it failed:
    said)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        say("no C compiler (cc): the store's own syncs are not timed")
        return None
    lib = tmp / "sync_timer.so"
    done = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(lib),
                           str(SCRIPTS / "sync_timer.c"), "-ldl"], capture_output=True, text=True)
    if done.returncode != 0:
        say(f"the sync timer did not build, the store's own syncs are not timed:\n{done.stderr}")
        return None
    return lib


def environment(lib: Path | None, log: Path) -> dict[str, str]:
    """What a server's environment needs for its syncs to be timed into ``log`` inside
    :func:`timing` blocks (nothing without the timer)."""
    if lib is None:
        return {}
    return {"LD_PRELOAD": str(lib), "CAPES_SYNC_LOG": str(log), "CAPES_SYNC_ON": str(_flag(log))}


@contextlib.contextmanager
def timing(log: Path) -> Iterator[None]:
    """The server's syncs are logged into ``log`` inside this block only. Why: the game server
    runs through the whole HTTP part, and its other rounds (the mix at full load) should not pay
    for the log's writes; outside the block the timer costs two clock reads and an
    ``access(2)`` a sync."""
    flag = _flag(log)
    flag.touch()
    try:
        yield
    finally:
        flag.unlink(missing_ok=True)


def _flag(log: Path) -> Path:
    return log.with_name(log.name + ".on")


def summary(log: Path, began: float, ended: float, suffix: str = "-wal") -> dict[str, Any]:
    """The syncs of files whose name ends with ``suffix`` (the store's write-ahead log) that
    started between ``began`` and ``ended`` (``time.monotonic()``): how many, p50, p99, max (ms),
    how many over :data:`STALL_MS`, and the share of the round they spent in syncs of at least
    :data:`SLOW_MS`. Empty if nothing was logged."""
    ms = [(end - start) * 1e3 for start, end in _syncs(log, suffix) if began <= start <= ended]
    if not ms:
        return {}
    return {"store_syncs": len(ms), "store_sync_p50_ms": percentile(ms, 50),
            "store_sync_p99_ms": percentile(ms, 99), "store_sync_max_ms": max(ms),
            "store_syncs_over_50_ms": sum(1 for x in ms if x > STALL_MS),
            "store_slow_sync_share": sum(x for x in ms if x >= SLOW_MS) / 1e3 / (ended - began)}


def _syncs(log: Path, suffix: str) -> list[tuple[float, float]]:
    """Every logged sync of a file whose name ends with ``suffix``: (start, end), seconds of
    ``time.monotonic()``, in order."""
    spans: list[tuple[float, float]] = []
    if log.exists():
        for line in log.read_text().splitlines():
            start, took, _call, path = line.split(" ", 3)
            if path.endswith(suffix):
                spans.append((float(start), float(start) + float(took) / 1e3))
    return sorted(spans)


def stops_in_syncs(stops: list[list[float]], log: Path, suffix: str = "-wal") -> dict[str, Any]:
    """The paced driver's stops (``scripts/paced_load.py``: stretches of 50 ms or more without
    an answer, on the same clock) set beside the store's own syncs of ``log``: how many stops,
    their milliseconds in all, the milliseconds of them in which a sync of the store's log was
    under way, and how many stops were at least half inside them. Why: a stop inside a sync is
    the disk holding the commit every command waits for; one outside is the server's own.
    Empty if the syncs were not timed."""
    if not log.exists():
        return {}
    syncs = _syncs(log, suffix)
    stopped = inside = 0.0
    mostly = 0
    for a, b in stops:
        covered, reached = 0.0, a  # syncs of one writer do not overlap; merge them anyway
        for start, end in syncs:
            if end <= reached or start >= b:
                continue
            covered += min(end, b) - max(start, reached)
            reached = min(end, b)
        stopped += b - a
        inside += covered
        mostly += covered * 2 >= b - a
    return {"stop_count": len(stops), "stop_ms": stopped * 1e3,
            "stop_in_syncs_ms": inside * 1e3, "stops_mostly_in_syncs": mostly}


def stops_text(found: dict[str, Any], lead: str = "") -> str:
    """One line of a round's stops beside the store's syncs, after ``lead`` (empty, lead and
    all, if the syncs were not timed)."""
    count = found.get("stop_count")
    if count is None:
        return ""
    if not count:
        return f"{lead}no stop of {STALL_MS:g} ms or more without an answer"
    return (f"{lead}{count} stop{'s' if count > 1 else ''} of {STALL_MS:g} ms or more without an "
            f"answer, {found['stop_ms']:.0f} ms in all: {found['stop_in_syncs_ms']:.0f} ms of them "
            f"inside the store's own log syncs, {found['stops_mostly_in_syncs']} of the stops "
            "at least half inside them")


def text(found: dict[str, Any]) -> str:
    """One line of a round's store syncs, for the bench's log."""
    if not found:
        return "the store's own syncs: not timed"
    return (f"the store's own log syncs ({found['store_syncs']}): p50 "
            f"{found['store_sync_p50_ms']:.1f} ms, p99 {found['store_sync_p99_ms']:.1f} ms, max "
            f"{found['store_sync_max_ms']:.0f} ms, {found['store_syncs_over_50_ms']} over "
            f"{STALL_MS:g} ms; {found['store_slow_sync_share']:.0%} of the round in syncs of "
            f"{SLOW_MS:g} ms or more")
