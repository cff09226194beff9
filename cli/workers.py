"""The supervisor of ``capes serve --workers N``: uvicorn's, with a bounded wait for workers.

uvicorn's :class:`~uvicorn.supervisors.Multiprocess`, asked to stop, sends each worker SIGTERM
and then waits for it with no limit. A worker that cannot stop kept ``capes serve`` waiting for
ever. Seen here: three workers on a PostgreSQL whose ``max_connections`` they had used up, each
stuck in its startup waiting for a connection. A second Ctrl-C did nothing (the supervisor only
queues signals), and killing ``capes serve`` left the workers running, orphaned, holding their
connections.

Here a worker still running ``stop_wait`` seconds after its SIGTERM is killed (SIGKILL), so
``capes serve`` always ends, and stops its writer process and read models' process after it.
Killing a worker loses nothing acknowledged: a command is answered only once its events are
stored, and a commit cut short is rolled back by the store.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import time
from collections.abc import Iterator
from socket import socket

from uvicorn import Config
from uvicorn.supervisors import Multiprocess

#: uvicorn's logger, so that the line reads as the supervisor's others do.
log = logging.getLogger("uvicorn.error")


class Workers(Multiprocess):
    """uvicorn's supervisor of several workers, whose stop waits at most ``stop_wait``
    seconds for them all before it kills the ones still running."""

    def __init__(self, config: Config, sockets: list[socket], *, stop_wait: float) -> None:
        super().__init__(config, sockets)
        self.stop_wait = stop_wait

    def init_processes(self) -> None:
        # Each worker starts with Ctrl-C ignored: it loads uvicorn and the app for seconds on a
        # busy machine, and a Ctrl-C in that time printed the traceback of whichever import it
        # stopped, worker by worker. It needs none: this supervisor stops it (SIGTERM), and
        # the server's own signal handlers replace the ignoring once it runs. Blocked here
        # meanwhile, so a Ctrl-C to this process is held for it, not lost.
        with _ctrl_c_held():
            super().init_processes()

    def join_all(self) -> None:
        deadline = time.monotonic() + self.stop_wait
        for worker in self.processes:
            worker.process.join(max(0.0, deadline - time.monotonic()))
        for worker in self.processes:
            if worker.process.exitcode is None:
                log.warning("Child process [%s] did not stop within %g s: killed", worker.pid,
                            self.stop_wait)
                worker.process.kill()
                worker.process.join()


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """SIGINT ignored (which processes started meanwhile inherit) and blocked (this one
    receives it afterwards)."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def serve_workers(config: Config, *, stop_wait: float) -> None:
    """What ``uvicorn.run`` does for several workers, under :class:`Workers`."""
    sock = config.bind_socket()
    try:
        Workers(config, [sock], stop_wait=stop_wait).run()
    except KeyboardInterrupt:  # as uvicorn.run: a Ctrl-C while the supervisor starts
        pass
    finally:
        sock.close()
