"""What text the server accepts in names and prose (issue 13): no control characters.

A NUL cannot be stored in PostgreSQL text (the read models refused every event after one), and
no other control character has a place in a name or a narration either: they are refused as
malformed (HTTP 400 naming the field) before anything is stored, on every store alike. Prose
(narration, a conflict's text, a dispute's reason) may hold tabs and line breaks.

The patterns are JSON Schema / Python regular expressions, so the OpenAPI schema states them.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

#: A name: any characters but the C0 and C1 control characters (and DEL).
LINE_PATTERN = r"^[^\x00-\x1f\x7f-\x9f]*$"
#: Prose: as a name, but tabs and line breaks are allowed.
PROSE_PATTERN = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]*$"


def line(min_length: int, max_length: int) -> msgspec.Meta:
    """``msgspec.Meta`` of a name of ``min_length``..``max_length`` characters."""
    return msgspec.Meta(min_length=min_length or None, max_length=max_length,
                        pattern=LINE_PATTERN)


#: The most characters a name (of a campaign, seat, character, fork…) may have.
NAME_LENGTH = 80
#: A name, wherever one is given: the commands, the API's bodies, the command line.
Name = Annotated[str, line(1, NAME_LENGTH)]


def prose(min_length: int, max_length: int) -> msgspec.Meta:
    """``msgspec.Meta`` of prose of ``min_length``..``max_length`` characters (a minimum of 0
    is left unsaid: the schema would not show it)."""
    return msgspec.Meta(min_length=min_length or None, max_length=max_length,
                        pattern=PROSE_PATTERN)


#: The largest integer a field that the stores compare or keep in a column may take: both
#: stores hold 64-bit signed integers (SQLite raised OverflowError above it, a 500).
MAX_INT = 2**62
#: A number of the game (a rating, a count) that the rules check: any 32-bit integer is
#: malformed-free, the rules refuse what is out of range with their rule id.
Small = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31)]

__all__ = ["LINE_PATTERN", "MAX_INT", "PROSE_PATTERN", "Small", "line", "prose"]
