"""Open-loop paced HTTP load for ``scripts/bench`` (wrk has no ``-R``; wrk2 is not packaged).

Requests are scheduled at a fixed rate, ``start + k / rate``, whatever the server does; each
of ``--connections`` keep-alive connections takes the next scheduled slot when it is free. The
latency of a request is measured from its *scheduled* time (so a slow answer that delays the
next requests counts against them too: no coordinated omission), and also as service time,
from the moment it was written to the socket.

With ``--disk-folder`` (the store's), the disk's control (``scripts/disk_control.py``) times an
fsync every 20 ms meanwhile: every command waits for a commit on that disk, so its fsync times
(the server's own writes included) are a floor under the commands' latency that the server's
Python does not set.

It also lists the run's *stops*: every stretch of at least ``STALL_MS`` (50 ms) in which no
answer came at all, by its start and end on ``time.perf_counter()`` (``CLOCK_MONOTONIC`` on
Linux, the clock of the store's sync timer: ``scripts/benchmarks/syncs.py`` sets them beside the
syncs the server waited for meanwhile).

``--mode game`` plays the same legal cycle as ``scripts/bench_game.lua`` (start_turn,
roll_die, reject_roll, GET board, narrate, end_turn per turn) on the campaigns of
``--campaigns``; ``--mode bare`` posts the bare app's body. Prints one JSON object.

Bounded: at most ``rate * duration`` requests, and the run is abandoned after
``duration + 30`` seconds whatever happens.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from disk_control import STALL_MS, DiskProbe

BARE_BODY = b'{"command":{"type":"narrate","text":"Meanwhile, across town","seat":1}}'


@dataclass
class Campaign:
    id: str
    tokens: tuple[str, str, str]
    seat: int = 2
    step: int = 0
    turns: int = 0
    alive: bool = True


def game_step(c: Campaign) -> tuple[str, int, bytes | None]:
    """(method, acting seat, body) of the campaign's next request; mirrors bench_game.lua."""
    s = c.seat
    if c.step == 0:
        return "POST", s, b'{"command":{"type":"start_turn","character":%d}}' % s
    if c.step == 1:
        return "POST", s, (b'{"command":{"type":"roll_die","ability":"H%d power 1","conflict":1,'
                           b'"die":1,"drive":"Justice"},"narration":"A blast of light"}' % s)
    if c.step == 2:
        return "POST", s, b'{"command":{"type":"reject_roll","ally":1}}'
    if c.step == 3:
        return "GET", s, None
    if c.step == 4:
        return "POST", s % 3 + 1, b'{"command":{"type":"narrate","text":"Meanwhile, across town"}}'
    return "POST", s, b'{"command":{"type":"end_turn"}}'


def raw_request(method: str, path: str, host: str, token: str | None, body: bytes | None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                   raw: bytes) -> int:
    """Send one request, read the whole response; its status."""
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    if length:
        await reader.readexactly(length)
    return status


@dataclass
class Stats:
    latency: list[float] = field(default_factory=list)  # from the scheduled time, seconds
    service: list[float] = field(default_factory=list)  # from the write, seconds
    command_latency: list[float] = field(default_factory=list)
    read_latency: list[float] = field(default_factory=list)
    answered: list[float] = field(default_factory=list)  # when each answer came (perf_counter)
    ok: int = 0
    bad: int = 0
    commands: int = 0
    reads: int = 0
    why: list[str] = field(default_factory=list)


async def worker(args: argparse.Namespace, slots: asyncio.Queue[float | None],
                 campaigns: list[Campaign], stats: Stats) -> None:
    reader, writer = await asyncio.open_connection(args.host, args.port)
    host = f"{args.host}:{args.port}"
    turn = 0
    try:
        while True:
            scheduled = await slots.get()
            if scheduled is None:
                return
            is_command = True
            campaign = None
            if args.mode == "bare":
                raw = raw_request("POST", "/commands", host, None, BARE_BODY)
            else:
                alive = [c for c in campaigns if c.alive]
                if alive:
                    campaign = alive[turn % len(alive)]
                    turn += 1
                    method, seat, body = game_step(campaign)
                else:  # every campaign of this connection retired: read only
                    campaign, (method, seat, body) = None, ("GET", 1, None)
                path = f"/campaigns/{(campaign or campaigns[0]).id}/"
                path += "board" if method == "GET" else "commands"
                token = (campaign or campaigns[0]).tokens[seat - 1]
                raw = raw_request(method, path, host, token, body)
                is_command = method == "POST"
            sent = time.perf_counter()
            status = await exchange(reader, writer, raw)
            now = time.perf_counter()
            stats.latency.append(now - scheduled)
            stats.service.append(now - sent)
            stats.answered.append(now)
            if status != 200:
                stats.bad += 1
                if len(stats.why) < 5:
                    stats.why.append(str(status))
                if campaign is not None:
                    campaign.alive = False
                continue
            stats.ok += 1
            if is_command:
                stats.commands += 1
                stats.command_latency.append(now - scheduled)
            else:
                stats.reads += 1
                stats.read_latency.append(now - scheduled)
            if campaign is not None:
                campaign.step += 1
                if campaign.step == 6:
                    campaign.step, campaign.turns = 0, campaign.turns + 1
                    campaign.seat = campaign.seat % 3 + 1
                    if campaign.turns >= args.max_turns:
                        campaign.alive = False
    finally:
        writer.close()


async def pace(args: argparse.Namespace, slots: asyncio.Queue[float | None]) -> None:
    total = int(args.rate * args.duration)
    start = time.perf_counter() + 0.05
    for k in range(total):
        when = start + k / args.rate
        delay = when - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        slots.put_nowait(when)
    for _ in range(args.connections):
        slots.put_nowait(None)


def stops(answered: list[float], at_least: float = STALL_MS / 1000) -> list[list[float]]:
    """The stretches of at least ``at_least`` seconds between two answers, each as its first
    and last instant (seconds). At the half load's rate an answer is due every millisecond or
    so: a gap of 50 ms is the server (or the disk under it) answering nothing."""
    return [[round(a, 6), round(b, 6)] for a, b in itertools.pairwise(sorted(answered))
            if b - a >= at_least]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


async def run(args: argparse.Namespace) -> dict[str, object]:
    campaigns: list[Campaign] = []
    if args.mode == "game":
        with open(args.campaigns) as f:
            for line in f:
                cid, t1, t2, t3 = line.split()
                campaigns.append(Campaign(cid, (t1, t2, t3)))
    slots: asyncio.Queue[float | None] = asyncio.Queue()
    stats = Stats()
    shares = [campaigns[i :: args.connections] for i in range(args.connections)]
    disk = DiskProbe(args.disk_folder) if args.disk_folder is not None else None
    if disk is not None:
        disk.start()
    began = time.perf_counter()
    workers = [asyncio.create_task(worker(args, slots, shares[i], stats))
               for i in range(args.connections)]
    await asyncio.wait_for(asyncio.gather(pace(args, slots), *workers),
                           timeout=args.duration + 30)
    elapsed = time.perf_counter() - began
    if disk is not None:
        disk.stop()
    ms = 1000.0

    def summary(values: list[float]) -> dict[str, float]:
        return {f"p{q}": round(percentile(values, q) * ms, 3) for q in (50, 90, 99, 99.9)} | {
            "max": round(max(values, default=float("nan")) * ms, 3)}

    return {
        "mode": args.mode, "target_rate": args.rate, "connections": args.connections,
        "requests": len(stats.latency), "seconds": round(elapsed, 3),
        "achieved_rate": round(len(stats.latency) / elapsed, 1),
        "ok": stats.ok, "bad": stats.bad, "commands": stats.commands, "reads": stats.reads,
        "latency_ms": summary(stats.latency), "service_ms": summary(stats.service),
        "command_latency_ms": summary(stats.command_latency),
        "read_latency_ms": summary(stats.read_latency), "why": stats.why,
        "stops": stops(stats.answered),
    } | (disk.summary() if disk is not None else {})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("game", "bare"), required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rate", type=float, required=True, help="requests per second")
    parser.add_argument("--duration", type=float, required=True, help="seconds")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--campaigns", help="campaigns file (game mode)")
    parser.add_argument("--max-turns", type=int, default=280)
    parser.add_argument("--disk-folder", type=Path, default=None,
                        help="time an fsync every 20 ms in this folder (the store's) meanwhile")
    args = parser.parse_args()
    try:
        import uvloop  # the same event loop as the servers: less jitter of the driver's own
    except ImportError:  # pragma: no cover
        uvloop = None
    result = uvloop.run(run(args)) if uvloop else asyncio.run(run(args))
    json.dump(result, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
