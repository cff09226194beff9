"""The rules engine of the Capes table server: pure, no I/O, no clock, no randomness.

An *edition* is one rule set (``capes`` is the released game). Each edition is a Decider:
``decide(state, command) -> events`` (raises a :class:`~domain.errors.DomainError` or returns
events) and ``evolve(state, event) -> state`` (folds, never checks). Editions live side by side
in :data:`domain.editions.EDITIONS`; a campaign records the one it was created with.
"""
