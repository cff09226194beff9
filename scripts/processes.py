"""The processes a process started, read from Linux's ``/proc``: one reading for the bench
(whose CPU it counts: uvicorn's workers, each worker's writer, the read models' process) and
for the tests that find ``capes serve``'s writer and read models' processes.

Each process's parent is read from its own ``/proc/N/stat``, not from
``/proc/PID/task/TID/children``: that file lists one thread's children only (the read models'
process or a writer started again by a watching thread is not the main thread's child), and
the kernel documents it as unreliable while children come and go (a CI run once found one of
two writers by it)."""

from __future__ import annotations

from pathlib import Path

PROC = Path("/proc")


def _below() -> dict[int, list[int]]:
    """Every running process's children, by parent."""
    below: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        # The parent is the second field after the name, which is in parentheses and may
        # itself hold ")" or spaces.
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        below.setdefault(parent, []).append(int(entry.name))
    return below


def children(pid: int) -> list[int]:
    """The processes ``pid`` started (by any of its threads) that still run."""
    return sorted(_below().get(pid, []))


def descendants(pid: int) -> list[int]:
    """The processes below ``pid``: its children, theirs, and so on (with several workers,
    each worker's writer process is a grandchild of ``capes serve``)."""
    below = _below()
    found: list[int] = []
    todo = [pid]
    while todo:
        more = sorted(below.get(todo.pop(), []))
        found += more
        todo += more
    return found


def command_line(pid: int) -> str:
    """Process ``pid``'s command line, its arguments separated by spaces ("" once it has
    ended)."""
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace")
    except OSError:
        return ""


def running(pids: list[int], command: str) -> list[int]:
    """Those of ``pids`` whose command line holds ``command`` (``"api.writer_process"``,
    ``"projections run"``), skipping any that ended meanwhile."""
    return [pid for pid in pids if command in command_line(pid)]
