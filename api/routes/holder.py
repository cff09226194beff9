"""Who a token is: ``GET /campaigns/{id}/me`` tells its holder the campaign and the seat it
acts as (the owner's token: no seat). A browser or a player who found a token in a message
asks here before anything else."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import msgspec
from litestar import get
from litestar.params import FromPath

from api import problems
from api.services import ActorDep, ServicesDep, in_thread


class Holder(msgspec.Struct, frozen=True, kw_only=True):
    """The holder of a token: which campaign, and which seat (None: the owner)."""

    campaign_id: UUID
    campaign: str
    owner: bool
    seat: int | None
    #: The seated player's name (None for the owner).
    player: str | None


@get(
    "/campaigns/{campaign_id:uuid}/me",
    summary="Who this token is",
    tags=["queries"],
    responses=problems.responses(400, 401, 403, 404, 429),
)
async def whoami(campaign_id: FromPath[UUID], actor: ActorDep, services: ServicesDep) -> Holder:
    """The campaign and the seat the bearer token acts as; the owner's token has no seat."""
    state = await in_thread(services.campaigns.state, campaign_id)
    player = next((p.name for p in state.players if p.seat == actor.seat), None)
    return Holder(campaign_id=campaign_id, campaign=state.name, owner=actor.owner,
                  seat=actor.seat, player=player)


HANDLERS: list[Any] = [whoami]
