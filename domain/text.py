"""What text the server accepts in names and prose (issue 13): no control characters, and
never blanks alone (R-X-SRV-1).

A NUL cannot be stored in PostgreSQL text (the read models refused every event after one), and
no other control character has a place in a name or a narration either: they are refused as
malformed (HTTP 400 naming the field) before anything is stored, on every store alike. Prose
(narration, a conflict's text, a dispute's reason) may hold tabs and line breaks.

A name or prose of blanks alone (spaces, tabs, line breaks) is refused the same way: it was
taken, and shown as nothing (a character named "   "). Prose that may be left out may be empty:
that is none (a command's narration). These types check what a command or a request *gives*;
nothing stored is decoded with them (events, snapshots and exports hold plain strings), so a
log holding a blank name from before still loads, replays, exports and verifies, and
:data:`NameRef` still names what it holds.

The patterns are JSON Schema / Python regular expressions, so the OpenAPI schema states them.
Each reads left to right without backtracking (blanks, then one character that is none, then
anything allowed), and spells its blanks out: Python's ``\\s`` and JavaScript's differ.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

#: The C0 and C1 control characters and DEL: never in a name.
_CONTROL = r"\x00-\x1f\x7f-\x9f"
#: The control characters prose may not hold: all but the tab and the line breaks.
_PROSE_CONTROL = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
#: Blanks besides the tab and line breaks: the space, the no-break and typographic spaces,
#: the line and paragraph separators, the ideographic space and the zero-width no-break space.
_SPACES = r" \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
#: The blanks of prose: those and the tab and line breaks.
_PROSE_BLANKS = r"\t\n\r" + _SPACES

#: A name: any characters but the control characters, not blanks alone (R-X-SRV-1).
LINE_PATTERN = rf"^[{_SPACES}]*[^{_SPACES}{_CONTROL}][^{_CONTROL}]*$"
#: A name a command refers to (an ability, a Drive): blanks alone allowed, as a name stored
#: before R-X-SRV-1 may be.
REFERENCE_PATTERN = rf"^[^{_CONTROL}]*$"
#: Prose: as a name, but tabs and line breaks are allowed; empty (none) or not blanks alone.
PROSE_PATTERN = rf"^(?:[{_PROSE_BLANKS}]*[^{_PROSE_BLANKS}{_PROSE_CONTROL}][^{_PROSE_CONTROL}]*)?$"


#: What each pattern asks for, in words: msgspec's refusal quotes the pattern itself.
_IN_WORDS = {
    LINE_PATTERN: "a name: not blanks alone (R-X-SRV-1), and no control character (a tab, a "
                  "line break)",
    REFERENCE_PATTERN: "a name: no control character (a tab, a line break)",
    PROSE_PATTERN: "text: not blanks alone (R-X-SRV-1), and no control character but tabs and "
                   "line breaks",
}


def in_words(message: str) -> str:
    """msgspec's refusal ``message`` with the pattern it quotes (``Expected `str` matching
    regex '^[ \\xa0…'``) said in words, for the 400's detail and the console."""
    for pattern, words in _IN_WORDS.items():
        message = message.replace(f"`str` matching regex {pattern!r}", words)
    return message


def line(min_length: int, max_length: int, pattern: str = LINE_PATTERN) -> msgspec.Meta:
    """``msgspec.Meta`` of a name of ``min_length``..``max_length`` characters."""
    return msgspec.Meta(min_length=min_length or None, max_length=max_length, pattern=pattern)


#: The most characters a name (of a campaign, seat, character, fork…) may have.
NAME_LENGTH = 80
#: A name, wherever one is given: the commands, the API's bodies, the command line.
Name = Annotated[str, line(1, NAME_LENGTH)]
#: A name a command refers to, of something named before (a character's ability or Drive).
NameRef = Annotated[str, line(1, NAME_LENGTH, REFERENCE_PATTERN)]


def prose(min_length: int, max_length: int) -> msgspec.Meta:
    """``msgspec.Meta`` of prose of ``min_length``..``max_length`` characters (a minimum of 0
    is left unsaid: the schema would not show it)."""
    return msgspec.Meta(min_length=min_length or None, max_length=max_length,
                        pattern=PROSE_PATTERN)


#: The most characters a command's narration may have.
NARRATION_LENGTH = 2000
#: What is said at the table with a command, kept in the log: empty is none (R-X-SRV-1).
Narration = Annotated[str, prose(0, NARRATION_LENGTH)]


#: The largest integer a field that the stores compare or keep in a column may take: both
#: stores hold 64-bit signed integers (SQLite raised OverflowError above it, a 500).
MAX_INT = 2**62
#: A number of the game (a rating, a count) that the rules check: any 32-bit integer is
#: malformed-free, the rules refuse what is out of range with their rule id.
Small = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31)]

__all__ = ["LINE_PATTERN", "MAX_INT", "NAME_LENGTH", "NARRATION_LENGTH",
           "PROSE_PATTERN", "REFERENCE_PATTERN", "Name",
           "NameRef", "Narration", "Small", "in_words", "line",
           "prose"]
