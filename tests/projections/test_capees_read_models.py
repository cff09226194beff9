"""The read models follow a CAPEES! campaign as they follow a Capes one: board and ledgers
documents of its own edition, the timeline, the directory, and analytics with Victory Points
over time."""

from __future__ import annotations

import msgspec
from capees_positions import BUYING
from stores import MakeApp

from application.campaigns import Campaigns
from cli.demo_capees import ALICE, CHIEF, NIGHT_MAIDEN, demo_dice, play_capees_demo
from domain.capees import commands as c
from domain.capees import views
from projections.service import ReadModels


def test_read_models_of_a_capees_campaign_on_each_store(
    store_env: dict[str, str], make_app: MakeApp
) -> None:
    """C-VP-2, C-SRV-3: what the read models hold is what the state shows."""
    app = make_app(store_env, dice=demo_dice())
    read_models = ReadModels(app)
    try:
        campaign = play_capees_demo(app, out=lambda _: None)
        read_models.runner.catch_up()
        state = app.state(campaign)
        assert read_models.board.board(campaign) == views.board(state)
        assert read_models.ledgers.ledgers(campaign) == views.ledgers(state)
        listing = read_models.directory.get(campaign)
        assert listing is not None and listing.edition == "capees"
        assert listing.players == ("Editor", "Alice", "Joe")
        assert read_models.timeline.has(campaign)
        figures = read_models.analytics.analytics(campaign)
        assert figures is not None
        assert figures.victory_points.by_faction == {"hero": 6}
        assert [(v.faction, v.vp, v.hero) for v in figures.victory_points.over_time] == [
            ("hero", 1, 1), ("hero", 5, 6)]
        assert figures.dice.overall.rolls == 4
        assert figures.pace.scenes == 1
        assert figures.tokens.by_kind["prominence"] == 3  # Silverstar's 2, Night Maiden's 1
    finally:
        read_models.close()


def test_the_stored_board_lists_a_seats_legal_choices_and_older_boards_still_decode() -> None:
    """C-PROM-3: the board read model carries ``options`` (whom Alice may buy Prominence for,
    as the state's board lists it); a board stored before ``options`` existed reads back with
    none."""
    app = Campaigns({"PERSISTENCE_MODULE": "eventsourcing.popo"}, dice=demo_dice())
    read_models = ReadModels(app)
    try:
        campaign = app.create(c.CreateCampaign(name="Millennium City")).campaign_id
        for _, command in BUYING:
            app.execute(campaign, command)
        read_models.runner.catch_up()
        shown = read_models.board.board(campaign)
        assert shown == views.board(app.state(campaign))
        assert isinstance(shown, views.Board)
        assert [o.character for o in shown.options[ALICE]["capees.buy_prominence"]] == [
            CHIEF, NIGHT_MAIDEN]
        older = msgspec.json.decode(msgspec.json.encode(shown))
        del older["options"]
        decoded = msgspec.json.decode(msgspec.json.encode(older), type=views.Board)
        assert decoded.options == {}
    finally:
        read_models.close()
