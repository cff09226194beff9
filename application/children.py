"""What the processes a server starts (its workers, its writer process, its read models'
process) inherit of Ctrl-C.

A Ctrl-C at a terminal reaches the whole process group: ``capes serve`` and every process it
started. Each of those loads for seconds on a busy machine, and a Ctrl-C in that time printed
the traceback of whichever import it stopped (a writer process stopped so also failed the
server's startup). None of them needs it: whoever started them stops them (SIGTERM, or the
writer's pipe closing) after the server stopped. So each starts with SIGINT blocked, which a
process keeps across ``exec`` and its imports; its SIGTERM works as before.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def deaf_to_ctrl_c() -> Iterator[None]:
    """Processes started by this thread in the block have SIGINT blocked for life. This thread
    has it blocked meanwhile, so a Ctrl-C to this process is held for it (or taken by another
    thread), not lost; nothing else changes here (no handler: any thread may use it)."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
