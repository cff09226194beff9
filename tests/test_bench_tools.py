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
