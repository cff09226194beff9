"""HTTP routes that audit a campaign (R-FAIR-6, R-FAIR-7); any token of the campaign may use them.

- ``GET /campaigns/{id}/verify[?head=N:CHAIN]``: the report of
  :func:`application.audit.verify_stored`
  (hash chain, commitments, every die of every revealed scene), always 200 when the campaign
  exists: ``ok`` says whether it all holds, ``discrepancy`` what failed first.
- ``GET /campaigns/{id}/export?format=ndjson|parquet``: every event of the log
  (:mod:`application.transfer`), as a download.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal
from uuid import UUID

from litestar import Response, get
from litestar.exceptions import ValidationException
from litestar.openapi.spec import OpenAPIMediaType, Operation, Schema
from litestar.openapi.spec.enums import OpenAPIFormat, OpenAPIType
from litestar.params import FromPath, QueryParameter

from api import problems
from api.services import QUERY_PROBLEMS, ActorDep, ServicesDep, in_thread
from application.audit import Report, parse_head, stored_entries, verify_stored
from application.transfer import MEDIA_TYPES, export


def _heads(head: str | None) -> list[tuple[int, str, str]]:
    if head is None:
        return []
    try:
        position, chain = parse_head(head)
    except ValueError as e:
        raise ValidationException(f"head: {e}") from None
    return [(position, chain, "the head given")]


@get("/campaigns/{campaign_id:uuid}/verify", summary="Verify the campaign", tags=["audit"],
     responses=QUERY_PROBLEMS)
async def verify_campaign(
    campaign_id: FromPath[UUID],
    actor: ActorDep,
    services: ServicesDep,
    head: Annotated[str | None, QueryParameter(
        description="A chain known from earlier, POSITION:CHAIN (e.g. the last event a "
        "player saw): the log must still contain it")] = None,
) -> Report:
    """Check the hash chain, every commitment and every die of every revealed scene, and
    report the first discrepancy (which event, which check, expected and found)."""
    heads = _heads(head)
    await in_thread(services.campaigns.get, campaign_id)  # 404 for no such campaign
    return await in_thread(verify_stored, services.campaigns, campaign_id, heads)


@dataclass
class ExportOperation(Operation):
    """The export's 200 answer documents both of its content types."""

    def __post_init__(self) -> None:
        ok = (self.responses or {}).get("200")
        if ok is not None and not isinstance(ok, dict) and hasattr(ok, "content"):
            text = Schema(type=OpenAPIType.STRING)
            binary = Schema(type=OpenAPIType.STRING, format=OpenAPIFormat.BINARY)
            ok.content = {MEDIA_TYPES["ndjson"]: OpenAPIMediaType(schema=text),
                          MEDIA_TYPES["parquet"]: OpenAPIMediaType(schema=binary)}


@get("/campaigns/{campaign_id:uuid}/export", summary="Export the log", tags=["audit"],
     responses={**QUERY_PROBLEMS, **problems.responses(501)}, media_type=MEDIA_TYPES["ndjson"],
     operation_class=ExportOperation)
async def export_campaign(
    campaign_id: FromPath[UUID],
    actor: ActorDep,
    services: ServicesDep,
    fmt: Annotated[Literal["ndjson", "parquet"], QueryParameter(
        name="format", description="ndjson: one JSON object per event and line; parquet")
    ] = "ndjson",
) -> Response[bytes]:
    """Every event with its position, type, time, seat, narration, command, chain and payload;
    ``capes import`` or ``capes verify --file`` take it back."""
    app = services.campaigns
    campaign = await in_thread(app.get, campaign_id)
    log = await in_thread(stored_entries, app, campaign_id)
    data = await in_thread(export, campaign_id, log, campaign.record, fmt)
    return Response(content=data, media_type=MEDIA_TYPES[fmt], headers={
        "Content-Disposition": f'attachment; filename="campaign-{campaign_id}.{fmt}"'})


HANDLERS = [verify_campaign, export_campaign]
