"""A stand-in for the read models' CPU, for ``scripts/bench``'s controls: burns a share of
one core at idle priority, in short slices, until it is stopped.

Why: the game's read models' process (``capes serve``'s, at ``SCHED_IDLE``) uses a quarter of
a core under the mix and a tenth or so at half load, and on these virtual machines that CPU
costs the game even though its priority is the lowest: a probe on 2026-11-28 put a process
like this one (60 ms of Python every 450 ms, or 5 ms every 32.5 ms) beside the game without
its read models, at half load, and the commands' p99 went from 4 to 8 ms to 7 to 12 ms in
alternated rounds. So the bench runs its control with a store (the game's routes and
durable commits, no game) once more beside this process burning what the game's read models'
process used in the game's own round: the framework's and the store's figures with the read
models' work kept and the game's request path taken out.

``python scripts/idle_load.py --cores 0.25``: a quarter of one core's time in slices of
``--slice`` seconds of CPU, pure Python as the read models are, at ``SCHED_IDLE`` (nice 19 where
there is none), until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from cli.priority import lower_to_idle  # the priority capes serve gives its read models

#: Seconds of CPU worked at a time: finer than the read models' own steps (a batch of the log
#: folded and written, tens of milliseconds under load), which hurt the game's tail no less in
#: the probe above (7 to 12 ms with 5 ms slices, 9 to 12 ms with 60 ms ones): the control gets
#: the kinder of the two.
SLICE = 0.005


def owed(cores: float, wall: float, cpu: float) -> float:
    """Seconds of CPU behind a use of ``cores`` of one core for ``wall`` seconds, having used
    ``cpu``: work is owed while it is positive."""
    if not 0 < cores <= 1:
        raise ValueError(f"cores must be in (0, 1], not {cores}")
    return cores * wall - cpu


def burn(cores: float, slice_: float = SLICE) -> None:
    """Use ``cores`` of one core, for ever: a slice of work (``slice_`` seconds of CPU, not of
    the clock) whenever the CPU used falls behind the share, else a nap. Why CPU time: the read
    models have a given amount of work to do whatever else runs, and at idle priority they do
    it later, not less of it; a burner that counted the clock would do less under contention."""
    began, cpu0 = time.perf_counter(), time.process_time()
    while True:
        behind = owed(cores, time.perf_counter() - began, time.process_time() - cpu0)
        if behind <= 0:
            time.sleep(min(slice_, -behind / cores))
            continue
        until = time.process_time() + slice_
        while time.process_time() < until:
            sum(range(1000))


def _stop(*_: object) -> None:
    sys.exit(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cores", type=float, required=True,
                        help="share of one core to use, in (0, 1]")
    parser.add_argument("--slice", type=float, default=SLICE,
                        help="seconds of CPU worked at a time")
    args = parser.parse_args()
    try:
        owed(args.cores, 0, 0)  # a share out of range stops here, before any work
    except ValueError as e:
        parser.error(str(e))
    signal.signal(signal.SIGTERM, _stop)  # before the first line: whoever reads it may stop us
    signal.signal(signal.SIGINT, _stop)
    print(f"idle_load: {args.cores:.2f} of a core at {lower_to_idle()}", flush=True)
    burn(args.cores, args.slice)


if __name__ == "__main__":
    main()
