"""The application layer: the event-sourced campaigns, their store and their audit.

- :mod:`application.campaigns` — ``Campaigns``, the eventsourcing application: it stores each
  campaign as a stream of :class:`~application.records.Recorded` envelopes (encoded with msgspec
  by :mod:`application.mapper`) in the store chosen by :mod:`application.config`, and decides
  commands with the campaign's edition of the rules (:mod:`domain`).
- :mod:`application.aggregate` (a campaign as folded from its events), :mod:`application.records`
  (what the store holds), :mod:`application.sqlite_store`, :mod:`application.errors`.
- :mod:`application.committer` — the writer thread: every write of a server process, in group
  commits.
- :mod:`application.dice`, :mod:`application.fair` (provably fair dice and their secret seeds),
  :mod:`application.chain` (the hash chain), :mod:`application.audit` (``verify``),
  :mod:`application.transfer` (export and import), :mod:`application.credentials` (tokens).

Neither the HTTP API (:mod:`api`) nor the command line (:mod:`cli`) owns it: both sit on top of
it, and it imports neither of them, nor the read models (:mod:`projections`).
"""
