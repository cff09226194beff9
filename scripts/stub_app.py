"""For ``scripts/bench``: the real server, with its commands answered but not run.

What the HTTP layer of the game's routes costs by itself — uvicorn, routing, authentication,
parsing and validating the command, the board query, encoding the answer, the live-event
announcement — and so the most one worker could serve of the game mix if commands cost
nothing. Commands run for real until the file named by ``CAPES_BENCH_STUB`` exists (the bench
prepares its campaigns over HTTP first); from then on ``POST .../commands`` answers a fixed
``Applied`` without running the command. Served like ``capes serve``::

    CAPES_BENCH_STUB=/tmp/flag python scripts/stub_app.py --port 8002
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import uvicorn

from api import app as server
from api import services
from api.one_write import OneWriteProtocol
from api.routes import play
from api.schemas import Applied

FLAG = Path(os.environ.get("CAPES_BENCH_STUB", "/nonexistent"))
_real = services.apply_command
_stubbed = False


async def _apply(state: Any, campaign_id: Any, command: Any, narration: str = "",
                 expected_version: int | None = None) -> Applied:
    global _stubbed
    if _stubbed or FLAG.exists():
        _stubbed = True
        await services.announce(state, campaign_id)
        return Applied(version=1, events=(), position=1)
    return await _real(state, campaign_id, command, narration, expected_version)


# run_command looks apply_command up in its module's globals.
play.run_command.fn.__globals__["apply_command"] = _apply

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    # Served as `capes serve` serves the game: each answer in one write.
    uvicorn.run(server.create_server, factory=True, host=args.host, port=args.port, workers=1,
                log_level="warning", http=OneWriteProtocol)
