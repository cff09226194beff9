"""The two cores: what work on one costs the other (a control of the machine, no project code).

Why: every target of issue 15 not met on these 2-core virtual machines has the same shape:
work added on the second core (the writer process beside the event loop, the read models'
process even at idle priority, a second worker) adds less than a core, and slows what runs on
the first; why work at idle priority did so was never found by looking at the project. A probe
on 2026-11-29 found it with nothing of the project running: a loop of pure Python pinned to one
core took 1.6 to 1.8 times as much CPU time for the same work while a busy loop ran on the
other core, in four rounds of six (2 s loops, alternated; 0.8 and 1.1 times in the other two)
— at normal priority or at ``SCHED_IDLE`` alike, a loop of Python or of the shell alike. So
the guest's two cores share one physical core's resources at times (as two hyperthreads of
one core would; ``lscpu`` inside says one thread a core), and how much moves with the hour: a
quarter of an hour later this part found 1.05 to 1.15 times, half an hour later 1.33 (at
the start of run AH). This part measures it in every run, beside the project's figures.

The work: the same fixed loop of Python (about a second alone on these machines) in a child
pinned to core 0, timed by its own CPU clock (so that time the host takes from the machine,
steal, is not counted), in three conditions a round, in a shuffled order: alone; beside a busy
loop of Python pinned to core 1; beside the same loop at ``SCHED_IDLE``. Why rounds, and the
ratio within each: the loop alone took anywhere from 0.9 to 1.5 s from one minute to the next,
as the host's other machines came and went, so only conditions measured next to each other
compare. Each round gives ``2 * alone / beside``, how many cores' worth of work the two cores
do when both are busy (2.0 on a machine whose cores are independent); the figure is the median
of the rounds'. The run's first part: the machine as the run finds it.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from benchmarks.common import _machine, say

HEADING = "## The two cores: what work on one costs the other"

#: The timed loop (its iterations) and the rounds of the three conditions.
ITERATIONS = 10_000_000
ROUNDS = {"full": 12, "quick": 2}

_TIMED = ("import time\nc = time.process_time()\nx = 0\n"
          "for i in range({n}): x += i & 7\nprint(time.process_time() - c)")
_BUSY = "while True: pass"


def _cores() -> tuple[int, int]:
    """The first two cores this process may use: "core 0" and "core 1" of the docstrings."""
    first, second, *_ = sorted(os.sched_getaffinity(0))
    return first, second


def _pinned(which: int, idle: bool = False) -> Callable[[], None]:
    """A ``preexec_fn``: the child on our core ``which`` (0 or 1) only, at ``SCHED_IDLE`` if
    ``idle``."""
    core = _cores()[which]

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
    shuffled = random.Random(15)  # the same orders every run
    for _ in range(rounds):
        for name in shuffled.sample(list(seen), len(seen)):
            if name == "alone":
                seen[name].append(_timed(ITERATIONS))
                continue
            with _busy(idle=name == "beside_idle"):
                seen[name].append(_timed(ITERATIONS))
    result: dict[str, Any] = {"rounds": rounds, "seen": seen,
                              "stolen_jiffies": _machine()[2] - stolen0}
    for name, values in seen.items():
        result[name] = statistics.median(values)
    # Round by round: the alone runs move with what the host's other machines do.
    result["by_round"] = [2 * a / b for a, b in zip(seen["alone"], seen["beside"], strict=True)]
    result["by_round_idle"] = [2 * a / b for a, b in
                               zip(seen["alone"], seen["beside_idle"], strict=True)]
    result["both_busy_cores"] = statistics.median(result["by_round"])
    result["both_busy_cores_idle"] = statistics.median(result["by_round_idle"])
    say(f"  alone {result['alone']:.2f} s, beside a busy core {result['beside']:.2f} s, "
        f"beside one at idle priority {result['beside_idle']:.2f} s: both cores busy do "
        f"{result['both_busy_cores']:.2f} cores' work ({result['both_busy_cores_idle']:.2f} "
        "with the other at idle priority)")
    return result


def cores_report(r: dict[str, Any], when: str) -> str:
    """The section of docs/benchmarks.md for :func:`cores_part`'s result ``r``."""
    if "skipped" in r:
        return f"{HEADING}\n\nSkipped: {r['skipped']}.\n"

    def row(name: str, what: str) -> str:
        values = r["seen"][name]
        return f"| {what} | **{r[name]:.2f} s** | {min(values):.2f} to {max(values):.2f} s |"

    def spread(name: str) -> str:
        return f"{min(r[name]):.2f} to {max(r[name]):.2f}"

    return "\n".join([
        HEADING, "",
        f"Measured {when}: {r['rounds']} rounds.", "",
        "| the same loop of Python on core 0 | CPU seconds (median) | the rounds |",
        "|---|---|---|",
        row("alone", "alone (core 1 idle)"),
        row("beside", "beside a busy loop on core 1"),
        row("beside_idle", "beside a busy loop on core 1 at `SCHED_IDLE`"),
        "",
        f"With both cores busy, the two do **{r['both_busy_cores']:.2f} cores' work** "
        f"(the median of the rounds' 2 * alone / beside, which ran from "
        f"{spread('by_round')}; 2.00 where the cores are independent), and "
        f"**{r['both_busy_cores_idle']:.2f}** with the busy loop at idle priority (from "
        f"{spread('by_round_idle')}): work on the second core slows the first whatever its "
        f"priority. So a second process (the writer, the read models, a second worker) adds "
        f"at most that much to the first's work here, and every figure of this file that uses "
        f"both cores is bounded by it. The host stole {r['stolen_jiffies']} jiffies while this "
        f"ran (not counted in CPU seconds).",
        "",
        "Method: the module docstring of `scripts/benchmarks/cores.py`.", "", ""])
