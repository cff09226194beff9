"""``python -m cli``: the ``capes`` command, as ``capes serve`` starts its read models' process
(a Ctrl-C while it loads ends it quietly: :func:`cli.main`)."""

import sys

from cli import main

sys.exit(main())
