"""Which log the read models were built from: the event each applied last, by its identity.

A read model's position is a notification id, which means nothing without the log it was
counted in: a backup restored beside the read models of the later log, once the restored store
has taken as many events again, or the read models of another store altogether, have positions
the store has, naming other events. So with its position each read model records a *mark* of
the event it applied there (``capes_read_model_lineage``, one row per read model, written in
the transaction that moves its tracking: :mod:`projections.views`): the event's campaign,
version and hash chain (:mod:`application.chain`, R-FAIR-6), which binds it to every earlier
event of its campaign. Whoever runs the read models compares the mark, on opening them, with
the store's event at that position (:func:`astray`) and rebuilds from the log each one it does
not match (:meth:`projections.service.ReadModels.upgrade`).

The mark costs the write path nothing but one row per read model per batch: the runner has the
event it applied last decoded already (:func:`mark_of`), and never reads the store for it. The
one look at the store is at opening.

No read model's layout changes: the marks' table is new and created where missing (read
models written before it have no mark: see :func:`astray`), so nothing is rebuilt on upgrading.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from .views import LINEAGE_TABLE as TABLE
from .views import READ_LINEAGE, RECORD_LINEAGE

if TYPE_CHECKING:
    from application.campaigns import Campaigns
    from application.records import Recorded

    from .views import Op, View

__all__ = ["ANOTHER_LOG", "MATCHES", "TABLE", "UNKNOWN", "Mark", "astray", "in_store", "mark_of",
           "mark_of_notification", "record", "recorded", "standing"]

#: What :func:`standing` says of a read model's log.
MATCHES, UNKNOWN, ANOTHER_LOG = "matches", "unknown", "another log"


class Mark(msgspec.Struct, frozen=True):
    """The event at ``position`` in the store: its campaign, version and chain ("" for an
    event whose envelope cannot be decoded: then the campaign and version say what they can)."""

    position: int
    campaign_id: str
    version: int
    chain: str


def mark_of(position: int, record: Recorded[Any]) -> Mark:
    """The mark of ``record``, decoded from the notification ``position``."""
    return Mark(position, str(record.originator_id), record.originator_version, record.chain)


def mark_of_notification(app: Campaigns, notification: Any) -> Mark:
    """The mark of a stored notification, decoded here: what :func:`mark_of` gives for one
    that decodes, and its campaign and version alone for one that does not (the runner left
    its campaign out: the same mark at both ends)."""
    try:
        decoded: Any = app.mapper.to_domain_event(notification)
        return mark_of(notification.id, decoded)
    except Exception:
        return Mark(notification.id, str(notification.originator_id),
                    notification.originator_version, "")


def record(name: str, mark: Mark) -> Op:
    """The statement that records ``mark`` as read model ``name``'s, run with its tracking."""
    return (RECORD_LINEAGE, [(name, *msgspec.structs.astuple(mark))])


def recorded(view: View) -> Mark | None:
    """The mark read model ``view`` recorded last (None: none, as before marks were kept, or
    reset since)."""
    found = view.read(READ_LINEAGE, (view.name,))
    if not found:
        return None
    position, campaign_id, version, chain = found[0]
    return Mark(int(position), str(campaign_id), int(version), str(chain))


def in_store(app: Campaigns, position: int) -> Mark | None:
    """The mark of the store's event at ``position`` (None: the store has none there)."""
    found: Sequence[Any] = app.recorder.select_notifications(position, 1, stop=position)
    if not found or found[0].id != position:
        return None
    return mark_of_notification(app, found[0])


def astray(app: Campaigns, view: View, position: int, head: int) -> str | None:
    """Why read model ``view``, at ``position`` (its tracking, read before ``head``, the
    store's last event), was built from another log than the store's; None if nothing says so.

    With a mark: the store's event at the mark's position must be the one marked (the mark is
    written with the tracking, so is at ``position`` unless another writer moved the tracking
    since; either way it names an event the read model applied). Without one (read models
    written before marks were kept: unknown), what can be checked without it: a position at
    most the store's head, naming an event the store has (every position ever tracked was an
    event's). Such read models are kept, as before marks, and are marked by their next write;
    not rebuilt on the chance, which would cost every host a rebuild on upgrading."""
    if position > head:
        return (f"it is at position {position}, past the store's last event, {head}: the store "
                "was restored from a backup or replaced")
    known = recorded(view)
    for at in sorted({position, known.position if known else 0} - {0}):
        found = in_store(app, at)
        if found is None:
            return (f"it was built from another log: the store has no event at its position "
                    f"{at}; the store was restored from a backup or replaced")
        if known is not None and at == known.position and found != known:
            return (f"it was built from another log: its event at position {at} is not the "
                    "store's event there; the store was restored from a backup or replaced")
    return None


def standing(app: Campaigns, view: View, position: int, head: int) -> tuple[str, str | None]:
    """Whether read model ``view`` (as :func:`astray` takes it) was built from the store's
    log, for people (``capes projections status``): :data:`ANOTHER_LOG` with :func:`astray`'s
    why (rebuilt by whoever opens them next to run them), else :data:`MATCHES` when its mark
    is the store's event, or :data:`UNKNOWN` when it has none yet (written before marks were
    kept, or nothing applied yet)."""
    why = astray(app, view, position, head)
    if why is not None:
        return ANOTHER_LOG, why
    return (UNKNOWN if recorded(view) is None else MATCHES), None
