"""Many slow tables at once, for ``scripts/bench`` (scripts/benchmarks/tables.py): the load a
real host sees.

N campaigns with 4 seats each (``--campaigns``: lines ``campaign_id version token1 … token4``,
the first ``--tables`` of them are used). Every seat holds the campaign's live-event stream
open (``GET /campaigns/{id}/events/stream?after=<version>``: 4 N open connections), and every
campaign sends, open loop, one ``narrate`` command every ``--interval`` seconds (the seats in
turn, campaigns spread evenly over the interval) and, once it is answered, one ``GET /board``.
Commands and reads go over ``--connections`` keep-alive connections; their latency counts
from the moment they were due (a late answer delays the requests behind it, and they count
it). For every answered command, the time from its answer to its event (the campaign's new
version, the SSE ``id``) arriving on each of the three other seats' streams is its delivery
(0 when the event came first). The server's memory (``--server-pids``: VmRSS of each) is read
before the streams open and once they are all open; its CPU over the measured run. The disk's
control (:class:`DiskProbe`, in ``--disk-folder``) times an fsync every 20 ms meanwhile.

Bounded: ``--seconds`` of load (plus at most 30 s to open the streams and 3 s of grace for
the last deliveries); every connection is closed at the end. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import process_seconds
from disk_control import DiskProbe

VERSION = re.compile(rb'"version":(\d+)')


def raise_file_limit() -> int:
    """Open files: the soft limit raised to the hard one (each stream is a socket)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def rss_kib(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue  # it has ended: cpu_seconds finds it gone, and the step says so
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total


def cpu_seconds(pids: list[int]) -> dict[int, float]:
    """CPU seconds of each of ``pids`` still running (a worker that died and was started again
    mid-step is missing: the step then says so instead of failing on its missing file)."""
    return {pid: seconds for pid in pids if (seconds := process_seconds(pid)) is not None}


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def request(method: str, path: str, host: str, token: str, body: bytes | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", f"Authorization: Bearer {token}"]
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                   raw: bytes) -> tuple[int, bytes]:
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    body = await reader.readexactly(length) if length else b""
    return int(head[9:12]), body


class Run:
    def __init__(self, args: argparse.Namespace, tables: list[list[str]]) -> None:
        self.args = args
        self.host = f"{args.host}:{args.port}"
        self.tables = tables
        #: (campaign, version) -> {seat: arrival time}
        self.arrivals: dict[tuple[str, int], dict[int, float]] = {}
        #: (campaign, version, acting seat, answered at)
        self.answers: list[tuple[str, int, int, float]] = []
        self.command_ms: list[float] = []
        self.read_ms: list[float] = []
        self.errors: list[str] = []
        self.opened = 0
        self.stream_failures = 0
        self.writers: list[asyncio.StreamWriter] = []
        self.disk = DiskProbe(args.disk_folder)

    async def stream(self, campaign: str, version: int, seat: int, token: str,
                     ready: asyncio.Event) -> None:
        try:
            reader, writer = await asyncio.open_connection(self.args.host, self.args.port)
            self.writers.append(writer)
            writer.write(request("GET", f"/campaigns/{campaign}/events/stream?after={version}",
                                 self.host, token))
            head = await reader.readuntil(b"\r\n\r\n")
            if head[9:12] != b"200":
                raise RuntimeError(head[:60].decode(errors="replace"))
        except Exception as e:
            self.stream_failures += 1
            if len(self.errors) < 10:
                self.errors.append(f"stream: {e!r}")
            ready.set()
            return
        self.opened += 1
        ready.set()
        partial = b""
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                return
            now = time.perf_counter()
            lines = (partial + chunk).split(b"\n")
            partial = lines.pop()
            for line in lines:
                if line.startswith(b"id: "):
                    self.arrivals.setdefault((campaign, int(line[4:])), {})[seat] = now

    async def commands(self, slots: asyncio.Queue[tuple[float, int, int] | None]) -> None:
        reader, writer = await asyncio.open_connection(self.args.host, self.args.port)
        self.writers.append(writer)
        body = b'{"command":{"type":"narrate","text":"Meanwhile, across town"}}'
        while True:
            slot = await slots.get()
            if slot is None:
                return
            due, table, turn = slot
            campaign, _, *tokens = self.tables[table]
            seat = turn % 4 + 1
            status, answer = await exchange(reader, writer, request(
                "POST", f"/campaigns/{campaign}/commands", self.host, tokens[seat - 1], body))
            answered = time.perf_counter()
            self.command_ms.append((answered - due) * 1000)
            found = VERSION.search(answer)
            if status != 200 or found is None:
                if len(self.errors) < 10:
                    self.errors.append(f"command {status}: {answer[:120]!r}")
                continue
            self.answers.append((campaign, int(found.group(1)), seat, answered))
            status, _ = await exchange(reader, writer, request(
                "GET", f"/campaigns/{campaign}/board", self.host, tokens[seat - 1]))
            self.read_ms.append((time.perf_counter() - answered) * 1000)
            if status != 200 and len(self.errors) < 10:
                self.errors.append(f"board {status}")

    async def main(self) -> dict[str, Any]:
        args = self.args
        pids = [int(p) for p in args.server_pids.split(",") if p]
        rss0 = rss_kib(pids)
        streams: list[asyncio.Task[None]] = []
        began = time.perf_counter()
        # Open the streams in batches (the server's accept queue is finite).
        for start in range(0, len(self.tables) * 4, args.open_batch):
            readies = []
            for k in range(start, min(start + args.open_batch, len(self.tables) * 4)):
                campaign, version, *tokens = self.tables[k // 4]
                ready = asyncio.Event()
                readies.append(ready)
                streams.append(asyncio.ensure_future(self.stream(
                    campaign, int(version), k % 4 + 1, tokens[k % 4], ready)))
            await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), timeout=30)
        open_seconds = time.perf_counter() - began
        await asyncio.sleep(1.0)
        rss1 = rss_kib(pids)

        slots: asyncio.Queue[tuple[float, int, int] | None] = asyncio.Queue()
        workers = [asyncio.ensure_future(self.commands(slots)) for _ in range(args.connections)]
        cpu0, wall0, client0 = cpu_seconds(pids), time.perf_counter(), time.process_time()
        self.disk.start()
        start = time.perf_counter() + 0.2
        n = len(self.tables)
        schedule = sorted(
            (start + (i / n) * args.interval + k * args.interval, i, k)
            for i in range(n) for k in range(int(args.seconds / args.interval)))
        for due, table, turn in schedule:
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            slots.put_nowait((due, table, turn))
        for _ in workers:
            slots.put_nowait(None)
        try:
            await asyncio.wait_for(asyncio.gather(*workers), timeout=args.seconds + 30)
        except TimeoutError:
            self.errors.append("commands still unanswered 30 s after the run")
        self.disk.stop()
        wall = time.perf_counter() - wall0
        cpu1 = cpu_seconds(pids)
        cpu = sum(cpu1[pid] - cpu0[pid] for pid in cpu1 if pid in cpu0)
        # A server process that ended mid-step (a worker started again) makes it no step of
        # this server: the verdict (scripts/benchmarks/tables.py) fails it.
        gone = sorted(set(pids) - set(cpu1))
        client = time.process_time() - client0
        await asyncio.sleep(3.0)  # grace for the last deliveries
        rss2 = rss_kib(pids)

        delivery: list[float] = []
        missing = 0
        for campaign, version, seat, answered in self.answers:
            seen = self.arrivals.get((campaign, version), {})
            for other in range(1, 5):
                if other == seat:
                    continue
                if other in seen:
                    delivery.append(max(0.0, seen[other] - answered) * 1000)
                else:
                    missing += 1
        for task in [*streams, *workers]:
            task.cancel()
        for writer in self.writers:
            writer.close()
        await asyncio.gather(*streams, *workers, return_exceptions=True)
        streams_open = max(1, self.opened)
        return {
            "tables": n, "streams": n * 4, "opened": self.opened,
            "stream_failures": self.stream_failures, "open_seconds": open_seconds,
            "commands": len(self.answers), "scheduled": len(schedule),
            "command_p50_ms": percentile(self.command_ms, 50),
            "command_p99_ms": percentile(self.command_ms, 99),
            "command_max_ms": max(self.command_ms, default=float("nan")),
            "read_p50_ms": percentile(self.read_ms, 50),
            "read_p99_ms": percentile(self.read_ms, 99),
            "delivery_p50_ms": percentile(delivery, 50),
            "delivery_p99_ms": percentile(delivery, 99),
            "delivery_max_ms": max(delivery, default=float("nan")),
            "deliveries": len(delivery), "missing_deliveries": missing,
            "rss_before_kib": rss0, "rss_streams_kib": rss1, "rss_after_kib": rss2,
            "kib_per_stream": (rss1 - rss0) / streams_open,
            "server_cores": cpu / wall, "client_cores": client / wall, "seconds": wall,
            **self.disk.summary(),
            "commands_over_50_ms": sum(1 for ms in self.command_ms if ms > 50),
            "errors": self.errors,
            "server_processes_ended": gone,
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--campaigns", type=Path, required=True)
    parser.add_argument("--tables", type=int, required=True)
    parser.add_argument("--interval", type=float, default=5.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--open-batch", type=int, default=250)
    parser.add_argument("--server-pids", default="")
    parser.add_argument("--disk-folder", type=Path, default=Path(tempfile.gettempdir()),
                        help="where the disk control writes (the store's folder)")
    args = parser.parse_args()
    limit = raise_file_limit()
    if limit < args.tables * 4 + args.connections + 64:
        print(f"the open-file limit ({limit}) is too low for {args.tables * 4} streams",
              file=sys.stderr)
        return 2
    lines = args.campaigns.read_text().split("\n")
    tables = [line.split() for line in lines if line.strip()][: args.tables]
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover
        pass
    result = asyncio.run(Run(args, tables).main())
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
