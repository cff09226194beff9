"""``scripts/bench`` finds the tools it needs where an environment installs them."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


@pytest.fixture()
def http(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(SCRIPTS))
    from benchmarks import http

    return http


def tool(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_py_spy_beside_the_benchs_python_is_found_when_it_is_not_on_the_path(
        http: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = tool(tmp_path / "venv" / "bin", "py-spy")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert http.find_py_spy(str(tmp_path / "venv" / "bin" / "python")) == str(spy)


def test_py_spy_on_the_path_comes_first(
        http: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool(tmp_path / "venv" / "bin", "py-spy")
    on_path = tool(tmp_path / "tools", "py-spy")
    monkeypatch.setenv("PATH", str(tmp_path / "tools") + os.pathsep + str(tmp_path / "empty"))
    assert http.find_py_spy(str(tmp_path / "venv" / "bin" / "python")) == str(on_path)


def test_no_py_spy_anywhere_is_none(
        http: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert http.find_py_spy(str(tmp_path / "venv" / "bin" / "python")) is None


# -- the half load's stops, set beside the store's own syncs ----------------------------------


@pytest.fixture()
def syncs(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(SCRIPTS))
    from benchmarks import syncs

    return syncs


@pytest.fixture()
def paced(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import paced_load

    return paced_load


def sync_log(folder: Path, *lines: str) -> Path:
    """A sync timer's log (``scripts/sync_timer.c``): start (s), took (ms), call, path."""
    log = folder / "syncs.log"
    log.write_text("".join(f"{line}\n" for line in lines))
    return log


def test_fifty_ms_without_an_answer_is_a_stop_and_forty_nine_is_not(paced: ModuleType) -> None:
    answered = [1.300, 1.0, 1.049, 1.110]  # as the connections' answers came: not in order
    assert paced.stops(answered) == [[1.049, 1.11], [1.11, 1.3]]
    assert paced.stops([2.0, 2.049]) == []


def test_a_stop_inside_a_sync_of_the_stores_log_is_the_disks(
        syncs: ModuleType, tmp_path: Path) -> None:
    log = sync_log(tmp_path, "10.000 100.0 fdatasync /s/server.sqlite-wal",
                   "12.000 500.0 fsync /s/server.sqlite")  # the checkpoint's: not the log's
    found = syncs.stops_in_syncs([[10.02, 10.12], [12.0, 12.06]], log)
    assert found["stop_count"] == 2
    assert found["stop_ms"] == pytest.approx(160)
    assert found["stop_in_syncs_ms"] == pytest.approx(80)  # 10.02 to 10.10
    assert found["stops_mostly_in_syncs"] == 1
    assert syncs.stops_text(found) == (
        "2 stops of 50 ms or more without an answer, 160 ms in all: 80 ms of them inside the "
        "store's own log syncs, 1 of the stops at least half inside them")


def test_syncs_under_way_together_count_once(syncs: ModuleType, tmp_path: Path) -> None:
    log = sync_log(tmp_path, "10.050 100.0 fdatasync /s/a.sqlite-wal",
                   "10.000 100.0 fdatasync /s/b.sqlite-wal")
    found = syncs.stops_in_syncs([[10.0, 10.2]], log)
    assert found["stop_in_syncs_ms"] == pytest.approx(150)  # 10.00 to 10.15
    assert found["stops_mostly_in_syncs"] == 1


def test_without_the_syncs_timed_the_stops_are_not_set_beside_them(
        syncs: ModuleType, tmp_path: Path) -> None:
    found = syncs.stops_in_syncs([[1.0, 1.2]], tmp_path / "never-written.log")
    assert found == {}
    assert syncs.stops_text(found) == ""
    none = syncs.stops_in_syncs([], sync_log(tmp_path))
    assert syncs.stops_text(none) == "no stop of 50 ms or more without an answer"
    one = syncs.stops_in_syncs([[1.0, 1.2]], sync_log(tmp_path))
    assert syncs.stops_text(one).startswith("1 stop of 50 ms or more without an answer, 200 ms")


@pytest.fixture()
def report15(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(SCRIPTS))
    from benchmarks import report15

    return report15


def test_the_ceiling_of_more_workers_is_the_cores_over_those_one_worker_kept_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(SCRIPTS))
    from benchmarks.workers import ceiling

    # One worker's round kept 1.6 of 2 cores busy: more workers add 1.25x at most.
    assert ceiling({"busy_cores": 1.6}, 2) == pytest.approx(1.25)


def test_the_workers_row_says_the_ceiling_and_two_writers_and_says_nothing_of_them_for_older_runs(
    report15: ModuleType,
) -> None:
    wk = {"cores": 2, "ceiling": 1.19, "control_store_ceiling": 1.6,
          "game1": {"commands_per_s": 2092, "cpu": {"busy_cores": 1.68}},
          "game2w": {"commands_per_s": 1662}, "scaling_writers": 0.79,
          "writer": {"per_s": 5415}, "writers2": {"processes": 2, "per_s": 6906}}
    assert report15._ceiling(wk).startswith(
        "**the machine's ceiling** (2 cores over the cores busy in the one-worker round, the "
        "most any number of workers could add at the same CPU a command): **1.19x** for the "
        "game (1.68 cores busy), 1.60x for the control with PostgreSQL; ")
    assert report15._two_writers(wk) == (
        "; with two writers (`CAPES_WRITERS=2`) 1662 commands/s: **0.79x**")
    assert report15._writers_alone(wk) == ", 2 writers alone (each half the players) 6906 (1.28x)"
    older = {"game1": wk["game1"], "writer": wk["writer"]}
    assert report15._ceiling(older) == report15._two_writers(older) == ""
    assert report15._writers_alone(older) == ""
