"""Where ``capes serve`` runs its processes (``CAPES_CPUS``, application/placement.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from application.config import SettingError
from application.placement import Placement, placement
from scripts.processes import children, command_line, running
from tests.http.helpers import RUNNING, capes_serve

ROOT = Path(__file__).resolve().parents[2]
TWO = {0, 1}


def test_unset_or_auto_pins_one_worker_on_a_machine_of_two_cpus() -> None:
    assert placement({}, 1, usable={2, 5}) == Placement(loop=2, beside=5)
    assert placement({"CAPES_CPUS": " Auto "}, 1, usable=TWO) == Placement(loop=0, beside=1)


@pytest.mark.parametrize("usable", [{0}, {0, 1, 2}, set(range(8))])
def test_auto_leaves_any_other_machine_to_the_scheduler(usable: set[int]) -> None:
    assert placement({}, 1, usable=usable) is None


def test_auto_leaves_several_workers_to_the_scheduler() -> None:
    assert placement({}, 2, usable=TWO) is None


def test_off_never_pins() -> None:
    assert placement({"CAPES_CPUS": "off"}, 1, usable=TWO) is None


def test_two_cpu_numbers_place_the_loop_and_the_rest() -> None:
    assert placement({"CAPES_CPUS": "3, 1"}, 1, usable={0, 1, 2, 3}) == Placement(3, 1)


@pytest.mark.parametrize("value, why", [
    ("fast", "must be auto, off, or two CPU numbers"),
    ("0", "must be auto, off, or two CPU numbers"),
    ("0,1,2", "must be auto, off, or two CPU numbers"),
    ("-1,0", "must be auto, off, or two CPU numbers"),
    ("1,1", "two different CPUs"),
    ("0,7", "CPU 7 is not one this process may use (0, 1)"),
])
def test_a_placement_that_cannot_work_is_refused_naming_the_setting(value: str,
                                                                    why: str) -> None:
    with pytest.raises(SettingError) as refused:
        placement({"CAPES_CPUS": value}, 1, usable=TWO)
    assert str(refused.value).startswith(f"CAPES_CPUS={value}: ")
    assert why in str(refused.value)


def test_a_placement_with_several_workers_is_refused() -> None:
    with pytest.raises(SettingError, match="with --workers 2 set it to auto or off"):
        placement({"CAPES_CPUS": "0,1"}, 2, usable=TWO)


def test_a_bad_placement_stops_capes_serve_in_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")}
    env |= {"CAPES_DB": str(tmp_path / "c.sqlite"), "CAPES_CPUS": "1,1"}
    done = subprocess.run([sys.executable, "-m", "cli.main", "serve", "--port", "9"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "capes: CAPES_CPUS=1,1: the event loop and the writer need two different CPUs")


def _threads_cpus(pid: int) -> set[frozenset[int]]:
    """The CPUs each thread of process ``pid`` may run on."""
    return {frozenset(os.sched_getaffinity(int(tid)))
            for tid in os.listdir(f"/proc/{pid}/task")}


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="pinning needs a Linux machine with two CPUs or more")
def test_capes_serve_runs_its_loop_on_one_cpu_and_writer_and_read_models_on_the_other(
    tmp_path: Path,
) -> None:
    loop, beside = sorted(os.sched_getaffinity(0))[:2]
    env = {"CAPES_DB": str(tmp_path / "c.sqlite"), "CAPES_CPUS": f"{loop},{beside}"}
    with capes_serve(env, tmp_path / "serve.log") as base:
        server = RUNNING[base].pid
        started = children(server)
        writer = running(started, "api.writer_process")
        read_models = running(started, "projections run")
        assert writer and read_models, [command_line(pid) for pid in started]
        # Every thread, not only each process's first: they took their CPUs from it.
        assert _threads_cpus(server) == {frozenset({loop})}
        for pid in (*writer, *read_models):
            assert _threads_cpus(pid) == {frozenset({beside})}
    log = (tmp_path / "serve.log").read_text()
    assert (f"CPUs (CAPES_CPUS): the event loop on CPU {loop}, the writer and read models on "
            f"CPU {beside}") in log
