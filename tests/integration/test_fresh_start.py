"""Many processes starting on a fresh store at once all start (issue 13, item 8).

Each process builds the whole server (campaigns, dice seeds, tokens, read models) at the same
instant, on a fresh SQLite file or a fresh PostgreSQL schema: before, one of two crashed
creating the tables (PostgreSQL ``UniqueViolation``; SQLite ``IntegrityError`` recording the
read models' migration)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Few enough to stay well under the PostgreSQL server's connection limit.
PROCESSES = 4

START = """
import json, os, sys, time
environ = json.loads(sys.argv[1])
at = float(sys.argv[2])
from api.app import create_app
time.sleep(max(0.0, at - time.time()))
app = create_app(environ=environ)
print("started", flush=True)
os._exit(0)  # the stores' connections go with the process
"""


def start_all_at_once(environ: dict[str, str]) -> list[subprocess.CompletedProcess[str]]:
    at = time.time() + 5.0  # every process has imported everything by then
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    running = [subprocess.Popen([sys.executable, "-c", START, json.dumps(environ), str(at)],
                                cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
               for _ in range(PROCESSES)]
    done = []
    try:
        for process in running:
            out, err = process.communicate(timeout=60)
            done.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    finally:
        for process in running:
            if process.poll() is None:
                process.kill()
                process.wait()
    return done


def check(done: list[subprocess.CompletedProcess[str]]) -> None:
    failed = [p.stderr[-2000:] for p in done if p.returncode != 0 or "started" not in p.stdout]
    assert not failed, failed[0]


def test_processes_started_together_on_a_fresh_sqlite_file_all_start(tmp_path: Path) -> None:
    check(start_all_at_once({"CAPES_DB": str(tmp_path / "fresh.sqlite"),
                             "CAPES_RATE_LIMIT": "0"}))


@pytest.mark.postgres
def test_processes_started_together_on_a_fresh_postgres_schema_all_start(
    postgres_env: dict[str, str],
) -> None:
    from stores import POSTGRES_URL

    url = f"{POSTGRES_URL}?schema={postgres_env['POSTGRES_SCHEMA']}"
    # Small pools: the server is shared, and each process opens several stores.
    check(start_all_at_once({"CAPES_DATABASE_URL": url, "CAPES_RATE_LIMIT": "0",
                             "POSTGRES_POOL_SIZE": "1", "POSTGRES_MAX_OVERFLOW": "2"}))
