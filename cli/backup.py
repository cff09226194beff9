"""``capes backup FILE``: a consistent copy of the SQLite store while the server runs."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from application.backup import BackupError, backup_sqlite
from application.config import persistence_env


def _backup(args: argparse.Namespace) -> int:
    env = persistence_env(os.environ)
    if env.get("PERSISTENCE_MODULE") != "eventsourcing.sqlite":
        print("capes backup copies an SQLite store (CAPES_DB); for PostgreSQL use pg_dump "
              "(every table of the store's database, or of its schema)", file=sys.stderr)
        return 2
    try:
        size = backup_sqlite(env["SQLITE_DBNAME"], args.file)
    except BackupError as e:
        print(f"capes backup: {e}", file=sys.stderr)
        return 1
    print(f"backed up {env['SQLITE_DBNAME']} to {args.file} ({size:,} bytes); check it with "
          f"CAPES_DB={args.file} capes verify")
    return 0


def register(commands: Any) -> None:
    """Add ``backup`` to ``capes``."""
    backup = commands.add_parser(
        "backup", help="copy the SQLite store to a new file, safe while the server runs",
        description="Copy the SQLite store (CAPES_DB: campaigns, tokens, dice seeds) to FILE "
        "as one consistent snapshot, while the server runs or not. FILE must not exist.")
    backup.add_argument("file", type=Path, help="the new file")
    backup.set_defaults(run=_backup)
