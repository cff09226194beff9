"""The registry of editions by name."""

from __future__ import annotations

from .capees import EDITION as CAPEES
from .capes import EDITION as CAPES
from .edition import Edition

EDITIONS: dict[str, Edition] = {CAPES.name: CAPES, CAPEES.name: CAPEES}


def get_edition(name: str) -> Edition:
    """The edition called ``name``; KeyError names the known ones."""
    try:
        return EDITIONS[name]
    except KeyError:
        raise KeyError(f"unknown edition {name!r}; known: {', '.join(EDITIONS)}") from None
