"""The collector's L1 results block -> the contract's state dump (only what the device shows)."""
from __future__ import annotations

import numpy as np

from golden.state import COLS, DEST_ROWS, GPRS, THREADS

from . import hw_map as M
from .hw_platform import Platform
from .hw_program import Job


def _words(block: bytes, addr: int, count: int) -> np.ndarray:
    off = addr - M.RESULTS
    return np.frombuffer(block, dtype="<u4", count=count, offset=off)


def decode(job: Job, blobs: list[bytes], plat: Platform) -> dict:
    """``blobs`` are the job's reads in order: the results block, then each observed L1 region."""
    block = blobs[0]
    dest_words = _words(block, M.DEST_DUMP, DEST_ROWS * COLS // 2).reshape(COLS // 2, DEST_ROWS).T   # sel-major
    dest = np.empty((DEST_ROWS, COLS), dtype=np.uint16)
    dest[:, 0::2] = dest_words & 0xFFFF
    dest[:, 1::2] = dest_words >> 16
    gprs = _words(block, M.GPR_DUMP, THREADS * GPRS).reshape(THREADS, GPRS)
    dbus = [int(w) for w in _words(block, M.DBUS_DUMP, len(plat.dbus_reads()))]
    rwc, adc = plat.decode_counters(dbus)
    config: dict[str, dict[str, int]] = {}
    k = 0
    for st in sorted(job.cfg_reads):
        for idx in job.cfg_reads[st]:
            config.setdefault(str(st), {})[str(idx)] = int(_words(block, M.CFG_DUMP + 4 * k, 1)[0])
            k += 1
    return {
        "dest": dest.tolist(),
        "rwc": rwc,
        "adc": adc,
        "gpr": {str(t): row for t, row in enumerate(gprs.tolist())},
        "l1": {f"{a:#x}": blob.hex() for (a, _), blob in zip(job.l1_regions, blobs[1:])},
        "config": config,
    }
