"""Matrix unit instructions end to end on golden: Dst raw bits and valid bits after MVMUL, ELW*, pools."""
from __future__ import annotations

import numpy as np
import pytest

from golden import fpu_formats as ff
from golden.core import Tensix
from golden.errors import NotModelled
from golden.isa import encode
from golden.dest_view import adj32 as view_adj32
from golden.state import MATRIX_UNIT

from test_golden_matrix import T, set_cfg, set_tcfg

BF16_ONE = ff.src_from_fp32(0x3F800000)


def adj32(row):
    return view_adj32(row, False, False)


def machine(fmt=ff.BF16, fp32=False, int8=False, flush=True):
    m = Tensix()
    for src in (m.s.srca, m.s.srcb):
        b = src.banks[0]
        b.implied_format, b.allowed_client = fmt, MATRIX_UNIT
    set_cfg(m, "ALU_ACC_CTRL_Fp32_enabled", int(fp32))
    set_cfg(m, "ALU_ACC_CTRL_INT8_math_enabled", int(int8))
    set_cfg(m, "ALU_ACC_CTRL_Zero_Flag_disabled_src", int(not flush))
    return m


def srca(m):
    return m.s.srca.banks[0].rows


def srcb(m):
    return m.s.srcb.banks[0].rows


def run(m, name, **fields):
    m.run({T: [encode(name, fields)]})


def dst32(m, row, col):
    hi = adj32(row)
    return int(m.s.dest.bits[hi, col]) << 16 | int(m.s.dest.bits[hi + 8, col])


def test_identity_matmul_copies_srcb_into_bf16_dst():
    m = machine()
    srca(m)[:16] = np.eye(16, dtype=np.uint32) * BF16_ONE
    vals = [0x3F80, 0xC040, 0x4122, 0x0000, 0xBE00, 0x42FE, 0x3C00, 0x8000] * 2   # 6-bit mantissas or zero
    for r in range(8):
        srcb(m)[r] = [ff.src_from_fp32(v << 16) for v in np.roll(vals, r)]
    m.s.dest.valid[:8] = False                                 # invalid rows read as 0
    run(m, "MVMUL")
    for r in range(8):
        expect = [ff.bits_to_dst16_bf16(int(v) & 0x7FFF if v == 0x8000 else int(v)) for v in np.roll(vals, r)]
        assert m.s.dest.bits[r].tolist() == expect            # -0 * 1 + 0 -> +0
    assert m.s.dest.valid[:8].all()


def test_mvmul_accumulates_into_fp32_dst_with_split_halves_and_high_row_valid_only():
    m = machine(fp32=True)
    srca(m)[:16] = np.eye(16, dtype=np.uint32) * BF16_ONE
    srcb(m)[:8] = ff.src_from_fp32(0x40400000)                # 3.0
    m.s.dest.valid[:16] = False
    run(m, "MVMUL")
    assert all(dst32(m, r, c) == ff.fp32_to_dst32(0x40400000) for r in range(8) for c in range(16))
    assert m.s.dest.valid[:8].all() and not m.s.dest.valid[8:16].any()
    run(m, "MVMUL")                                            # 3 + 3
    assert dst32(m, 5, 7) == ff.fp32_to_dst32(0x40C00000)


def test_four_fidelity_phases_reproduce_a_tf32_product_in_fp32_dst():
    m = machine(fmt=ff.TF32, fp32=True)
    srca(m)[0, 0] = ff.src_from_fp32(0x3F804000)               # 1 + 2**-9
    srcb(m)[0, 0] = ff.src_from_fp32(0x3F802000)               # 1 + 2**-10
    m.s.dest.valid[:16] = False
    for phase in range(4):
        m.s.rwc[T].fidelity = phase
        run(m, "MVMUL")
    assert dst32(m, 0, 0) == ff.fp32_to_dst32(0x3F806010)     # 1 + 2**-9 + 2**-10 + 2**-19
    assert dst32(m, 0, 1) == 0 and dst32(m, 1, 0) == 0


def test_fidelity_base_phase_adds_to_the_counter():
    m = machine(fmt=ff.TF32, fp32=True)
    srca(m)[0, 0] = ff.src_from_fp32(0x3F804000)
    srcb(m)[0, 0] = ff.src_from_fp32(0x3F802000)
    m.s.dest.valid[:16] = False
    set_tcfg(m, "FIDELITY_BASE_Phase", 3)
    m.s.rwc[T].fidelity = 2                                    # (2 + 3) & 3 = phase 1: the 2**-9 term only
    run(m, "MVMUL")
    assert dst32(m, 0, 0) == ff.fp32_to_dst32(0x3B000000)     # 2**-9


def test_denormal_srca_is_flushed_and_zero_flag_disabled_mvmul_refused():
    m = machine(fp32=True)
    srca(m)[0, 0] = ff.src_join(0, 0, 0x3FF)                   # exponent 0: reads as zero
    srcb(m)[0, 0] = BF16_ONE
    m.s.dest.valid[:16] = False
    run(m, "MVMUL")
    assert dst32(m, 0, 0) == 0
    set_cfg(m, "ALU_ACC_CTRL_Zero_Flag_disabled_src", 1)
    with pytest.raises(NotModelled, match="Zero_Flag_disabled_src"):
        run(m, "MVMUL")


def test_elwadd_cancellation_is_plus_zero_and_x_plus_zero_is_x():
    m = machine()
    srca(m)[0, :2] = [ff.src_from_fp32(0xC0490000), ff.src_from_fp32(0x40490000)]   # -3.140625, 3.140625
    srcb(m)[0, :2] = [ff.src_from_fp32(0x40490000), 0]
    run(m, "ELWADD")
    assert m.s.dest.bits[0, :2].tolist() == [0x0000, ff.bits_to_dst16_bf16(0x4049)]


def test_elwadd_tie_rounds_half_up_in_magnitude():
    m = machine()
    srca(m)[0, :2] = [ff.src_from_fp32(0x3F800000), ff.src_from_fp32(0xBF800000)]   # +-1
    srcb(m)[0, :2] = [ff.src_from_fp32(0x3B800000), ff.src_from_fp32(0xBB800000)]   # +-2**-8
    run(m, "ELWADD")
    assert m.s.dest.bits[0, :2].tolist() == [ff.bits_to_dst16_bf16(0x3F81), ff.bits_to_dst16_bf16(0xBF81)]


def test_elwsub_and_dest_accumulate():
    m = machine(fp32=True)
    srca(m)[:8] = ff.src_from_fp32(0x40A00000)                # 5
    srcb(m)[:8] = ff.src_from_fp32(0x40400000)                # 3
    m.s.dest.valid[:16] = False
    run(m, "ELWSUB")                                           # 5 - 3
    assert dst32(m, 3, 3) == ff.fp32_to_dst32(0x40000000)
    run(m, "ELWSUB", dest_accum_en=1)                          # 2 + (5 - 3)
    assert dst32(m, 3, 3) == ff.fp32_to_dst32(0x40800000)
    run(m, "ELWADD")                                           # assignment: 5 + 3
    assert dst32(m, 7, 15) == ff.fp32_to_dst32(0x41000000)


@pytest.mark.parametrize("mod,expect", [
    (0, lambda r, c: r * 16 + c), (1, lambda r, c: r * 16), (2, lambda r, c: c), (3, lambda r, c: 0),
])
def test_elementwise_srcb_broadcasts(mod, expect):
    """instr_mod19 bit 0 broadcasts SrcB column 0, bit 1 broadcasts SrcB row 0 (ELWADD.md)."""
    m = machine(fp32=True)
    for r in range(8):
        srcb(m)[r] = [ff.src_from_fp32((0x43000000 + ((r * 16 + c) << 16))) for c in range(16)]
    m.s.dest.valid[:16] = False
    run(m, "ELWADD", instr_mod19=mod)                          # SrcA is zero
    for r in range(8):
        for c in range(16):
            assert dst32(m, r, c) == ff.fp32_to_dst32(0x43000000 + (expect(r, c) << 16))


def test_elwmul_always_accumulates():
    m = machine()
    srca(m)[:8] = ff.src_from_fp32(0x40000000)                # 2
    srcb(m)[:8] = ff.src_from_fp32(0x40400000)                # 3
    m.s.dest.bits[:8] = ff.bits_to_dst16_bf16(0x3F80)          # Dst 1
    run(m, "ELWMUL")
    assert (m.s.dest.bits[:8] == ff.bits_to_dst16_bf16(0x40E0)).all()    # 1 + 6 = 7
    with pytest.raises(NotModelled, match="dest_accum_en"):
        run(m, "ELWMUL", dest_accum_en=1)


def test_elwadd_with_nonzero_fidelity_phase_refused():
    m = machine()
    m.s.rwc[T].fidelity = 1
    with pytest.raises(NotModelled, match="fidelity"):
        run(m, "ELWADD")


def test_fp16_sources_and_fp16_dst():
    m = machine(fmt=ff.FP16)
    srca(m)[0, 0] = ff.src_from_fp16(0x3E00)                   # 1.5
    srcb(m)[0, 0] = ff.src_from_fp16(0x4100)                   # 2.5
    run(m, "ELWADD")
    assert m.s.dest.bits[0, 0] == ff.bits_to_dst16_fp16(0x4400)           # 4.0
    srca(m)[0, 1] = ff.src_join(0, 0x25, 0)                    # high exponent bits set in an FP16 cell
    with pytest.raises(NotModelled, match="high 3 exponent bits"):
        run(m, "ELWADD")


def test_int8_matmul_over_four_phases_is_the_exact_integer_product_saturating():
    m = machine(fmt=ff.INT8, int8=True)
    srca(m)[:16] = [[ff.src_from_int8(((r * 7 + c * 3) % 511) - 255) for c in range(16)] for r in range(16)]
    srcb(m)[:8] = [[ff.src_from_int8(((r * 5 + c * 11) % 2047) - 1023) for c in range(16)] for r in range(8)]
    m.s.dest.valid[:16] = False
    for phase in range(4):
        m.s.rwc[T].fidelity = phase
        run(m, "MVMUL")
    a = np.array([[((r * 7 + c * 3) % 511) - 255 for c in range(16)] for r in range(16)], dtype=np.int64)
    b = np.array([[((r * 5 + c * 11) % 2047) - 1023 for c in range(16)] for r in range(8)], dtype=np.int64)
    want = b @ a
    assert [[ff.dst32_to_int(dst32(m, r, c)) for c in range(16)] for r in range(8)] == want.tolist()
    hi = adj32(0)
    m.s.dest.bits[hi, 0], m.s.dest.bits[hi + 8, 0] = ff.int_to_dst32(0x7FFFFFF0) >> 16, 0xFFF0
    srca(m)[:16] = ff.src_from_int8(100)
    srcb(m)[:8] = ff.src_from_int8(100)
    m.s.rwc[T].fidelity = 0
    run(m, "MVMUL")                                            # 0x7FFFFFF0 + a phase-0 share, saturated
    assert dst32(m, 0, 0) == ff.int_to_dst32(0x7FFFFFFF)


def test_gmpool_column_max_reads_invalid_dst_as_minus_infinity_and_zeroes_three_rows():
    m = machine()
    srcb(m)[0] = BF16_ONE
    for r in range(16):
        srca(m)[r] = [ff.src_from_fp32(0xC0000000 | (r + c) << 16) for c in range(16)]   # negatives
    srca(m)[9, 4] = ff.src_from_fp32(0x3F800000)
    m.s.dest.valid[:4] = False
    m.s.dest.bits[1:4] = 0x1234
    run(m, "GMPOOL", instr_mod19=1)
    assert m.s.dest.bits[0, 4] == ff.bits_to_dst16_bf16(0x3F80)
    assert m.s.dest.bits[0, 0] == ff.bits_to_dst16_bf16(0xC000)          # -2.0 is the largest negative
    assert not m.s.dest.bits[1:4].any() and m.s.dest.valid[:4].all()
    srcb(m)[0, 3] = ff.src_from_fp32(0x40000000)
    with pytest.raises(NotModelled, match="1.0"):
        run(m, "GMPOOL", instr_mod19=1)


def test_gapool_is_mvmul_on_four_rows():
    m = machine(fp32=True)
    srca(m)[:16] = np.eye(16, dtype=np.uint32) * BF16_ONE
    srcb(m)[:8] = ff.src_from_fp32(0x40400000)
    m.s.dest.valid[:16] = False
    run(m, "GAPOOL", instr_mod19=1, dst=4)
    assert dst32(m, 4, 0) == ff.fp32_to_dst32(0x40400000) and dst32(m, 7, 15) == ff.fp32_to_dst32(0x40400000)
    assert not m.s.dest.valid[adj32(0)] and not m.s.dest.valid[adj32(3)]
    with pytest.raises(NotModelled, match="instr_mod19"):
        run(m, "GAPOOL")
