"""The ``capes`` command line: one module per group of subcommands.

- :mod:`cli.main` — the entry point, ``capes serve`` and ``capes demo``;
- :mod:`cli.record` — ``log``, ``state``, ``diff``, ``fork``, ``undo``, ``dispute``, ``vote``,
  ``settle``;
- :mod:`cli.projections` — ``projections run|rebuild|status``, ``campaigns``, ``analytics``;
- :mod:`cli.audit` — ``verify``, ``export``, ``import``;
- :mod:`cli.demo` (the scripted scene) and :mod:`cli.render` (boards and ledgers as text).
"""
