"""Backends by name: golden (the model), replay (the recordings), hw (a card or ttsim via tt-exalens)."""
from __future__ import annotations

from pathlib import Path

BACKENDS = ("golden", "replay", "hw")


class BackendUnavailable(RuntimeError):
    """The named backend cannot be set up here (unknown name, hw module or device missing): one line."""


def get_backend(name: str, *, store=None, recordings: str | Path | None = None, simulator: str | None = None,
                **opts):
    """A backend object with ``.name`` and ``.run(case) -> Result``.

    replay: ``store`` (a Store or a directory) or ``recordings`` (a directory); default the project's store.
    hw: ``simulator`` (path of a libttsim.so) or a card; further keyword options go to HwBackend.
    """
    if name == "golden":
        from hwbridge.golden_backend import GoldenBackend
        return GoldenBackend()
    if name == "replay":
        from hwbridge.replay import ReplayBackend
        from tensix_diff.store import Store
        if isinstance(store, Store):
            return ReplayBackend(store=store)
        return ReplayBackend(root=store if store is not None else recordings)
    if name == "hw":
        try:
            from hwbridge.hw import HwBackend
        except ModuleNotFoundError as e:
            if e.name == "hwbridge.hw":
                raise BackendUnavailable("hw backend unavailable: hwbridge.hw is not in this tree") from None
            if e.name and (e.name.startswith("tt_") or "exalens" in e.name or "umd" in e.name):
                raise BackendUnavailable(f"hw backend unavailable: cannot import {e.name}"
                                         " (install the .[hw] extra)") from None
            raise
        if simulator is not None:
            opts["simulator"] = simulator
        return HwBackend(**opts)
    raise BackendUnavailable(f"unknown backend '{name}' (choose from {', '.join(BACKENDS)})")
