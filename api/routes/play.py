"""Play: a seat's commands, and the owner closing the campaign."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import msgspec
from litestar import post
from litestar.exceptions import PermissionDeniedException
from litestar.params import FromPath, JSONBody

from api import problems
from api.schemas import Applied, CommandRequest, DisputeMove
from api.services import MAX_BODY, ActorDep, ServicesDep, apply_command, in_thread, seat_of
from domain.editions import play_of
from domain.record.commands import OpenDispute


@post(
    "/campaigns/{campaign_id:uuid}/commands",
    status_code=200,
    summary="Run a command",
    tags=["play"],
    request_max_body_size=MAX_BODY,
    responses=problems.responses(400, 401, 403, 404, 409, 413, 422, 429),
)
async def run_command(
    campaign_id: FromPath[UUID],
    data: JSONBody[CommandRequest],
    actor: ActorDep,
    services: ServicesDep,
) -> Applied:
    """Run one command for the token's seat: the events it appended and the new version.

    ``command.seat`` may be left out (it is the token's seat); naming another seat is 403.
    Refusals: 422 with the rule id, 403 for another seat's character, 409 for a stale
    ``expected_version``.
    """
    seat = seat_of(actor)
    command: Any = data.command
    if command.seat not in (0, seat):
        raise PermissionDeniedException(f"seat {seat} may not act for seat {command.seat}")
    if isinstance(command, DisputeMove):
        # The server fills in what the record needs to know (actor, time) itself.
        command = OpenDispute(seat=seat, position=command.position, reason=command.reason)
    command = msgspec.structs.replace(command, seat=seat)
    return await apply_command(
        services, campaign_id, command, data.narration, data.expected_version
    )


@post(
    "/campaigns/{campaign_id:uuid}/close",
    status_code=200,
    summary="Close the campaign",
    tags=["owner"],
    responses=problems.responses(401, 403, 404, 409, 422, 429),
)
async def close_campaign(
    campaign_id: FromPath[UUID], actor: ActorDep, services: ServicesDep
) -> Applied:
    """The owner closes the campaign: no command is accepted after it."""
    if not actor.owner:
        raise PermissionDeniedException("only the owner's token may close the campaign")
    edition = await in_thread(services.campaigns.edition_of, campaign_id)
    return await apply_command(services, campaign_id, play_of(edition).close())


HANDLERS = [run_command, close_campaign]
