"""Host access to a Tensix core: the raw tt-umd device against tt-exalens's public accessors (a remote chip's route).

    python benchmarks/hw_access.py --simulator /path/to/libttsim.so [--repeat 3]

Times 2000 write32+read32 pairs and 50 round trips of 17 KiB (about one job's writes) through the
tt_umd.TTDevice tt-exalens hands out for a PCIe-attached chip, and through tt-exalens's
UmdDevice.noc_write/noc_read_bytes (hwbridge.hw.device.RemoteChip). Numbers only; nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hwbridge.hw.device import Device, RemoteChip  # noqa: E402
from hwbridge.hw.simdir import simulator_path  # noqa: E402

SCRATCH = 0x100000          # L1 outside the harness area


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulator", default=os.environ.get("TENSIX_DIFF_SIMULATOR"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    dev = Device(str(simulator_path(args.simulator)) if args.simulator else None)
    remote = RemoteChip(dev.ctx.umd_api.get_device(0), dev.ctx)
    blob = bytes(range(256)) * 68
    print(f"load average {os.getloadavg()[0]:.1f}")
    for name, raw, xy in (("raw tt-umd", dev.raw, dev.translated), ("tt-exalens", remote, dev.noc0)):
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            for i in range(2000):
                raw.noc_write32(*xy, SCRATCH + 4 * (i % 64), i)
                raw.noc_read32(*xy, SCRATCH + 4 * (i % 64))
            t1 = time.perf_counter()
            for _ in range(50):
                raw.noc_write(*xy, SCRATCH, blob)
                raw.noc_read(*xy, SCRATCH, len(blob))
            t2 = time.perf_counter()
            print(f"{name}: {1e6 * (t1 - t0) / 2000:.1f} us per write32+read32, "
                  f"{1e3 * (t2 - t1) / 50:.3f} ms per 17 KiB write+read")


if __name__ == "__main__":
    main()
