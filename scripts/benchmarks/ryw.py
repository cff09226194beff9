"""Read-your-writes (issue 15): how long after a command's answer a query given its
``position`` answers, with the read models in the process of their own that ``capes serve``
starts (the default: the waiting query wakes it through a socket), on SQLite and on
PostgreSQL; and, for comparison, with the server running them in a thread of its own
(``CAPES_PROJECTIONS=internal``, SQLite).

One campaign, one seat: ``POST narrate``, then at once ``GET /timeline?position=<its
position>``; the time from the command's answer to the timeline's, ``samples`` times, one
after another.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import (
    HOST,
    free_port,
    percentile,
    say,
    start_server,
    stop_server,
    wait_ready,
)
from benchmarks.http import Client
from benchmarks.tables import POSTGRES, drop_schema, fresh_schema, reachable


def _measure(port: int, samples: int) -> dict[str, Any]:
    client = Client(port)
    try:
        opened = client.call("POST", "/campaigns", {"name": "Read your writes"})
        cid = opened["campaign_id"]
        token = client.call("POST", f"/campaigns/{cid}/seats", {"name": "Ana"})["token"]
        waits = []
        for _ in range(samples):
            applied = client.call("POST", f"/campaigns/{cid}/commands",
                                  {"command": {"type": "narrate", "text": "And then"}}, token)
            answered = time.perf_counter()
            client.call("GET", f"/campaigns/{cid}/timeline?position={applied['position']}"
                        "&timeout=5&limit=1", None, token)
            waits.append((time.perf_counter() - answered) * 1000)
            time.sleep(0.05)
    finally:
        client.close()
    return {"p50_ms": percentile(waits, 50), "p90_ms": percentile(waits, 90),
            "max_ms": max(waits), "samples": samples}


def _run(tmp: Path, name: str, env: dict[str, str], mode: str,
         samples: int) -> dict[str, Any]:
    port = free_port()
    server = start_server([sys.executable, "-m", "cli.main", "serve", "--host", HOST, "--port",
                           str(port), "--log-level", "warning"],
                          env | {"CAPES_PROJECTIONS": mode}, tmp / f"ryw-{name}.log")
    try:
        wait_ready(server, port, tmp / f"ryw-{name}.log")
        time.sleep(2.0)  # the read models' process up
        result = _measure(port, samples)
    finally:
        stop_server(server)
    say(f"  {name}: timeline with the command's position answered {result['p50_ms']:.1f} ms "
        f"(p50), {result['p90_ms']:.1f} ms (p90) after the command")
    return result


def ryw_part(p: dict[str, Any], tmp: Path) -> dict[str, Any]:
    say("Read-your-writes: a command, then the timeline at its position")
    samples = p["ryw_samples"]
    base = {k: v for k, v in os.environ.items() if k not in ("CAPES_DATABASE_URL",
                                                              "CAPES_REDIS_URL")}
    out: dict[str, Any] = {}
    out["sqlite internal"] = _run(tmp, "sqlite-internal", base | {
        "CAPES_DB": str(tmp / "ryw-internal.sqlite")}, "internal", samples)
    out["sqlite process"] = _run(tmp, "sqlite-process", base | {
        "CAPES_DB": str(tmp / "ryw-process.sqlite")}, "process", samples)
    if reachable(POSTGRES, 5432):
        url = fresh_schema(POSTGRES)
        try:
            out["postgres process"] = _run(tmp, "postgres-process", base | {
                "CAPES_DATABASE_URL": url}, "process", samples)
        finally:
            drop_schema(url)
    return out
