"""hw backend round trips against ttsim: cases per second with isolation, and where the time goes.

    python benchmarks/hw_roundtrip.py --simulator /path/to/libttsim.so [--count 300] [--jobs 1|2] [--profile P]
                                      [--isolation card|replace]

Runs a derandomized fuzz campaign (every case: load, prologue, run, collect, read back, decode; a worker
restart after every simulator refusal, or hang under replace isolation) and prints cases/s, the outcome mix,
simulated cycles per case, restarts, and a per-phase breakdown measured in one worker (build, device writes,
the read-back of those writes before the release, clocking, read-back of the results, decode). Numbers only;
nothing is asserted.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generators.bulk import generate  # noqa: E402
from tensix_diff.case import Case, Init  # noqa: E402
from hwbridge.hw import program as hw_program, readback as hw_readback  # noqa: E402
from hwbridge.hw.backend import HwBackend  # noqa: E402


def throughput(sim: str, cases: list, jobs: int, isolation: str | None = None
               ) -> tuple[float, Counter, list[int], int, list]:
    backends = [HwBackend(sim, isolation=isolation) for _ in range(jobs)]
    for b in backends:                                   # warm: first job, imports
        b.run(cases[0])
    counts: Counter = Counter()
    cycles: list[int] = []
    ok: list = []
    lock = threading.Lock()
    it = iter(cases)

    def serve(b):
        while True:
            with lock:
                case = next(it, None)
            if case is None:
                return
            r = b.run(case)
            with lock:
                counts[r.status] += 1
                if r.ok:
                    cycles.append(r.provenance.get("cycles", 0))
                    ok.append(case)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=serve, args=(b,)) for b in backends]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    restarts = sum(b.worker.restarts for b in backends)
    for b in backends:
        b.close()
    return len(cases) / elapsed, counts, cycles, restarts, ok


def phases(sim: str, cases: list) -> tuple[dict[str, float], float]:
    """Per-phase time (ms per case) in-process on one device (no worker, no isolation), for cases that ran ok:
    a case the simulator refuses would end this process. Build includes the dict the worker is sent.

    The garbage collector runs once before the timed cases: opening the device here imports tt-exalens, and the
    full collection that those new objects bring on would otherwise land in one of the 40 cases (about 23 ms,
    billed as ~0.6 ms a case to decode, where it happened to fall); collections the cases cause stay timed."""
    from hwbridge.hw import l1_map as M
    from hwbridge.hw.device import Device
    from hwbridge.hw.simdir import simulator_path
    from hwbridge.hw.platform import load
    plat = load("ttsim")
    dev = Device(str(simulator_path(sim)))
    acc: Counter = Counter()
    n = verified = 0
    gc.collect()
    for case in cases:
        t0 = time.perf_counter()
        job = hw_program.build(case, plat)
        j = job.payload()
        t1 = time.perf_counter()
        dev.hold()
        for a, size in j["zero"]:
            dev.write(a, dev._zeros(size))
        for a, d in j["writes"]:
            dev.write(a, d)
        for a, v in j["regs"]:
            dev.write32(a, v)
        t2 = time.perf_counter()
        if dev.verify(j) is not None:
            break
        t3 = time.perf_counter()
        dev.write32(M.SOFT_RESET_0, j["release"])
        replies: dict = {}
        dev._wait({0: j}, [0], 10.0, replies.__setitem__)      # clocks, then reads the results once done
        if replies[0][0] != "ok":
            break
        t4 = time.perf_counter()
        blobs = [dev.read(a, s) for a, s in j["reads"]]       # the read again, timed alone (L1 keeps the results)
        t5 = time.perf_counter()
        t4 -= t5 - t4                                         # clock: the wait less its read
        hw_readback.decode(job, blobs, plat)
        t6 = time.perf_counter()
        for k, v in zip(("build", "write", "verify", "clock", "read", "decode"),
                        (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5)):
            acc[k] += v
        verified += sum(len(d) for _, d in j["writes"]) + 4 * len(j["regs"])
        n += 1
        if n >= 40:
            break
    return {k: 1e3 * v / max(n, 1) for k, v in acc.items()}, verified / max(n, 1) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulator", default=os.environ.get("TENSIX_DIFF_SIMULATOR"), required=False)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=4242)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--jobs", type=int, default=0, help="workers side by side (default: 1 and 2)")
    ap.add_argument("--isolation", choices=("card", "replace"), default=None,
                    help="card: golden's leftover analysis and clean-up jobs, never a new simulator (default: replace)")
    ap.add_argument("--fault-every", type=int, default=10, help="also measure with every Nth case one the"
                    " simulator stops on (worker restart); 0: skip")
    args = ap.parse_args()
    if not args.simulator:
        sys.exit("give --simulator PATH (a Blackhole libttsim.so) or set TENSIX_DIFF_SIMULATOR")
    cases = [c for _, c in generate(args.seed, args.count, args.profile)]
    print(f"{len(cases)} fuzz cases, profile {args.profile}, seed {args.seed}; {os.cpu_count()} CPUs,"
          f" load average {os.getloadavg()[0]:.1f}")
    ok: list = []
    for jobs in ([args.jobs] if args.jobs else [1, 2]):
        cps, counts, cycles, restarts, ok = throughput(args.simulator, cases, jobs, args.isolation)
        print(f"jobs={jobs}: {cps:.1f} cases/s with {args.isolation or 'replace'} isolation; outcomes "
              + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
              + f"; {restarts} worker restarts; median {statistics.median(cycles or [0]):.0f} simulated cycles/case")
    if args.fault_every:
        bad = Case("bench-srnd", "", {0: []}, init=Init(config={0: {1: 0x2}}))   # ttsim exits: stochastic rounding
        mixed = [bad if i % args.fault_every == 0 else c for i, c in enumerate(cases)]
        cps, counts, cycles, restarts, _ = throughput(args.simulator, mixed, 1, args.isolation)
        print(f"jobs=1, every {args.fault_every}th case stops the simulator: {cps:.1f} cases/s; outcomes "
              + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + f"; {restarts} worker restarts")
    ph, kib = phases(args.simulator, ok)
    total = sum(ph.values())
    print("per ok case, one device in-process (ms): " + ", ".join(f"{k} {v:.2f}" for k, v in ph.items())
          + f"; total {total:.2f}; the verify phase reads back {kib:.1f} KiB a case")
    print("dominant: " + max(ph, key=ph.get) + " (the collector's Dest read-back is ~60K of the simulated cycles:"
          " 1024 rows x 8 debug-array reads by TRISC0, 7 instructions each: hwbridge/hw/dbus.py)")


if __name__ == "__main__":
    main()
