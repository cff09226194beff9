"""Read models record the layout their tables were built with, and whoever runs them rebuilds,
when it starts, each one built with another layout than the code's: a host upgrading never
has to guess whether to run ``capes projections rebuild``."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import msgspec
import pytest
from readmodel_helpers import dump, open_table, play
from stores import MakeApp

from application.aggregate import Campaign
from application.campaigns import Campaigns
from application.dice import SeededDice
from domain.editions import board_of
from projections.board import BoardModel
from projections.model import ReadModel
from projections.service import MODELS, ReadModels

#: The field the board of the "release before" did not have yet.
NEW_FIELD = "exemplar_requests"


def older_board(self: BoardModel, campaign: Campaign) -> bytes:
    """The board as a release before wrote it: without :data:`NEW_FIELD`."""
    body = msgspec.json.decode(msgspec.json.encode(
        board_of(campaign.edition, campaign.state, campaign.record)))
    del body[NEW_FIELD]
    return msgspec.json.encode(body)


def stored_board(read_models: ReadModels, campaign: UUID) -> dict[str, Any]:
    found = read_models.board.document(campaign)
    assert found is not None
    decoded: dict[str, Any] = msgspec.json.decode(found[1])
    return decoded


@pytest.fixture
def built_before(shared_store_env: dict[str, str], make_app: MakeApp,
                 monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Campaigns, list[UUID]]]:
    """A store whose read models a release before built (its board without the new field,
    no layout recorded), caught up and closed; the application and its campaigns."""
    app = make_app(shared_store_env, dice=SeededDice(5))
    rng = random.Random(5)
    campaigns = [open_table(app, "Harbor", players=3), open_table(app, "Skyline", players=2)]
    for campaign in campaigns:
        play(app, campaign, rng, 40)
    with monkeypatch.context() as before:
        before.setattr(BoardModel, "render", older_board)
        before.setattr(BoardModel, "layout", 1)
        read_models = ReadModels(app)
        read_models.runner.catch_up()
        assert NEW_FIELD not in stored_board(read_models, campaigns[0])
        assert read_models.status()["layouts"] == dict.fromkeys(MODELS, 1)
        read_models.close()
    yield app, campaigns


def rebuilt(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "rebuilding" in r.getMessage()]


def test_a_read_model_built_with_an_older_layout_is_rebuilt_from_the_log_when_they_start(
        built_before: tuple[Campaigns, list[UUID]], shared_store_env: dict[str, str],
        make_app: MakeApp, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    app, campaigns = built_before
    head = app.recorder.max_notification_id()
    monkeypatch.setattr(BoardModel, "layout", 2)  # this release writes the board otherwise
    caplog.set_level(logging.WARNING, logger="projections.service")
    again = make_app(shared_store_env)
    read_models = ReadModels(again)
    try:
        assert read_models.runner.refresh() == {**dict.fromkeys(MODELS, head), "board": 0}
        assert rebuilt(caplog) == ["read model board: rebuilding it from the log (its tables "
                                   "were built with layout 1, this release writes layout 2)"]
        assert read_models.status()["layouts"] == {**dict.fromkeys(MODELS, 1), "board": 2}
        read_models.runner.catch_up()
        for campaign in campaigns:
            now = again.get(campaign)
            assert NEW_FIELD in stored_board(read_models, campaign)
            assert read_models.board.board(campaign) == board_of(now.edition, now.state,
                                                                 now.record)
    finally:
        read_models.close()


def test_read_models_built_with_the_code_s_layout_are_not_rebuilt(
        built_before: tuple[Campaigns, list[UUID]], shared_store_env: dict[str, str],
        make_app: MakeApp, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """A store made before layouts were recorded counts as layout 1: upgrading to the release
    that records them rebuilds nothing; nor does starting again once a layout is recorded."""
    app, _ = built_before
    head = app.recorder.max_notification_id()
    caplog.set_level(logging.WARNING, logger="projections.service")
    monkeypatch.setattr(BoardModel, "layout", 1)  # the release that wrote them
    read_models = ReadModels(make_app(shared_store_env))
    kept = dump(read_models)
    try:
        assert read_models.runner.refresh() == dict.fromkeys(MODELS, head)
    finally:
        read_models.close()
    monkeypatch.setattr(BoardModel, "layout", 2)
    read_models = ReadModels(make_app(shared_store_env))
    read_models.runner.catch_up()
    rebuilt_once = dump(read_models)
    read_models.close()
    caplog.clear()
    read_models = ReadModels(make_app(shared_store_env))
    try:
        assert read_models.runner.refresh() == dict.fromkeys(MODELS, head)
        assert dump(read_models) == rebuilt_once
        assert {k: v for k, v in rebuilt_once.items() if k != "board"} == {
            k: v for k, v in kept.items() if k != "board"}
        assert rebuilt(caplog) == []
    finally:
        read_models.close()


def test_two_processes_opening_read_models_of_an_older_layout_at_once_reset_them_once(
        built_before: tuple[Campaigns, list[UUID]], shared_store_env: dict[str, str],
        make_app: MakeApp, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(BoardModel, "layout", 2)
    resets: list[str] = []
    reset = ReadModel.reset

    def slow_reset(self: ReadModel) -> None:
        resets.append(self.name)
        time.sleep(0.2)  # long enough for the other opener to look at the layout meanwhile
        reset(self)

    monkeypatch.setattr(BoardModel, "reset", slow_reset)
    caplog.set_level(logging.WARNING, logger="projections.service")
    apps = [make_app(shared_store_env) for _ in range(2)]
    together = threading.Barrier(2)
    opened: list[ReadModels] = []

    def open_read_models(app: Campaigns) -> None:
        together.wait()
        opened.append(ReadModels(app))

    threads = [threading.Thread(target=open_read_models, args=(app,)) for app in apps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    try:
        assert len(opened) == 2
        assert resets == ["board"]
        assert len(rebuilt(caplog)) == 1
        opened[0].runner.catch_up()
        opened[1].runner.catch_up()
        campaign = built_before[1][0]
        now = apps[0].get(campaign)
        assert opened[1].board.board(campaign) == board_of(now.edition, now.state, now.record)
    finally:
        for read_models in opened:
            read_models.close()
