"""The writer process itself (see :mod:`api.writer` for why and what crosses the socket).

Two ways to run it:

- ``python -m api.writer_process FD``: the writer of one server process, started by its
  :class:`api.writer.RemoteWriter` on one end of a socket pair; it stops when told, or when
  that socket closes.
- ``python -m api.writer_process --listen PATH --control FD``: one writer for every worker of
  ``capes serve --workers N`` (started by :mod:`cli.writer_hub`). Each worker connects to the
  Unix socket PATH; the requests of all of them run in the same groups, so a campaign has one
  writer whichever worker a player's request reaches (issue 15: with a writer per worker, the
  workers' writes to one campaign raced, and each reloaded what the others wrote). It stops
  when the pipe FD from ``capes serve`` closes (``capes serve`` stopping, or dying), after
  finishing what it was sent; a worker that goes away only closes its own connection.
"""

from __future__ import annotations

import signal

if __name__ == "__main__":
    # The server decides when its writer stops (after what it sent is done): a Ctrl-C or a
    # SIGTERM to the whole process group reaches the server, which then tells it. Ignored
    # before the imports below, which take seconds on a busy machine: a Ctrl-C in the first
    # second of `capes serve` stopped the writer in them, with a traceback, and the server's
    # startup failed with another.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

import argparse
import contextlib
import logging
import os
import selectors
import socket
import sys
import time
from collections.abc import Callable, Hashable, Mapping
from concurrent.futures import ThreadPoolExecutor
from queue import Empty, SimpleQueue
from typing import Any
from uuid import UUID

import msgspec

from api.routes.queries import RENDERERS
from api.services import RenderedViews, applied_of, live_message
from api.writer import LIVE, CampaignIds, Frames, answer_frame, frame, unpack_command
from application.aggregate import Campaign
from application.campaigns import Campaigns, Outcome, open_campaigns
from application.collector import Collector
from application.committer import Committer, Job, Result
from application.credentials import Keyring
from application.integrity import Integrity
from application.placement import pin_here

log = logging.getLogger(__name__)


class _Peer:
    """A server process connected to the writer process: its socket, the frames it sent, the
    answers for it not yet written."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.frames = Frames()
        self.out: list[bytes] = []

    def send(self, data: list[bytes]) -> None:
        if data:
            with contextlib.suppress(OSError):  # the server is gone: nobody to answer
                self.sock.sendall(b"".join(data))


#: A request inside the writer process: ((the peer that sent it, its tag), operation, arguments).
Request = tuple[tuple[_Peer, int], str, Any]


class WriterProcess:
    """The writer process: reads requests, runs them in groups, sends the answers.

    ``sock`` is either the one connected server (``listen=False``), or a listening Unix socket
    that server processes connect to, with ``control`` the pipe whose end of file stops it."""

    def __init__(self, sock: socket.socket, environ: Mapping[str, str], *,
                 listen: bool = False, control: int | None = None) -> None:
        self.sock = sock
        self.listen = listen
        self.control = control
        self.campaigns: Campaigns = open_campaigns(environ)
        self.keyring = Keyring(dict(self.campaigns.env))
        # A seat an upheld dispute took away loses its token (R-X-REC-8).
        self.campaigns.on_seats_removed = self.keyring.remove_seats
        self.committer = Committer(self.campaigns, integrity=Integrity(self.campaigns))
        self.views = RenderedViews()
        self.renderers = RENDERERS
        self.encoder = msgspec.json.Encoder()
        #: The campaign ids of the requests (their bytes on the socket), one object an id.
        self.ids = CampaignIds()
        #: Requests for campaigns being made ready, in arrival order.
        self._parked: dict[UUID, list[Request]] = {}
        self._prepared: SimpleQueue[tuple[UUID, BaseException | None, bool]] = SimpleQueue()
        self._pool = ThreadPoolExecutor(4, thread_name_prefix="capes-prepare")
        self._wake_r, self._wake_w = os.pipe()
        #: The servers connected: their answers queued (:meth:`_answer`) are sent by
        #: :meth:`_send_answers`.
        self.peers: list[_Peer] = []

    def run(self) -> None:
        self.committer.start_watch()
        # As in the server process (application.collector): what lives long is frozen out of the
        # collector's reach, so that no full collection pauses every table's writes.
        collector = Collector()
        collector.collect(everything=True)
        selector = selectors.DefaultSelector()
        selector.register(self._wake_r, selectors.EVENT_READ, "prepared")
        peers = self.peers
        if self.listen:
            selector.register(self.sock, selectors.EVENT_READ, "accept")
            if self.control is not None:
                selector.register(self.control, selectors.EVENT_READ, "control")
        else:
            peers.append(_Peer(self.sock))
            selector.register(self.sock, selectors.EVENT_READ, peers[0])
            peers[0].send([frame((0, None, "ready"))])
        stopping = False
        while not (stopping and not self._parked):
            requests: list[Request] = []
            for key, _ in selector.select(timeout=collector.every):
                data = key.data
                if isinstance(data, _Peer):
                    try:
                        received = data.sock.recv(1 << 20)
                    except OSError:  # reset: a worker killed with answers it had not read
                        received = b""
                    if not received:
                        selector.unregister(data.sock)
                        peers.remove(data)
                        data.sock.close()
                        # The one server of this writer went away: nothing more will come.
                        stopping = stopping or not self.listen
                    requests += [((data, tag), op, arguments)
                                 for tag, op, arguments in data.frames.feed(received)]
                elif data == "accept":
                    peer = _Peer(self.sock.accept()[0])
                    peer.sock.setblocking(True)
                    peers.append(peer)
                    selector.register(peer.sock, selectors.EVENT_READ, peer)
                    peer.send([frame((0, None, "ready"))])
                elif data == "control":
                    if not os.read(key.fd, 4096):
                        selector.unregister(key.fd)
                        stopping = True
                else:
                    os.read(self._wake_r, 4096)
            self._run(self._unparked(), prepared=True)
            # A worker of several stopping does not stop the writer of the others.
            if not self.listen and any(op == "stop" for _, op, _ in requests):
                stopping = True
            self._run(requests, prepared=False)
            self._send_answers()
            collector.tick_if_due()
        self._pool.shutdown(wait=True)
        self.committer.stop()
        for close in (self.campaigns.close, self.keyring.close):
            with contextlib.suppress(Exception):
                close()

    def _run(self, requests: list[Request], *, prepared: bool) -> None:
        """Answer ``requests`` in order: reads of a campaign held as stored at once, the rest
        in groups; a request for a campaign not ready waits for it (:meth:`_park`)."""
        committer = self.committer
        jobs: list[Job] = []
        asked: dict[Hashable, Request] = {}
        for request in requests:
            tag, op, arguments = request
            if op == "stop":
                continue
            if op == "p":
                # A worker's live message, for the streams of the others: passed on as it is.
                sender = tag[0]
                relayed = frame((LIVE, None, arguments))
                for peer in self.peers:
                    if peer is not sender:
                        peer.out.append(relayed)
                continue
            if op == "c":
                operation, args, kwargs, invalidates = arguments
                job = Job(tag=tag)
                job.call = _bind(operation, self.campaigns, self.keyring, args, kwargs)
                job.invalidates = invalidates
                jobs.append(job)
                asked[tag] = request
                continue
            campaign_id = self.ids(arguments[0])
            if campaign_id in self._parked or (not prepared and not committer.ready(campaign_id)):
                self._park(campaign_id, request)
                continue
            job = Job(tag=tag)
            job.campaign_id = campaign_id
            if op == "x":
                _, packed, job.narration, job.expected_version = arguments
                try:
                    job.command = unpack_command(packed)
                except Exception as e:  # a class this process cannot find: say so, run the rest
                    self._answer(tag, op, arguments, None, e)
                    continue
            else:
                job.read = True
                job.position = arguments[2] if op == "v" else arguments[1]  # "l": (id, position)
                head = committer.current(campaign_id, job.position)
                if head is not None:
                    self._answer(tag, op, arguments, head, None)
                    continue
                job.since = time.monotonic()
            jobs.append(job)
            asked[tag] = request
        if jobs:
            # What is answered already (reads of a campaign held as stored, and whatever the
            # pass before this one in the same turn finished) goes now, not after this
            # group's commit: a board read would otherwise wait for a commit that changes
            # nothing it shows, since it was asked before those commands were stored.
            self._send_answers()
        for start in range(0, len(jobs), committer.max_group):
            results: list[Result] = committer.process(jobs[start:start + committer.max_group])
            for job, value, error in results:
                tag, op, arguments = asked[job.tag]
                self._answer(tag, op, arguments, value, error)

    def _answer(self, tag: tuple[_Peer, int], op: str, arguments: Any, value: Any,
                error: BaseException | None) -> None:
        """Queue the answer to a request for its peer (sent at the end of the pass)."""
        peer, number = tag
        if error is None:
            try:
                if op == "x":
                    value = self._rendered(value)
                elif op == "v":
                    value = self._view(arguments, value)
            except Exception as e:
                error, value = e, None
        peer.out.append(answer_frame(number, error, value))

    def _send_answers(self) -> None:
        """Send every answer queued, each server's in one write."""
        for peer in self.peers:
            if peer.out:
                peer.send(peer.out)
                peer.out = []

    def _rendered(self, outcome: Outcome) -> tuple[int, int, bytes, bytes]:
        applied = applied_of(outcome)
        return (outcome.version, outcome.position, self.encoder.encode(applied),
                live_message(applied.events))

    def _view(self, arguments: Any, campaign: Campaign | None) -> tuple[bytes, int] | None:
        _, kind, _, version = arguments
        render = self.renderers[kind]
        shown: bytes | None = self.views.of(campaign, kind,
                                            lambda campaign: self.encoder.encode(render(campaign)),
                                            version)
        # With the version it shows: the server holds it while that is the campaign's last.
        return None if shown is None or campaign is None else (shown, campaign.version)

    # -- campaigns not ready yet ------------------------------------------------------------

    def _park(self, campaign_id: UUID, request: Request) -> None:
        waiting = self._parked.get(campaign_id)
        if waiting is None:
            self._parked[campaign_id] = [request]
            self._pool.submit(self._prepare, campaign_id)
        else:
            waiting.append(request)

    def _prepare(self, campaign_id: UUID) -> None:
        """On a thread of the pool: make the campaign ready, then wake the main thread."""
        try:
            forget = self.committer.prepare(campaign_id)
            self._prepared.put((campaign_id, None, forget))
        except BaseException as e:
            self._prepared.put((campaign_id, e, False))
        os.write(self._wake_w, b"!")

    def _unparked(self) -> list[Request]:
        """The requests of the campaigns made ready since, in arrival order; those of a
        campaign that could not be made ready are answered with its error."""
        ready: list[Request] = []
        while True:
            try:
                campaign_id, error, forget = self._prepared.get_nowait()
            except Empty:
                break
            requests = self._parked.pop(campaign_id, [])
            if error is not None:
                for (peer, number), _, _ in requests:
                    peer.out.append(answer_frame(number, error, None))
                continue
            if forget:
                self.committer.forget(campaign_id)
            ready += requests
        return ready


def _bind(operation: Callable[..., Any], campaigns: Campaigns, keyring: Keyring,
          args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], Any]:
    return lambda: operation(campaigns, keyring, *args, **kwargs)


def main(argv: list[str] | None = None) -> None:
    """``python -m api.writer_process FD`` (the writer of one server, on socket FD) or
    ``python -m api.writer_process --listen PATH --control FD`` (of every worker)."""
    parser = argparse.ArgumentParser(prog="python -m api.writer_process")
    parser.add_argument("fd", type=int, nargs="?", help="the socket of the one server")
    parser.add_argument("--listen", help="a Unix socket path that servers connect to")
    parser.add_argument("--control", type=int, help="a pipe whose end of file stops it")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if (args.fd is None) == (args.listen is None):
        parser.error("give either FD or --listen PATH")
    # See the top of the module (again for main() called otherwise).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="capes writer: %(message)s")
    # On the CPU `capes serve` gave it, apart from the event loop's (application/placement.py),
    # before any thread of this process starts.
    pin_here(os.environ)
    if args.listen is None:
        sock = socket.socket(fileno=args.fd)
        sock.setblocking(True)
        WriterProcess(sock, os.environ).run()
        return
    with contextlib.suppress(FileNotFoundError):
        os.unlink(args.listen)  # left by a writer process that died
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listening.bind(args.listen)
    listening.listen(64)
    try:
        WriterProcess(listening, os.environ, listen=True, control=args.control).run()
    finally:
        # Its socket, and the folder `capes serve` made for it once empty: a `capes serve`
        # killed outright cannot remove them.
        with contextlib.suppress(OSError):
            os.unlink(args.listen)
            os.rmdir(os.path.dirname(args.listen))


if __name__ == "__main__":
    main()
