"""The disk's control for the benchmarks' load drivers (``scripts/tables_load.py``,
``scripts/paced_load.py``): an fsync timed beside the store while the load runs.

A command is answered only once its commit is on the disk, so a stall of the disk is a stall of
every command: the control tells such a stall (its own fsyncs stall too) from one of the
server's. Its fsync times are what a commit costs on this disk at that moment, the server's own
writes included (they share the disk): a floor under a command's latency that the server's
Python does not set. A stall may be the disk's own (with no server running at all, it was seen
to reach 600 ms here) or the load's.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

#: An fsync this slow is a stall of the disk: every command waiting on a commit waits as long.
STALL_MS = 50.0


class DiskProbe:
    """In a thread of the driver, a 4 KiB write and an fsync every ``every`` seconds (20 ms) to
    a file in ``folder`` (the store's), each timed."""

    def __init__(self, folder: Path, every: float = 0.02) -> None:
        self.folder, self.every = folder, every
        self.ms: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def summary(self) -> dict[str, float]:
        """The fsyncs' p50, p99 and max (ms) and how many took over :data:`STALL_MS`."""
        ordered = sorted(self.ms)

        def at(q: float) -> float:
            return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] if ordered \
                else float("nan")

        return {"disk_fsync_p50_ms": at(50), "disk_fsync_p99_ms": at(99),
                "disk_fsync_max_ms": ordered[-1] if ordered else float("nan"),
                "disk_fsyncs_over_50_ms": sum(1 for ms in ordered if ms > STALL_MS),
                "disk_fsyncs": len(ordered)}

    def _run(self) -> None:
        block = os.urandom(4096)
        with tempfile.NamedTemporaryFile(dir=self.folder, prefix="fsync-probe-") as f:
            while not self._stop.wait(self.every):
                began = time.perf_counter()
                f.write(block)
                f.flush()
                os.fsync(f.fileno())
                self.ms.append((time.perf_counter() - began) * 1000)
                if f.tell() > 4 * 1024 * 1024:
                    f.seek(0)
