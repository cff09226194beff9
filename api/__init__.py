"""The HTTP API of the Capes table server (Litestar).

- :mod:`api.app` — the app factory (the composition root of the server);
- :mod:`api.services` — what handlers share: the services, authentication, running a command;
- :mod:`api.routes` — one module per group of routes (lobby, play, queries, record, read
  models, audit);
- :mod:`api.schemas` — request and response bodies; :mod:`api.problems` — problem details.

It sits on top of the application layer (:mod:`application`) and the read models
(:mod:`projections`), and knows nothing of eventsourcing.
"""
