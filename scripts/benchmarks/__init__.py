"""The benchmarks of the Capes table server: ``scripts/bench`` runs them and writes their
figures to docs/benchmarks.md. One module per family of figures:

- :mod:`benchmarks.http`: the real server and a bare route under ``wrk`` and the paced driver,
  the stub server, the py-spy profile;
- :mod:`benchmarks.inprocess`: ``Campaigns.execute`` and the server's writer without HTTP, a
  cProfile of the command path;
- :mod:`benchmarks.randomplay`: seeded random legal play (the long campaign, the history);
- :mod:`benchmarks.coldload`: cold loads and old versions with and without snapshots, the read
  and decode rate of stored events;
- :mod:`benchmarks.projections`: the rebuild of every read model;
- :mod:`benchmarks.instructions`: the writer's core in instructions a command (callgrind);
- :mod:`benchmarks.report`: docs/benchmarks.md;

with what they share in :mod:`benchmarks.common` (parameters, CPU watch, servers, machine
facts) and :mod:`benchmarks.mix` (the game mix), and the command line in :mod:`benchmarks.run`.

Importing the package puts the repository root on ``sys.path``, so that the modules import
the server's packages (``application``, ``domain``, ``projections``) from the working tree.
"""

import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent.parent
ROOT = SCRIPTS.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
