"""The HTTP routes, one module per group; each has ``HANDLERS``, registered by :mod:`api.app`."""
