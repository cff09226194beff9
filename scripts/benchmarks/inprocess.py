"""In-process. ``Campaigns.execute`` on an SQLite file without HTTP (aggregate cache on), and
the server's writer (``application.committer``: group commits) with many players at once; a
cProfile of the command path."""

from __future__ import annotations

import asyncio
import cProfile
import io
import pstats
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

from application.campaigns import Campaigns, open_campaigns
from application.committer import Committer
from benchmarks import ROOT
from benchmarks.common import CpuWatch, percentile, say, wait_quiet
from benchmarks.mix import mix_setup, turn_plan
from domain.capes import commands as c


def inproc_setup(app: Campaigns) -> UUID:
    cid: UUID = app.create(c.CreateCampaign(name="Bench", starting_tokens=99)).campaign_id
    for name in ("Ana", "Ben", "Cleo"):
        app.execute(cid, c.SeatPlayer(name=name))
    for _seat, command in mix_setup():
        app.execute(cid, command)
    return cid


def turn_cycle(app: Campaigns, ids: list[UUID], seconds: float, limit: int,
               max_turns: int) -> dict[str, Any]:
    """The HTTP mix's commands (no board read) round-robin over ``ids``, timed one by one."""
    plans: dict[UUID, Iterator[tuple[int, c.Command | None]]] = {}

    for cid in ids:
        plans[cid] = turn_plan(2, max_turns)
    latencies: list[float] = []
    began = time.perf_counter()
    deadline = began + seconds
    while len(latencies) < limit and time.perf_counter() < deadline and plans:
        for cid in list(plans):
            step = next(plans[cid], None)
            if step is None:
                del plans[cid]
                continue
            command = step[1]
            if command is None:
                continue
            t0 = time.perf_counter()
            app.execute(cid, command)
            latencies.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - began
    return {"commands": len(latencies), "seconds": elapsed,
            "per_s": len(latencies) / elapsed, "p50_ms": percentile(latencies, 50) * 1000,
            "p99_ms": percentile(latencies, 99) * 1000}


def writer_cycle(app: Campaigns, ids: list[UUID], seconds: float, limit: int,
                 max_turns: int) -> dict[str, Any]:
    """The HTTP mix's commands through the server's writer (application.committer) without
    HTTP: one asyncio task per campaign, each awaiting its command's answer before the next, as
    a player does; they queue up together and are committed in groups."""
    writer = Committer(app)
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def player(cid: UUID) -> None:
        for _seat, command in turn_plan(2, max_turns):
            if command is None:
                continue
            if len(latencies) >= limit or time.perf_counter() > deadline:
                return
            t0 = time.perf_counter()
            await writer.execute(cid, command)
            latencies.append(time.perf_counter() - t0)

    async def main() -> float:
        began = time.perf_counter()
        await asyncio.gather(*(player(cid) for cid in ids))
        return time.perf_counter() - began

    groups = writer.groups
    try:
        elapsed = asyncio.run(main())
    finally:
        writer.stop()
    return {"commands": len(latencies), "seconds": elapsed, "per_s": len(latencies) / elapsed,
            "per_group": writer.commands / max(1, writer.groups - groups),
            "p50_ms": percentile(latencies, 50) * 1000,
            "p99_ms": percentile(latencies, 99) * 1000}


def profile_inproc(app: Campaigns, ids: list[UUID],
                   commands: int) -> list[tuple[str, float, float]]:
    profiler = cProfile.Profile()
    profiler.enable()
    turn_cycle(app, ids, 60, commands, 280)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=io.StringIO())
    total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
    rows = []
    for (filename, line, name), (_cc, _nc, tt, ct, _callers) in \
            stats.stats.items():  # type: ignore[attr-defined]
        short = filename.replace(str(ROOT) + "/", "")
        short = re.sub(r".*/site-packages/", "", short)
        short = re.sub(r".*/lib/python3\.\d+/", "", short)
        rows.append((f"{name} ({short}:{line})", tt, ct))
    rows.sort(key=lambda r: r[1], reverse=True)
    top_own = [r for r in rows if "cProfile" not in r[0] and "turn_cycle" not in r[0]][:14]
    return [(name, tt / total * 100, ct / total * 100) for name, tt, ct in top_own]


def inproc_part(p: dict[str, Any], tmp: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    path = tmp / "inproc.sqlite"
    app = open_campaigns({"CAPES_DB": str(path)})  # the server's dice, as over HTTP
    ids = [inproc_setup(app) for _ in range(p["inproc_campaigns"])]
    out["quiet"] = wait_quiet(p["quiet_wait"] / 2)
    say(f"in-process: Campaigns.execute, the mix's commands for {p['inproc_seconds']}s")
    watch = CpuWatch([])
    cycle = turn_cycle(app, ids, p["inproc_seconds"], p["inproc_max_commands"],
                       p["max_turns"])
    out["cycle"] = cycle = cycle | {"cpu": watch.stop()}
    say(f"  {cycle['per_s']:.0f} commands/s, p50 {cycle['p50_ms']:.3f} ms, "
        f"p99 {cycle['p99_ms']:.3f} ms")
    fresh = [inproc_setup(app) for _ in range(4)]
    out["cprofile"] = profile_inproc(app, fresh, p["profile_commands"])
    grouped = [inproc_setup(app) for _ in range(p["inproc_campaigns"])]
    say(f"in-process: the server's writer (application.committer), {len(grouped)} players at "
        f"once, {p['inproc_seconds']}s")
    watch = CpuWatch([])
    writer = writer_cycle(app, grouped, p["inproc_seconds"], p["inproc_max_commands"],
                          p["max_turns"])
    out["writer"] = writer = writer | {"cpu": watch.stop()}
    say(f"  {writer['per_s']:.0f} commands/s, {writer['per_group']:.1f} commands per commit, "
        f"p50 {writer['p50_ms']:.3f} ms, p99 {writer['p99_ms']:.3f} ms")
    app.close()
    return out
