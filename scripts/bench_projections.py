#!/usr/bin/env python3
"""The projection-rebuild figure of docs/benchmarks.md: rebuilding every read model of a
100k-event history, in events per second, next to a raw read and decode of the same events.

``scripts/bench`` runs it as part of a full run and alone with ``--projections-only``; this
file also runs alone (``python scripts/bench_projections.py [--quick]``). Either way it
replaces its own section of docs/benchmarks.md and leaves the rest as it is.

1. A history: seeded random legal play (``scripts/bench``'s ``random_play``) into 20
   campaigns of 5,000 events each, in a fresh SQLite file (the server's store).
2. Raw read + decode: the whole notification log read in pages of 1,000
   (``select_notifications``) and decoded by the application's mapper (best of 3).
3. Read + decode + fold: the same, folding every campaign forward event by event as the
   read models do (:class:`projections.model.Folds`).
4. Rebuild: ``ReadModels.rebuild()``, what ``capes projections rebuild`` runs — empty the
   tables, then catch up from position 0 in batches of 500 notifications, every read model
   written in one transaction per batch (best of 2); then each read model alone.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import sys
import tempfile
import time
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from application.campaigns import Campaigns  # noqa: E402
from application.dice import SeededDice  # noqa: E402
from domain.capes.views import board  # noqa: E402
from projections.model import Folds  # noqa: E402
from projections.runner import BATCH  # noqa: E402
from projections.service import MODELS, ReadModels  # noqa: E402

FULL = {"events": 100_000, "campaigns": 20, "seconds_per_campaign": 240}
QUICK = {"events": 10_000, "campaigns": 5, "seconds_per_campaign": 60}
HEADING = "## Projections: rebuilding the read models"
DOC = ROOT / "docs" / "benchmarks.md"


def say(text: str = "") -> None:
    print(text, flush=True)


@cache
def bench() -> ModuleType:
    """``scripts/bench`` as a module (for its random play)."""
    loader = importlib.machinery.SourceFileLoader("capes_bench", str(ROOT / "scripts" / "bench"))
    spec = importlib.util.spec_from_loader("capes_bench", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def read_log(app: Campaigns, fold: bool = False) -> tuple[int, float]:
    """Read (and decode, and maybe fold) the whole notification log: (events, seconds)."""
    folds = Folds(app) if fold else None
    count, start = 0, 0
    began = time.perf_counter()
    while True:
        page = app.recorder.select_notifications(start, 1000, inclusive_of_start=False)
        for notification in page:
            record = app.mapper.to_domain_event(notification)
            if folds is not None:
                folds.change(record, notification.id)
        count += len(page)
        if len(page) < 1000:
            return count, time.perf_counter() - began
        start = page[-1].id


def projection_part(quick: bool, tmp: Path) -> dict[str, Any]:
    p = QUICK if quick else FULL
    env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite",
           "SQLITE_DBNAME": str(tmp / "projections.sqlite")}
    app = Campaigns(env, dice=SeededDice(4))
    out: dict[str, Any] = {"params": p, "batch": BATCH}
    per_campaign = p["events"] // p["campaigns"]
    say(f"projections: a {p['events']}-event history by seeded random play "
        f"({p['campaigns']} campaigns of {per_campaign} events)")
    began = time.perf_counter()
    campaigns = []
    for seed in range(p["campaigns"]):
        played = bench().random_play(app, seed=1000 + seed, events=per_campaign,
                                     seconds=p["seconds_per_campaign"])
        campaigns.append(played["campaign_id"])
    head = app.recorder.max_notification_id() or 0
    out["history"] = {"events": head, "seconds": time.perf_counter() - began,
                      "campaigns": len(campaigns)}
    say(f"  {head} events in {out['history']['seconds']:.0f} s")

    reads = [read_log(app) for _ in range(3)]
    events, seconds = min(reads, key=lambda r: r[1])
    out["read_decode"] = {"events": events, "seconds": seconds, "per_s": events / seconds}
    say(f"  raw read + decode: {events / seconds:,.0f} events/s")
    events, seconds = read_log(app, fold=True)
    out["fold"] = {"events": events, "seconds": seconds, "per_s": events / seconds}
    say(f"  read + decode + fold: {events / seconds:,.0f} events/s")

    read_models = ReadModels(app)
    rebuilds = [read_models.rebuild() for _ in range(2)]
    position, seconds = min(rebuilds, key=lambda r: r[1])
    assert position == head, (position, head)
    assert all(read_models.board.board(c) == board(app.state(c)) for c in campaigns)
    out["rebuild"] = {"events": position, "seconds": seconds, "per_s": position / seconds}
    say(f"  rebuild of every read model: {position / seconds:,.0f} events/s "
        f"({seconds:.1f} s)")
    out["sizes"] = {name: sum(len(rows) for rows in m.store.dump().values())
                    for name, m in read_models.models.items()}
    read_models.close()
    out["each"] = {}
    for name in MODELS:
        alone = ReadModels(app, [name])
        position, seconds = alone.rebuild()
        alone.close()
        out["each"][name] = {"seconds": seconds, "per_s": position / seconds}
        say(f"  rebuild of {name} alone: {position / seconds:,.0f} events/s")
    out["db_mb"] = sum(f.stat().st_size for f in tmp.glob("projections.sqlite*")) / 1e6
    app.close()
    return out


def projection_report(r: dict[str, Any], quick: bool = False) -> str:
    """The section of docs/benchmarks.md (from its heading to the end of its text)."""
    h, rd, fo, rb = r["history"], r["read_decode"], r["fold"], r["rebuild"]
    w = [HEADING, ""]
    if quick:
        w += ["**A `--quick` run: a smaller history, rough figures.**", ""]
    w += [
        f"Rebuilding every read model (board, ledgers, timeline, directory, analytics) of a "
        f"{h['events']:,}-event history: **{rb['per_s']:,.0f} events/s** "
        f"({rb['seconds']:.1f} s), against **{rd['per_s']:,.0f} events/s** for the raw read "
        f"and decode of the same events — a rebuild runs at "
        f"{rb['per_s'] / rd['per_s'] * 100:.0f}% of the speed of merely reading its input.",
        "",
        "| what | events/s | seconds |",
        "|---|---|---|",
        f"| raw read + decode of the notification log (pages of 1,000) | {rd['per_s']:,.0f} | "
        f"{rd['seconds']:.2f} |",
        f"| read + decode + fold of every campaign, event by event | {fo['per_s']:,.0f} | "
        f"{fo['seconds']:.2f} |",
        f"| **rebuild of every read model** (`capes projections rebuild`) | "
        f"**{rb['per_s']:,.0f}** | {rb['seconds']:.2f} |",
    ]
    for name, each in r["each"].items():
        w.append(f"| rebuild of `{name}` alone | {each['per_s']:,.0f} | {each['seconds']:.2f} |")
    sizes = ", ".join(f"{name} {rows:,}" for name, rows in r["sizes"].items())
    w += [
        "",
        f"Method (`scripts/bench_projections.py`): {h['campaigns']} campaigns of about "
        f"{h['events'] // h['campaigns']:,} events each, made by `scripts/bench`'s seeded "
        f"random legal play in {h['seconds']:.0f} s, in one fresh SQLite file (WAL; "
        f"{r['db_mb']:.0f} MB with the read models). Reads and rebuilds run in this "
        f"process on one thread; the best of 3 reads and of 2 rebuilds counts. A rebuild "
        "empties the tables and catches up from position 0 in batches of "
        f"{r['batch']} notifications: each batch is read and decoded once, each campaign "
        "folded forward once per event (the board and ledgers need the state after each "
        "event; their documents are rendered once per campaign and batch), and every read "
        "model's rows and tracking position are written in one transaction per batch. Rows "
        f"after the rebuild: {sizes}. The history's boards were checked against the "
        "application's after the rebuild.",
        "",
    ]
    return "\n".join(w)


def with_section(text: str, section: str) -> str:
    """``text`` (the whole document) with this benchmark's section replaced, or put before
    "## Findings" (or at the end) if it has none yet."""
    lines = text.splitlines()
    if HEADING in lines:
        start = lines.index(HEADING)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
                   len(lines))
        return "\n".join([*lines[:start], *section.splitlines(), *lines[end:]]) + "\n"
    if "## Findings" in lines:
        at = lines.index("## Findings")
        return "\n".join([*lines[:at], *section.splitlines(), *lines[at:]]) + "\n"
    return text.rstrip("\n") + "\n\n" + section + "\n"


def main(quick: bool = False, out: Path = DOC) -> int:
    with tempfile.TemporaryDirectory(prefix="capes-bench-projections-") as tmp:
        result = projection_part(quick, Path(tmp))
    section = projection_report(result, quick)
    text = out.read_text() if out.exists() else "# Benchmarks\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(with_section(text, section))
    say(f"updated the projections section of {out}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a 10k-event history")
    parser.add_argument("--out", type=Path, default=DOC)
    args = parser.parse_args()
    sys.exit(main(args.quick, args.out))
