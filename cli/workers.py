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

import logging
import time
from multiprocessing import resource_tracker
from socket import socket

from uvicorn import Config
from uvicorn.supervisors import Multiprocess

from application.children import deaf_to_ctrl_c

#: uvicorn's logger, so that the line reads as the supervisor's others do.
log = logging.getLogger("uvicorn.error")


class Workers(Multiprocess):
    """uvicorn's supervisor of several workers, whose stop waits at most ``stop_wait``
    seconds for them all before it kills the ones still running."""

    def __init__(self, config: Config, sockets: list[socket], *, stop_wait: float) -> None:
        super().__init__(config, sockets)
        self.stop_wait = stop_wait

    # Every worker starts deaf to Ctrl-C (application/children.py): this supervisor stops them
    # (SIGTERM). uvicorn starts them in four places: at its start, one that died again, one
    # more on SIGTTIN, and each again on SIGHUP (those three loaded hearing Ctrl-C, and a
    # Ctrl-C then printed a traceback of what they imported).

    def init_processes(self) -> None:
        # multiprocessing's resource tracker, started with the first of them, unblocks SIGINT
        # in this thread as it starts (the second worker was not deaf): it is started first.
        resource_tracker.ensure_running()
        with deaf_to_ctrl_c():
            super().init_processes()

    def keep_subprocess_alive(self) -> None:
        with deaf_to_ctrl_c():
            super().keep_subprocess_alive()

    def handle_ttin(self) -> None:
        with deaf_to_ctrl_c():
            super().handle_ttin()

    def restart_all(self) -> None:
        # A Ctrl-C meanwhile is not lost: blocked in this thread only, it is held for it, or
        # taken by another; the supervisor's handler only queues it.
        with deaf_to_ctrl_c():
            super().restart_all()

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


def serve_workers(config: Config, *, stop_wait: float) -> None:
    """What ``uvicorn.run`` does for several workers, under :class:`Workers`."""
    sock = config.bind_socket()
    try:
        Workers(config, [sock], stop_wait=stop_wait).run()
    except KeyboardInterrupt:  # as uvicorn.run: a Ctrl-C while the supervisor starts
        pass
    finally:
        sock.close()
