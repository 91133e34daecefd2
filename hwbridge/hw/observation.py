"""What a hw platform observes for a case, item by item, and what a recorded state lacks of it.

The hw collector reads the same things for every case (Dest, the counters the debug bus shows, the GPRs)
plus the case's observed L1 regions and the Config registers it observes that the platform can read
(hw_readback.decode). A recording of an ``ok`` run must hold every one of them: a recording that lacks any
would let a comparison "match" on what is left, so the replay backend rejects it as corrupt.
"""
from __future__ import annotations

from functools import cache

import numpy as np

from golden.state import DEST_ROWS, GPRS, THREADS
from tensix_diff.case import Case

from .platform import Platform, load
from .collect import config_reads


@cache
def _counter_skeleton(name: str) -> tuple[dict, dict]:
    """The rwc and adc dicts the platform's debug-bus decode produces, with every value None."""
    plat = load(name)
    return tuple(_keys_only(d) for d in plat.decode_counters([0] * len(plat.dbus_reads())))


def _keys_only(d):
    return {k: _keys_only(v) for k, v in d.items()} if isinstance(d, dict) else None


def required(case: Case, plat: Platform) -> dict:
    """A skeleton of the state the platform's read-back produces for ``case`` (values are sizes or None)."""
    rwc, adc = _counter_skeleton(plat.name)
    reads, _ = config_reads(case, plat)
    return {
        "dest": DEST_ROWS,
        "rwc": rwc,
        "adc": adc,
        "gpr": {str(t): GPRS for t in range(THREADS)},
        "l1": {f"{a:#x}": n for a, n in case.observed_l1()},
        "config": {str(s): {str(i): None for i in idx} for s, idx in reads.items()},
    }


def missing(case: Case, state: dict, plat: Platform) -> list[str]:
    """Items the platform observes for ``case`` that ``state`` does not hold (or holds at the wrong size)."""
    out: list[str] = []
    _walk(required(case, plat), state, "", out)
    return out


def _walk(need, have, path: str, out: list[str]) -> None:
    if isinstance(need, dict):
        if not isinstance(have, dict):
            out.append(path or "state")
            return
        for k, sub in need.items():
            where = f"{path}.{k}" if path else k
            if k not in have:
                out.append(where)
            else:
                _walk(sub, have[k], where, out)
    elif isinstance(need, int) and not isinstance(need, bool):
        size = len(have) // 2 if isinstance(have, str) else len(have) if isinstance(have, (list, np.ndarray)) else None
        if size != need:
            out.append(f"{path} (size {size}, not {need})")


def check_recorded(case: Case, state: dict | None, provenance: dict) -> list[str]:
    """What is wrong with a recorded ok state for ``case``: [] when it holds everything its platform
    observes. A recording that does not name a known platform cannot be checked and is reported so."""
    name = provenance.get("platform")
    try:
        plat = load(str(name))
    except (ValueError, OSError):
        return [f"provenance names no known platform ({name!r}), so what it must hold is unknown"]
    if state is None:
        return ["no state"]
    lacks = missing(case, state, plat)
    return [f"lacks {', '.join(lacks[:6])}{' ...' if len(lacks) > 6 else ''} that platform {plat.name} observes"] \
        if lacks else []
