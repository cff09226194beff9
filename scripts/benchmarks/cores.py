"""The two cores: what work on one costs the other (a control of the machine, no project code).

Why: every target of issue 15 not met on these 2-core virtual machines has the same shape:
work added on the second core (the writer process beside the event loop, the read models'
process even at idle priority, a second worker) adds less than a core, and slows what runs on
the first. A probe on 2026-11-29 found why with nothing of the project running: a loop of pure
Python pinned to one core took 1.7 to 1.9 times as much CPU time for the same work while a
busy loop ran on the other core — at normal priority or at ``SCHED_IDLE`` alike, a loop of
Python or of the shell alike — so the guest's two cores share one physical core's resources
(two hyperthreads of one core on the host, as far as the guest can tell: ``lscpu`` inside
says one thread a core). This part measures it in every run, beside the project's figures.

The work: the same fixed loop of Python (about a second alone) in a child pinned to core 0,
timed by its own CPU clock (so that time the host takes from the machine, steal, is not
counted), alternating three conditions a round: alone; beside a busy loop of Python pinned to
core 1; beside the same loop at ``SCHED_IDLE``. The medians over the rounds are the figures,
and ``2 * alone / beside`` is how many cores' worth of work the two cores do when both are
busy: 2.0 on a machine whose cores are independent.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchmarks.common import _machine, say

HEADING = "## The two cores: what work on one costs the other"

#: The timed loop (its iterations) and the rounds of the three conditions.
ITERATIONS = 20_000_000
ROUNDS = {"full": 5, "quick": 2}

_TIMED = ("import time\nc = time.process_time()\nx = 0\n"
          "for i in range({n}): x += i & 7\nprint(time.process_time() - c)")
_BUSY = "while True: pass"


def _pinned(core: int, idle: bool = False) -> Any:
    """A ``preexec_fn``: the child on ``core`` only, at ``SCHED_IDLE`` if ``idle``."""
    def setup() -> None:
        os.sched_setaffinity(0, {core})
        if idle:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    return setup


@contextmanager
def _busy(idle: bool) -> Iterator[None]:
    """A busy loop of Python on core 1 for as long as the block runs."""
    proc = subprocess.Popen([sys.executable, "-c", _BUSY], preexec_fn=_pinned(1, idle))
    try:
        time.sleep(0.2)  # let it start before the timed loop does
        yield
    finally:
        proc.kill()
        proc.wait()


def _timed(iterations: int) -> float:
    """CPU seconds the timed loop took on core 0."""
    out = subprocess.run([sys.executable, "-c", _TIMED.format(n=iterations)], check=True,
                         capture_output=True, text=True, preexec_fn=_pinned(0)).stdout
    return float(out)


def cores_part(quick: bool) -> dict[str, Any]:
    """The three conditions' CPU seconds, round by round, and their medians."""
    if len(os.sched_getaffinity(0)) < 2 or not hasattr(os, "SCHED_IDLE"):
        say("cores: skipped (needs two cores and Linux's scheduler policies)")
        return {"skipped": "this needs two cores and Linux's SCHED_IDLE"}
    rounds = ROUNDS["quick" if quick else "full"]
    say(f"cores: a loop of Python on core 0, alone and beside a busy loop on core 1, "
        f"{rounds} rounds")
    seen: dict[str, list[float]] = {"alone": [], "beside": [], "beside_idle": []}
    stolen0 = _machine()[2]
    for _ in range(rounds):
        seen["alone"].append(_timed(ITERATIONS))
        with _busy(idle=False):
            seen["beside"].append(_timed(ITERATIONS))
        with _busy(idle=True):
            seen["beside_idle"].append(_timed(ITERATIONS))
    result: dict[str, Any] = {"rounds": rounds, "seen": seen,
                              "stolen_jiffies": _machine()[2] - stolen0}
    for name, values in seen.items():
        result[name] = statistics.median(values)
    result["both_busy_cores"] = 2 * result["alone"] / result["beside"]
    # Round by round too: the alone runs move with what the host's other machines do.
    result["by_round"] = [2 * a / b for a, b in zip(seen["alone"], seen["beside"], strict=True)]
    say(f"  alone {result['alone']:.2f} s, beside a busy core {result['beside']:.2f} s, "
        f"beside one at idle priority {result['beside_idle']:.2f} s: both cores busy do "
        f"{result['both_busy_cores']:.2f} cores' work")
    return result


def cores_report(r: dict[str, Any], when: str) -> str:
    """The section of docs/benchmarks.md for :func:`cores_part`'s result ``r``."""
    if "skipped" in r:
        return f"{HEADING}\n\nSkipped: {r['skipped']}.\n"

    def row(name: str, what: str) -> str:
        values = ", ".join(f"{v:.2f}" for v in r["seen"][name])
        return f"| {what} | **{r[name]:.2f} s** | {values} |"

    return "\n".join([
        HEADING, "",
        f"Measured {when}.", "",
        "| the same loop of Python on core 0 | CPU seconds (median) | each round |",
        "|---|---|---|",
        row("alone", "alone (core 1 idle)"),
        row("beside", "beside a busy loop on core 1"),
        row("beside_idle", "beside a busy loop on core 1 at `SCHED_IDLE`"),
        "",
        f"With both cores busy, the two do **{r['both_busy_cores']:.2f} cores' work** "
        f"(2 * alone / beside; 2.00 where the cores are independent; round by round "
        f"{', '.join(f'{v:.2f}' for v in r['by_round'])}): work on the second "
        f"core slows the first whatever its priority. So a second process (the writer, the "
        f"read models, a second worker) adds at most that much to the first's work here, "
        f"and every figure of this file that uses both cores is bounded by it. The host "
        f"stole {r['stolen_jiffies']} jiffies while this ran (not counted in CPU seconds).",
        "",
        "Method: the module docstring of `scripts/benchmarks/cores.py`.", "", ""])
