"""The lobby: opening a campaign and taking a seat (no token needed for either)."""

from __future__ import annotations

from typing import Any
from uuid import UUID, uuid4

from litestar import Request, post
from litestar.params import FromPath, JSONBody

from api import operations, problems
from api.schemas import CampaignOpened, NewCampaign, NewSeat, SeatTaken, event_out
from api.services import ServicesDep, announce, authenticate_host, in_thread
from domain.editions import play_of
from domain.record.commands import SetTableOptions


@post(
    "/campaigns",
    status_code=201,
    summary="Open a campaign",
    tags=["lobby"],
    responses=problems.responses(400, 401, 403, 413, 429),
    # No token needed, unless the host restricts it (CAPES_OPEN_CAMPAIGNS=host): the host key.
    security=[{}, {"bearer": []}],
)
async def open_campaign(request: Request[Any, Any, Any], data: JSONBody[NewCampaign],
                        services: ServicesDep) -> CampaignOpened:
    """A new campaign; the response's ``owner_token`` is shown once. With
    ``CAPES_OPEN_CAMPAIGNS=host`` only ``Authorization: Bearer $CAPES_HOST_KEY`` may open one."""
    if services.hosts_only:
        authenticate_host(request, services, "opening campaigns")
    campaign_id = uuid4()
    token = await services.call(operations.open_keys, campaign_id)
    command = play_of(data.edition).create(data.name, data.starting_tokens)
    version = (await services.call(operations.create, command, campaign_id=campaign_id)).version
    if data.options is not None:
        version = (await services.committer.execute(
            campaign_id, SetTableOptions(options=data.options))).version
    return CampaignOpened(campaign_id=campaign_id, owner_token=token, version=version)


@post(
    "/campaigns/{campaign_id:uuid}/seats",
    status_code=201,
    summary="Take a seat",
    tags=["lobby"],
    responses=problems.responses(400, 404, 409, 413, 422, 423, 429),
    security=[{}],  # no token needed: the campaign id is the invitation
)
async def take_seat(
    campaign_id: FromPath[UUID], data: JSONBody[NewSeat], services: ServicesDep
) -> SeatTaken:
    """Seat a player (between scenes, R-X-SEAT-1); the response's ``token`` is shown once.

    The campaign id is the invitation: whoever has it may join.
    """
    if services.integrity is not None:
        # No seat is added to a log that does not verify (issue 13): checked once, in a thread.
        await in_thread(services.integrity.ensure, campaign_id)
    edition = await in_thread(services.campaigns.edition_of, campaign_id)
    # The seat and its token's record (R-X-REC-4) are stored in one step (see
    # Campaigns.seat_player): a crash never leaves a seat without a token.
    outcome, token = await services.call(
        operations.seat_player, campaign_id, play_of(edition).seat(data.name),
        invalidates=campaign_id)
    seat = len(outcome.state.players)
    await announce(services, campaign_id, tuple(event_out(r) for r in outcome.events))
    return SeatTaken(campaign_id=campaign_id, seat=seat, token=token, version=outcome.version)



HANDLERS = [open_campaign, take_seat]
