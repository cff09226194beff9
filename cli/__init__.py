"""The ``capes`` command line: one module per group of subcommands.

- :mod:`cli.main` — the entry point, ``capes serve`` and ``capes demo``;
- :mod:`cli.record` — ``log``, ``state``, ``diff``, ``fork``, ``undo``, ``dispute``, ``vote``,
  ``settle``;
- :mod:`cli.projections` — ``projections run|rebuild|status``, ``campaigns``, ``analytics``;
- :mod:`cli.audit` — ``verify``, ``export``, ``import``;
- :mod:`cli.demo` (the scripted scene) and :mod:`cli.render` (boards and ledgers as text).
"""

import os
import sys

#: Exit status of a command stopped by Ctrl-C (SIGINT), as a shell reports it.
INTERRUPTED = 130
#: Exit status of a command whose reader stopped reading (``| head``), as if ended by SIGPIPE.
READER_GONE = 141


def main() -> int:
    """The ``capes`` command (and ``python -m cli``): :func:`cli.main.main`, loaded here.

    Loading every command takes a second, several on a busy machine, and a Ctrl-C in that time
    printed the traceback of whichever import it stopped (``capes serve``'s read models'
    process, started as ``python -m cli``, too). Now a Ctrl-C at any moment of a command ends
    it quietly, with the shell's status for it. So does output whose reader stopped reading
    (``capes log CAMPAIGN | head``), which was a BrokenPipeError's traceback."""
    try:
        from cli.main import main as run

        return run()
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:
        # What is left in the buffer would fail again when Python flushes it at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return READER_GONE
