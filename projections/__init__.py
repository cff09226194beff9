"""The read side: read models that follow the Campaigns notification log.

One module per read model — :mod:`~projections.board`, :mod:`~projections.ledgers`,
:mod:`~projections.timeline`, :mod:`~projections.directory`, :mod:`~projections.analytics` —
each an eventsourcing ``Projection`` whose view (:mod:`~projections.views`) writes its tables
and its tracking position in one transaction, on SQLite and PostgreSQL. :mod:`~projections.model`
holds the shared fold of the campaigns, :mod:`~projections.runner` catches the read models up,
:mod:`~projections.service` opens them for a server or the CLI, :mod:`~projections.charts` draws
the analytics.
"""
