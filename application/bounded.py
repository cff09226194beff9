"""The base of the project's eventsourcing applications (the campaigns, their keys, the dice
seeds): the library's, but that its store waits for PostgreSQL a bounded time
(:func:`application.config.bounded`). The read models, which build their store without an
application, pass it through the same function (``projections.views``)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.utils import Environment

from .config import bounded


class BoundedApplication(Application[UUID]):
    """An eventsourcing application whose store's waits for PostgreSQL are bounded."""

    def construct_factory(self, env: Environment) -> Any:
        """The library's store, its waits for PostgreSQL bounded (``config.bounded``)."""
        return bounded(super().construct_factory(env))
