"""The layout keeps: each package imports only what its layer may (issue "One room per concern").

Dependencies point one way: the entry points (``api``, the HTTP server; ``cli``, the command
line; ``scripts``) → the application layer (``application``) and the read models
(``projections``) → the rules (``domain``). Every import counts, including those made only for
type checking and those inside functions: a dependency of the design is one even when it costs
nothing at run time.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("domain", "application", "projections", "api", "cli")
#: Packages of scripts, importable from ``scripts/`` (how ``scripts/bench`` runs them).
SCRIPT_PACKAGES = ("benchmarks",)

#: What each package must never import (the project's own packages).
FORBIDDEN: dict[str, frozenset[str]] = {
    "domain": frozenset({"application", "projections", "api", "cli"}),
    "application": frozenset({"projections", "api", "cli"}),
    "projections": frozenset({"api", "cli"}),
    "api": frozenset({"cli"}),
    "cli": frozenset({"api"}),
    "benchmarks": frozenset(),
}
#: Outside the standard library, the rules engine uses msgspec alone.
DOMAIN_THIRD_PARTY = frozenset({"msgspec"})


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    for package in SCRIPT_PACKAGES:
        for path in sorted((ROOT / "scripts" / package).rglob("*.py")):
            found[module_name(path, ROOT / "scripts")] = path
    return found


def imports(name: str, path: Path) -> Iterator[str]:
    """Every module ``name`` imports, anywhere in it, as absolute dotted names."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            # ``from package import module`` imports that module too.
            yield from (f"{base}.{alias.name}" for alias in node.names)


def project_graph() -> dict[str, set[str]]:
    """Each project module and the project modules it imports."""
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        graph[name] = {target for target in imports(name, path) if target in known} - {name}
    return graph


def test_the_rules_engine_imports_only_the_standard_library_msgspec_and_itself() -> None:
    for name, path in modules().items():
        if not name.startswith("domain"):
            continue
        for target in imports(name, path):
            top = target.partition(".")[0]
            assert (
                top == "domain" or top in sys.stdlib_module_names or top in DOMAIN_THIRD_PARTY
            ), f"{name} imports {target}"


def test_no_package_imports_a_layer_above_it() -> None:
    wrong = [
        f"{name} imports {target}"
        for name, targets in project_graph().items()
        for target in targets
        if target.partition(".")[0] in FORBIDDEN[name.partition(".")[0]]
    ]
    assert wrong == []


def test_no_two_modules_import_each_other() -> None:
    graph = project_graph()
    pairs = sorted(
        f"{a} <-> {b}"
        for a, targets in graph.items()
        for b in targets
        if a < b and a in graph.get(b, set())
        # A package's __init__ naming its own modules is how a package is read, not a cycle.
        and not (b.startswith(a + ".") or a.startswith(b + "."))
    )
    assert pairs == []


def test_the_scripts_are_entry_points_nothing_imports() -> None:
    for name, path in modules().items():
        if name.partition(".")[0] in SCRIPT_PACKAGES:
            continue
        for target in imports(name, path):
            top = target.partition(".")[0]
            assert top != "scripts" and top not in SCRIPT_PACKAGES, f"{name} imports {target}"


def test_stores_written_before_the_layout_still_resolve_their_aggregates_topics() -> None:
    # The tokens and the dice seeds are eventsourcing aggregates, stored under topics that name
    # their module: rows written when they lived in ``api`` must still load.
    from eventsourcing.utils import resolve_topic

    from application.credentials import TableKeys
    from application.fair import SceneSeed

    assert resolve_topic("api.credentials:TableKeys") is TableKeys
    assert resolve_topic("api.fair:SceneSeed") is SceneSeed
