"""The peak matmul kernel's 16-MVMUL replay body (rwc-addrmod-adc spec §4.1-4.3) run for four fidelity
phases on golden: the matrix-unit side (which SrcA/SrcB rows land in which Dst rows, and the values)."""
from __future__ import annotations

import numpy as np

from golden import fpu_formats as ff
from golden.isa import encode

from test_golden_matrix import T, addr_mod
from test_golden_matrix_arith import adj32, machine, srca, srcb

BODY_MODES = [0, 1, 0, 2, 0, 1, 0, 4, 0, 1, 0, 2, 0, 1, 0, 5]
# (SrcB first row, SrcA first row, Dst first row) of each MVMUL, from the spec's §4.2 trace table
TRACE = [(0, 0, 0), (8, 0, 8), (0, 16, 16), (8, 16, 24), (32, 0, 32), (40, 0, 40), (32, 16, 48), (40, 16, 56),
         (16, 32, 0), (24, 32, 8), (16, 48, 16), (24, 48, 24), (48, 32, 32), (56, 32, 40), (48, 48, 48),
         (56, 48, 56)]


def kernel_addr_mods(m):
    addr_mod(m, 0, b=8, d=8)
    addr_mod(m, 1, a=16, b_cr=1, d=8)
    addr_mod(m, 2, a_cr=1, b=32, b_cr=1, d=8)
    addr_mod(m, 4, a=32, a_cr=1, b=48, b_cr=1, d_cr=1)
    addr_mod(m, 5, a_clr=1, b_clr=1, d_clr=1, fid=1)


def test_replay_body_over_four_fidelity_phases_gives_the_integer_products():
    m = machine(fp32=True)
    kernel_addr_mods(m)
    rng = np.random.default_rng(7)
    a = rng.integers(8, 16, size=(64, 16))        # one exponent, four significant bits: exact in phase 0,
    b = rng.integers(8, 16, size=(64, 16))        # nothing left for phases 1..3
    to_cell = np.vectorize(lambda v: ff.src_from_fp32(int(np.float32(v).view(np.uint32))))
    srca(m)[:] = to_cell(a)
    srcb(m)[:] = to_cell(b)
    m.s.dest.valid[:] = False
    body = [encode("MVMUL", {"addr_mode": mode}) for mode in BODY_MODES]
    for phase in range(4):
        m.run({T: body})
        r = m.s.rwc[T]
        assert (r.srca, r.srcb, r.dst, r.fidelity) == (0, 0, 0, (phase + 1) & 3)
    want = np.zeros((64, 16), dtype=np.int64)
    for b_row, a_row, d_row in TRACE:
        want[d_row:d_row + 8] += b[b_row:b_row + 8] @ a[a_row:a_row + 16]
    for row in range(64):
        hi = adj32(row)
        got = (m.s.dest.bits[hi].astype(np.uint32) << 16) | m.s.dest.bits[hi + 8]
        expect = [ff.fp32_to_dst32(int(np.float32(v).view(np.uint32))) for v in want[row]]
        assert got.tolist() == expect, row
    assert m.s.dest.valid[[adj32(r) for r in range(64)]].all()
