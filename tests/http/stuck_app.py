"""An ASGI app whose startup never ends (as a worker's that waits for a database connection
it will not get), for tests/http/test_workers.py. Each worker that reaches its startup leaves a
file named for its process id in ``STUCK_APP_MARKS``, holding ``deaf`` if it has Ctrl-C's
SIGINT blocked there (as ``capes serve`` starts its workers: application/children.py)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await receive()  # lifespan.startup
        deaf = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())
        (Path(os.environ["STUCK_APP_MARKS"]) / str(os.getpid())).write_text(
            "deaf" if deaf else "hears")
        time.sleep(3600)  # blocks the worker's event loop: SIGTERM cannot end it
