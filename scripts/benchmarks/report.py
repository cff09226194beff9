"""docs/benchmarks.md: the targets and their verdicts, every figure with its method, the
projections' own section (which ``--projections-only`` replaces alone)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from application.campaigns import SNAPSHOT_INTERVAL
from benchmarks.common import HOST, stolen_cores
from benchmarks.http import (
    HALF_EXTRA,
    PROFILE_RATE,
    QUIET_BEFORE_RUN,
    TARGET_P99_MS,
    WALL_RATE,
)
from benchmarks.syncs import stops_text

#: The issue's targets.
TARGET_RATIO = 0.5
#: Issue "Undo, disputes and rewind": a cold load with snapshots against a full replay.
TARGET_SNAPSHOT_GAIN = 20.0
PROJECTIONS_HEADING = "## Projections: rebuilding the read models"
#: The section ``scripts/playtest --write`` owns; a full run of the bench keeps it as it is.
RANDOM_PLAY_HEADING = "## Random play: no game freezes"


def cores(cpu: dict[str, float]) -> str:
    stolen = stolen_cores(cpu)
    return (f"{cpu['server_cores']:.2f} / {cpu['client_cores']:.2f} / "
            f"{cpu['other_cores']:.2f}" + ("" if stolen is None else f" ({stolen:.2f} stolen)"))


def fmt_ms(us: float) -> str:
    return f"{us / 1000:.2f} ms"


def verdicts(h: dict[str, Any]) -> dict[str, Any]:
    game, bare, half = h["game_max"], h["bare_max"], h["game_half"]
    ratio_commands = game["commands_per_s"] / bare["rps"]
    ratio_requests = game["ok_rps"] / bare["rps"]
    p99 = half["command_latency_ms"]["p99"]
    return {"ratio_commands": ratio_commands, "ratio_requests": ratio_requests,
            "throughput_met": ratio_commands >= TARGET_RATIO, "p99_half": p99,
            "p99_met": p99 < TARGET_P99_MS and half["bad"] == 0}


def report(facts: dict[str, str], p: dict[str, Any], quick: bool, h: dict[str, Any] | None,
           ip: dict[str, Any] | None, elapsed: float) -> str:
    w: list[str] = []
    add = w.append
    http_ok = h is not None and "skipped" not in h
    add("# Benchmarks")
    add("")
    add(f"Written by `scripts/bench{' --quick' if quick else ''}` on {facts['date']} "
        f"(commit {facts['commit']}; the run took {elapsed:.0f} s). Run it again to refresh "
        "this file (see the README's last section; every run before it is in "
        "docs/performance.md): these are the figures of one run on one machine, not a "
        "guarantee.")
    if quick:
        add("")
        add("**This is a `--quick` smoke run: short durations, rough figures.**")
    add("")
    add("## Machine")
    add("")
    add(f"- `nproc`: {facts['nproc']} ({facts['cpu']}); {facts['os']}")
    add(f"- Python {facts['python']}; {facts['packages']}")
    add(f"- load: {facts['wrk']} (Debian's package) and `scripts/paced_load.py` (Python, "
        "uvloop)")
    add("- The servers, the load generator and any other work on the machine share these "
        "cores. Other processes (not this benchmark's) are measured during every run and "
        "shown beside its figures: when they take a core, every figure here is worse than "
        "on a quiet machine. On a virtual machine that includes the time the host gave its "
        "cores to other machines (steal, from `/proc/stat`), shown apart where there was any.")
    add("")
    if not http_ok:
        add("## HTTP")
        add("")
        add(h["skipped"] if h else "Not run (`--no-http`).")
        add("")
    else:
        assert h is not None
        _http_report(add, facts, p, h, ip)
    if ip is not None:
        _inproc_report(add, p, ip)
    add("## Findings")
    add("")
    add("- Random play once found a dead end in the rules engine: a turn that staked Debt "
        "before its action, for a character none of whose abilities could roll any die on "
        "the table, could neither act nor end. Issue 11 fixed it in the rules: a turn can "
        "always end, and Debt staked before the ability is provisional (R-STAKE-4). The "
        "benchmark's random play stakes, splits and schisms before acting again, and "
        "`scripts/playtest` plays thousands of games checking that none freezes (\"Random "
        "play\" above).")
    add("")
    return "\n".join(w)


def _cpu_ms(cpu: dict[str, float], rate: float) -> float:
    """Milliseconds of server CPU per request."""
    return cpu["server_cores"] / rate * 1000 if rate else float("nan")


def _http_report(add: Callable[[str], None], facts: dict[str, str], p: dict[str, Any],
                 h: dict[str, Any], ip: dict[str, Any] | None) -> None:
    v = verdicts(h)
    game, bare, half = h["game_max"], h["bare_max"], h["game_half"]
    floor = h["bare_at_game_half"]
    prof = h.get("profile")
    add("## Targets (issue \"Performance\")")
    add("")
    add("| target | measured | met |")
    add("|---|---|---|")
    add(f"| game commands reach at least half the bare route's throughput | "
        f"{game['commands_per_s']:.0f} game commands/s against {bare['rps']:.0f} bare "
        f"requests/s: **{v['ratio_commands']:.2f}** ({v['ratio_requests']:.2f} counting the "
        f"mix's reads too) | **{'yes' if v['throughput_met'] else 'no'}** |")
    add(f"| p99 under {TARGET_P99_MS:g} ms at half load | p99 of the game commands "
        f"**{v['p99_half']:.2f} ms** at {half['achieved_rate']:.0f} requests/s (all requests "
        f"{half['latency_ms']['p99']:.2f} ms) | **{'yes' if v['p99_met'] else 'no'}** |")
    if ip is not None and "cold_with_snapshots" in ip:
        cw, cn = ip["cold_with_snapshots"], ip["cold_without_snapshots"]
        times = cn["load_ms"] / cw["load_ms"]
        add(f"| (issue \"Undo, disputes and rewind\") cold load of a "
            f"{ip['random']['version']}-event campaign at least {TARGET_SNAPSHOT_GAIN:g} times "
            f"faster with snapshots than a full replay | {cw['load_ms']:.1f} ms against "
            f"{cn['load_ms']:.1f} ms: **{times:.0f} times** (a random old version: "
            f"{ip['old_with']['median_ms']:.1f} ms against "
            f"{ip['old_without']['median_ms']:.1f} ms) | "
            f"**{'yes' if times >= TARGET_SNAPSHOT_GAIN else 'no'}** |")
    add("")
    if not (v["throughput_met"] and v["p99_met"]):
        game_ms, bare_ms = _cpu_ms(game["cpu"], game["rps"]), _cpu_ms(bare["cpu"], bare["rps"])
        missed = [name for name, met in (("throughput", v["throughput_met"]),
                                         ("p99", v["p99_met"])) if not met]
        text = (f"**Not met: {' and '.join(missed)}.** Per request the game server spent "
                f"{game_ms:.2f} ms of CPU, the bare app {bare_ms:.2f} ms")
        text += (f" ({game_ms / bare_ms:.1f} times as much; at most {1 / game_ms * 1000:.0f} "
                 "requests/s for one fully busy core)")
        if ip is not None and "writer" in ip:
            wr = ip["writer"]
            inproc_ms = wr["cpu"]["client_cores"] / wr["per_s"] * 1000
            text += (f"; one command through the server's writer alone, without HTTP "
                     f"({p['inproc_campaigns']} players at once, {wr['per_group']:.0f} "
                     f"commands per commit), costs {inproc_ms:.2f} ms of CPU "
                     f"({wr['per_s']:.0f} commands/s), "
                     f"{inproc_ms / bare_ms:.1f} times the whole bare request; the "
                     f"rest of a request's {game_ms:.2f} ms is everything else the server "
                     "does for it: HTTP, authentication, the read models, the hops between "
                     "threads, and contention between the threads")
        text += "."
        serial = h["game_serial"]
        gain = game["rps"] / serial["rps"]
        text += (f" With one connection the game mix ran {serial['rps']:.0f} requests/s "
                 f"(p50 {fmt_ms(serial['p50_us'])}, "
                 f"{_cpu_ms(serial['cpu'], serial['rps']):.2f} ms of CPU each); "
                 f"{h['connections']} connections gave {gain:.2f} times that")
        if gain < 1.25:
            text += (": concurrency adds next to no throughput — one worker process is "
                     "bound by its CPU per request (one GIL), and more threads add contention "
                     f"(CPU per request {_cpu_ms(serial['cpu'], serial['rps']):.2f} → "
                     f"{game_ms:.2f} ms) and queueing, which is where the latencies come "
                     "from")
        text += "."
        if prof:
            top = ", ".join(f"{name} {count / prof['total'] * 100:.0f}%"
                            for name, count in prof["buckets"][:5])
            text += (f" Where the server's Python time goes under full load (py-spy, share "
                     f"of the time the GIL was held): {top}. The GIL was held "
                     f"{prof['gil_share'] * 100:.0f}% of the time while the process used "
                     f"{game['cpu']['server_cores']:.2f} cores at full load: the rest is "
                     "native work without the GIL (SQLite, system calls, thread switches).")
            writer = dict(prof["wall"]["writer"])
            total = sum(writer.values()) or 1
            idle = sum(c for k, c in writer.items() if k.startswith("idle"))
            store = sum(c for k, c in writer.items() if k.startswith("storing"))
            who = ("The writer process (api/writer.py)" if prof.get("writer_process")
                   else "The writer thread")
            text += (f" {who}, which decides every command and commits the ones "
                     "that queue up together in one transaction, was idle "
                     f"{idle / total * 100:.0f}% of the time and storing groups "
                     f"{store / total * 100:.0f}% (wall clock).")
        stub = h.get("stub")
        if stub:
            text += (f" With its commands answered but not run (`scripts/stub_app.py`: "
                     "the same routes, authentication, parsing, board query and answer), "
                     f"the server ran the mix at {stub['rps']:.0f} requests/s "
                     f"({stub['commands_per_s']:.0f} commands/s answered, "
                     f"{_cpu_ms(stub['cpu'], stub['rps']):.2f} ms of CPU per request): "
                     f"**{stub['commands_per_s'] / bare['rps']:.2f}** of the bare route. "
                     "That is the ceiling of one worker for this mix even if commands cost "
                     "nothing: the HTTP layer of the game's routes alone takes more than the "
                     "target leaves.")
        add(text)
        add("")
    add("## HTTP: the game mix against a bare route")
    add("")
    add("| run | load | req/s | game commands/s | p50 | p90 | p99 | max | refused / "
        "errors | server CPU per request | cores: server / load generator / others |")
    add("|---|---|---|---|---|---|---|---|---|---|---|")
    runs = [(f"{what}, round {i + 1}", r)
            for key, what in (("bare", "bare route"),
                              ("bare_one", "bare route served in one write"),
                              ("lean_store", "control with a store, the game mix"),
                              ("game", "game mix"),
                              ("lean_store_rm", "control with a store beside the read models' "
                               "CPU, the game mix"),
                              ("no_read_models", "game mix without its read models' process"))
            for i, r in enumerate(h.get(f"{key}_runs", ()))]
    bests = [bare, game, h.get("bare_one_max"), h.get("lean_store_max"),
             h.get("lean_store_rm_max"), h.get("no_read_models_max")]
    for label, r in runs:
        errors = r["errors_connect"] + r["errors_read"] + r["errors_write"] + r["errors_timeout"]
        best = " (best)" if any(r is b for b in bests) else ""
        add(f"| {label}{best} | wrk, {h['connections']} connections, {p['http_seconds']} s "
            f"| {r['rps']:.0f} | {r['commands_per_s'] if 'game' in label else 0:.0f} | "
            f"{fmt_ms(r['p50_us'])} | {fmt_ms(r['p90_us'])} | {fmt_ms(r['p99_us'])} | "
            f"{fmt_ms(r['max_us'])} | {r['bad']} / {errors} | "
            f"{_cpu_ms(r['cpu'], r['rps']):.2f} ms | {cores(r['cpu'])} |")
    for label, r in (("bare route, one connection", h["bare_serial"]),
                     ("game mix, one connection", h["game_serial"])):
        add(f"| {label} | wrk, 1 connection, {p['serial_seconds']} s | {r['rps']:.0f} | "
            f"{r['commands_per_s'] if 'game' in label else 0:.0f} | {fmt_ms(r['p50_us'])} | "
            f"{fmt_ms(r['p90_us'])} | {fmt_ms(r['p99_us'])} | {fmt_ms(r['max_us'])} | "
            f"{r['bad']} / {r['errors_timeout'] + r['errors_read']} | "
            f"{_cpu_ms(r['cpu'], r['rps']):.2f} ms | {cores(r['cpu'])} |")
    stub = h.get("stub")
    if stub:
        add(f"| game mix, commands answered but not run (`scripts/stub_app.py`) | wrk, "
            f"{h['connections']} connections, {p['http_seconds']} s | {stub['rps']:.0f} | "
            f"{stub['commands_per_s']:.0f} | {fmt_ms(stub['p50_us'])} | "
            f"{fmt_ms(stub['p90_us'])} | {fmt_ms(stub['p99_us'])} | {fmt_ms(stub['max_us'])} "
            f"| {stub['bad']} / {stub['errors_connect'] + stub['errors_read']} | "
            f"{_cpu_ms(stub['cpu'], stub['rps']):.2f} ms | {cores(stub['cpu'])} |")
    halves = [(f"game mix, half load, round {i + 1}{' (best)' if r is half else ''}", r)
              for i, r in enumerate(h["half_runs"])]
    store, store_rm = h.get("store_at_game_half"), h.get("store_rm_at_game_half")
    controls = [("bare route at the same rate", floor),
                *([("control with a store at the same rate", store)] if store else []),
                *([("control with a store beside the read models' CPU, same rate", store_rm)]
                  if store_rm else [])]
    for label, r in (*halves, *controls):
        lat = r["latency_ms"]
        add(f"| {label} | paced {r['target_rate']:.0f} req/s, {r['connections']} "
            f"connections, {p['half_seconds']} s | {r['achieved_rate']:.0f} | "
            f"{r['commands'] / r['seconds'] if 'bare' not in label else 0:.0f} | "
            f"{lat['p50']:.2f} ms | {lat['p90']:.2f} ms | {lat['p99']:.2f} ms | "
            f"{lat['max']:.2f} ms | {r['bad']} / 0 | "
            f"{_cpu_ms(r['cpu'], r['achieved_rate']):.2f} ms | {cores(r['cpu'])} |")
    add("")
    cl = half["command_latency_ms"]
    add("In the best half-load run the game commands alone (without the reads) had p50 "
        f"{cl['p50']:.2f} ms, p90 {cl['p90']:.2f} ms, p99 {cl['p99']:.2f} ms and p99.9 "
        f"{cl['p99.9']:.2f} ms "
        "from their scheduled send time, the reads (`GET /board`) p50 "
        f"{half['read_latency_ms']['p50']:.2f} ms and p99 {half['read_latency_ms']['p99']:.2f} "
        "ms; the service time alone (from the write to the "
        f"answer, every request) had p50 {half['service_ms']['p50']:.2f} ms and p99 "
        f"{half['service_ms']['p99']:.2f} ms. The bare route paced at the same rate is the "
        f"paced driver's own floor: p99 {floor['latency_ms']['p99']:.2f} ms.")
    add("")
    disk = [r for r in h["half_runs"] if "disk_fsync_p99_ms" in r]
    if disk:
        add("The disk's control beside the store during each half-load round "
            "(`scripts/disk_control.py`: a 4 KiB write and an fsync every 20 ms; every command "
            "waits for a commit on this disk, so its fsync, the server's own writes included, is "
            "a floor under a command's latency that the server's Python does not set): "
            + "; ".join(f"round {i + 1}: p50 {r['disk_fsync_p50_ms']:.2f} ms, p99 "
                        f"{r['disk_fsync_p99_ms']:.2f} ms, max {r['disk_fsync_max_ms']:.1f} ms, "
                        f"{r['disk_fsyncs_over_50_ms']} over 50 ms"
                        for i, r in enumerate(h["half_runs"]) if "disk_fsync_p99_ms" in r)
            + ". A round that missed the target while the disk stalled (an fsync over 50 ms) "
            f"is followed by one more, {HALF_EXTRA} at most.")
        add("")
    if "disk_alone_before" in h:
        add("The same control with nothing of the project running, for a round's length, "
            "before the servers started and after they stopped: "
            + "; ".join(f"{when}: p50 {d['disk_fsync_p50_ms']:.2f} ms, p99 "
                        f"{d['disk_fsync_p99_ms']:.2f} ms, max {d['disk_fsync_max_ms']:.1f} ms, "
                        f"{d['disk_fsyncs_over_50_ms']} over 50 ms"
                        for when, d in (("before", h["disk_alone_before"]),
                                        ("after", h["disk_alone_after"])))
            + ". Where the disk pauses on its own, no server's commands can be faster than it.")
        add("")
    timed = [(i, r) for i, r in enumerate(h["half_runs"]) if "store_syncs" in r]
    if timed:
        add("The store's own syncs in each round, timed inside the server (`scripts/sync_timer.c`, "
            "preloaded: every `fdatasync` of the store's write-ahead log, SQLite's commit, each "
            "command's answer waiting for one; `scripts/benchmarks/syncs.py`): "
            + "; ".join(f"round {i + 1}: {r['store_syncs']} syncs, p50 "
                        f"{r['store_sync_p50_ms']:.2f} ms, p99 {r['store_sync_p99_ms']:.2f} ms, "
                        f"max {r['store_sync_max_ms']:.1f} ms, {r['store_syncs_over_50_ms']} over "
                        f"50 ms, {r['store_slow_sync_share']:.0%} of the round in syncs of 10 ms "
                        "or more" + stops_text(r, "; ")
                        for i, r in timed)
            + ". The commands that arrive while a commit's sync stalls wait for it: where the "
            "round's slowest syncs are as long as its commands' p99, the disk set the tail; "
            "where they are short, the server did. A stop is a stretch of 50 ms or more in "
            "which the paced driver got no answer at all (`scripts/paced_load.py`); one inside "
            "a sync of the store's log is the disk's, one outside it the server's.")
        add("")
    add(f"Cores are CPU used during the run (of {facts['nproc']}): the server process, the "
        "load generator (wrk or the paced driver, with this script), and every other "
        "process on the machine (from `/proc/stat`). Before the HTTP runs the script waited "
        f"{h['quiet']['waited']:.0f} s for other processes to quieten (they then used "
        f"{h['quiet']['other_cores']:.2f} cores), and before each later measured run up "
        f"to {p['round_quiet_wait']} s more.")
    add("")
    add("### Method")
    add("")
    add(f"- Game server: `capes serve --host {HOST} --port <free port> --workers 1 "
        "--log-level warning` (run as `python -m cli.main serve …`), `CAPES_DB` a fresh "
        "SQLite file in a temporary directory, `CAPES_RATE_LIMIT=0`. Access logs are off on "
        "every server. `capes serve` sends each answer in one write (`api/one_write.py`: "
        "uvicorn's protocol, its head and body written together); so do the stub and the "
        "controls (`--http api.one_write:OneWriteProtocol`).")
    add("- The game without its read models' process: the same `capes serve` on a fresh "
        "SQLite file of its own with `CAPES_PROJECTIONS=external` and nobody running them "
        "(they only lag; the board and a command's answer come from the writer as always), "
        "its campaigns prepared the same way: what the read models' work costs the mix.")
    add(f"- Bare app: `python -m uvicorn --app-dir scripts bare_app:app --host {HOST} "
        "--port <free port> --workers 1 --log-level warning` — `scripts/bare_app.py`, one "
        "async msgspec POST route that decodes a small command body into Structs and answers "
        "a small Struct. The same server software (uvicorn with uvloop and httptools), one "
        "worker, as uvicorn serves it (head and body in two writes): the targets' baseline. "
        "The same app served in one write as the game is runs beside it in every round. "
        "Every server runs during the whole HTTP part.")
    add(f"- Campaigns: {h['setup']['campaigns']} prepared over HTTP before any measurement "
        f"({h['setup']['requests']} requests, {h['setup']['seconds']:.1f} s): opened with 99 "
        "Story Tokens a player, three seats, three heroes (powers, styles and attitudes rated "
        "1-3, five Drives), a scene framed, characters chosen, claiming passed, and seat 1's "
        "free turn creating a Conflict (dice 1 against 1). Every run of the mix gets "
        f"{p['campaigns_per_run']} fresh campaigns of its own.")
    add("- The game mix (`scripts/bench_game.lua`; `scripts/paced_load.py` plays the same): "
        "one turn is six requests, each expected to answer 200 (anything else is counted "
        "as refused and retires the campaign): `POST start_turn` (a bought turn: 1 Story "
        "Token), `POST roll_die` (a super power rated 1 rolls the die showing 1: 1 Debt; "
        "the server draws the value), `POST reject_roll` with `ally=1` (the die goes back to "
        "1 and the character allies to side 1, legal whatever was rolled), `GET /board`, "
        "`POST narrate` (the next seat), `POST end_turn`; then the next seat's turn. Five "
        "of six requests are commands that append 1-4 events through the whole command "
        "path (token check, the writer thread: the campaign from its heads, rules, dice, "
        "envelopes, the SQLite commit of the group it is in, a snapshot every "
        f"{SNAPSHOT_INTERVAL} events; then the live-event publish); one is a read.")
    add("- Commands answered but not run: `scripts/stub_app.py` is the real server (same "
        "app, uvicorn, one worker, its own SQLite file) whose command route, once the "
        "campaigns are prepared, answers a fixed result without running the command; the "
        "same mix, one wrk run after a warm-up. It shows what the HTTP layer of the game's "
        "routes costs by itself.")
    add("- **What the mix is not:** rolls are always rejected, so that the same cycle stays "
        "legal as long as the tokens last; accepted rolls with reactions, staking, "
        "splitting, claiming and resolution are not in the HTTP mix (which of them is legal "
        "depends on the dice and on how the game went). They are in the in-process random "
        "play below.")
    add(f"- `wrk -t {h['connections']} -c {h['connections']} -d {p['http_seconds']}s "
        "--timeout 5s`, closed loop, the same for both servers, after a "
        f"{p['warmup_seconds']} s warm-up run of each; {p['rounds']} measured round(s), "
        "alternating the servers, and the best run of each server counts. One connection "
        "per wrk thread, so the Lua state is per connection and each connection plays its "
        "own campaigns in order (round-robin over them; a campaign retires after "
        f"{p['max_turns']} turns, before its tokens run out). Latencies are wrk's, "
        "closed loop (coordinated omission not corrected).")
    add(f"- One connection: `wrk -t 1 -c 1 -d {p['serial_seconds']}s` on each server (the "
        "game mix on campaigns of its own): requests one after another, the cost of one "
        "request without contention.")
    add("- Half load: wrk has no `-R` (wrk2 is not packaged), so `scripts/paced_load.py` "
        "sends the same mix open loop at half the best measured rate of 200 answers, over "
        f"{h['connections']} keep-alive connections, for {p['half_seconds']} s "
        f"({p['half_rounds']} run(s) on campaigns of their own, and up to {HALF_EXTRA} more "
        "after a run that missed the target while the disk stalled; the lowest p99 counts), "
        "timing each "
        "request from its scheduled send time (a late answer delays the next requests and "
        "they count it: no coordinated omission). The driver is Python: the bare route "
        "paced at the same rate shows what the driver adds by itself.")
    add("- Each round of wrk runs, in turn, the bare route, the bare route served in one "
        "write, the control, the control with a store, the game and the game without its "
        "read models' process; before each, the script "
        f"waits (up to {p['round_quiet_wait']} s) until other processes use under "
        f"{QUIET_BEFORE_RUN} cores, so that what a run leaves behind (the kernel writing a "
        "store's pages back, a server's read models catching up) does not slow the next.")
    add("- The control with a store (the mix, and at half load): `scripts/lean_app.py` (the "
        "game's routes in their shape, no game) with `CAPES_LEAN_STORE`, which answers a "
        "command only once its three events (the game's stored bytes) are committed to an "
        "SQLite file on the same disk (WAL, `synchronous=FULL`, one multi-row `INSERT` per "
        "group of the commands that queued meanwhile, on a thread). Under wrk's mix, beside "
        "the others; at half load, paced by the same driver at the game's half-load rate "
        "beside the disk's control: the throughput and the latency of this framework and "
        "this store on this machine with the project's code taken out.")
    add("- Ratio: game commands per second (the mix's POSTs answered 200) divided by the "
        "bare route's requests per second.")
    add("")
    if prof:
        add("### Where the server's time goes (py-spy, full load)")
        add("")
        add(f"`py-spy record --gil --threads --nonblocking -r {PROFILE_RATE}` on the server "
            f"for {p['profile_seconds']} s under the game mix at full load (campaigns of their "
            f"own): {prof['total']} samples of the thread holding the GIL — **the GIL was "
            f"held {prof['gil_share'] * 100:.0f}% of the time**. Each sample counts once, in "
            "the first bucket (from the top) its stack matches; shares are of the samples. "
            "Time spent with the GIL released (an fsync, waiting for a lock or a socket) is "
            "not in this table.")
        add("")
        add("| bucket | share of GIL time |")
        add("|---|---|")
        for name, count in prof["buckets"]:
            add(f"| {name} | {count / prof['total'] * 100:.1f}% |")
        add("")
        add("| thread | share of GIL time |")
        add("|---|---|")
        for name, count in prof["threads"]:
            add(f"| {name} | {count / prof['total'] * 100:.1f}% |")
        add("")
        add("Top functions by own time (native code counts in the Python frame that called "
            "it):")
        add("")
        add("| function | own |")
        add("|---|---|")
        for name, count in prof["own"][:12]:
            add(f"| `{name}` | {count / prof['total'] * 100:.1f}% |")
        add("")
        wall = prof["wall"]
        add(f"Then `py-spy record --idle --threads --nonblocking -r {WALL_RATE}` for "
            f"{p['profile_seconds']} s more, every thread sampled whether running or not "
            "(wall clock):")
        add("")
        add("| the writer process's main thread (api/writer.py) | share |"
            if prof.get("writer_process") else
            "| the writer thread (`capes-commands`, application/committer.py) | share |")
        add("|---|---|")
        total = sum(c for _, c in wall["writer"]) or 1
        for name, count in wall["writer"]:
            add(f"| {name} | {count / total * 100:.1f}% |")
        add("")
        add("| event loop thread | share |")
        add("|---|---|")
        total = sum(c for _, c in wall["loop"]) or 1
        for name, count in wall["loop"]:
            add(f"| {name} | {count / total * 100:.1f}% |")
        add("")


def _inproc_report(add: Callable[[str], None], p: dict[str, Any], ip: dict[str, Any]) -> None:
    add("## In-process (no HTTP)")
    add("")
    cy, rp, rd = ip["cycle"], ip["random"], ip["read_decode"]
    cw, cn = ip["cold_with_snapshots"], ip["cold_without_snapshots"]
    add("| figure | value |")
    add("|---|---|")
    add(f"| `Campaigns.execute`, the HTTP mix's commands, SQLite file, aggregate cache on | "
        f"**{cy['per_s']:.0f} commands/s** (p50 {cy['p50_ms']:.3f} ms, p99 "
        f"{cy['p99_ms']:.3f} ms; {cy['commands']} commands on {p['inproc_campaigns']} "
        "campaigns, one thread) |")
    wr = ip.get("writer")
    if wr:
        add(f"| the server's writer (application.committer): the same commands from "
            f"{p['inproc_campaigns']} players at once, each awaiting its answer | "
            f"**{wr['per_s']:.0f} commands/s**, {wr['per_group']:.1f} commands per commit "
            f"(p50 {wr['p50_ms']:.3f} ms, p99 {wr['p99_ms']:.3f} ms) |")
    add(f"| seeded random legal play through `Campaigns.execute` | "
        f"{rp['accepted_per_s']:.0f} accepted commands/s, {rp['events_per_s']:.0f} events/s "
        f"({rp['accepted']} accepted and {rp['refused']} refused candidates: "
        f"{rp['tried_per_s']:.0f} tried/s) |")
    add(f"| cold load of the {rp['version']}-event campaign, with snapshots (every "
        f"{SNAPSHOT_INTERVAL} events) | **{cw['load_ms']:.1f} ms** (best "
        f"{cw['load_min_ms']:.1f} ms; the next, cached load {cw['cached_load_ms']:.2f} ms) |")
    add(f"| the same without snapshots (all {ip['snapshots_deleted']} deleted) | "
        f"**{cn['load_ms']:.1f} ms** (best {cn['load_min_ms']:.1f} ms): "
        f"{cn['load_ms'] / cw['load_ms']:.0f} times slower |")
    ow, on = ip["old_with"], ip["old_without"]
    add(f"| the state at a random old version ({p['old_versions']} versions, each on a fresh "
        f"instance), with snapshots | **{ow['median_ms']:.1f} ms** median (max "
        f"{ow['max_ms']:.1f} ms) |")
    add(f"| the same without snapshots | **{on['median_ms']:.1f} ms** median (max "
        f"{on['max_ms']:.1f} ms): {on['median_ms'] / max(ow['median_ms'], 1e-9):.0f} times "
        "slower |")
    add(f"| raw read of its {rd['events']} stored events (`recorder.select_events`) | "
        f"{rd['read_per_s']:,.0f} events/s ({rd['read_ms']:.1f} ms) |")
    add(f"| msgspec decode (`mapper.to_domain_event`) | {rd['decode_per_s']:,.0f} events/s "
        f"({rd['decode_ms']:.1f} ms) |")
    add(f"| read + decode | **{rd['read_decode_per_s']:,.0f} events/s** |")
    add(f"| fold (`project_campaign` over every event) | {rd['fold_per_s']:,.0f} events/s "
        f"({rd['fold_ms']:.1f} ms) |")
    add("")
    add("### Method")
    add("")
    add(f"- Commands/s: `open_campaigns({{'CAPES_DB': <fresh file>}})` (the server's "
        f"settings: an aggregate cache of 1000, a snapshot every {SNAPSHOT_INTERVAL} "
        f"events, the server's dice); {p['inproc_campaigns']} campaigns set up as for "
        "HTTP, then "
        "the mix's five commands a turn, round-robin over them, for "
        f"{p['inproc_seconds']} s, each call timed; one thread. Other processes used "
        f"{cy['cpu']['other_cores']:.2f} cores meanwhile (this one "
        f"{cy['cpu']['client_cores']:.2f}); during the random play "
        f"{rp['cpu']['other_cores']:.2f}.")
    add("- The long campaign: three players with 2 Story Tokens each, three heroes (powers "
        "rated 1-5; two with five Drives, one undifferentiated) and a mundane bystander; "
        f"then, until {p['long_events']} events, a command drawn with a seeded "
        "`random.Random` (and seeded dice, `application.dice.SeededDice`) from "
        "`domain.capes.moves.candidates(state)`, choices filled by "
        "`with_choice` (as `tests/test_invariants.py` does), run through "
        f"`Campaigns.execute` with a snapshot every {SNAPSHOT_INTERVAL} events. Refused "
        "candidates count in the figure (each costs a load and a decision). Staking, "
        "splitting and schisms are drawn before the turn's action too. It "
        f"reached {rp['version']} events over {rp['scenes']} scenes in {rp['seconds']:.1f} s.")
    add(f"- Cold load: a new `Campaigns(env)` on the file, then `state(id)`; the median of "
        f"{p['cold_repeats']} fresh instances (constructing one is timed apart: "
        f"{cw['construct_ms']:.1f} ms). Without snapshots: a copy of the file (`sqlite3` "
        "backup) with every snapshot row deleted, opened with `snapshot_interval=10**9`, so "
        "the load replays every event. Both loads give the same state: "
        f"{ip['same_state']}.")
    add("- Read and decode: `app.recorder.select_events(id)` for every stored event, then "
        "`app.mapper.to_domain_event` on each, then `project_campaign(None, events)`; the "
        "best of 3.")
    add("")
    add("### Where the in-process command path spends its time (cProfile)")
    add("")
    add(f"{p['profile_commands']} commands of the mix under `cProfile`, which slows "
        "everything down: read the shares, not the times. The functions with the most own "
        "time (wall clock: a commit's fsync counts), as shares of the profiled time:")
    add("")
    add("| function | inclusive | own |")
    add("|---|---|---|")
    for name, own, cum in ip["cprofile"]:
        add(f"| `{name}` | {cum:.1f}% | {own:.1f}% |")
    add("")


def projection_report(r: dict[str, Any], quick: bool = False) -> str:
    """The section of docs/benchmarks.md (from its heading to the end of its text)."""
    h, rd, fo, rb = r["history"], r["read_decode"], r["fold"], r["rebuild"]
    w = [PROJECTIONS_HEADING, ""]
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
        f"Method (`scripts/benchmarks/projections.py`): {h['campaigns']} campaigns of about "
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


def section_of(text: str, heading: str) -> str | None:
    """The section of ``text`` under ``heading`` (up to the next "## "), if it has one."""
    lines = text.splitlines()
    if heading not in lines:
        return None
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    return "\n".join(lines[start:end]).rstrip("\n") + "\n"


def with_section(text: str, section: str, heading: str = PROJECTIONS_HEADING) -> str:
    """``text`` (the whole document) with the section under ``heading`` replaced by
    ``section``, or put before "## Findings" (or at the end) if it has none yet."""
    lines = text.splitlines()
    if heading in lines:
        start = lines.index(heading)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
                   len(lines))
        return "\n".join([*lines[:start], *section.splitlines(), *lines[end:]]) + "\n"
    if "## Findings" in lines:
        at = lines.index("## Findings")
        return "\n".join([*lines[:at], *section.splitlines(), *lines[at:]]) + "\n"
    return text.rstrip("\n") + "\n\n" + section + "\n"
