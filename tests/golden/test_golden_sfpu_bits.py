"""SFPU integer, bitwise, field and conversion instructions in golden, with hand-derived raw bits."""
from __future__ import annotations

import pytest

from golden.errors import NotModelled, UndefinedBehaviour
from test_golden_sfpu_support import lreg, machine, run, set_lreg


def one_op(name, fields, regs, out):
    """Run one instruction with LReg[r] = value (all lanes) and return lane 0 of LReg[out]."""
    m = machine()
    for r, v in regs.items():
        set_lreg(m, r, v if isinstance(v, list) else [v] * 32)
    run(m, (name, fields))
    return lreg(m, out)[0]


def simple(name, mod, c, d=0, imm=0, cval=None, dval=None):
    regs = {}
    if cval is not None:
        regs[1] = cval
    if dval is not None:
        regs[2] = dval
    return one_op(name, dict(imm12_math=imm, lreg_c=1 if c is None else c, lreg_dest=2, instr_mod1=mod), regs, 2)


@pytest.mark.parametrize("name, mod, imm, c, d, want", [
    ("SFPAND", 0, 0, 0xF0F0F0F0, 0xFF00FF00, 0xF000F000),
    ("SFPOR", 0, 0, 0xF0F0F0F0, 0x0F000000, 0xFFF0F0F0),
    ("SFPXOR", 0, 0, 0xFFFF0000, 0x0F0F0F0F, 0xF0F00F0F),
    ("SFPNOT", 0, 0, 0x0000FFFF, 0x12345678, 0xFFFF0000),
    ("SFPSHFT", 1, 4, 0, 0x00000001, 0x00000010),           # left by imm 4
    ("SFPSHFT", 1, 0xFFF, 0, 0x80000000, 0x40000000),       # right by 1, logical
    ("SFPSHFT", 3, 0xFFF, 0, 0x80000000, 0xC0000000),       # right by 1, arithmetic (BH)
    ("SFPSHFT", 0, 0, 0xFFFFFFDF, 0x80000000, 0x40000000),  # register amount -33: right by 33 % 32
    ("SFPSHFT", 0, 0, 32, 0x12345678, 0x12345678),          # amount 32 wraps to 0
    ("SFPSHFT", 5, 8, 0x000000FF, 0x1, 0x0000FF00),         # BH: shift VC, not VD
    ("SFPIADD", 1, 0xFFF, 5, 0, 4),                         # VC + sign-extended imm12
    ("SFPIADD", 2, 0, 5, 7, 0xFFFFFFFE),                    # VC - VD
    ("SFPIADD", 0, 0, 5, 7, 12),
    ("SFPLZ", 0, 0, 1, 0, 31),
    ("SFPLZ", 0, 0, 0, 0, 32),
    ("SFPLZ", 4, 0, 0x80000000, 0, 32),                     # sign ignored
    ("SFPABS", 1, 0, 0xFF800000, 0, 0x7F800000),            # float |-inf|
    ("SFPABS", 1, 0, 0xFFC00000, 0, 0xFFC00000),            # negative NaN untouched
    ("SFPABS", 1, 0, 0x80000000, 0, 0),                     # |-0| = +0
    ("SFPABS", 0, 0, 0xFFFFFFFB, 0, 5),                     # integer |-5|
    ("SFPABS", 0, 0, 0x80000000, 0, 0x80000000),            # |INT_MIN| wraps
    ("SFPMOV", 1, 0, 0x3F800000, 0, 0xBF800000),
    ("SFPSETSGN", 1, 1, 0x3F800000, 0, 0xBF800000),
    ("SFPSETSGN", 0, 0, 0xBF800000, 0x00000001, 0x3F800000),  # sign taken from VD
    ("SFPSETEXP", 1, 0x80, 0xBF812345, 0, 0xC0012345),
    ("SFPSETEXP", 0, 0, 0x3F812345, 0x00000081, 0x40812345),  # exponent from VD[7:0]
    ("SFPSETEXP", 2, 0, 0x3F812345, 0x40000000, 0x40012345),  # exponent from VD's exponent
    ("SFPSETMAN", 0, 0, 0xBF800000, 0x007FFFFF, 0xBFFFFFFF),
    ("SFPSETMAN", 1, 0, 0xBFFFFFFF, 0, 0xBF800000),
    ("SFPEXEXP", 0, 0, 0x3F000000, 0, 0xFFFFFFFF),          # exponent of 0.5, debiased: -1
    ("SFPEXEXP", 1, 0, 0x3F000000, 0, 126),
    ("SFPEXMAN", 0, 0, 0xBFC00000, 0, 0x00C00000),
    ("SFPEXMAN", 1, 0, 0xBFC00000, 0, 0x00400000),
    ("SFPDIVP2", 1, 0xFFF, 0x40000000, 0, 0x3F800000),      # 2.0 / 2
    ("SFPDIVP2", 1, 1, 0xFF800000, 0, 0xFF800000),          # Inf untouched
    ("SFPDIVP2", 0, 0x7F, 0xC0400000, 0, 0xBFC00000),       # exponent set to 127
])
def test_lanewise(name, mod, imm, c, d, want):
    assert simple(name, mod, None, imm=imm, cval=c, dval=d) == want


def test_and_or_take_vb_from_the_immediate_on_blackhole():
    got = one_op("SFPAND", dict(imm12_math=3, lreg_c=1, lreg_dest=2, instr_mod1=1),
                 {1: 0xFF00FF00, 2: 0xFFFFFFFF, 3: 0x0FF00FF0}, 2)
    assert got == 0x0F000F00


def test_iadd_lane_flags():
    m = machine()
    set_lreg(m, 1, [lane - 16 for lane in range(32)])
    run(m, ("SFPIADD", dict(imm12_math=0, lreg_c=1, lreg_dest=2, instr_mod1=0)))    # flags = result < 0
    assert m.s.sfpu.cc == 0x0000FFFF
    run(m, ("SFPIADD", dict(imm12_math=0, lreg_c=1, lreg_dest=3, instr_mod1=4)))    # bit 2: flags untouched
    assert m.s.sfpu.cc == 0x0000FFFF


def test_exexp_and_lz_set_flags():
    m = machine()
    set_lreg(m, 1, [0x3F000000, 0x40000000, 0, 5] * 8)
    run(m, ("SFPEXEXP", dict(imm12_math=0, lreg_c=1, lreg_dest=2, instr_mod1=10)))  # flag = exponent >= 0
    assert m.s.sfpu.cc == 0x22222222
    m = machine()
    set_lreg(m, 1, [0x3F000000, 0x40000000, 0, 5] * 8)
    run(m, ("SFPLZ", dict(imm12_math=0, lreg_c=1, lreg_dest=2, instr_mod1=2)))      # flag = VC != 0
    assert m.s.sfpu.cc == 0xBBBBBBBB


def test_shft2_rotates_and_shifts_lanes_within_rows_of_eight():
    m = machine()
    set_lreg(m, 1, list(range(100, 132)))
    run(m, ("SFPSHFT2", dict(imm12_math=0, lreg_src_c=1, lreg_dest=2, instr_mod1=3)),
           ("SFPSHFT2", dict(imm12_math=0, lreg_src_c=1, lreg_dest=3, instr_mod1=4)))
    assert lreg(m, 2)[:9] == [107, 100, 101, 102, 103, 104, 105, 106, 115]
    assert lreg(m, 3)[:9] == [0, 100, 101, 102, 103, 104, 105, 106, 0]


@pytest.mark.parametrize("mod, c, want", [
    (0, 3, 0x40400000),
    (0, 0x80000005, 0xC0A00000),     # sign-magnitude -5
    (0, 0x80000000, 0x80000000),     # -0 stays -0
    (0, 0x7FFFFFFF, 0x4F000000),     # rounds up to 2**31
    (0, 0x01000001, 0x4B800000),     # 2**24 + 1: tie to even
    (0, 0x01000003, 0x4B800002),     # 2**24 + 3: tie to even (up)
    (3, 0xFFFFFFFB, 0x80000005),     # two's complement -> sign-magnitude
    (3, 0x80000005, 0xFFFFFFFB),     # and back
])
def test_sfpcast(mod, c, want):
    assert one_op("SFPCAST", dict(lreg_src_c=1, lreg_dest=2, instr_mod1=mod), {1: c}, 2) == want


@pytest.mark.parametrize("mod, c, want", [
    (1, 0x3F808000, 0x3F810000),     # BF16 tie rounds away from zero
    (1, 0x3F807FFF, 0x3F800000),
    (1, 0x80000001, 0x00000000),     # denormal -> +0, sign dropped
    (1, 0xFFC00001, 0xFF800000),     # NaN -> Inf of the same sign
    (1, 0x7F7FFFFF, 0x7F800000),     # rounding overflows into Inf
    (3, 0x40200000, 3),              # int8: 2.5 -> 3 (half up)
    (3, 0xC3480000, 0x8000007F),     # -200 clamps to -127, sign-magnitude
    (3, 0x3ECCCCCD, 0),              # 0.4 -> 0
    (3, 0x3F000000, 1),              # 0.5 -> 1
    (2, 0xC0400000, 3),              # uint8 of -3.0 is |x|
    (6, 0x4788B800, 65535),          # 70000 saturates uint16
    (7, 0xBECCCCCD, 0),              # -0.4 -> 0 without a sign
])
def test_stoch_rnd_nearest_modes(mod, c, want):
    fields = dict(rnd_mode=0, imm8_math=0, lreg_src_b=0, lreg_src_c=1, lreg_dest=2, instr_mod1=mod)
    assert one_op("SFP_STOCH_RND", fields, {1: c}, 2) == want


def test_stochastic_rounding_is_not_modelled():
    with pytest.raises(NotModelled):
        run(machine(), ("SFP_STOCH_RND", dict(rnd_mode=1, imm8_math=0, lreg_src_b=0, lreg_src_c=1, lreg_dest=2,
                                              instr_mod1=1)))


def test_reserved_bits_are_undefined():
    with pytest.raises(UndefinedBehaviour):
        run(machine(), ("SFPXOR", dict(imm12_math=0, lreg_c=1, lreg_dest=2, instr_mod1=1)))
    with pytest.raises(UndefinedBehaviour):
        run(machine(), ("SFPLOAD", dict(lreg_ind=0, instr_mod0=6, sfpu_addr_mode=0, dest_reg_addr=0x400)))
