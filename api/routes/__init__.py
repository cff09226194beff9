"""HTTP routes by concern: each module has ``HANDLERS``, registered by the app."""
