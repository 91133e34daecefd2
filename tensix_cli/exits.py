"""The commands' exit statuses and one-line failures, defined once (../shared/contract.md, Commands)."""
from __future__ import annotations

EXIT_OK, EXIT_DIVERGED, EXIT_USAGE, EXIT_DEVICE = 0, 1, 2, 3
EXIT_INTERRUPTED = 130      # Ctrl-C, as a shell reports SIGINT


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit 2."""


class BackendFailure(Exception):
    """A command cannot go on: ``code`` is the exit status (2 bad input, 3 device), the message one line."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
