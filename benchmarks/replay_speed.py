"""Replay speed: median time to replay one 64-instruction case (the whole suite: benchmarks/suite_time.py).

"Replay" = run the case on golden and compare golden's state with the case's recording (the target is at most
1 ms median). Also printed: the same with the recording read from disk, and the parts on their own. The
recording here is synthetic (golden's own state, filed under a made-up device name in a scratch store):
it measures the machinery, it is evidence of nothing.

    python benchmarks/replay_speed.py [--runs N]
"""
from __future__ import annotations

import argparse
import copy
import statistics
import sys
import tempfile
import time
from pathlib import Path

from golden import isa
from tensix_diff.result import Result
from hwbridge.golden_backend import GoldenBackend
from hwbridge.replay import ReplayBackend
from tensix_diff.case import Case, Init, validate_shape
from tensix_diff.compare import compare
from tensix_diff.store import Recording, Store

BODY = [
    "SETRWC bitmask=15 rwc_a={i3} rwc_b=1 rwc_d={i}",
    "INCRWC rwc_a=1 rwc_b=2 rwc_d=3",
    "SETADCXY bitmask=15 ch0_x={i3} ch0_y=1 ch1_x=2 ch1_y={i3}",
    "INCADCXY ch0_x=1 ch0_y=1 ch1_x=1 ch1_y=1",
    "SETDMAREG regindex16b={r} payload_sigsel={i}",
    "ADDDMAREG resultregindex={r} opbregindex={r} oparegindex={r}",
    "ADDRCRXY bitmask=15 ch0_x=1 ch0_y=2",
    "INCRWC rwc_cr=1 rwc_d=1",
]


def case_64() -> Case:
    """64 instructions over two threads: RWC, ADC and scalar-unit work, plus Dest and L1 initial state."""
    words: dict[int, list[int]] = {0: [], 1: []}
    for i in range(64):
        text = BODY[i % len(BODY)].format(i=i % 16, i3=i % 8, r=2 * (i % 8))
        words[i % 2].append(isa.assemble_line(text))
    dest = [(r, [(r * 31 + c) & 0xFFFF for c in range(16)]) for r in range(0, 64, 4)]
    case = Case("bench-64", "replay benchmark", words, Init(gpr={0: {1: 5}, 1: {2: 7}}, dest=dest,
                                                             l1=[(0x20000, bytes(range(256)))]))
    validate_shape(case)
    return case


def median_us(fn, runs: int) -> float:
    fn()  # warm caches (decode cache, imports)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    args = ap.parse_args()

    case = case_64()
    golden = GoldenBackend()
    g = golden.run(case)
    if not g.ok:
        print(f"golden cannot run the benchmark case: {g.status}: {g.message}")
        return 1
    with tempfile.TemporaryDirectory() as d:
        store = Store(d)
        path = store.put(Recording.from_result(case, Result("ok", copy.deepcopy(g.state), provenance={
            "device": "benchmark-synthetic", "platform": "ttsim", "exalens": None, "umd": None,
            "core": None})))
        replay = ReplayBackend(store=store)
        recorded = replay.run(case).state

        def golden_and_compare():
            assert compare(golden.run(case).state, recorded).matched

        def full_replay():
            assert compare(golden.run(case).state, replay.run(case).state).matched

        r = args.runs
        main_us = median_us(golden_and_compare, r)
        print(f"case: {case.instruction_count} instructions, recording {path.stat().st_size} bytes")
        print(f"replay one case (golden run + compare with its recording): median {main_us:7.1f} us"
              f"  [target <= 1000 us: {'met' if main_us <= 1000 else 'NOT met'}]")
        print(f"  with the recording read from disk each time:           median {median_us(full_replay, r):7.1f} us")
        print(f"  golden run alone (incl. observing the state):           median {median_us(lambda: golden.run(case), r):7.1f} us")
        print(f"  compare alone:                                          median "
              f"{median_us(lambda: compare(g.state, recorded), r):7.1f} us")
        print(f"  read + check one recording from disk:                   median "
              f"{median_us(lambda: replay.run(case), r):7.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
