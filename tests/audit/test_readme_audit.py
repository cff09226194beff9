"""The README's hand check of an export (R-FAIR-4, R-FAIR-6) runs as written and agrees with
``capes verify``: the construction is published well enough to recompute everything."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from fair_play import played

from application.audit import stored_entries, verify_stored
from application.campaigns import Campaigns
from application.transfer import export

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_check() -> dict[str, Any]:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    (code,) = [b for b in blocks if "def check_chain" in b]
    namespace: dict[str, Any] = {"__name__": "readme_audit"}
    exec(compile(code, str(README), "exec"), namespace)
    return namespace


def test_the_readme_recomputes_the_chain_and_every_die_of_an_export(tmp_path: Path) -> None:
    check = readme_check()
    app = Campaigns({"PERSISTENCE_MODULE": "eventsourcing.popo"})
    campaign = played(app, scenes=2, min_rolls=3)
    path = tmp_path / "campaign.ndjson"
    path.write_bytes(export(campaign, stored_entries(app, campaign), app.get(campaign).record,
                            "ndjson"))
    report = verify_stored(app, campaign)
    assert check["check_chain"](path) == (report.head_position, report.head)

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    scene, seats, rolled, checked = 0, {}, [], 0
    for row in rows:
        payload = row["payload"]
        if row["type"] == "DiceCommitted":
            scene, seats, rolled = payload["scene"], {}, []
        elif row["type"] == "SeatSeedAdded":
            seats[payload["seat"]] = payload["seed"]
        elif row["type"] in ("DieRolled", "OverdrawnDieRolled"):
            rolled.append((payload["draw"], payload["rolled"]))
        elif row["type"] == "DiceRevealed":
            for counter, value in rolled:
                assert check["die"](payload["seed"], row["campaign"], scene, counter,
                                    seats) == value
                checked += 1
    assert checked >= 3

    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('"name":"P1"', '"name":"Mallory"')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        check["check_chain"](path)
    except AssertionError as caught:
        assert caught.args == (2,), "the hand check names the altered event"
    else:  # pragma: no cover
        raise AssertionError("the altered export passed the hand check")
