"""The folders of the sockets ``capes serve`` makes for its writer and read models' processes
(``cli/supervised.py``): they go with the server, and those of a server killed outright go
with the next one."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from cli.supervised import Supervised, new_folder, sweep


def gone_pid() -> int:
    """The id of a process that has ended."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


@contextmanager
def bound(path: Path, kind: socket.SocketKind = socket.SOCK_DGRAM) -> Iterator[socket.socket]:
    """A Unix socket bound at ``path`` (listening, for a stream socket)."""
    with socket.socket(socket.AF_UNIX, kind) as sock:
        sock.bind(str(path))
        if kind == socket.SOCK_STREAM:
            sock.listen(1)
        yield sock


def folder_with_a_socket(root: Path, name: str, socket_name: str = "read-models.sock") -> Path:
    """A folder holding a socket file that nothing serves on any more."""
    folder = root / name
    folder.mkdir()
    with bound(folder / socket_name):
        pass
    return folder


def test_a_new_folder_is_named_for_this_process_and_only_its_user_may_enter_it() -> None:
    folder = new_folder()
    try:
        assert folder.name.startswith(f"capes-{os.getpid()}-")
        assert folder.stat().st_mode & 0o777 == 0o700
        assert folder not in sweep(folder.parent), "this process runs: its folder stays"
    finally:
        folder.rmdir()


def test_the_folders_of_a_server_that_is_gone_are_removed(tmp_path: Path) -> None:
    pid = gone_pid()
    dead = folder_with_a_socket(tmp_path, f"capes-{pid}-abc")
    empty = tmp_path / f"capes-{pid}-def"
    empty.mkdir()
    assert sorted(sweep(tmp_path)) == sorted([dead, empty])
    assert not dead.exists() and not empty.exists()


def test_a_running_servers_folder_stays_even_when_nothing_serves_on_its_socket(
    tmp_path: Path,
) -> None:
    """As while its writer or read models' process is being started again."""
    alive = folder_with_a_socket(tmp_path, f"capes-{os.getpid()}-abc", "writer.sock")
    assert sweep(tmp_path) == []
    assert alive.exists()


def test_a_folder_whose_socket_is_served_stays_whoever_it_is_named_for(tmp_path: Path) -> None:
    """A server in another PID namespace (a container sharing the folder) looks gone here."""
    for kind, name in ((socket.SOCK_DGRAM, "read-models.sock"),
                       (socket.SOCK_STREAM, "writer.sock")):
        root = tmp_path / name[0]  # short: a Unix socket's path has at most 107 bytes
        folder = root / f"capes-{gone_pid()}-a"
        folder.mkdir(parents=True)
        with bound(folder / name, kind):
            assert sweep(root) == []
        assert folder.exists()


def test_folders_holding_anything_but_sockets_or_not_named_for_a_process_stay(
    tmp_path: Path,
) -> None:
    pid = gone_pid()
    kept = [folder_with_a_socket(tmp_path, name)
            for name in ("capes-abcd1234", "capes-bench-abcd", f"capes{pid}-x")]
    with_a_file = folder_with_a_socket(tmp_path, f"capes-{pid}-abc")
    (with_a_file / "notes.txt").write_text("mine")
    assert sweep(tmp_path) == []
    assert all(folder.exists() for folder in [*kept, with_a_file])


class Sleeper(Supervised):
    """A child that sleeps: what ``capes serve``'s children look like to their watcher."""

    what = "sleeper"
    retry = 0.05

    def command(self) -> tuple[list[str], dict[str, str], tuple[int, ...]]:
        return ["-c", "import time; time.sleep(60)"], dict(os.environ), ()


def ended_by(sleeper: Sleeper, how: signal.Signals) -> None:
    """Send the running child ``how`` and wait until it has ended (and its watcher saw it)."""
    process = sleeper._process
    assert process is not None
    os.kill(process.pid, how)
    process.wait(10)


def test_a_child_stopped_by_sigterm_before_its_handler_was_set_is_not_started_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A service manager's SIGTERM to the group in a child's first second, before it set its
    handler, ends it by the signal: it was asked to stop like the server, not failing, and
    starting it again made the stop log an error and wait. (Ctrl-C's SIGINT is blocked in
    children: tests/integration/test_ctrl_c.py.)"""
    sleeper = Sleeper({})
    sleeper.start()
    try:
        ended_by(sleeper, signal.SIGTERM)
        time.sleep(0.5)  # ten times the retry: a new start would have come
        assert sleeper.starts == 1
        assert "starting it again" not in caplog.text
    finally:
        sleeper.stop()


def test_a_child_killed_otherwise_is_started_again(caplog: pytest.LogCaptureFixture) -> None:
    """SIGKILL is not a request to stop (the kernel's out-of-memory killer sends it)."""
    sleeper = Sleeper({})
    sleeper.start()
    try:
        ended_by(sleeper, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while sleeper.starts < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sleeper.starts == 2
        assert "the sleeper ended with -9; starting it again" in caplog.text
    finally:
        sleeper.stop()
