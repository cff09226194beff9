"""The application layer of the Capes table server: the event store and the command path.

``api.application.Campaigns`` is the composition point: it stores each campaign as a stream of
:class:`~api.records.Recorded` envelopes (encoded with msgspec by :mod:`api.mapper`) in the
store chosen by :mod:`api.config`, and decides commands with the campaign's edition of the rules
(:mod:`domain`). The HTTP app sits on top of it and knows nothing of eventsourcing.
"""
