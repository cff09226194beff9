"""Optional parts of the install: Parquet (``pyarrow``, the ``parquet`` extra) and the PNG
charts (``matplotlib``, the ``charts`` extra). Together they weigh more than the rest of the
server, so a host installs them only to use them; asked for without them, the server and the
console say which extra to install."""

from __future__ import annotations

#: The distribution's name, as pip knows it.
DISTRIBUTION = "capes-table-server"


class MissingExtra(ImportError):
    """A feature whose optional dependencies are not installed: names the extra to install."""

    def __init__(self, extra: str, feature: str) -> None:
        super().__init__(f"{feature} need the {extra} extra: pip install "
                         f"'{DISTRIBUTION}[{extra}]' (from a clone: pip install -e '.[{extra}]')")
        self.extra = extra
        self.feature = feature
