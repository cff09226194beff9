"""The projection-rebuild figure of docs/benchmarks.md: rebuilding every read model of a
100k-event history, in events per second, next to a raw read and decode of the same events.

``scripts/bench`` runs it as part of a full run and alone with ``--projections-only`` (then
it replaces its own section of docs/benchmarks.md and leaves the rest as it is).

1. A history: seeded random legal play (:mod:`benchmarks.randomplay`) into 20
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

import time
from pathlib import Path
from typing import Any

from application.campaigns import Campaigns
from application.dice import SeededDice
from benchmarks.common import say
from benchmarks.randomplay import random_play
from domain.capes.views import board
from projections.model import Folds
from projections.runner import BATCH
from projections.service import MODELS, ReadModels

FULL = {"events": 100_000, "campaigns": 20, "seconds_per_campaign": 240}
QUICK = {"events": 10_000, "campaigns": 5, "seconds_per_campaign": 60}


def read_log(app: Campaigns, fold: bool = False) -> tuple[int, float]:
    """Read (and decode, and maybe fold) the whole notification log: (events, seconds)."""
    folds = Folds(app) if fold else None
    count, start = 0, 0
    began = time.perf_counter()
    while True:
        page = app.recorder.select_notifications(start, 1000, inclusive_of_start=False)
        for notification in page:
            record: Any = app.mapper.to_domain_event(notification)
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
        played = random_play(app, seed=1000 + seed, events=per_campaign,
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
