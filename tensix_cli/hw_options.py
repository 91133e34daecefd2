"""The hw backend's options, the same on every command: which device, which cores, how cases are isolated."""
from __future__ import annotations

ISOLATIONS = ("card", "replace")


def add_hw_arguments(p) -> None:
    """``--simulator``, ``--simulator-version``, ``--isolation``, ``--device-id`` and ``--core`` on parser ``p``."""
    g = p.add_argument_group("hw backend (a Blackhole card, or ttsim with --simulator)")
    g.add_argument("--simulator", metavar="PATH", help="run on this libttsim.so instead of a card")
    g.add_argument("--simulator-version", metavar="V", help="ttsim release to label results with"
                   " (default: $TENSIX_DIFF_SIMULATOR_VERSION or a version file beside the .so)")
    g.add_argument("--isolation", choices=ISOLATIONS, help="how a case is kept from the next one's: card (targeted"
                   " clean-ups, the device is never replaced; the default on a card) or replace (a fresh"
                   " simulator after a case that leaves state; the default on ttsim)")
    g.add_argument("--device-id", type=int, metavar="N", help="which device tt-exalens opens (default: the lowest)")
    g.add_argument("--core", metavar="X,Y", help="Tensix core in NOC0 coordinates (default: the first)")


def hw_opts(args) -> dict:
    """The keyword options for HwBackend that the user gave (absent ones are left to its defaults)."""
    names = ("simulator", "simulator_version", "isolation", "device_id", "core")
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}
