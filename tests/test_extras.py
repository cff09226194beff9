"""Parquet and the charts are extras (issue 14, item 4): asked for without them, the server and
the console name the extra to install. Their absence is simulated in-process (a module set to
None in ``sys.modules`` cannot be imported)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from litestar.testing import TestClient

from api.app import create_app
from application.campaigns import Campaigns
from application.config import persistence_env
from application.credentials import OWNER, Keyring
from application.dice import ScriptedDice
from application.extras import MissingExtra
from cli.demo import DEMO_DICE, play_demo
from cli.main import main
from projections.analytics import Analytics
from projections.charts import chart

PYARROW = ("pyarrow", "pyarrow.parquet")
MATPLOTLIB = ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg",
              "matplotlib.ticker")


def without(monkeypatch: pytest.MonkeyPatch, modules: tuple[str, ...]) -> None:
    for module in modules:
        monkeypatch.setitem(__import__("sys").modules, module, None)


def test_a_chart_without_matplotlib_names_the_charts_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    without(monkeypatch, MATPLOTLIB)
    with pytest.raises(MissingExtra, match=r"capes-table-server\[charts\]"):
        chart(cast(Analytics, None), "dice")  # fails before it reads the figures


def test_the_server_answers_501_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    campaigns = Campaigns(persistence_env({"CAPES_DB": ":memory:"}),
                          dice=ScriptedDice(DEMO_DICE))
    campaign = play_demo(campaigns, out=lambda _: None)
    keyring = Keyring(dict(campaigns.env))
    token = keyring.issue(campaign, OWNER)
    without(monkeypatch, PYARROW + MATPLOTLIB)
    with TestClient(create_app(campaigns, keyring, rate_limit=0)) as client:
        auth = {"Authorization": f"Bearer {token}"}
        png = client.get(f"/campaigns/{campaign}/analytics/dice.png", headers=auth)
        assert png.status_code == 501, png.text
        assert "[charts]" in png.json()["detail"]
        parquet = client.get(f"/campaigns/{campaign}/export", params={"format": "parquet"},
                             headers=auth)
        assert parquet.status_code == 501, parquet.text
        assert "[parquet]" in parquet.json()["detail"]
        ndjson = client.get(f"/campaigns/{campaign}/export", headers=auth)
        assert ndjson.status_code == 200, "NDJSON needs no extra"


def test_capes_export_to_parquet_without_pyarrow_names_the_parquet_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    db = tmp_path / "capes.sqlite"
    monkeypatch.setenv("CAPES_DB", str(db))
    monkeypatch.delenv("CAPES_DATABASE_URL", raising=False)
    app = Campaigns(persistence_env({"CAPES_DB": str(db)}), dice=ScriptedDice(DEMO_DICE))
    campaign = play_demo(app, out=lambda _: None)
    app.close()
    capsys.readouterr()
    without(monkeypatch, PYARROW)
    out = tmp_path / "harbor.parquet"
    assert main(["export", str(campaign), "--format", "parquet", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("capes: Parquet files need the parquet extra: pip install "
                   "'capes-table-server[parquet]' (from a clone: pip install -e '.[parquet]')")
    assert not out.exists()
