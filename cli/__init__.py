"""The ``capes`` command line: one module per group of subcommands.

- :mod:`cli.main` — the entry point, ``capes serve`` and ``capes demo``;
- :mod:`cli.record` — ``log``, ``state``, ``diff``, ``fork``, ``undo``, ``dispute``, ``vote``,
  ``settle``;
- :mod:`cli.projections` — ``projections run|rebuild|status``, ``campaigns``, ``analytics``;
- :mod:`cli.audit` — ``verify``, ``export``, ``import``;
- :mod:`cli.demo` (the scripted scene) and :mod:`cli.render` (boards and ledgers as text).
"""

#: Exit status of a command stopped by Ctrl-C (SIGINT), as a shell reports it.
INTERRUPTED = 130


def main() -> int:
    """The ``capes`` command (and ``python -m cli``): :func:`cli.main.main`, loaded here.

    Loading every command takes a second, several on a busy machine, and a Ctrl-C in that time
    printed the traceback of whichever import it stopped (``capes serve``'s read models'
    process, started as ``python -m cli``, too). Now a Ctrl-C at any moment of a command ends
    it quietly, with the shell's status for it."""
    try:
        from cli.main import main as run

        return run()
    except KeyboardInterrupt:
        return INTERRUPTED
