"""The ledgers read model: each campaign's player ledgers (its edition's) as of its last event,
the document ``GET /campaigns/{id}/ledgers`` answers with. A ``capes`` document is the list of
ledgers; a ``capees`` one is ``{"edition": "capees", "ledgers": [...]}``, so a document says how
to read it back."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

import msgspec

from domain.capees import views as capees_views
from domain.capes.views import Ledger, ledgers

from .model import DocumentModel, document_ddl
from .views import PostgresView, SQLiteView

if TYPE_CHECKING:
    from application.aggregate import Campaign

NAME = "ledgers"
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(tuple[Ledger, ...]).decode
Ledgers = tuple[Ledger, ...] | tuple[capees_views.Ledger, ...]


class CapeesLedgers(msgspec.Struct, frozen=True, kw_only=True):
    edition: str = "capees"
    ledgers: tuple[capees_views.Ledger, ...]


_decode_capees = msgspec.json.Decoder(CapeesLedgers).decode


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
        if campaign.edition == "capees":
            return _encode(CapeesLedgers(ledgers=capees_views.ledgers(campaign.state)))
        return _encode(ledgers(campaign.state))

    def ledgers(self, campaign_id: UUID) -> Ledgers | None:
        """The campaign's ledgers, or None if the read model has none."""
        found = self.document(campaign_id)
        if found is None:
            return None
        body = found[1]
        if body.startswith(b"{"):
            return _decode_capees(body).ledgers
        return _decode(body)
