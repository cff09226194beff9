"""The command line speaks to people (issue 14, item 5): help for every option, the store named
in ``capes --help``, analytics as tables and sentences, no binary on a terminal, and a
misconfiguration stopped at once in one line naming the setting and its value."""

from __future__ import annotations

import argparse
import os
import pty
import re
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from uuid import uuid4

import msgspec
import pytest
from stores import POSTGRES_URL

from application.campaigns import Campaigns
from application.config import check_store, persistence_env
from application.dice import ScriptedDice
from cli.arguments import name_arg
from cli.demo import DEMO_DICE, play_demo
from cli.main import build_parser, main, workers_warnings
from cli.projections import analytics_text
from domain.capes.commands import CreateCampaign
from domain.text import NAME_LENGTH, Name
from projections.service import MODELS, ReadModels

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def parsers(parser: argparse.ArgumentParser, name: str = "capes"
            ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, subparser in action.choices.items():
                yield from parsers(subparser, f"{name} {sub}")


def test_every_command_and_option_has_help_text() -> None:
    missing = []
    for name, parser in parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                helped = {a.dest for a in action._choices_actions if a.help}
                missing += [f"{name} {sub}" for sub in action.choices if sub not in helped]
            elif not isinstance(action, argparse._HelpAction) and not action.help:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []


def test_every_subcommand_says_what_it_does_in_its_own_help() -> None:
    """``capes verify --help`` (and export, import, analytics, campaigns, projections and its
    actions, the record's commands) began at its usage: nothing said what the command does."""
    undescribed = [name for name, parser in parsers(build_parser())
                   if name != "capes" and not (parser.description or "").strip()]
    assert undescribed == []


def test_the_demos_editions_are_named_as_a_host_knows_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """It said "capees: 004's own example": 004 is the rules' source, which no host has."""
    with pytest.raises(SystemExit):
        build_parser().parse_args(["demo", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "CAPEES!" in said and "the default" in said and "004" not in said


def test_capes_help_says_which_store_and_how_to_change_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CAPES_DB", "/srv/tables/harbor.sqlite")
    monkeypatch.delenv("CAPES_DATABASE_URL", raising=False)
    text = build_parser().format_help()
    assert "the SQLite file /srv/tables/harbor.sqlite" in text
    assert "CAPES_DB=" in text and "CAPES_DATABASE_URL=" in text
    monkeypatch.setenv("CAPES_DATABASE_URL", "postgresql://capes:secret@db:5432/capes")
    text = build_parser().format_help()
    assert "PostgreSQL postgresql://capes:***@db:5432/capes" in text
    assert "secret" not in text


def test_analytics_print_as_tables_and_sentences_not_python_values() -> None:
    app = Campaigns(persistence_env({"CAPES_DB": ":memory:"}), dice=ScriptedDice(DEMO_DICE))
    campaign = play_demo(app, out=lambda _: None)
    read_models = ReadModels(app, ["analytics"])
    try:
        read_models.runner.catch_up()
        figures = read_models.analytics.analytics(campaign)
        assert figures is not None
        text = analytics_text(figures)
    finally:
        read_models.close()
        app.close()
    assert not re.search(r"[{}]|': |\d\.0 events", text), text
    assert "Ben gave Ana 2 tokens (gift)." in text
    assert "Too few to judge the dice" in text, "8 rolls: the chi-square means nothing yet"
    assert re.search(r"^ +Ana +2 +4$", text, re.M), "tokens and Debt after the last page"
    assert re.search(r"^  Justice +2 +2 +0 +1$", text, re.M), "Debt by Drive"


def test_a_parquet_export_to_a_terminal_is_refused(tmp_path: Path) -> None:
    """Run under a pseudo-terminal: the command asks for -o instead of writing binary."""
    env = {**os.environ, "CAPES_DB": str(tmp_path / "capes.sqlite")}
    env.pop("CAPES_DATABASE_URL", None)
    controller, terminal = pty.openpty()
    try:
        process = subprocess.run(
            [sys.executable, "-m", "cli.main", "export", "0" * 32, "--format", "parquet"],
            cwd=ROOT, env=env, stdout=terminal, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(terminal)
        os.close(controller)
    assert process.returncode == 2
    assert b"-o FILE" in process.stderr


def test_the_read_models_help_names_every_read_model() -> None:
    """``capes projections --help`` listed four of the five: the timeline was left out."""
    text = " ".join(dict(parsers(build_parser()))["capes projections"].format_help().split())
    assert [name for name in MODELS if name not in text] == []


def test_the_analytics_help_names_the_victory_points_of_capees() -> None:
    """``capes analytics`` prints a CAPEES! campaign's Victory Points; its help did not say so."""
    text = " ".join(dict(parsers(build_parser()))["capes analytics"].format_help().split())
    assert "Victory Points" in text


def test_the_export_help_says_a_parquet_export_goes_to_a_file_or_a_pipe() -> None:
    """Only a terminal is refused (above): the help said Parquet needed --output, which sent a
    host piping it into another tool to a temporary file for nothing."""
    text = " ".join(dict(parsers(build_parser()))["capes export"].format_help().split())
    assert "needs the parquet extra and --output" not in text
    assert "--output or a pipe, never a terminal" in text


@pytest.mark.parametrize("setting, value, named, why", [
    ("CAPES_DB", "/nonexistent/dir/x.sqlite", "CAPES_DB=/nonexistent/dir/x.sqlite",
     "the folder /nonexistent/dir does not exist"),
    # /proc: no file can be made there, even by root (for whom os.access says yes).
    ("CAPES_DB", "/proc/x.sqlite", "CAPES_DB=/proc/x.sqlite", "the folder /proc is not writable"),
    # A file of the repository (the commands run in it) that is no database.
    ("CAPES_DB", "pyproject.toml", "CAPES_DB=pyproject.toml", "is not an SQLite database"),
    ("CAPES_DATABASE_URL", "postgresql://postgres:pw@127.0.0.1:9/test",
     "CAPES_DATABASE_URL=postgresql://postgres:***@127.0.0.1:9/test", "cannot connect"),
    ("CAPES_DATABASE_URL", "mysql://db/test", "CAPES_DATABASE_URL=mysql://db/test",
     "must start with postgresql://"),
])
@pytest.mark.parametrize("command", [["campaigns"], ["serve", "--port", "9"]])
def test_a_misconfigured_store_fails_at_once_in_one_line_naming_it(
    setting: str, value: str, named: str, why: str, command: list[str],
) -> None:
    line = refused_in_one_line({setting: value}, command)
    assert named in line and why in line, line
    assert "pw" not in line


def refused_in_one_line(settings: dict[str, str], command: list[str]) -> str:
    """The one line ``capes COMMAND`` prints when it stops at once (exit status 2) under
    ``settings`` and no other CAPES_ variable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")}
    env.update(settings)
    started = time.monotonic()
    process = subprocess.run([sys.executable, "-m", "cli.main", *command], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=60)
    took = time.monotonic() - started
    assert process.returncode == 2, process.stderr
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1, process.stderr
    assert took < 5, f"{took:.1f} s"
    return lines[0]


def test_a_file_that_is_not_a_database_is_left_as_it_was(tmp_path: Path) -> None:
    not_a_store = tmp_path / "notes.sqlite"
    not_a_store.write_text("hi\n")
    line = refused_in_one_line({"CAPES_DB": str(not_a_store)}, ["verify"])
    assert line == f"capes: CAPES_DB={not_a_store}: is not an SQLite database"
    assert not_a_store.read_text() == "hi\n"


def test_an_sqlite_file_not_made_yet_is_a_new_store_and_an_empty_one_too(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    for store in (tmp_path / "new.sqlite", empty):
        check_store({"CAPES_DB": str(store)})
    assert not (tmp_path / "new.sqlite").exists(), "the check makes no store"


@pytest.mark.parametrize("command", [["campaigns"], ["serve", "--workers", "2", "--port", "9"]])
def test_a_postgresql_schema_that_does_not_exist_fails_at_once_in_one_line(
    postgres_env: dict[str, str], command: list[str],
) -> None:
    """eventsourcing does not create the schema: without the check ``capes campaigns`` ended
    in a traceback and ``capes serve --workers 2`` said it served, then its workers crashed
    and restarted for ever."""
    missing = f"{postgres_env['POSTGRES_SCHEMA']}_missing"
    line = refused_in_one_line({"CAPES_DATABASE_URL": f"{POSTGRES_URL}?schema={missing}"},
                               command)
    assert f"the schema {missing} does not exist" in line, line


def test_a_host_restriction_that_cannot_work_stops_capes_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CAPES_DB", str(tmp_path / "capes.sqlite"))
    monkeypatch.delenv("CAPES_HOST_KEY", raising=False)
    monkeypatch.setenv("CAPES_OPEN_CAMPAIGNS", "host")
    assert main(["serve"]) == 2
    assert capsys.readouterr().err.strip() == (
        "capes: CAPES_OPEN_CAMPAIGNS=host: needs CAPES_HOST_KEY set")


def test_a_share_of_live_streams_that_is_not_a_count_stops_capes_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CAPES_DB", str(tmp_path / "capes.sqlite"))
    for value in ("0", "many"):
        monkeypatch.setenv("CAPES_STREAMS_PER_TOKEN", value)
        assert main(["serve"]) == 2
        assert capsys.readouterr().err.strip() == (
            f"capes: CAPES_STREAMS_PER_TOKEN={value}: must be a whole number, 1 or more")


@pytest.mark.parametrize("value", ["table.example", "https://table.example/",
                                   "http://localhost:5173/app"])
def test_an_origin_no_browser_sends_stops_capes_serve_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    value: str,
) -> None:
    """A browser's Origin is a scheme, a host and maybe a port: one written otherwise (a
    trailing slash, no scheme) never matched, and CORS stayed off without a word."""
    monkeypatch.setenv("CAPES_DB", str(tmp_path / "capes.sqlite"))
    monkeypatch.setenv("CAPES_CORS_ORIGINS", f"http://localhost:5173,{value}")
    with socket.socket() as taken:  # should the setting pass, it serves nothing
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert main(["serve", "--port", str(taken.getsockname()[1])]) == 2
    assert capsys.readouterr().err.strip() == (
        f"capes: CAPES_CORS_ORIGINS=http://localhost:5173,{value}: {value!r} is no origin: "
        "write each as scheme://host or scheme://host:port (no path, no slash at the end), "
        "or * for any")


def test_a_port_another_server_listens_on_stops_capes_serve_before_it_says_it_serves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CAPES_DB", str(tmp_path / "capes.sqlite"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--host", "127.0.0.1", "--port", str(port)]) == 2
    out, err = capsys.readouterr()
    assert "Serving" not in out
    assert err.startswith(f"capes: --port={port}: cannot listen on 127.0.0.1:{port}")
    assert "--port or CAPES_PORT" in err


@pytest.mark.parametrize("setting, value, why", [
    ("CAPES_PORT", "eighty", "must be a port, a whole number from 1 to 65535"),
    ("CAPES_PORT", "99999", "must be a port, a whole number from 1 to 65535"),
    ("CAPES_RATE_LIMIT", "fifty", "must be a whole number, 0 (off) or more"),
    ("CAPES_RATE_LIMIT", "-1", "must be a whole number, 0 (off) or more"),
])
def test_a_number_setting_that_is_not_one_stops_capes_serve_in_one_line_naming_it(
    tmp_path: Path, setting: str, value: str, why: str,
) -> None:
    """A word for CAPES_PORT was a traceback of every command (``capes --help`` included), a
    port out of range one of ``capes serve``; a word for CAPES_RATE_LIMIT a traceback of the
    server's startup, after it had said it served."""
    line = refused_in_one_line({"CAPES_DB": str(tmp_path / "capes.sqlite"), setting: value},
                               ["serve"])
    assert line == f"capes: {setting}={value}: {why}"


def test_a_port_setting_concerns_capes_serve_alone(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")}
    env |= {"CAPES_DB": str(tmp_path / "capes.sqlite"), "CAPES_PORT": "eighty"}
    for command in (["--help"], ["campaigns"]):
        process = subprocess.run([sys.executable, "-m", "cli.main", *command], cwd=ROOT,
                                 env=env, capture_output=True, text=True, timeout=60)
        assert process.returncode == 0, process.stderr
        assert "Traceback" not in process.stderr and "CAPES_PORT" not in process.stderr


@pytest.mark.parametrize("host, why", [
    ("nowhere.invalid", "no such host"),
    ("192.0.2.1", "not an address of this machine"),  # TEST-NET-1: nobody's
])
def test_an_address_to_listen_on_that_cannot_be_stops_capes_serve_naming_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    host: str, why: str,
) -> None:
    """It named ``--port`` and asked whether another server listened there."""
    monkeypatch.setenv("CAPES_DB", str(tmp_path / "capes.sqlite"))
    assert main(["serve", "--host", host, "--port", "8000"]) == 2
    out, err = capsys.readouterr()
    assert "Serving" not in out
    assert err.startswith(f"capes: --host={host}: cannot listen on {host}:8000: {why}"), err
    assert "--host or CAPES_HOST" in err and "port" not in err.split(": ", 2)[2]


#: A child that gets a Ctrl-C (its own SIGINT) as it starts to load MODULE, then runs CODE:
#: a Ctrl-C while a command loads, which takes seconds on a busy machine. It takes SIGINT as a
#: command started at a terminal does: the tests run in the background of a shell (`cmd &`)
#: start with SIGINT ignored, which Python then leaves ignored, and no Ctrl-C would come.
CTRL_C_WHILE_LOADING = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {{signal.SIGINT}})
class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, CtrlC())
{code}
"""


def ctrl_c_while_loading(module: str, code: str, tmp_path: Path
                         ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")}
    env["CAPES_DB"] = str(tmp_path / "capes.sqlite")
    return subprocess.run(
        [sys.executable, "-c", CTRL_C_WHILE_LOADING.format(module=module, code=code)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def test_a_ctrl_c_while_capes_loads_ends_it_quietly(tmp_path: Path) -> None:
    """Ctrl-C in the first second of any ``capes`` command (``capes serve``: its first few on
    a busy machine) printed the traceback of whichever import it stopped."""
    module, function = PROJECT["scripts"]["capes"].split(":")
    process = ctrl_c_while_loading(
        "cli.main", f"from {module} import {function}\nsys.argv = ['capes', 'campaigns']\n"
        f"sys.exit({function}())", tmp_path)
    assert (process.returncode, process.stderr) == (130, "")


def test_output_its_reader_stopped_reading_ends_the_command_quietly(tmp_path: Path) -> None:
    """``capes log CAMPAIGN | head`` ended in the traceback of a BrokenPipeError."""
    module, function = PROJECT["scripts"]["capes"].split(":")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")}
    env["CAPES_DB"] = str(tmp_path / "capes.sqlite")
    read, write = os.pipe()
    os.close(read)  # the reader has gone (head, once it has its lines)
    with os.fdopen(write, "wb") as gone:
        process = subprocess.run(
            [sys.executable, "-c", f"import sys\nfrom {module} import {function}\n"
             f"sys.argv = ['capes', 'demo']\nsys.exit({function}())"],
            cwd=ROOT, env=env, stdout=gone, stderr=subprocess.PIPE, text=True, timeout=60)
    assert (process.returncode, process.stderr) == (141, "")  # as if ended by SIGPIPE


def test_the_read_models_process_started_with_a_ctrl_c_ends_quietly(tmp_path: Path) -> None:
    """``capes serve``'s Ctrl-C reaches its read models' process too, which may be loading."""
    from cli.read_models_process import ReadModelsProcess

    argv = ReadModelsProcess({"CAPES_DB": str(tmp_path / "capes.sqlite")}).command()[0]
    assert argv[0] == "-m"
    process = ctrl_c_while_loading(
        "cli.main", f"import runpy\nsys.argv = {[argv[1], *argv[2:]]!r}\n"
        f"runpy.run_module({argv[1]!r}, run_name='__main__', alter_sys=True)", tmp_path)
    assert (process.returncode, process.stderr) == (130, "")


def test_the_writer_process_started_with_a_ctrl_c_goes_on_starting(tmp_path: Path) -> None:
    """A Ctrl-C never stops a writer process (``capes serve`` does, once it has finished what
    it was sent): one while it loaded was its traceback, then the server's startup failed in
    another ("the writer process did not start")."""
    process = ctrl_c_while_loading(
        "api.writer", "import runpy\nsys.argv = ['api.writer_process']\n"
        "runpy.run_module('api.writer_process', run_name='__main__', alter_sys=True)", tmp_path)
    # It went on to read its arguments (none: a usage error).
    assert process.returncode == 2, process.stderr
    assert "give either FD or --listen PATH" in process.stderr
    assert "KeyboardInterrupt" not in process.stderr


def test_several_workers_warn_what_they_will_not_share() -> None:
    assert workers_warnings(1, {}) == []
    alone = " ".join(workers_warnings(4, {"CAPES_PROJECTIONS": "internal",
                                          "CAPES_WRITER": "thread"}))
    assert "CAPES_REDIS_URL" in alone and "CAPES_WRITER=thread" in alone
    assert "CAPES_PROJECTIONS=internal" in alone and "rate limit" in alone
    # The workers' shared writer process passes their live messages on: no Redis needed.
    assert not any("CAPES_REDIS_URL" in w for w in workers_warnings(4, {}))
    shared = " ".join(workers_warnings(4, {
        "CAPES_REDIS_URL": "redis://127.0.0.1:6379/0",
        "CAPES_DATABASE_URL": "postgresql://db/capes"}))
    # By default one writer process serves every worker (cli/writer_hub.py).
    assert "CAPES_REDIS_URL" not in shared and "CAPES_WRITER" not in shared
    assert "CAPES_PROJECTIONS" not in shared  # by default one process runs them for all
    assert "CAPES_WRITERS" not in shared
    threads = " ".join(workers_warnings(2, {"CAPES_WRITER": "thread", "CAPES_WRITERS": "2"}))
    assert ("CAPES_WRITERS=2 does nothing with CAPES_WRITER=thread: no writer process is "
            "shared; leave CAPES_WRITER unset for writers by campaign") in threads


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """What the parser says on stderr about ``argv``, which it must refuse (exit status 2)."""
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(argv)
    assert stopped.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["state", "nope"], ["log", "nope"], ["verify", "nope"], ["export", "nope"],
    ["tokens", "nope"], ["analytics", "nope"],
])
def test_a_campaign_that_is_not_an_id_is_a_usage_error_naming_it(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert "not a campaign id: 'nope'" in usage_error(argv, capsys)


@pytest.mark.parametrize("argv", [
    ["projections", "run", "--poll", "-1"], ["projections", "run", "--linger", "4000"],
    ["projections", "run", "--poll", "soon"], ["projections", "run", "--latest-every", "-1"],
])
def test_a_pace_of_the_read_models_that_is_not_seconds_is_a_usage_error_naming_it(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    err = usage_error(argv, capsys)
    assert argv[2] in err and argv[3] in err


CAMPAIGN = "0" * 32


@pytest.mark.parametrize("at, said", [
    ("2026-11-29T13:30:00", "argument --at: give the time with its zone"),
    ("yesterday", "argument --at: not an ISO time: 'yesterday'"),
])
def test_a_time_without_its_zone_is_a_usage_error_naming_at(
    at: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The log's times have a zone: one without could not be compared with them (it was a
    TypeError's traceback), as the HTTP API's ``?at=`` refuses it."""
    assert said in usage_error(["state", CAMPAIGN, "--at", at], capsys)


def test_a_time_with_its_zone_is_taken_as_given() -> None:
    for at in ("2026-11-29T13:30:00Z", "2026-11-29T14:30:00+01:00"):
        args = build_parser().parse_args(["state", CAMPAIGN, "--at", at])
        assert args.at.astimezone(UTC) == datetime(2026, 11, 29, 13, 30, tzinfo=UTC)


@pytest.mark.parametrize("name", ["", "a\ttab", "x" * (NAME_LENGTH + 1), "   ", "\u3000"])
def test_a_fork_name_the_api_would_refuse_is_a_usage_error_naming_name(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = usage_error(["fork", CAMPAIGN, "--name", name], capsys)
    assert "argument --name: a name has 1 to 80 characters" in err
    assert "not blanks alone" in err  # R-X-SRV-1


@pytest.mark.parametrize("narration", ["   ", " \n\t", "bell\u0007", "x" * 2001],
                         ids=["spaces", "blank lines", "a bell", "2001 characters"])
@pytest.mark.parametrize("command", [["undo", "--seat", "1"], ["settle", "--uphold"]])
def test_a_narration_the_api_would_refuse_is_a_usage_error_naming_narration(
    command: list[str], narration: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-X-SRV-1: blanks alone (and control characters) were stored from the console as the
    table's narration; left out, or empty, it is none."""
    err = usage_error([command[0], CAMPAIGN, *command[1:], "--narration", narration], capsys)
    assert "argument --narration: narration has at most 2000 characters" in err
    err = usage_error(["dispute", CAMPAIGN, "--seat", "1", "--event", "2", "--reason",
                       narration[:1001]], capsys)
    assert "argument --reason: a reason has 1 to 1000 characters" in err
    assert build_parser().parse_args(["undo", CAMPAIGN, "--seat", "1", "--narration", ""]
                                     ).narration == ""


def test_a_default_fork_name_is_cut_to_fit_a_name(memory_app: Campaigns) -> None:
    """The source's name is cut, not the fork's mark: a source named with all 80 characters
    gave its fork a name longer than any command may give."""
    source = memory_app.create(CreateCampaign(name="x" * NAME_LENGTH)).campaign_id
    fork = memory_app.fork(source).campaign_id
    name = memory_app.state(fork).name
    assert name == "x" * (NAME_LENGTH - len(" (fork at 1)")) + " (fork at 1)"
    assert msgspec.convert(name, Name) == name


def test_a_fork_name_of_all_80_characters_is_taken() -> None:
    assert name_arg("x" * NAME_LENGTH) == "x" * NAME_LENGTH


def test_analytics_of_no_campaign_or_of_both_is_a_usage_error_saying_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The one line says whose it is, as every other refusal of the console does."""
    for argv in (["analytics"], ["analytics", str(uuid4()), "--all"]):
        assert main(argv) == 2
        assert capsys.readouterr().err == "capes analytics: name a campaign, or --all (not both)\n"
