"""The ledgers read model: each campaign's player ledgers (``domain.capes.views.ledgers``) as
of its last event, the document ``GET /campaigns/{id}/ledgers`` answers with."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

import msgspec

from domain.capes.views import Ledger, ledgers

from .model import DocumentModel, document_ddl
from .views import PostgresView, SQLiteView

if TYPE_CHECKING:
    from application.aggregate import Campaign

NAME = "ledgers"
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(tuple[Ledger, ...]).decode


class LedgersSQLite(SQLiteView):
    name = NAME
    ddl = document_ddl(NAME)
    tables = (f"capes_{NAME}",)


class LedgersPostgres(PostgresView):
    name = NAME
    ddl = document_ddl(NAME)
    tables = (f"capes_{NAME}",)


class LedgersModel(DocumentModel):
    name = NAME
    views = (LedgersSQLite, LedgersPostgres)

    def render(self, campaign: Campaign) -> bytes | None:
        if campaign.edition != "capes":
            return None
        return _encode(ledgers(campaign.state))

    def ledgers(self, campaign_id: UUID) -> tuple[Ledger, ...] | None:
        """The campaign's ledgers, or None if the read model has none."""
        found = self.document(campaign_id)
        return None if found is None else _decode(found[1])
