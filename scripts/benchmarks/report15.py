"""docs/benchmarks.md, issue 15's section: every game figure against the bare route and the
control (``scripts/lean_app.py``) of the same run, several workers on PostgreSQL, and many
tables at once. ``--tables-only`` replaces the tables' own subsection alone (``with_section``
of :mod:`benchmarks.report` with :data:`TABLES_HEADING`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks.http import TARGET_P99_MS as TARGET_P99
from benchmarks.syncs import stops_text
from benchmarks.tables import COMMAND_P99_MS, DELIVERY_P99_MS, TARGET_TABLES
from benchmarks.workers import TARGET_SCALING

HEADING = "## Issue 15: the HTTP path against its control"
TABLES_HEADING = "### Many tables at once"
TARGET_BOARD = 0.6
TARGET_MIX = 0.4


def _store_control(h: dict[str, Any]) -> str:
    """The half load's controls of the disk and of the store, where the run had them."""
    half, store = h["game_half"], h.get("store_at_game_half")
    text = ""
    if "disk_alone_before" in h:
        alone = [h["disk_alone_before"], h["disk_alone_after"]]
        text += ("; the disk alone with nothing of the project running (an fsync every 20 ms "
                 "for a round's length, before the servers started / after they stopped): p99 "
                 + " / ".join(f"{d['disk_fsync_p99_ms']:.2f}" for d in alone) + " ms, max "
                 + " / ".join(f"{d['disk_fsync_max_ms']:.1f}" for d in alone) + " ms")
    if "disk_fsync_p99_ms" in half:
        text += (f"; the disk alone under that round (an fsync every 20 ms beside the store): "
                 f"p99 {half['disk_fsync_p99_ms']:.2f} ms, max {half['disk_fsync_max_ms']:.1f} "
                 "ms")
    if "store_syncs" in half:
        text += (f"; the store's own log syncs in that round (timed inside the server): p99 "
                 f"{half['store_sync_p99_ms']:.2f} ms, max {half['store_sync_max_ms']:.1f} ms, "
                 f"{half['store_slow_sync_share']:.0%} of the round in syncs of 10 ms or more")
    text += stops_text(half, "; in that round, ")
    if store is not None:
        text += (f"; the control with a store (its routes answering each command once its "
                 f"three events are committed to SQLite on the same disk, same rate): "
                 f"{_store_latency(store)}")
    beside = h.get("store_rm_at_game_half")
    if beside is not None and "beside_cores" in beside:
        text += (f"; the same control beside an idle-priority process burning "
                 f"{beside['beside_cores']:.2f} cores, what the game's read models' process "
                 f"used in that round (`scripts/idle_load.py`): {_store_latency(beside)}")
    return text


def _store_latency(store: dict[str, Any]) -> str:
    """A control with a store at half load: its p99s, the disk's and its own syncs."""
    return (f"commands p99 **{store['command_latency_ms']['p99']:.2f} ms**, reads "
            f"{store['read_latency_ms']['p99']:.2f} ms (the disk's fsync p99 "
            f"{store['disk_fsync_p99_ms']:.2f} ms, max {store['disk_fsync_max_ms']:.1f} "
            "ms" + (f"; its own log syncs p99 {store['store_sync_p99_ms']:.2f} ms, max "
                    f"{store['store_sync_max_ms']:.1f} ms" if "store_syncs" in store
                    else "") + stops_text(store, "; ") + ")")


def _with_redis(wk: dict[str, Any]) -> str:
    """The same with Redis (as several servers on one database share their live events): one
    worker and two."""
    return (f"; with Redis {wk['game1r']['commands_per_s']:.0f} → "
            f"{wk['game2r']['commands_per_s']:.0f} commands/s: **{wk['scaling_redis']:.2f}x**")


def _two_writers(wk: dict[str, Any]) -> str:
    """Two workers with a writer process each (``CAPES_WRITERS=2``) against one worker."""
    if "game2w" not in wk:
        return ""
    return (f"; with two writers (`CAPES_WRITERS=2`) {wk['game2w']['commands_per_s']:.0f} "
            f"commands/s: **{wk['scaling_writers']:.2f}x**")


def _ceiling(wk: dict[str, Any]) -> str:
    """The most any number of workers could add at the same CPU a command, by the cores
    busy in the one-worker rounds (the game's and the control's with PostgreSQL)."""
    if "ceiling" not in wk:
        return ""
    return (f"**the machine's ceiling** ({wk['cores']} cores over the cores busy in the "
            f"one-worker round, the most any number of workers could add at the same CPU a "
            f"command): **{wk['ceiling']:.2f}x** for the game "
            f"({wk['game1']['cpu']['busy_cores']:.2f} cores busy), "
            f"{wk['control_store_ceiling']:.2f}x for the control with PostgreSQL; ")


def _writers_alone(wk: dict[str, Any]) -> str:
    if "writers2" not in wk:
        return ""
    two = wk["writers2"]
    return (f", {two['processes']} writers alone (each half the players) "
            f"{two['per_s']:.0f} ({two['per_s'] / max(1e-9, wk['writer']['per_s']):.2f}x)")


def _store_scaling(wk: dict[str, Any]) -> str:
    if "lean_store1" not in wk:
        return ""
    one, two = wk["lean_store1"], wk["lean_store2"]
    return (f"; **the control with PostgreSQL** (the same routes answering each command once "
            f"its events are committed to PostgreSQL as the game's recorder commits, a writer "
            f"a worker): **{wk['control_store_scaling']:.2f}x** "
            f"({one['commands_per_s']:.0f} → {two['commands_per_s']:.0f} commands/s)")


def _yes(met: bool) -> str:
    return "**yes**" if met else "**no**"


def _loop_ceiling(game: dict[str, Any], bare: dict[str, Any]) -> str:
    """What the game server's event loop alone costs a request of the mix, and what it would
    carry with a whole core to itself: the ceiling of one worker's event loop (its writer runs
    in a process of its own under ``capes serve``: api/writer.py)."""
    loop = game["cpu"].get("loop_cores")
    if not loop:
        return ""
    per_request = loop / game["rps"]
    ceiling = game["commands_per_s"] / game["rps"] / per_request
    writer = game["cpu"].get("writer_cores")
    beside = (f"; its writer process used {writer:.2f} cores, the whole server with its read "
              f"models' process {game['cpu']['server_cores']:.2f}" if writer else "")
    return (f"; the game's event loop alone spent {per_request * 1000:.3f} ms of CPU a request "
            f"({loop:.2f} cores): with a whole core it would carry {ceiling:.0f} commands/s, "
            f"**{ceiling / bare['rps']:.2f}** of bare{beside}")


def _one_write(h: dict[str, Any]) -> str:
    """The game's ratio against the bare route served as the game is (each answer in one
    write, ``api/one_write.py``), where the run had it."""
    one = h.get("bare_one_max")
    if one is None:
        return ""
    return (f" (against the bare route served in one write as the game is, "
            f"{one['rps']:.0f} req/s: {h['game_max']['commands_per_s'] / one['rps']:.2f})")


def _mix_beside(h: dict[str, Any], key: str, what: str) -> str:
    """The game's mix beside another server's under the same mix (``key``: its best run),
    where the run had it: its commands/s, its ratio to the bare route and the game's to it."""
    other = h.get(key)
    if other is None:
        return ""
    per_s = other["commands_per_s"]
    return (f"; {what} {per_s:.0f} commands/s (**{per_s / h['bare_max']['rps']:.2f}** of "
            f"bare): the game is **{h['game_max']['commands_per_s'] / per_s:.2f}** of it")


def _mix_controls(h: dict[str, Any]) -> str:
    """The control with a store (``CAPES_LEAN_STORE``: the framework's and the store's
    throughput with the game taken out) and the game without its read models' process
    (``CAPES_PROJECTIONS=external``: what the read models' work costs the mix)."""
    beside = h.get("lean_store_rm_max") or {}
    return (_mix_beside(h, "lean_store_max", "the control with a store (each command answered "
                        "once its three events are committed to SQLite on the same disk)")
            + (_mix_beside(h, "lean_store_rm_max", "the same control beside an idle-priority "
                           f"process burning {beside['beside_cores']:.2f} cores, what the "
                           "game's read models' process used in the game's round "
                           "(`scripts/idle_load.py`)") if "beside_cores" in beside else "")
            + _mix_beside(h, "no_read_models_max", "the game without its read models' "
                          "process (`CAPES_PROJECTIONS=external`)"))


def issue15_report(h: dict[str, Any] | None, wk: dict[str, Any] | None,
                   t: dict[str, Any] | None, ryw: dict[str, Any] | None = None) -> str:
    w: list[str] = []
    add = w.append
    add(HEADING)
    add("")
    if h is None or "skipped" in h or "lean_max" not in h:
        add("Not measured in this run (`--no-http`, or wrk missing).")
        add("")
        return "\n".join(w)
    bare, lean, game = h["bare_max"], h["lean_max"], h["game_max"]
    lb, gb, half = h["lean_board"], h["game_board"], h["game_half"]
    board_bare, board_lean = gb["rps"] / bare["rps"], gb["rps"] / lb["rps"]
    mix_bare = game["commands_per_s"] / bare["rps"]
    mix_lean = game["commands_per_s"] / lean["commands_per_s"]
    p99c, p99r = half["command_latency_ms"]["p99"], half["read_latency_ms"]["p99"]
    add("Ratios of one run: the bare route (`scripts/bare_app.py`), the control "
        "(`scripts/lean_app.py`: the game's routes in their shape — bearer token checked by a "
        "`Provide` dependency, the whole `CommandRequest` union decoded, a three-event "
        "`Applied` or a mid-scene board answered — with no game behind them) and the game "
        "server, each under the same wrk load, alternating, the best run of each.")
    add("")
    add("| target (issue 15) | measured | against the control | met |")
    add("|---|---|---|---|")
    add(f"| `GET /board` of a mid-scene campaign ≥ {TARGET_BOARD} of the bare route | "
        f"{gb['rps']:.0f} req/s against {bare['rps']:.0f}: **{board_bare:.2f}** | control "
        f"{lb['rps']:.0f} req/s ({lb['rps'] / bare['rps']:.2f} of bare): the game's board "
        f"is **{board_lean:.2f}** of it | {_yes(board_bare >= TARGET_BOARD)} |")
    add(f"| game mix commands/s ≥ {TARGET_MIX} of the bare route (1 worker, SQLite) | "
        f"{game['commands_per_s']:.0f} commands/s: **{mix_bare:.2f}**{_one_write(h)} | "
        f"control {lean['commands_per_s']:.0f} commands/s "
        f"({lean['commands_per_s'] / bare['rps']:.2f} of bare): the game is "
        f"**{mix_lean:.2f}** of it{_mix_controls(h)}"
        f"{_loop_ceiling(game, bare)} | "
        f"{_yes(mix_bare >= TARGET_MIX)} |")
    add(f"| p99 of commands and of reads at half load < {TARGET_P99:g} ms | commands "
        f"**{p99c:.2f} ms**, reads **{p99r:.2f} ms** at {half['achieved_rate']:.0f} req/s | "
        f"the paced driver alone (bare route, same rate): "
        f"{h['bare_at_game_half']['latency_ms']['p99']:.2f} ms{_store_control(h)} | "
        f"{_yes(p99c < TARGET_P99 and p99r < TARGET_P99)} |")
    if wk is not None and "skipped" not in wk:
        add(f"| PostgreSQL, `--workers 2` against 1 (same mix) ≥ {TARGET_SCALING}x | "
            f"{wk['game1']['commands_per_s']:.0f} → {wk['game2']['commands_per_s']:.0f} "
            f"commands/s: **{wk['scaling']:.2f}x**{_with_redis(wk)}{_two_writers(wk)} | "
            f"{_ceiling(wk)}the control with 2 "
            f"uvicorn workers against 1: **{wk['control_scaling']:.2f}x** "
            f"({wk['lean1']['rps']:.0f} → {wk['lean2']['rps']:.0f} req/s){_store_scaling(wk)}; "
            "the one writer every "
            "worker shares, alone: "
            f"{wk['writer']['per_s']:.0f} commands/s{_writers_alone(wk)}; PostgreSQL alone "
            f"commits {wk['store']['threads2'] / wk['store']['threads1']:.2f}x as many groups "
            f"from two connections as from one | "
            f"{_yes(max(wk['scaling'], wk.get('scaling_writers', 0)) >= TARGET_SCALING)} |")
    else:
        add("| PostgreSQL, `--workers 2` against 1 | not measured in this run | | |")
    if t is not None:
        for run in t["runs"]:
            add(f"| ≥ {TARGET_TABLES} tables (4 streams each) with command p99 < "
                f"{COMMAND_P99_MS:g} ms and delivery p99 < {DELIVERY_P99_MS:g} ms, "
                f"{run['store']} ({run['workers']} worker(s)) | largest N that held: "
                f"**{run['largest']}** (see below) | | {_yes(run['largest'] >= TARGET_TABLES)} |")
    add("")
    add("| run | req/s | commands/s | p50 | p99 | of bare | of the control |")
    add("|---|---|---|---|---|---|---|")
    rows: list[tuple[str, dict[str, Any], float, float | None]] = [
        ("bare route (POST)", bare, bare["rps"], None),
        *([("bare route, each answer in one write", h["bare_one_max"],
            h["bare_one_max"]["rps"], None)] if "bare_one_max" in h else []),
        ("control: the mix", lean, lean["rps"], None),
        *([("control with a store: the mix", h["lean_store_max"], h["lean_store_max"]["rps"],
            None)] if "lean_store_max" in h else []),
        *([("control with a store beside the read models' CPU: the mix",
            h["lean_store_rm_max"], h["lean_store_rm_max"]["rps"], None)]
          if "lean_store_rm_max" in h else []),
        ("**game: the mix**", game, game["rps"], game["rps"] / lean["rps"]),
        *([("game without its read models' process: the mix", h["no_read_models_max"],
            h["no_read_models_max"]["rps"], None)] if "no_read_models_max" in h else []),
        ("control: `GET /board`", lb, lb["rps"], None),
        ("**game: `GET /board`**", gb, gb["rps"], board_lean),
    ]
    for label, r, rate, of_lean in rows:
        add(f"| {label} | {rate:.0f} | {r['commands_per_s']:.0f} | {r['p50_us'] / 1000:.2f} "
            f"ms | {r['p99_us'] / 1000:.2f} ms | {rate / bare['rps']:.2f} | "
            f"{'' if of_lean is None else f'{of_lean:.2f}'} |")
    add("")
    add("Commands/s of the control count what it answers (it runs nothing); its mix is the "
        "same Lua script on the same campaigns. The control with a store answers each command "
        "only once its three events (the game's stored bytes) are committed to an SQLite file "
        "on the same disk, in groups (`CAPES_LEAN_STORE`); beside the read models' CPU, the "
        "same server with an idle-priority process (`scripts/idle_load.py`, in 5 ms slices) "
        "burning the cores the game's read models' process used in the game's round just "
        "before (under the mix) or in its best half-load round: the read models' work kept "
        "as CPU, the game's request path taken out. The game server and the controls "
        "send each answer in one write (`api/one_write.py`, as `capes serve` does); the bare "
        "route runs as uvicorn serves it (two writes an answer, the target's baseline) and "
        "served in one write too. Half load: `scripts/paced_load.py` (see \"Method\" below) "
        "at half the game mix's best rate, latencies from each request's scheduled time.")
    add("")
    if wk is not None and "skipped" not in wk:
        add("### Several workers on PostgreSQL")
        add("")
        add("| server | workers | req/s | commands/s | p99 | refused | cores: server / load "
            "generator / others |")
        add("|---|---|---|---|---|---|---|")
        for key, label, n in (("game1", "game", 1), ("game2", "game", 2),
                              ("game2w", "game, two writers (`CAPES_WRITERS=2`)", 2),
                              ("game1r", "game (Redis)", 1), ("game2r", "game (Redis)", 2),
                              ("lean1", "control", 1), ("lean2", "control", 2),
                              ("lean_store1", "control with PostgreSQL", 1),
                              ("lean_store2", "control with PostgreSQL", 2)):
            if key not in wk:
                continue
            r = wk[key]
            c = r["cpu"]
            add(f"| {label} | {n} | {r['rps']:.0f} | {r['commands_per_s']:.0f} | "
                f"{r['p99_us'] / 1000:.2f} ms | {r['bad']} | {c['server_cores']:.2f} / "
                f"{c['client_cores']:.2f} / {c['other_cores']:.2f} |")
        add("")
        add("Each run: a fresh schema, campaigns prepared over HTTP, the mix of "
            "`scripts/bench_game.lua` (16 connections; each plays its own campaigns); the game "
            "server's cores include its read models' process. The control is what a second "
            "uvicorn worker adds on this machine when the server does nothing: the game cannot "
            "scale better than that. The control with PostgreSQL is the same routes answering "
            "each command once its three events (the game's stored bytes) are committed to "
            "PostgreSQL in the statement the game's recorder sends, each worker committing its "
            "own groups on a connection of its own (`CAPES_LEAN_STORE` set to the schema's "
            "URL): what two workers could add with this store and a writer each, the game "
            "taken out.")
        add("")
        alone, st = wk["writer"], wk["store"]
        add(f"Every worker's writes go through one writer process (`cli/writer_hub.py`), "
            "or with `CAPES_WRITERS=2` through two, each the writer of its share of the "
            "campaigns (`api/writer_pool.py`). "
            f"**The writer alone** (`application.committer`, no HTTP, the mix's commands from "
            f"{alone['players']} players at once, each awaiting its answer): "
            f"**{alone['per_s']:.0f} commands/s**, {alone['per_group']:.1f} commands "
            f"({alone['events_per_group']:.1f} events) per commit, p50 {alone['p50_ms']:.1f} ms"
            + (f"; **two writers alone** (two processes on one schema, each half the players "
               f"and its own campaigns): **{wk['writers2']['per_s']:.0f} commands/s**, "
               f"{wk['writers2']['per_group']:.1f} commands per commit"
               if "writers2" in wk else "") + ". "
            f"**PostgreSQL alone** (psycopg, no code of this project or of eventsourcing: "
            f"transactions of {st['group']} rows with the events table's keys, no table lock, "
            f"as the campaigns' recorder inserts): **{st['threads1']:.0f} commits/s from one "
            f"connection, {st['threads2']:.0f} from two at once** "
            f"({st['threads2'] / st['threads1']:.2f}x).")
        add("")
    if ryw:
        add("### Read-your-writes")
        add("")
        add("A command, then at once `GET /timeline?position=<its position>` (which waits "
            "for the timeline read model); the time from the command's answer to the "
            "timeline's, one campaign, one after another (`scripts/benchmarks/ryw.py`). "
            "Process (the default): the read models run in the process of their own that "
            "`capes serve` starts, which follows the store every 0.2 s or so (SQLite: a poll; "
            "PostgreSQL: its NOTIFY and a linger) and which the waiting query wakes through a "
            "socket (`projections/wake.py`); internal (`CAPES_PROJECTIONS=internal`): a thread "
            "of the server runs them and the query catches them up itself. The board and "
            "ledgers with `?position=` are answered from the writer's campaigns in memory and "
            "never wait.")
        add("")
        add("| read models | p50 | p90 | max | samples |")
        add("|---|---|---|---|---|")
        for name, r in ryw.items():
            add(f"| {name} | {r['p50_ms']:.1f} ms | {r['p90_ms']:.1f} ms | "
                f"{r['max_ms']:.1f} ms | {r['samples']} |")
        add("")
    if t is not None:
        add(tables_report(t))
    return "\n".join(w)


def disk(step: dict[str, Any]) -> str:
    """The disk control's figures of a step (none in runs made before it existed)."""
    if "disk_fsync_p99_ms" not in step:
        return ""
    return (f"{step['disk_fsync_p99_ms']:.1f} / {step['disk_fsync_max_ms']:.0f} ms, "
            f"{step['disk_fsyncs_over_50_ms']}")


def tables_report(t: dict[str, Any]) -> str:
    w: list[str] = []
    add: Callable[[str], None] = w.append
    add(TABLES_HEADING)
    add("")
    if "alone" in t:  # a --tables-only run: not the run the rest of the file is from
        add(f"From `scripts/bench --tables-only` on {t['alone']}; the rest of this file is "
            "from the last full run.")
        add("")
    add(f"N campaigns of 4 seats; every seat holds the live-event stream open (4 N streams); "
        f"each table sends one `narrate` every 5 s (open loop, tables spread over the 5 s) and "
        f"one `GET /board` once it is answered; {t['seconds']:g} s of load per N "
        "(`scripts/tables_load.py`, one Python process with uvloop). Delivery: from a "
        "command's answer to its event on each of the other three seats' streams (0 when the "
        f"event came first). The process's open-file limit was {t['file_limit']} (raised to "
        "the hard limit; see the README). A step holds when command p99 < "
        f"{COMMAND_P99_MS:g} ms, delivery p99 < {DELIVERY_P99_MS:g} ms, every stream opened, "
        "every delivery arrived and 99% of the commands were answered; the steps stop at the "
        "first that does not. The disk's control: during each step the driver wrote 4 KiB and "
        "called fsync every 20 ms in the store's folder, timing each (a command is answered "
        "only once its commit is on the disk, so when the disk stalls, every command does). "
        "A step that does not hold while the control saw an fsync over 50 ms is run again, "
        "up to 3 runs, each listed (a later run finds the campaigns already loaded); one run "
        "that holds is the step's verdict.")
    add("")
    add("| store | N | streams | commands p50 / p99 / max | over 50 ms | board p99 | "
        "delivery p50 / p99 / max | missing | server KiB per stream | server cores | "
        "load generator cores | others | disk control: fsync p99 / max, over 50 ms | holds |")
    add("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for run in t["runs"]:
        for s in run["steps"]:
            again = f" (run {s['attempt']})" if s.get("attempt", 1) > 1 else ""
            add(f"| {run['store']} ({run['workers']} worker(s)) | {s['tables']}{again} | "
                f"{s['opened']} of {s['streams']} | {s['command_p50_ms']:.1f} / "
                f"{s['command_p99_ms']:.1f} / {s['command_max_ms']:.0f} ms | "
                f"{s.get('commands_over_50_ms', '')} of {s['commands']} | "
                f"{s['read_p99_ms']:.1f} ms | "
                f"{s['delivery_p50_ms']:.1f} / {s['delivery_p99_ms']:.1f} / "
                f"{s['delivery_max_ms']:.0f} ms | {s['missing_deliveries']} | "
                f"{s['kib_per_stream']:.1f} | {s['server_cores']:.2f} | "
                f"{s['client_cores']:.2f} | {s['cpu']['other_cores']:.2f} | "
                f"{disk(s)} | {'yes' if s['holds'] else 'no'} |")
    add("")
    for run in t["runs"]:
        last = run["steps"][-1] if run["steps"] else None
        if last is None:
            continue
        who = "the server" if run["workers"] == 1 else f"the {run['workers']} workers"
        cores = (f"{who} used {last['server_cores']:.2f} cores, the "
                 f"other processes {last['cpu']['other_cores']:.2f}, the load generator "
                 f"{last['client_cores']:.2f}")
        if last["holds"]:
            add(f"- {run['store']}: the largest N that held is **{run['largest']}**, the most "
                f"the run tries; there {cores}.")
            continue
        if last["server_cores"] > 0.85 and run["workers"] > 1:
            limit = f"the machine's CPU (of its 2 cores, {cores})"
        elif last["server_cores"] > 0.85:
            limit = "the server's CPU (one process, one GIL)"
        elif last.get("disk_fsyncs_over_50_ms"):
            limit = (f"not the server's CPU (it used {last['server_cores']:.2f} cores): the "
                     f"disk stalled (the control's fsyncs: max {last['disk_fsync_max_ms']:.0f} "
                     f"ms, {last['disk_fsyncs_over_50_ms']} over 50 ms)")
        else:
            limit = ("not the server's CPU (it used "
                     f"{last['server_cores']:.2f} cores): latency from sharing the machine "
                     f"(other processes used {last['cpu']['other_cores']:.2f} cores)")
        add(f"- {run['store']}: the largest N that held is **{run['largest']}**; at the last "
            f"step ({last['tables']} tables) the limit was {limit}.")
    add("")
    add("")  # a blank line before the next section, whatever replaces this one
    return "\n".join(w)
