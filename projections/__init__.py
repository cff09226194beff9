"""Read models built from the event store (issue 4): board, ledgers, log, analytics."""
