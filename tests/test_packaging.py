"""What a fresh install resolves: the suite's own needs pinned, the heavy parts optional, and CI
installing into a fresh virtual environment (issue 14, items 1 and 4)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def requirements(names: list[str]) -> dict[str, Requirement]:
    found = {}
    for text in names:
        requirement = Requirement(text)
        found[requirement.name] = requirement
    return found


def test_a_fresh_resolve_cannot_pick_a_pytest_that_schemathesis_does_not_support() -> None:
    """schemathesis 4.x fails under pytest 9.2 ('Function' object has no attribute '_nodeid')."""
    dev = requirements(PROJECT["optional-dependencies"]["dev"])
    assert "schemathesis" in dev
    assert not dev["pytest"].specifier.contains("9.2.0")
    assert dev["pytest"].specifier.contains("9.1.1")


def test_ci_installs_into_a_fresh_virtual_environment_not_the_machines_python() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert re.search(r'python3? -m venv "\$\(?\S*', script), "CI makes a virtual environment"
    assert "mktemp -d" in script, "a new one every run"
    installs = [line for line in script.splitlines()
                if "pip install" in line and not line.lstrip().startswith("#")]
    assert installs, "CI installs the project"
    for line in installs:
        assert line.lstrip().startswith('"$venv/python" -m pip install'), line
    assert "-e '.[dev]'" in script
    for tool in ("ruff", "mypy", "python\" -m pytest"):
        assert f'"$venv/{tool}' in script, tool


def test_parquet_and_charts_are_extras_the_runtime_does_not_need() -> None:
    runtime = requirements(PROJECT["dependencies"])
    assert "pyarrow" not in runtime and "matplotlib" not in runtime
    extras = PROJECT["optional-dependencies"]
    assert "pyarrow" in requirements(extras["parquet"])
    assert "matplotlib" in requirements(extras["charts"])
    dev = requirements(extras["dev"])
    assert {"parquet", "charts"} <= set(dev["capes-table-server"].extras)


def test_the_runtime_depends_on_the_parts_of_litestar_it_uses() -> None:
    """litestar[standard] brings jsbeautifier and uvicorn's reloader and websockets: unused."""
    runtime = requirements(PROJECT["dependencies"])
    assert runtime["litestar"].extras == {"jinja"}, "templates for the browser table"
    assert {"uvicorn", "uvloop", "httptools"} <= set(runtime), "what capes serve runs on"
    assert "swagger-ui-bundle" not in runtime, "Swagger UI 4 cannot render OpenAPI 3.1"
    assert "swagger-ui-py" in runtime
