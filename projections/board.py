"""The board read model: each campaign's board (``domain.capes.views.board``) as of its last
event, the document ``GET /campaigns/{id}/board`` answers with."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

import msgspec

from domain.capes.views import Board, board

from .model import DocumentModel, document_ddl
from .views import PostgresView, SQLiteView

if TYPE_CHECKING:
    from application.aggregate import Campaign

NAME = "board"
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(Board).decode


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

    def render(self, campaign: Campaign) -> bytes | None:
        if campaign.edition != "capes":
            return None
        return _encode(board(campaign.state))

    def board(self, campaign_id: UUID) -> Board | None:
        """The campaign's board, or None if the read model has none."""
        found = self.document(campaign_id)
        return None if found is None else _decode(found[1])
