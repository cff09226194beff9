"""``scripts/soak`` runs: one short round of kill -9 under load on each store loses nothing,
duplicates nothing and leaves every campaign verifying (issue 13, item 10; the full run's
figures are in docs/benchmarks.md, "Reliability")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_one_round_of_kill_9_under_load_loses_and_duplicates_nothing(store: str) -> None:
    if store == "postgres":
        from stores import postgres_problem

        if postgres_problem() is not None:
            pytest.skip(f"PostgreSQL: {postgres_problem()}")
    done = subprocess.run(
        [sys.executable, "scripts/soak", "--store", store, "--rounds", "1", "--seconds", "1",
         "--writers", "3"], cwd=ROOT, capture_output=True, text=True, timeout=180)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr[-2000:]
    assert "lost: 0" in out and "duplicated: 0" in out and "5xx answers: 0" in out, out
    assert "0 failed" in out and "rounds killed with SIGKILL under load: 1" in out, out
    acknowledged = int(out.split("commands acknowledged (200): ")[1].split()[0])
    assert acknowledged > 0, out
