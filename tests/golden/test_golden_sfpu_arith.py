"""SFPU floating-point arithmetic in golden, against raw bits worked out by hand from the Blackhole SFPU MAD
rules (denormals in and out are zero, canonical NaN, ties to even on 3 guard bits, +0 on cancellation)."""
from __future__ import annotations

import pytest

from golden.errors import NotModelled, UndefinedBehaviour
from golden.sfpu.fp import fma
from test_golden_sfpu_support import lreg, machine, run, set_lreg

ONE, TWO, HALF, MONE = 0x3F800000, 0x40000000, 0x3F000000, 0xBF800000
INF, NINF, QNAN = 0x7F800000, 0xFF800000, 0x7FC00000
MAXN, MINN = 0x7F7FFFFF, 0x00800000


@pytest.mark.parametrize("x, y, z, want", [
    (ONE, ONE, 0, ONE),
    (0, MONE, 0, 0),                      # +0 * -1 + +0: zero product, zero addend -> sign is AND of signs: +0
    (0x80000000, ONE, 0x80000000, 0x80000000),   # -0 + -0 = -0
    (ONE, ONE, MONE, 0),                  # exact cancellation -> +0
    (MONE, ONE, ONE, 0),
    (0x00000001, 0x72000000, 0, 0),       # denormal input is zero
    (ONE, ONE, 0x007FFFFF, ONE),          # denormal addend is zero
    (MINN, HALF, 0, 0),                   # 2**-127 is a denormal result: flushed, sign kept
    (MINN | 0x80000000, HALF, 0, 0x80000000),
    (ONE, ONE, 0x33800000, ONE),          # 1 + 2**-24: tie, stays even
    (ONE, ONE, 0x33C00000, 0x3F800001),   # 1 + 1.5 * 2**-24: above the tie, rounds up
    (ONE, 0x3F800001, 0x33800000, 0x3F800002),   # odd LSB + tie rounds up to even
    (INF, 0, ONE, QNAN),                  # Inf * 0
    (INF, ONE, NINF, QNAN),               # Inf - Inf
    (INF, ONE, 0x40A00000, INF),
    (ONE, ONE, NINF, NINF),               # an Inf addend comes back as is
    (0xFFC00001, ONE, ONE, QNAN),         # any NaN becomes the canonical NaN
    (ONE, ONE, 0x7F800001, QNAN),
    (0x7F000000, TWO, 0, INF),            # 2**127 * 2 overflows
    (MAXN, MAXN, 0, INF),
    (MAXN, ONE, MAXN, INF),               # sum overflow
    (MAXN, ONE, 0, MAXN),                 # largest normal survives
    (0x0D800000, 0x0D800000, ONE, ONE),   # product exponent below zero: the addend comes back as is
    (0x0D800000, 0x0D800000, 0x80000000, 0),     # ... and a zero addend gives +0 (AND of signs)
    (0x40400000, 0x40400000, 0xC1100000, 0),     # 3 * 3 - 9
    (0x3DCCCCCD, 0x41200000, MONE, 0x32800000),  # 0.1f * 10 - 1 keeps the product's low bits: 2**-26
])
def test_fma_bits(x, y, z, want):
    assert fma(x, y, z) == want
    assert fma(y, x, z) == want


def test_sfpmad_negation_bits_and_lane_flags():
    m = machine()
    set_lreg(m, 0, [TWO] * 32)
    set_lreg(m, 1, [0x40400000] * 32)               # 3.0
    set_lreg(m, 2, [ONE] * 32)
    m.s.sfpu.cc = 0x0000000F
    run(m, ("SFPMAD", dict(lreg_src_a=0, lreg_src_b=1, lreg_src_c=2, lreg_dest=3, instr_mod1=3)))
    assert lreg(m, 3)[:4] == [0xC0E00000] * 4       # -(2) * 3 + -(1) = -7
    assert lreg(m, 3)[4:] == [0] * 28               # disabled lanes keep their old value


def test_sfpadd_sfpmul_sfpmuli_sfpaddi():
    m = machine()
    set_lreg(m, 0, [TWO] * 32)
    set_lreg(m, 1, [0x40400000] * 32)
    run(m, ("SFPADD", dict(lreg_src_a=10, lreg_src_b=0, lreg_src_c=1, lreg_dest=2, instr_mod1=1)),   # 3 - 2
           ("SFPMUL", dict(lreg_src_a=0, lreg_src_b=1, lreg_src_c=9, lreg_dest=3, instr_mod1=0)),   # 6
           ("SFPMULI", dict(imm16_math=0x4000, lreg_dest=1, instr_mod1=0)),                          # 3 * 2
           ("SFPADDI", dict(imm16_math=0x3F80, lreg_dest=0, instr_mod1=0)))                          # 2 + 1
    assert lreg(m, 2)[0] == ONE and lreg(m, 3)[0] == 0x40C00000
    assert lreg(m, 1)[0] == 0x40C00000 and lreg(m, 0)[0] == 0x40400000


def test_sfpmul_of_negative_zero_product_gives_positive_zero():
    m = machine()
    set_lreg(m, 0, [MONE] * 32)
    run(m, ("SFPMUL", dict(lreg_src_a=0, lreg_src_b=9, lreg_src_c=9, lreg_dest=1, instr_mod1=0)))
    assert lreg(m, 1)[0] == 0


def test_non_contractual_operands_are_undefined():
    with pytest.raises(UndefinedBehaviour):
        run(machine(), ("SFPADD", dict(lreg_src_a=1, lreg_src_b=2, lreg_src_c=3, lreg_dest=0, instr_mod1=0)))
    with pytest.raises(UndefinedBehaviour):
        run(machine(), ("SFPMUL", dict(lreg_src_a=1, lreg_src_b=2, lreg_src_c=3, lreg_dest=0, instr_mod1=0)))


def test_indirect_mad_modes_and_template_capture_are_not_modelled():
    with pytest.raises(NotModelled):
        run(machine(), ("SFPMAD", dict(lreg_src_a=1, lreg_src_b=2, lreg_src_c=3, lreg_dest=0, instr_mod1=4)))
    with pytest.raises(NotModelled):
        run(machine(), ("SFPMAD", dict(lreg_src_a=1, lreg_src_b=2, lreg_src_c=3, lreg_dest=12, instr_mod1=0)))


def test_sfplut_picks_coefficients_by_magnitude_and_copies_the_sign():
    m = machine()
    set_lreg(m, 0, [0x1000] * 32)      # A = 0.5 (exp code 1), C = 1.0 (exp code 0)
    set_lreg(m, 1, [0xFFFF] * 32)      # 0xFF bytes mean zero
    set_lreg(m, 3, [HALF, HALF | 0x80000000, 0x3FC00000] + [HALF] * 29)
    run(m, ("SFPLUT", dict(lreg_ind=5, instr_mod0=4, dest_reg_addr=0)))
    assert lreg(m, 5)[:3] == [0x3FA00000, 0xBFA00000, 0]   # 0.5*0.5+1, its negation, 0*1.5+0


def test_sfplutfp32_mode_2_uses_fp16_halves():
    m = machine()
    set_lreg(m, 0, [0x40003C00] * 32)  # A: low 1.0, high 2.0
    set_lreg(m, 4, [0x3C004000] * 32)  # C: low 2.0, high 1.0
    set_lreg(m, 3, [0x3E800000, 0x3F400000] + [0] * 30)    # 0.25 -> low halves, 0.75 -> high halves
    run(m, ("SFPLUTFP32", dict(lreg_dest=6, instr_mod1=2)))
    assert lreg(m, 6)[:2] == [0x40100000, 0x40200000]      # 1*0.25+2 = 2.25, 2*0.75+1 = 2.5


def test_sfpmul24_low_and_high_halves():
    m = machine()
    set_lreg(m, 0, [0xFF7FFFFF] * 32)  # bits above 22 are ignored
    set_lreg(m, 1, [0x007FFFFF] * 32)
    run(m, ("SFPMUL24", dict(lreg_src_a=0, lreg_src_b=1, lreg_src_c=9, lreg_dest=2, instr_mod1=0)),
           ("SFPMUL24", dict(lreg_src_a=0, lreg_src_b=1, lreg_src_c=9, lreg_dest=3, instr_mod1=1)))
    assert lreg(m, 2)[0] == 1 and lreg(m, 3)[0] == 0x7FFFFE


def test_sfparecip():
    m = machine()
    set_lreg(m, 0, [ONE, 0xC0000000, 0, 0x80000000, 0x7E800000, 0x00400000] + [ONE] * 26)
    run(m, ("SFPARECIP", dict(imm12_math=0, lreg_c=0, lreg_dest=1, instr_mod1=0)))
    assert lreg(m, 1)[:6] == [0x3F7F0000, 0xBEFF0000, INF, NINF, 0, INF]
