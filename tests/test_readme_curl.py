"""The README's curl session runs against a real server process, as a reader would run it."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_readme_curl_session_plays_the_first_turns_of_a_scene(tmp_path: Path) -> None:
    """R-SCENE-1, R-SCENE-2, R-PAGE-3, R-TURN-1: the README's table plays through curl."""
    block = re.findall(r"```sh\n(S=.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert block, "the README has a curl session starting with S=…"
    port = free_port()
    env = dict(os.environ, CAPES_DB=str(tmp_path / "readme.sqlite"), CAPES_RATE_LIMIT="0")
    env.pop("CAPES_DATABASE_URL", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "serve", "--port", str(port), "--log-level", "warning"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/schema/openapi.json", timeout=2)
                break
            except httpx.TransportError:
                assert server.poll() is None, "the server stopped"
                assert time.monotonic() < deadline, "the server did not start within 60 s"
                time.sleep(0.2)
        run = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block[0]], env=dict(env, CAPES_URL=url),
            capture_output=True, text=True, timeout=120,
        )
        assert run.returncode == 0, run.stderr
        lines = run.stdout.strip().splitlines()
        assert all('"status"' not in line for line in lines[:-1]), "no command was refused"
        assert "react" in lines[-1] or "end_turn" in lines[-1], lines[-1]
    finally:
        server.terminate()
        server.wait(timeout=10)
