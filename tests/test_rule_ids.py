"""The rules document and the rule ids that tests and code cite.

Every rule of docs/rules.md is cited by at least one test, and every rule the domain code cites
is documented there. Only files of this repository are read.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "rules.md"
TESTS = ROOT / "tests"
DOMAIN = ROOT / "domain"
THIS_FILE = Path(__file__).resolve()

#: Ids of both editions: ``R-…`` (capes, and the record of play) and ``C-…`` (capees).
RULE_ID = re.compile(r"\b[RC]-[A-Z]+(?:-[A-Z]+)*-\d+")
#: A rule of the document: a list item that starts with its id, in bold or in code.
RULE_ITEM = re.compile(r"^\s*[-*]\s+(?:\*\*|`)(" + RULE_ID.pattern + r")(?:\*\*|`)", re.M)


def ids_in(text: str) -> list[str]:
    """The rule ids ``text`` mentions, each once, in order of first mention."""
    return list(dict.fromkeys(RULE_ID.findall(text)))


def documented_ids() -> list[str]:
    """Every rule id of the rules document: the rules in their order, then any other id."""
    text = RULES.read_text(encoding="utf-8")
    return list(dict.fromkeys(RULE_ITEM.findall(text) + ids_in(text)))


def sources(folder: Path, *, skip: Path | None = None) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if p.resolve() != skip)


def cited_in(paths: list[Path]) -> dict[str, list[Path]]:
    """rule id -> the files that mention it."""
    cited: dict[str, list[Path]] = {}
    for path in paths:
        for rule in ids_in(path.read_text(encoding="utf-8")):
            cited.setdefault(rule, []).append(path)
    return cited


def test_the_rules_document_defines_each_rule_once_as_a_list_item() -> None:
    text = RULES.read_text(encoding="utf-8")
    defined = RULE_ITEM.findall(text)
    assert defined, f"{RULES.relative_to(ROOT)} defines no rule"
    twice = sorted({r for r in defined if defined.count(r) > 1})
    assert not twice, f"rules defined more than once: {', '.join(twice)}"
    undefined = [r for r in ids_in(text) if r not in defined]
    assert not undefined, f"ids mentioned but never defined as a rule: {', '.join(undefined)}"


def test_every_rule_in_the_rules_document_is_cited_by_some_test() -> None:
    cited = cited_in(sources(TESTS, skip=THIS_FILE))
    uncited = [r for r in documented_ids() if r not in cited]
    assert not uncited, f"{len(uncited)} rule(s) no test cites: {', '.join(uncited)}"


def test_every_rule_the_domain_code_cites_is_in_the_rules_document() -> None:
    documented = set(documented_ids())
    cited = cited_in(sources(DOMAIN))
    undocumented = {r: files for r, files in cited.items() if r not in documented}
    assert not undocumented, "rules cited by the code but not documented: " + "; ".join(
        f"{r} ({', '.join(str(f.relative_to(ROOT)) for f in files)})"
        for r, files in sorted(undocumented.items())
    )
