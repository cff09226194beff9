"""A TCP proxy between a test's server and a real store (PostgreSQL, Redis) that the test can
break the way a network does: drop every connection and refuse new ones, or lose one answer.

Why not a mock of the store: what is tested is how the server meets a real store whose
connections die — a commit PostgreSQL stored whose answer never came back, a pool reconnecting.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from types import TracebackType


class TcpProxy:
    """Forwards ``127.0.0.1:port`` to ``host:target_port``, one pair of threads a connection."""

    def __init__(self, host: str, target_port: int) -> None:
        self.target = (host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._down = False
        self._lose: bytes | None = None
        self.lost = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._listener.close()
        self.down()

    def down(self) -> None:
        """The store is unreachable: every connection dropped, new ones closed at once."""
        with self._lock:
            self._down = True
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            _abort(sock)

    def up(self) -> None:
        """The store is reachable again."""
        with self._lock:
            self._down = False

    def lose_next_answer(self, containing: bytes) -> None:
        """The next answer from the store that holds ``containing`` never reaches the client:
        its connection drops instead (the store did what was asked; the client cannot know)."""
        with self._lock:
            self._lose = containing
        self.lost.clear()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            with self._lock:
                down = self._down
            if down:
                _abort(client)
                continue
            try:
                server = socket.create_connection(self.target, timeout=5)
                server.settimeout(None)
            except OSError:
                _abort(client)
                continue
            with self._lock:
                self._sockets.update((client, server))
            threading.Thread(target=self._pipe, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, True), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, answers: bool) -> None:
        try:
            while data := source.recv(65536):
                if answers:
                    with self._lock:
                        lose = self._lose is not None and self._lose in data
                        if lose:
                            self._lose = None
                    if lose:
                        self.lost.set()
                        break
                sink.sendall(data)
        except OSError:
            pass
        _abort(source)
        _abort(sink)


def _abort(sock: socket.socket) -> None:
    """Close ``sock`` at once, as a network that drops a connection (a thread blocked reading
    it is woken: a close alone would wait for it)."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()
