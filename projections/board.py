"""The board read model: each campaign's board (its edition's: ``domain.capes.views.board`` or
``domain.capees.views.board``) as of its last event, the document ``GET /campaigns/{id}/board``
answers with. Both boards carry their ``edition``, which says how to read a document back."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

import msgspec

from domain.capees import views as capees_views
from domain.capes import views as capes_views
from domain.editions import board_of

from .model import DocumentModel, document_ddl
from .views import PostgresView, SQLiteView

if TYPE_CHECKING:
    from application.aggregate import Campaign

NAME = "board"
_encode = msgspec.json.Encoder().encode
Board = capes_views.Board | capees_views.Board


class _Edition(msgspec.Struct):
    edition: str


_edition = msgspec.json.Decoder(_Edition).decode
_capes = msgspec.json.Decoder(capes_views.Board).decode
_capees = msgspec.json.Decoder(capees_views.Board).decode


class BoardSQLite(SQLiteView):
    name = NAME
    ddl = document_ddl(NAME)
    tables = (f"capes_{NAME}",)


class BoardPostgres(PostgresView):
    name = NAME
    ddl = document_ddl(NAME)
    tables = (f"capes_{NAME}",)


class BoardModel(DocumentModel):
    name = NAME
    views = (BoardSQLite, BoardPostgres)
    #: 2: a CAPEES! board carries each seat's legal ``options`` (older documents lack them).
    #: 3: a Capes board carries ``free_claims_used`` (R-PAGE-3); 4: and ``vetoers`` (R-CONF-3);
    #: 5: and ``schism_dice`` (R-SCHISM-1); 6: and ``deadlockable`` (R-DEAD-1); 7: and
    #: ``schism_sides``, ``schism_splits`` (R-SCHISM-1).
    layout = 7

    def render(self, campaign: Campaign) -> bytes | None:
        return _encode(board_of(campaign.edition, campaign.state, campaign.record))

    def board(self, campaign_id: UUID) -> Board | None:
        """The campaign's board, or None if the read model has none."""
        found = self.document(campaign_id)
        if found is None:
            return None
        body = found[1]
        if _edition(body).edition == "capees":
            return _capees(body)
        return _capes(body)
