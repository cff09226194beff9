"""Instructions a command: the writer's core counted by valgrind's callgrind, not timed.

The seconds of the same code moved by half within an hour on the machines these figures come
from (their neighbours take CPU at times), so a change of a few percent on the command path
cannot be told from the noise by timing it. Callgrind counts the instructions the CPU runs,
which do not depend on what else the machine does: the same work counts (nearly) the same,
on a busy machine or a quiet one.

The work (``python -m benchmarks.instructions COMMANDS``, from ``scripts/``): 48 campaigns set
up as for the HTTP mix in a fresh SQLite file (``inproc_setup``), then COMMANDS of the mix's
commands (no board read) through :meth:`application.committer.Committer.process`, in groups of
16, one command of each of 16 campaigns a group, as the writer process groups what arrived
meanwhile: deciding, the dice, the hash chain, the envelopes, one commit a group, snapshots.
It runs under callgrind twice at once, with COMMANDS and with none; the difference, divided by
COMMANDS, is the figure: the start-up, the imports and the set-up are subtracted.
``PYTHONHASHSEED`` is fixed, so that sets and dicts lay out alike from run to run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from application.campaigns import open_campaigns
from application.committer import Committer, Job
from application.integrity import Integrity
from benchmarks import SCRIPTS
from benchmarks.common import say
from benchmarks.inprocess import inproc_setup
from benchmarks.mix import turn_plan

#: Commands of each group, and groups before the same campaigns come round again.
GROUP = 16
ROUNDS = 3
#: The mix's commands counted in a full run and in a quick one.
COMMANDS = {"full": 3_000, "quick": 600}
_COLLECTED = re.compile(r"Collected : (\d+)")


def workload(commands: int, db: Path) -> int:
    """Set up the campaigns, then run ``commands`` of the mix's commands through the
    committer; how many ran."""
    app = open_campaigns({"CAPES_DB": str(db)})
    ids = [inproc_setup(app) for _ in range(GROUP * ROUNDS)]
    committer = Committer(app, integrity=Integrity(app))
    plans = {cid: (command for _, command in turn_plan(2, 280) if command is not None)
             for cid in ids}
    done = turn = 0
    while done < commands:
        first = turn % ROUNDS * GROUP
        turn += 1
        jobs = []
        for cid in ids[first:first + GROUP]:
            job = Job()
            job.campaign_id = cid
            job.command = next(plans[cid])
            jobs.append(job)
        for _, _, error in committer.process(jobs):
            if error is not None:
                raise error
        done += len(jobs)
    app.close()
    return done


def instructions_part(quick: bool, tmp: Path) -> dict[str, Any]:
    """The writer's core in instructions a command (see the module's docstring)."""
    if shutil.which("valgrind") is None:
        message = ("valgrind is not installed (apt-get install -y valgrind): skipping the "
                   "instructions a command")
        say(message)
        return {"skipped": message}
    commands = COMMANDS["quick" if quick else "full"]
    say(f"instructions: {commands} of the mix's commands through the committer, under "
        "callgrind (a few minutes)")
    env = os.environ | {"PYTHONHASHSEED": "0"}
    runs: dict[int, subprocess.Popen[str]] = {}
    for count in (commands, 0):
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/callgrind.{count}",
                sys.executable, "-m", "benchmarks.instructions", str(count),
                "--db", str(tmp / f"instructions-{count}.sqlite")]
        runs[count] = subprocess.Popen(argv, cwd=SCRIPTS, env=env, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
    counted: dict[int, int] = {}
    for count, run in runs.items():
        out, err = run.communicate(timeout=3600)
        found = _COLLECTED.search(err)
        if run.returncode != 0 or found is None:
            raise RuntimeError(f"callgrind of {count} commands failed ({run.returncode}):\n"
                               f"{out[-2000:]}\n{err[-2000:]}")
        counted[count] = int(found.group(1))
    return {"commands": commands, "with": counted[commands], "without": counted[0],
            "per_command": (counted[commands] - counted[0]) / commands,
            "valgrind": subprocess.run(["valgrind", "--version"], capture_output=True,
                                       text=True).stdout.strip()}


#: The heading of this part's section of docs/benchmarks.md.
HEADING = "## Instructions a command: the writer's core (callgrind)"


def instructions_report(r: dict[str, Any], when: str) -> str:
    """The section of docs/benchmarks.md for :func:`instructions_part`'s result ``r``."""
    w = [HEADING, ""]
    if "skipped" in r:
        return "\n".join([*w, f"Skipped: {r['skipped']}.", ""])
    w += [
        f"Measured {when}.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| the mix's commands through `application.committer`, groups of {GROUP}, no HTTP "
        f"| **{r['per_command']:,.0f} instructions a command** |",
        f"| the run with {r['commands']:,} commands / with none (start-up, imports, set-up) "
        f"| {r['with']:,} / {r['without']:,} instructions |",
        "",
        "Method: the module docstring of `scripts/benchmarks/instructions.py`; "
        f"{r['valgrind']}. Compare this figure between commits, not with seconds: it is the "
        "CPU's instructions, which neither the machine's speed nor its neighbours change, and "
        "not what a command costs in time (a cache miss and an instruction count the same "
        "here). The HTTP figures above say what the whole server does in seconds on the day's "
        "machine.",
        "",
        "",
    ]
    return "\n".join(w)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.instructions")
    parser.add_argument("commands", type=int, help="the mix's commands after the set-up")
    parser.add_argument("--db", type=Path, help="the SQLite file (default: a temporary one)")
    args = parser.parse_args()
    if args.db is not None:
        workload(args.commands, args.db)
        return
    with tempfile.TemporaryDirectory(prefix="capes-instructions-") as tmp:
        workload(args.commands, Path(tmp) / "instructions.sqlite")


if __name__ == "__main__":
    main()
