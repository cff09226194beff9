"""An unrevealed seed is in no answer of the server, no export and no log line (R-FAIR-1).

A scene is played over HTTP on a SQLite store with the server's own dice. After every few
moves every GET route of the API is called, and every body — the commands' answers included —
is searched for the scene's secret seed in hex, base64 and raw bytes, until the answer that
reveals it. The CLI's export and verify are searched too, and every log record.
"""

from __future__ import annotations

import base64
import logging
import random
from pathlib import Path
from typing import Any
from uuid import UUID

import msgspec
import pytest
from fair_play import abilities, sqlite_env
from litestar.testing import TestClient

from api.app import create_app
from application.campaigns import Campaigns
from application.credentials import Keyring
from cli.main import main
from domain.capes.moves import candidates
from domain.record.commands import AddSeed

#: Query parameters to call a route with, by the end of its path (default: none).
PARAMS: dict[str, list[dict[str, Any]]] = {
    "disputes/preview": [{"position": 1}], "diff": [{"from": 1}],
    "export": [{"format": "ndjson"}, {"format": "parquet"}], "events": [{"limit": 1000}],
}
SKIPPED = ("events/stream",)  # an endless stream (see the live-event tests)


def forms(seed: bytes) -> list[bytes]:
    """How a seed could leak: hex (either case), base64 (standard, URL-safe, unpadded), raw."""
    b64 = base64.b64encode(seed)
    url = base64.urlsafe_b64encode(seed)
    return [seed.hex().encode(), seed.hex().upper().encode(), b64, b64.rstrip(b"="), url,
            url.rstrip(b"="), seed]


class Table:
    def __init__(self, client: TestClient[Any], campaigns: Campaigns) -> None:
        self.client, self.campaigns = client, campaigns
        self.bodies: list[tuple[str, bytes]] = []
        opened = self.post("/campaigns", {"name": "Secrets", "starting_tokens": 2})
        self.id = UUID(opened["campaign_id"])
        self.tokens = {0: opened["owner_token"]}
        for name in ("Ana", "Ben", "Cleo"):
            taken = self.post(f"/campaigns/{self.id}/seats", {"name": name})
            self.tokens[taken["seat"]] = taken["token"]

    def post(self, url: str, body: Any, seat: int | None = None) -> Any:
        headers = {"Authorization": f"Bearer {self.tokens[seat]}"} if seat is not None else {}
        response = self.client.post(url, json=body, headers=headers)
        self.bodies.append((f"POST {url}", response.content))
        return response.json()

    def command(self, command: Any) -> Any:
        body = {"command": msgspec.to_builtins(command)}
        return self.post(f"/campaigns/{self.id}/commands", body, seat=command.seat)

    def get_everything(self) -> None:
        """Every GET route of the API, as a seat and as the owner."""
        paths = self.client.app.openapi_schema.to_schema()["paths"]
        for path, operations in paths.items():
            if "get" not in operations or path.endswith(SKIPPED):
                continue
            url = path.replace("{campaign_id}", str(self.id))
            variants = next((p for end, p in PARAMS.items() if path.endswith(end)), [{}])
            for seat in (1, 0):
                headers = {"Authorization": f"Bearer {self.tokens[seat]}"}
                for params in variants:
                    response = self.client.get(url, params=params, headers=headers)
                    self.bodies.append((f"GET {url} {params}", response.content))


def test_no_answer_export_or_log_line_holds_a_seed_before_it_is_revealed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    capsys: Any,
) -> None:
    """R-FAIR-1: searched in every body until the reveal; found in the log after it."""
    caplog.set_level(logging.DEBUG)
    db = tmp_path / "secrets.sqlite"
    monkeypatch.setenv("CAPES_DB", str(db))
    monkeypatch.delenv("CAPES_DATABASE_URL", raising=False)
    campaigns = Campaigns(sqlite_env(db))
    keyring = Keyring(dict(campaigns.env))
    rng = random.Random(7)
    with TestClient(create_app(campaigns, keyring, rate_limit=0)) as client:
        for _attempt in range(20):
            table = Table(client, campaigns)
            seed = _play_a_scene(table, rng, capsys, tmp_path)
            if seed is not None:
                break
        assert seed is not None
        revealed_at = len(table.bodies) - 1
        before, reveal = table.bodies[:revealed_at], table.bodies[revealed_at]
        assert len(before) > 100, "every route was searched, many times over"
        for where, body in before:
            for form in forms(seed):
                assert form not in body, f"{where} shows the secret seed"
        assert seed.hex().encode() in reveal[1], "the reveal shows it: the search works"
    for log_record in caplog.records:
        text = log_record.getMessage()
        for form in forms(seed):
            assert form.decode("latin-1") not in text, log_record
    keyring.close()
    campaigns.close()


def _play_a_scene(table: Table, rng: random.Random, capsys: Any,
                  tmp_path: Path) -> bytes | None:
    """Random moves over HTTP until the scene's end reveals its seed, which is returned (None:
    play got stuck). Every route and the CLI are called along the way."""
    campaigns = table.campaigns
    for seat in (1, 2, 3):
        table.command(_character(seat))
    seed: bytes | None = None
    accepted = 0
    for _ in range(3000):
        record = campaigns.get(table.id).record
        if record.dice is not None and seed is None:
            seed = campaigns.seeds.seed(table.id, record.dice.commitment)
            assert seed is not None
            for s in (1, 2, 3):  # the seats' seeds, over HTTP
                table.command(AddSeed(seat=s, seed=f"seed of seat {s}"))
        options = [o for o in candidates(campaigns.state(table.id)) if o.seat in (1, 2, 3)]
        if not options:
            return None
        answer = table.command(rng.choice(options))
        if "events" not in answer:
            continue
        accepted += 1
        if any(e["type"] == "DiceRevealed" for e in answer["events"]):
            return seed
        if accepted <= 3 or accepted % 12 == 0:
            table.get_everything()
            _cli_outputs(table, capsys, tmp_path)
    return None


def _character(seat: int) -> Any:
    from domain.capes import commands as c

    return c.CreateCharacter(seat=seat, name=f"Hero {seat}",
                             build=abilities("power", "style", "attitude"))


def _cli_outputs(table: Table, capsys: Any, tmp_path: Path) -> None:
    """The CLI's export (both formats) and verify report, as bodies to search."""
    for args in (["export", str(table.id)], ["verify", str(table.id), "--json"],
                 ["verify", str(table.id)], ["log", str(table.id)]):
        main(args)
        captured = capsys.readouterr()
        table.bodies.append((" ".join(args), (captured.out + captured.err).encode()))
    out = tmp_path / "export.parquet"
    main(["export", str(table.id), "--format", "parquet", "--output", str(out)])
    capsys.readouterr()
    table.bodies.append(("export parquet", out.read_bytes()))

