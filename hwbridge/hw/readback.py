"""The collector's L1 results block -> the contract's state dump (only what the device shows)."""
from __future__ import annotations

import numpy as np

from golden.state import COLS, DEST_ROWS, GPRS, THREADS

from . import l1_map as M
from .platform import Platform
from .program import Job


def _words(block: bytes, addr: int, count: int) -> np.ndarray:
    off = addr - M.RESULTS
    return np.frombuffer(block, dtype="<u4", count=count, offset=off)


def decode(job: Job, blobs: list[bytes], plat: Platform) -> dict:
    """``blobs`` are the job's reads in order: the results block, then each observed L1 region."""
    block = blobs[0]
    dest_words = _words(block, M.DEST_DUMP, DEST_ROWS * COLS // 2).reshape(COLS // 2, DEST_ROWS).T   # sel-major
    # each little-endian word holds columns 2c (low half) and 2c + 1 (high half) of its row
    dest = np.ascontiguousarray(dest_words).view("<u2").astype(np.uint16, copy=False)   # Result's in-process form
    gprs = _words(block, M.GPR_DUMP, THREADS * GPRS).reshape(THREADS, GPRS)
    rwc, adc = plat.decode_counters(_words(block, M.DBUS_DUMP, len(plat.dbus_reads())).tolist())
    reads = [(st, idx) for st in sorted(job.cfg_reads) for idx in job.cfg_reads[st]]
    config: dict[str, dict[str, int]] = {}
    for (st, idx), value in zip(reads, _words(block, M.CFG_DUMP, len(reads)).tolist()):
        config.setdefault(str(st), {})[str(idx)] = value
    return {
        "dest": dest,
        "rwc": rwc,
        "adc": adc,
        "gpr": {str(t): row for t, row in enumerate(gprs.tolist())},
        "l1": {f"{a:#x}": blob.hex() for (a, _), blob in zip(job.l1_regions, blobs[1:])},
        "config": config,
    }
