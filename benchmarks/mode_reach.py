"""How many corpus cases reach each of golden's mode branches that the issue-28 gap profiles were written for:
Int8 MVMUL, GMPOOL into a 32-bit Dest, ELWADD/ELWSUB with the adder unflushed, ZEROACC's 32-bit 16-row mode,
SFPLOAD/SFPSTORE resolving the default format to FP16A, SFPSWAP under ENABLE_DEST_INDEX, the packer's YsrcCR step
and a block-float packer input. A golden change inside a branch no case reaches passes every recorded case.
Golden runs each case once with counting wrappers around the functions that select the branch.

    python benchmarks/mode_reach.py [PATHS...]     # default: tests/corpus and tests/fuzz_corpus
"""
from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

import golden.matrix.dest as dest
import golden.matrix.fpu as mx
import golden.pack.addr as pa
import golden.pack_formats as pf
import golden.sfpu.mem as sm
from golden import fpu_formats as ff
from golden.handlers import HANDLERS, load_all
from tensix_diff.case import load_each
from tensix_diff.golden_run import run_golden

ROOT = Path(__file__).resolve().parents[1]
BRANCHES = ("int8-mvmul", "gmpool-dst32", "elw-unflushed", "zeroacc-32b-16rows", "sfpload-default-fp16a",
            "sfpswap-dest-index", "pack-ysrc-cr", "pack-bfp-input")


class Reach:
    """Cases reaching each branch: wrappers installed by ``install`` call ``hit`` while ``case`` runs."""

    def __init__(self):
        self.case, self.cases = "", {b: set() for b in BRANCHES}

    def hit(self, branch: str) -> None:
        self.cases[branch].add(self.case)

    def install(self) -> None:
        load_all()
        resolve, sixteen, default = mx.resolve, dest._sixteen_rows, sm._resolve_default
        swap, advance_y, to_l1 = HANDLERS["SFPSWAP"], pa._advance_y, pf.dst_to_l1

        def resolve_(m, t, name, *a, **k):
            s = resolve(m, t, name, *a, **k)
            if name == "MVMUL" and s.style == ff.STYLE_INT8:
                self.hit("int8-mvmul")
            if name == "GMPOOL" and s.dst32:
                self.hit("gmpool-dst32")
            if name in ("ELWADD", "ELWSUB") and not s.flush_b:
                self.hit("elw-unflushed")
            return s

        def sixteen_(m, t, where, use32, revert):
            if use32:
                self.hit("zeroacc-32b-16rows")
            return sixteen(m, t, where, use32, revert)

        def default_(m, t):
            mode = default(m, t)
            if mode == sm.FP16A:
                self.hit("sfpload-default-fp16a")
            return mode

        def swap_(m, t, f):
            if m.s.sfpu.lane_config & 4:
                self.hit("sfpswap-dest-index")
            return swap(m, t, f)

        def advance_y_(ch, incr, cr, clear):
            if cr and not clear:
                self.hit("pack-ysrc-cr")
            return advance_y(ch, incr, cr, clear)

        def to_l1_(read32, in_fmt, *a, **k):
            if in_fmt in (ff.BFP8, ff.BFP8A):
                self.hit("pack-bfp-input")
            return to_l1(read32, in_fmt, *a, **k)
        mx.resolve, dest._sixteen_rows, sm._resolve_default = resolve_, sixteen_, default_
        HANDLERS["SFPSWAP"], pa._advance_y, pf.dst_to_l1 = swap_, advance_y_, to_l1_


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", default=[ROOT / "tests" / "corpus", ROOT / "tests" / "fuzz_corpus"])
    args = ap.parse_args()
    reach = Reach()
    reach.install()
    t0, ran = time.process_time(), Counter()
    cases, _ = load_each(args.paths)
    for case in cases:
        reach.case = case.name
        ran[run_golden(case).ok] += 1
    print(f"{len(cases)} cases, golden ran {ran[True]}; {time.process_time() - t0:.0f} CPU s")
    for b in BRANCHES:
        names = sorted(reach.cases[b])
        print(f"{b}: {len(names)} cases" + (f" (e.g. {', '.join(names[:3])})" if names else ""))


if __name__ == "__main__":
    main()
