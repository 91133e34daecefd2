"""Opening a backend for a command: one-line failures with the contract's exit codes (hwbridge.registry holds
the backends)."""
from __future__ import annotations

from hwbridge.registry import BackendUnavailable, get_backend

from .exits import EXIT_DEVICE, EXIT_USAGE, BackendFailure


def open_backend(name: str, *, recordings=None, hw: dict | None = None, device: str | None = None):
    """get_backend for a command: unknown or unavailable backend -> exit 2, a device that cannot start -> 3.
    ``hw``: HwBackend's options (tensix_cli.hw_options.hw_opts), used when ``name`` is hw."""
    try:
        return get_backend(name, recordings=recordings, **((hw or {}) if name == "hw" else {}),
                           **({"device": device} if name == "replay" else {}))
    except BackendUnavailable as e:
        raise BackendFailure(EXIT_USAGE, str(e)) from None
    except Exception as e:  # the device or simulator could not be brought up
        raise BackendFailure(EXIT_DEVICE, f"{name} backend failed to start: {type(e).__name__}: {e}") from None
