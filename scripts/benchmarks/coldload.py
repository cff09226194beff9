"""Cold load. A long campaign made by seeded random play; its cold load and random old
versions of it, with and without snapshots; the raw read and msgspec decode rate of its
stored events."""

from __future__ import annotations

import random
import sqlite3
import statistics
import time
from contextlib import closing
from pathlib import Path
from typing import Any
from uuid import UUID

from application.campaigns import Campaigns
from application.dice import SeededDice
from benchmarks.common import CpuWatch, say
from benchmarks.randomplay import random_play


def copy_without_snapshots(src: Path, dst: Path) -> int:
    """A copy of the SQLite store with every snapshot deleted; how many were."""
    # closing(): the connections' own ``with`` leaves them open until the collector runs.
    with closing(sqlite3.connect(src)) as source, closing(sqlite3.connect(dst)) as target:
        source.backup(target)
    with closing(sqlite3.connect(dst)) as target:
        tables = [r[0] for r in target.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE '%snapshot%'")]
        deleted = 0
        for table in tables:
            deleted += target.execute(f"DELETE FROM {table}").rowcount
        target.commit()
    return deleted


def cold_load(env: dict[str, str], cid: UUID, repeats: int,
              **kwargs: Any) -> tuple[dict[str, float], Any]:
    """``Campaigns(env).state(id)`` on fresh instances: construction and first load, medians."""
    builds, loads, warm = [], [], []
    state = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        app = Campaigns(env, **kwargs)
        t1 = time.perf_counter()
        state = app.state(cid)
        t2 = time.perf_counter()
        app.state(cid)
        t3 = time.perf_counter()
        app.close()
        builds.append(t1 - t0)
        loads.append(t2 - t1)
        warm.append(t3 - t2)
    return {"construct_ms": statistics.median(builds) * 1000,
            "load_ms": statistics.median(loads) * 1000,
            "load_min_ms": min(loads) * 1000,
            "cached_load_ms": statistics.median(warm) * 1000}, state


def old_versions(env: dict[str, str], cid: UUID, last: int, count: int,
                 **kwargs: Any) -> dict[str, float]:
    """The state at random old versions, each on a fresh instance (nothing cached): ms."""
    rng = random.Random(5)
    loads = []
    for _ in range(count):
        version = rng.randint(1, last)
        app = Campaigns(env, **kwargs)
        t0 = time.perf_counter()
        app.state(cid, version)
        loads.append(time.perf_counter() - t0)
        app.close()
    return {"median_ms": statistics.median(loads) * 1000, "max_ms": max(loads) * 1000}


def read_decode(app: Campaigns, cid: UUID, repeats: int = 3) -> dict[str, float]:
    from application.aggregate import project_campaign

    reads, decodes, folds = [], [], []
    n = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        stored = app.recorder.select_events(cid)
        t1 = time.perf_counter()
        decoded: list[Any] = [app.mapper.to_domain_event(s) for s in stored]
        t2 = time.perf_counter()
        project_campaign(None, decoded)
        t3 = time.perf_counter()
        n = len(stored)
        reads.append(t1 - t0)
        decodes.append(t2 - t1)
        folds.append(t3 - t2)
    read, decode, fold = min(reads), min(decodes), min(folds)
    return {"events": n, "read_ms": read * 1000, "decode_ms": decode * 1000,
            "fold_ms": fold * 1000, "read_per_s": n / read, "decode_per_s": n / decode,
            "read_decode_per_s": n / (read + decode), "fold_per_s": n / fold}


def coldload_part(p: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """The long campaign made by random play: the read and decode of its events, its cold
    load and random old versions of it, with snapshots and without."""
    out: dict[str, Any] = {}
    long_path = tmp / "long.sqlite"
    env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(long_path)}
    app = Campaigns(env, dice=SeededDice(11))
    say(f"in-process: a {p['long_events']}-event campaign by seeded random play")
    watch = CpuWatch([])
    rp = random_play(app, seed=2024, events=p["long_events"], seconds=p["long_seconds"])
    out["random"] = rp = rp | {"cpu": watch.stop()}
    say(f"  {rp['version']} events, {rp['accepted']} commands accepted and {rp['refused']} "
        f"refused in {rp['seconds']:.1f}s: {rp['accepted_per_s']:.0f} accepted/s, "
        f"{rp['events_per_s']:.0f} events/s")
    cid = rp["campaign_id"]
    out["read_decode"] = rd = read_decode(app, cid)
    say(f"  read {rd['read_per_s']:.0f} events/s, decode {rd['decode_per_s']:.0f} events/s, "
        f"read+decode {rd['read_decode_per_s']:.0f} events/s, fold {rd['fold_per_s']:.0f} "
        "events/s")
    app.close()

    bare_path = tmp / "long-no-snapshots.sqlite"
    out["snapshots_deleted"] = copy_without_snapshots(long_path, bare_path)
    bare_env = env | {"SQLITE_DBNAME": str(bare_path)}
    with_snap, s1 = cold_load(env, cid, p["cold_repeats"])
    without, s2 = cold_load(bare_env, cid, p["cold_repeats"], snapshot_interval=10**9)
    out["cold_with_snapshots"], out["cold_without_snapshots"] = with_snap, without
    out["same_state"] = s1 == s2
    out["old_with"] = old_versions(env, cid, rp["version"], p["old_versions"])
    out["old_without"] = old_versions(bare_env, cid, rp["version"], p["old_versions"],
                                      snapshot_interval=10**9)
    say(f"  a random old version, cold: {out['old_with']['median_ms']:.1f} ms with snapshots, "
        f"{out['old_without']['median_ms']:.1f} ms without")
    say(f"  cold load with snapshots {with_snap['load_ms']:.1f} ms, without "
        f"{without['load_ms']:.1f} ms (same state: {s1 == s2})")
    return out
