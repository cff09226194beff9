"""Waking the read models of another process when a reader waits for them (issue 15).

``capes serve`` runs the read models in a process of their own, beside its workers: folding
and rendering every event on the server's own thread took the GIL from requests for tens of
milliseconds at a time. That process follows the store at its own pace, a batch every 0.2 s
or so (SQLite: a poll; PostgreSQL: its NOTIFY, then a linger that gathers a busy table's
commands into one batch). A query that must include a position (read-your-writes: the timeline
or analytics right after a command) cannot wait that long, so while it waits the server sends
a datagram to a UNIX socket that process listens on, and it catches up at once.

A datagram, not a connection: nothing to open or keep, no answer awaited, and one that is lost
(the process restarting, its queue full) costs only the poll it would have saved. The socket
lives in a folder only the server's user can enter.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

#: The socket's path, set by ``capes serve`` for its workers and its read models' process.
ENV = "CAPES_READ_MODELS_WAKE"
#: The pid of the server that started the read models' process, which ends with it.
PARENT_ENV = "CAPES_READ_MODELS_PARENT"
#: Seconds between two looks at ``alive`` while no datagram comes.
CHECK_EVERY = 1.0


class Wake:
    """The sending side: calling it tells the read models' process that a reader waits."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._socket.setblocking(False)

    def __call__(self) -> None:
        # Nobody listening yet (or any more), or its queue full: the poll will do.
        with contextlib.suppress(OSError):
            self._socket.sendto(b"w", self.path)

    def close(self) -> None:
        self._socket.close()


class WakeListener:
    """The receiving side: binds ``path`` and calls ``hurry`` for every datagram, on a thread
    of its own, until :meth:`stop` — or until ``alive`` says no (checked every second), which
    lets a read models' process end with the server that started it."""

    def __init__(self, path: str, hurry: Callable[[], None],
                 alive: Callable[[], bool] = lambda: True,
                 on_gone: Callable[[], None] = lambda: None) -> None:
        self.path = path
        self.hurry = hurry
        self.alive = alive
        self.on_gone = on_gone
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # left by a process that was killed
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._socket.bind(path)
        self._socket.settimeout(CHECK_EVERY)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="capes-read-models-wake",
                                        daemon=True)

    def start(self) -> WakeListener:
        self._thread.start()
        return self

    def _listen(self) -> None:
        while not self._stopping.is_set():
            try:
                self._socket.recv(64)
            except TimeoutError:
                if not self.alive():
                    log.warning("the server that started the read models is gone; stopping")
                    self.on_gone()
                    return
                continue
            except OSError:
                return
            if not self._stopping.is_set():
                self.hurry()

    def stop(self) -> None:
        self._stopping.set()
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)  # wakes the thread's recv()
        if self._thread.is_alive():
            self._thread.join(2 * CHECK_EVERY)
        self._socket.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
