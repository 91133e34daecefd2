"""The hw backend's options, the same on every command: which device, which cores, how cases are isolated."""
from __future__ import annotations

import argparse

from hwbridge.hw.cores import PlacementError, parse_cores

ISOLATIONS = ("card", "replace")
CORE_HELP = ("Tensix core(s) in NOC0 coordinates: X,Y, a list 'X,Y;X,Y' or 'all' (every Tensix core the device"
             " lists; harvested ones are not); default: the first")


def core_arg(text: str):
    """argparse type of --core: one line and exit 2 for a value that is not a core, a list or 'all'."""
    try:
        return parse_cores(text)
    except PlacementError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def jobs_arg(text: str) -> int:
    """argparse type of --jobs: a whole number of at least 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"--jobs takes a whole number of at least 1, not {text!r}")
    return n


def device_id_arg(text: str) -> int:
    """argparse type of --device-id: a device number (0, 1, ...)."""
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"--device-id takes a device number (0, 1, ...), not {text!r}")
    return int(text)


def add_hw_arguments(p, jobs: bool = False) -> None:
    """``--simulator``, ``--simulator-version``, ``--isolation``, ``--device-id`` and ``--core`` on parser ``p``;
    with ``jobs``, also ``--jobs`` (cases side by side, one per core of the device)."""
    g = p.add_argument_group("hw backend (a Blackhole card, or ttsim with --simulator)")
    g.add_argument("--simulator", metavar="PATH", help="run on this libttsim.so instead of a card")
    g.add_argument("--simulator-version", metavar="V", help="ttsim release to label results with"
                   " (default: $TENSIX_DIFF_SIMULATOR_VERSION or a version file beside the .so)")
    g.add_argument("--isolation", choices=ISOLATIONS, help="how a case is kept from the next one's: card (targeted"
                   " clean-ups, the device is never replaced; the default on a card) or replace (a fresh"
                   " simulator after a case that leaves state; the default on ttsim)")
    g.add_argument("--device-id", type=device_id_arg, metavar="N",
                   help="which device tt-exalens opens (default: the lowest)")
    g.add_argument("--core", type=core_arg, metavar="X,Y", help=CORE_HELP)
    if jobs:
        g.add_argument("--jobs", type=jobs_arg, metavar="N", help="cases side by side on N cores of the one device"
                       " (taken from --core; default: as many as --core lists, else 1)")


def hw_opts(args) -> dict:
    """The keyword options for HwBackend that the user gave (absent ones are left to its defaults)."""
    names = ("simulator", "simulator_version", "isolation", "device_id", "core", "jobs")
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}
