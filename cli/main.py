"""The ``capes`` console command.

- ``capes serve [--host --port --workers --log-level]`` runs the HTTP server on the configured
  store.
- ``capes demo [--edition capees]`` plays a scripted scene into the configured store
  (``CAPES_DB`` / ``CAPES_DATABASE_URL``) and prints the board and ledgers after every page.
- the subcommands of :data:`SUBCOMMAND_MODULES`.

A store or setting that cannot work stops any command at once with one line naming the
setting and its value, and exit status 2 (:func:`main`).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import os
import signal
import socket
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from eventsourcing.persistence import InterfaceError, OperationalError

from application.campaigns import open_campaigns
from application.config import (
    PORT,
    WRITERS,
    SettingError,
    check_store,
    cors_origins,
    describe_store,
    requests_per_second,
    serve_port,
    serve_writer,
    streams_per_token,
    who_opens_campaigns,
    writer_count,
)
from application.errors import StoreUnreachable
from application.extras import MissingExtra
from domain.errors import DomainError

#: Exit status of a misconfiguration (as argparse's for a bad command line).
MISCONFIGURED = 2


def _demo(args: argparse.Namespace) -> int:
    if args.edition == "capees":
        from .demo_capees import demo_dice
        from .demo_capees import play_capees_demo as play_demo
    else:
        from .demo import demo_dice, play_demo

    app = open_campaigns(dice=demo_dice())
    print(f"Playing the demo scene into {describe_store(os.environ)}\n")
    try:
        campaign = play_demo(app)
    except DomainError as refused:
        print(f"the demo was refused: {refused}", file=sys.stderr)
        return 1
    print(f"\ncampaign {campaign} is stored with {app.get(campaign).version} events; "
          f"`capes tokens {campaign}` gives its owner and seats tokens for the HTTP API")
    return 0


def raise_file_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit; the new soft limit.

    Every live-event stream is an open socket: a host with a thousand tables of four players
    holds 4,000 of them, and the usual soft limit is 1,024 (the hard one, often much higher,
    is raised with ``ulimit -Hn`` or systemd's ``LimitNOFILE=``)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        # The system may refuse (an infinite hard limit, say): the soft limit stays.
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def workers_warnings(workers: int, environ: Mapping[str, str]) -> list[str]:
    """What several worker processes will not share, given the settings (none for one)."""
    if workers <= 1:
        return []
    warnings = []
    if serve_writer(environ) == "thread":
        # By default the workers share one writer process, which passes each worker's live
        # messages on to the others (api.writer): Redis is needed only without it.
        if not environ.get("CAPES_REDIS_URL", "").strip():
            warnings.append(
                f"{workers} workers with CAPES_WRITER=thread and without CAPES_REDIS_URL: a "
                "live event stream (/events/stream) hears only the commands of its own worker; "
                "leave CAPES_WRITER unset, or set CAPES_REDIS_URL=redis://… to share them")
        warnings.append(
            f"{workers} workers with CAPES_WRITER=thread each write with a writer of their own: "
            "their writes to one campaign race (on an SQLite file they take turns at it, one "
            "commit at a time); leave CAPES_WRITER unset and one writer process serves them all")
        writers = environ.get(WRITERS, "").strip()
        if writers not in ("", "1"):
            # Writers by campaign are shared writer processes (cli/writer_hub.py): none here.
            warnings.append(
                f"{WRITERS}={writers} does nothing with CAPES_WRITER=thread: no writer "
                "process is shared; leave CAPES_WRITER unset for writers by campaign")
    from projections.service import mode

    if mode(environ) == "internal":
        warnings.append(
            f"{workers} workers with CAPES_PROJECTIONS=internal: one of them at a time runs the "
            "read models, in a thread beside its requests (the others stand by); leave "
            "CAPES_PROJECTIONS unset and `capes serve` runs them in a process of their own")
    warnings.append(
        f"{workers} workers each count the rate limit (CAPES_RATE_LIMIT) on their own: a "
        f"client may send up to {workers} times the limit")
    return warnings


#: Seconds a stopping server gives the requests under way before it ends them. A live stream
#: never ends by itself: without this, a server asked to stop waited for every browser to
#: leave. A browser's stream reconnects to the next server within a second (its ``retry:``).
SHUTDOWN_GRACE = 3

#: Seconds each of several workers has to stop, after SHUTDOWN_GRACE, before it is killed
#: (cli/workers.py): its lifespan's shutdown closes its store and its writer's connection.
WORKER_STOP_MARGIN = 5


#: The app ``capes serve`` runs: an import path, which each worker process imports.
APP = "api.app:create_server"


def server_options(args: argparse.Namespace) -> dict[str, Any]:
    """What ``capes serve`` gives ``uvicorn.run`` besides the app."""
    return {
        "host": args.host, "port": args.port, "workers": args.workers,
        "log_level": args.log_level,
        # The access log is written at level info: below it, every request still paid for
        # building its line (client address, path) before the logger dropped it.
        "access_log": args.log_level in ("trace", "debug", "info"),
        "timeout_graceful_shutdown": SHUTDOWN_GRACE,
        # Each answer in one write (api/one_write.py), named by its path: cli imports no api.
        "http": "api.one_write:OneWriteProtocol",
    }


def _listenable(host: str, port: int) -> None:
    """A :class:`SettingError` naming ``--port`` when the address is taken (another server),
    or ``--host`` when it is no address of this machine: before anything is started or
    announced. Uvicorn found out last, after the server had said it was serving and had started
    its read models' and writer processes."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds it
        try:
            probe.bind((host, port))
        except socket.gaierror:
            raise _bad_host(host, port, "no such host") from None
        except OSError as e:
            if e.errno == errno.EADDRNOTAVAIL:
                # It named --port and asked whether another server listened there.
                raise _bad_host(host, port, "not an address of this machine") from None
            raise SettingError("--port", str(port), f"cannot listen on {host}:{port}: "
                               f"{e.strerror} (another server? --port or CAPES_PORT chooses "
                               "another)") from None


def _bad_host(host: str, port: int, why: str) -> SettingError:
    return SettingError("--host", host, f"cannot listen on {host}:{port}: {why} (--host or "
                        "CAPES_HOST: an address of this machine, or 0.0.0.0 for all of them)")


def _serve(args: argparse.Namespace) -> int:
    # The settings each worker will read, checked once here: a bad one fails in one line.
    who_opens_campaigns(os.environ)
    streams_per_token(os.environ)
    requests_per_second(os.environ)
    cors_origins(os.environ)
    if args.port is None:
        args.port = serve_port(os.environ)

    import uvicorn

    from application.placement import ENV as PLACEMENT_ENV
    from application.placement import pin_server, placement
    from cli import writer_hub
    from cli.priority import serve_priority
    from cli.read_models_process import ReadModelsProcess, wanted
    from cli.supervised import Supervised
    from cli.workers import serve_workers
    from projections.service import MODES, mode

    # Each worker's writes run in a process of its own unless told otherwise (api/writer.py).
    os.environ["CAPES_WRITER"] = serve_writer(os.environ)
    try:
        mode(os.environ)
    except ValueError as e:
        raise SettingError("CAPES_PROJECTIONS", os.environ.get("CAPES_PROJECTIONS", ""),
                           f"must be {', '.join(MODES)}") from e
    serve_priority(os.environ)  # CAPES_READ_MODELS_PRIORITY
    where = placement(os.environ, args.workers)  # CAPES_CPUS
    writer_count(os.environ, args.workers)  # CAPES_WRITERS
    for warning in workers_warnings(args.workers, os.environ):
        print(f"warning: {warning}", file=sys.stderr)
    _listenable(args.host, args.port)
    files = raise_file_limit()
    print(f"Serving campaigns from {describe_store(os.environ)} at "
          f"http://{args.host}:{args.port} (docs: /schema; open files: {files})", flush=True)
    if where is not None:
        # Before any process or thread of the server starts: they take their CPUs from it.
        pin_server(where, os.environ)
        print(f"CPUs ({PLACEMENT_ENV}): {where.describe()}", flush=True)
    # One process runs the read models for every worker (which only read them): see
    # cli/read_models_process.py for why not a thread of the server. With several workers,
    # writer processes shared by every worker run their writes, one per campaign
    # (cli/writer_hub.py).
    beside: list[Supervised] = [
        *([ReadModelsProcess(os.environ)] if wanted(os.environ) else []),
        *writer_hub.hubs(os.environ, args.workers)]
    if beside:
        # uvicorn, once stopped, raises again the SIGTERM that stopped it, under the handler
        # found before it started: this one ends the process through the `finally` below, so
        # the processes beside it are stopped too (by default the signal ended this process
        # at once, and the read models' process only noticed a second later).
        signal.signal(signal.SIGTERM, _stop_on_term)
    for child in beside:
        child.start()
        print(child.banner.format(pid=child.pid), flush=True)
    try:
        if args.workers > 1:
            # uvicorn's supervisor waited for ever for a worker that could not stop.
            serve_workers(uvicorn.Config(APP, factory=True, **server_options(args)),
                          stop_wait=SHUTDOWN_GRACE + WORKER_STOP_MARGIN)
        else:
            uvicorn.run(APP, factory=True, **server_options(args))
    finally:
        # The writer first: it finishes what the workers sent before they stopped.
        for child in reversed(beside):
            child.stop()
    return 0


def _stop_on_term(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


#: Modules that add subcommands: each has ``register(commands)`` taking the subparsers.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "cli.record", "cli.projections", "cli.audit", "cli.tokens", "cli.backup")


def store_help(environ: Mapping[str, str]) -> str:
    """Which store the commands will use, and how to choose another (``capes --help``)."""
    try:
        store = describe_store(environ)
    except SettingError as e:  # pragma: no cover - describe_store does not parse
        store = str(e)
    return (f"store: every command uses {store}.\n"
            "  CAPES_DB=path.sqlite          another SQLite file (default ./capes.sqlite)\n"
            "  CAPES_DATABASE_URL=postgresql://user:password@host:5432/db\n"
            "                                PostgreSQL instead (it wins over CAPES_DB)\n"
            "README.md lists every setting.")


def _port(text: str) -> int:
    port = int(text)
    if not 0 < port < 65536:
        raise argparse.ArgumentTypeError(f"not a port: {text}")
    return port


def _positive(text: str) -> int:
    number = int(text)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more: {text}")
    return number


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="capes", description="The Capes table server: play Capes campaigns as event logs.",
        epilog=store_help(os.environ), formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(commands)
    demo = commands.add_parser("demo", help="play a scripted scene for three players",
                               description="Play a scripted scene for three players into the "
                               "configured store, printing the board and ledgers after every "
                               "page.")
    demo.add_argument("--edition", choices=("capes", "capees"), default="capes",
                      help="capes (the default), or capees: the second edition, CAPEES!, "
                      "its rulebook's own example (Silverstar, Night Maiden, the Editor)")
    demo.set_defaults(run=_demo)
    serve = commands.add_parser("serve", help="run the HTTP server",
                                description="Run the HTTP server on the configured store.",
                                epilog=store_help(os.environ),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    serve.add_argument("--host", default=os.environ.get("CAPES_HOST", "127.0.0.1"),
                       help="the address to listen on (CAPES_HOST; default %(default)s)")
    # CAPES_PORT is read when serving (a bad one is a setting's error, not every command's).
    serve.add_argument("--port", type=_port,
                       help=f"the port to listen on (CAPES_PORT; default {PORT})")
    serve.add_argument("--workers", type=_positive, default=1,
                       help="worker processes (default 1); they share one writer process, "
                       "which hands each worker the live events of the others (no Redis needed)")
    serve.add_argument("--log-level", default="info",
                       choices=["critical", "error", "warning", "info", "debug", "trace"],
                       help="how much the server logs; info and below include the access log "
                       "(default %(default)s)")
    serve.set_defaults(run=_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``capes``: its exit status. A misconfiguration is one line on stderr, status 2."""
    args = build_parser().parse_args(argv)
    try:
        if not (args.command == "verify" and args.file):  # an export file needs no store
            check_store(os.environ)
        result: int = args.run(args)
    except (SettingError, MissingExtra) as e:
        print(f"capes: {e}", file=sys.stderr)
        return MISCONFIGURED
    except (InterfaceError, OperationalError, StoreUnreachable) as e:
        # The store failed on first use in a way check_store did not foresee.
        reason = " ".join(str(e).split())
        print(f"capes: cannot use {describe_store(os.environ)}: {reason}", file=sys.stderr)
        return MISCONFIGURED
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
