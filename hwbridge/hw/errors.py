"""The hw backend's own failure kinds that are the user's to fix, not the device's."""
from __future__ import annotations


class OptionError(ValueError):
    """An hw option the user gave that cannot be used (a usage error, exit 2), in one line naming their value."""
