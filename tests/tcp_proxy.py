"""A TCP proxy between a test's server and a real store (PostgreSQL, Redis) that the test can
break the way a network does: drop every connection and refuse new ones, lose one answer, or
fall silent.

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
        self._hold: bytes | None = None
        #: Set while bytes flow; cleared while the network is silent (:meth:`hang`).
        self._flowing = threading.Event()
        self._flowing.set()
        self.lost = threading.Event()
        #: Set when :meth:`hang_at_next_answer` held its answer.
        self.held = threading.Event()
        #: Set when a client opened a connection while the network was silent.
        self.knocked = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._listener.close()
        self.down()
        self._flowing.set()  # what waited for the network meets the closed sockets

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

    def hang(self) -> None:
        """The network falls silent, as one that drops packets without a word (no reset, no
        error): nothing more goes either way, and every socket stays open — the client's
        bytes are taken (as a proxy or a NAT on the way takes them), never answered. A
        connection opened meanwhile is taken too, and goes nowhere. :meth:`resume` ends it."""
        self.knocked.clear()
        self._flowing.clear()

    def hang_at_next_answer(self, containing: bytes) -> None:
        """The network falls silent (:meth:`hang`) just as the next answer from the store that
        holds ``containing`` is on its way: the store did what was asked; the answer waits
        in the network, with everything else, until :meth:`resume`."""
        with self._lock:
            self._hold = containing
        self.held.clear()
        self.knocked.clear()

    def resume(self) -> None:
        """The network carries bytes again: what it held goes on, in order."""
        self._flowing.set()

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
            if not self._flowing.is_set():
                self.knocked.set()
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        """Join ``client`` to the store once the network carries bytes."""
        with self._lock:
            self._sockets.add(client)
        self._flowing.wait()
        try:
            server = socket.create_connection(self.target, timeout=5)
            server.settimeout(None)
        except OSError:
            _abort(client)
            return
        with self._lock:
            self._sockets.add(server)
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
                        hold = self._hold is not None and self._hold in data
                        if hold:
                            self._hold = None
                            self._flowing.clear()
                    if lose:
                        self.lost.set()
                        break
                    if hold:
                        self.held.set()
                self._flowing.wait()
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
