"""The ``capes`` console command.

- ``capes serve [--host --port --workers]`` runs the HTTP server on the configured store.
- ``capes demo`` plays a scripted scene into the configured store (``CAPES_DB`` /
  ``CAPES_DATABASE_URL``) and prints the board and ledgers after every page.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from application.campaigns import open_campaigns
from application.config import describe_store
from domain.errors import DomainError


def _demo(args: argparse.Namespace) -> int:
    from .demo import demo_dice, play_demo

    app = open_campaigns(dice=demo_dice())
    print(f"Playing the demo scene into {describe_store(os.environ)}\n")
    try:
        campaign = play_demo(app)
    except DomainError as refused:
        print(f"the demo was refused: {refused}", file=sys.stderr)
        return 1
    print(f"\ncampaign {campaign} is stored with {app.get(campaign).version} events")
    return 0


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    print(f"Serving campaigns from {describe_store(os.environ)} at "
          f"http://{args.host}:{args.port} (docs: /schema)")
    uvicorn.run("api.app:create_server", factory=True, host=args.host, port=args.port,
                workers=args.workers, log_level=args.log_level)
    return 0


#: Modules that add subcommands: each has ``register(commands)`` taking the subparsers.
SUBCOMMAND_MODULES: tuple[str, ...] = ("cli.record", "cli.projections", "cli.audit")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="capes", description="The Capes table server: play Capes campaigns as event logs."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(commands)
    demo = commands.add_parser("demo", help="play a scripted scene for three players")
    demo.set_defaults(run=_demo)
    serve = commands.add_parser("serve", help="run the HTTP server")
    serve.add_argument("--host", default=os.environ.get("CAPES_HOST", "127.0.0.1"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("CAPES_PORT", "8000")))
    serve.add_argument("--workers", type=int, default=1,
                       help="worker processes (set CAPES_REDIS_URL for live events across them)")
    serve.add_argument("--log-level", default="info")
    serve.set_defaults(run=_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.run(args)
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
