"""The command line of ``scripts/bench``: which parts run, and where the figures go."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchmarks import projections
from benchmarks.coldload import coldload_part
from benchmarks.common import DOC, FULL, QUICK, git_commit, machine_facts, say
from benchmarks.cores import HEADING as CORES_HEADING
from benchmarks.cores import cores_part, cores_report
from benchmarks.http import TARGET_P99_MS, http_part
from benchmarks.inprocess import inproc_part
from benchmarks.instructions import HEADING as INSTRUCTIONS_HEADING
from benchmarks.instructions import instructions_part, instructions_report
from benchmarks.report import (
    PROJECTIONS_HEADING,
    RANDOM_PLAY_HEADING,
    TARGET_RATIO,
    projection_report,
    report,
    section_of,
    verdicts,
    with_section,
)
from benchmarks.report15 import HEADING, TABLES_HEADING, issue15_report, tables_report
from benchmarks.ryw import ryw_part
from benchmarks.tables import tables_part
from benchmarks.workers import workers_part


def main() -> int:
    parser = argparse.ArgumentParser(description="Measure the Capes table server; write "
                                     "docs/benchmarks.md.")
    parser.add_argument("--quick", action="store_true", help="a smoke run of about 5 minutes")
    parser.add_argument("--no-http", action="store_true", help="skip the HTTP part")
    parser.add_argument("--no-inprocess", action="store_true", help="skip the in-process part")
    parser.add_argument("--no-projections", action="store_true",
                        help="skip the projection-rebuild part (scripts/benchmarks/projections.py)")
    parser.add_argument("--projections-only", action="store_true", help="run only the "
                        "projection-rebuild part and update just its section of the doc")
    parser.add_argument("--no-workers", action="store_true",
                        help="skip PostgreSQL with 1 and 2 workers (scripts/benchmarks/workers.py)")
    parser.add_argument("--no-ryw", action="store_true",
                        help="skip read-your-writes with external read models "
                        "(scripts/benchmarks/ryw.py)")
    parser.add_argument("--no-tables", action="store_true",
                        help="skip the many-tables part (scripts/benchmarks/tables.py)")
    parser.add_argument("--tables-only", action="store_true", help="run only the many-tables "
                        "part and update just its section of the doc")
    parser.add_argument("--no-instructions", action="store_true", help="skip the instructions "
                        "a command under callgrind (scripts/benchmarks/instructions.py)")
    parser.add_argument("--instructions-only", action="store_true", help="run only the "
                        "instructions a command and update just its section of the doc")
    parser.add_argument("--no-cores", action="store_true", help="skip the two cores' control "
                        "(scripts/benchmarks/cores.py)")
    parser.add_argument("--cores-only", action="store_true", help="run only the two cores' "
                        "control and update just its section of the doc")
    parser.add_argument("--out", type=Path, default=DOC, help="where to write (default: "
                        "docs/benchmarks.md)")
    args = parser.parse_args()
    if args.projections_only:
        return projections_only(args.quick, args.out)
    if args.tables_only:
        return tables_only(args.quick, args.out)
    if args.instructions_only:
        return instructions_only(args.quick, args.out)
    if args.cores_only:
        return cores_only(args.quick, args.out)
    p = QUICK if args.quick else FULL
    began = time.perf_counter()
    facts = machine_facts()
    say(f"nproc {facts['nproc']}, Python {facts['python']}, {facts['wrk']}")
    h = ip = pr = wk = t = ryw = ins = co = None
    if not args.no_cores:
        co = cores_part(args.quick)  # first: the machine as the run finds it
        co_when = _now()
    with tempfile.TemporaryDirectory(prefix="capes-bench-") as tmp_name:
        tmp = Path(tmp_name)
        if not args.no_http:
            h = http_part(p, tmp)
        if not args.no_workers:
            wk = workers_part(p, tmp)
        if not args.no_ryw:
            ryw = ryw_part(p, tmp)
        if not args.no_tables:
            t = tables_part(p, tmp)
        if not args.no_inprocess:
            ip = inproc_part(p, tmp) | coldload_part(p, tmp)
        if not args.no_projections:
            pr = projections.projection_part(args.quick, tmp)
        if not args.no_instructions:
            ins = instructions_part(args.quick, tmp)
    elapsed = time.perf_counter() - began
    if h is not None and "skipped" not in h:
        v = verdicts(h)
        say("")
        say(f"game commands/s ÷ bare req/s = {v['ratio_commands']:.2f} "
            f"(target ≥ {TARGET_RATIO}): {'met' if v['throughput_met'] else 'NOT met'}")
        say(f"p99 of game commands at half load = {v['p99_half']:.2f} ms "
            f"(target < {TARGET_P99_MS:g} ms): {'met' if v['p99_met'] else 'NOT met'}")
    text = report(facts, p, args.quick, h, ip, elapsed)
    text = with_section(text, issue15_report(h, wk, t, ryw), HEADING)
    if pr is not None:
        text = with_section(text, projection_report(pr, args.quick))
    if ins is not None:
        text = with_section(text, instructions_report(ins, _now()), INSTRUCTIONS_HEADING)
    if co is not None:
        text = with_section(text, cores_report(co, co_when), CORES_HEADING)
    # The soak's figures (scripts/playtest --write) are not the bench's to redo: keep them,
    # and scripts/soak's "Reliability" section too.
    for heading in (RANDOM_PLAY_HEADING, RELIABILITY):
        kept = kept_section(heading, args.out)
        if kept is not None:
            text = with_section(text, kept, heading)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    say(f"wrote {args.out} ({elapsed:.0f} s)")
    return 0


#: The heading of scripts/soak's section of the benchmarks file.
RELIABILITY = "## Reliability"


def kept_section(heading: str, out: Path) -> str | None:
    """The section under ``heading`` that a run keeps: the one in ``out``, else the one in
    docs/benchmarks.md. Why the second: a run written with ``--out`` to a new file and copied
    over docs/benchmarks.md afterwards dropped the random play's and the soak's figures, which
    only ``scripts/playtest --write`` and ``scripts/soak --out`` make (lost so from run AJ to
    run AK)."""
    for source in dict.fromkeys((out, DOC)):
        if source.exists():
            kept = section_of(source.read_text(), heading)
            if kept is not None:
                return kept
    return None


def _now() -> str:
    """When and at which commit, for a section measured by itself."""
    return f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC (commit {git_commit()})"


def _replace_section(out: Path, section: str, heading: str, what: str) -> int:
    text = out.read_text() if out.exists() else "# Benchmarks\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(with_section(text, section, heading))
    say(f"updated the {what} section of {out}")
    return 0


def tables_only(quick: bool, out: Path) -> int:
    """Only the many tables: their section of ``out`` replaced, the rest left as it is."""
    with tempfile.TemporaryDirectory(prefix="capes-bench-tables-") as tmp:
        result = tables_part(QUICK if quick else FULL, Path(tmp))
    result["alone"] = _now()
    return _replace_section(out, tables_report(result), TABLES_HEADING, "many-tables")


def instructions_only(quick: bool, out: Path) -> int:
    """Only the instructions a command: their section of ``out`` replaced, the rest left."""
    with tempfile.TemporaryDirectory(prefix="capes-bench-instructions-") as tmp:
        result = instructions_part(quick, Path(tmp))
    return _replace_section(out, instructions_report(result, _now()), INSTRUCTIONS_HEADING,
                            "instructions")


def cores_only(quick: bool, out: Path) -> int:
    """Only the two cores' control: its section of ``out`` replaced, the rest left."""
    return _replace_section(out, cores_report(cores_part(quick), _now()), CORES_HEADING,
                            "two cores'")


def projections_only(quick: bool, out: Path) -> int:
    """Only the projection rebuild: its section of ``out`` replaced, the rest left as it is."""
    with tempfile.TemporaryDirectory(prefix="capes-bench-projections-") as tmp:
        result = projections.projection_part(quick, Path(tmp))
    return _replace_section(out, projection_report(result, quick), PROJECTIONS_HEADING,
                            "projections")
