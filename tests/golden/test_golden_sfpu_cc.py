"""SFPU lane flags, flag stack, comparisons, SFPSWAP / SFPTRANSP / SFPCONFIG in golden."""
from __future__ import annotations

import pytest

from golden.errors import NotModelled, UndefinedBehaviour
from test_golden_sfpu_support import loadi32, lreg, machine, run, set_lreg

ALL = 0xFFFFFFFF


def cc_op(name, mod=0, imm=0, c=0, d=0):
    return (name, dict(imm12_math=imm, lreg_c=c, lreg_dest=d, instr_mod1=mod))


def signs(pattern):
    """LReg values: -1 where pattern has a 1, +1 elsewhere."""
    return [0xFFFFFFFF if pattern >> lane & 1 else 1 for lane in range(32)]


def test_reset_state_enables_every_lane():
    s = machine().s.sfpu
    assert s.cc_en and s.cc == ALL and s.cc_stack == []
    assert int(s.lreg[10, 0]) == 0x3F800000 and int(s.lreg[9, 5]) == 0 and int(s.lreg[15, 31]) == 62


@pytest.mark.parametrize("mod, value, flag", [
    (0, 0xFFFFFFFF, True), (0, 0x80000000, True), (0, 0, False),   # VC < 0 (-0.0 counts as negative)
    (2, 0, False), (2, 0x80000000, True),                           # VC != 0
    (4, 5, True), (4, 0xBF800000, False),                           # VC >= 0
    (6, 0, True), (6, 0x80000000, False),                           # VC == 0
])
def test_setcc_forms(mod, value, flag):
    m = machine()
    set_lreg(m, 1, [value] * 32)
    run(m, cc_op("SFPSETCC", mod=mod, c=1))
    assert m.s.sfpu.cc == (ALL if flag else 0)


def test_setcc_narrows_flags_and_predicates_later_writes():
    m = machine()
    set_lreg(m, 1, signs(0x0000FFFF))
    set_lreg(m, 2, signs(0x00FF00FF))
    run(m, cc_op("SFPSETCC", mod=0, c=1), cc_op("SFPSETCC", mod=0, c=2), *loadi32(3, 0x12345678))
    assert m.s.sfpu.cc == 0x000000FF
    assert lreg(m, 3) == [0x12345678] * 8 + [0] * 24


def test_encc_disables_and_enables_flags():
    m = machine()
    run(m, cc_op("SFPENCC", mod=10, imm=0))          # flags off, flag bits cleared
    assert not m.s.sfpu.cc_en and m.s.sfpu.cc == 0
    run(m, *loadi32(0, 7))                            # every lane written while flags are off
    assert lreg(m, 0) == [7] * 32
    run(m, cc_op("SFPENCC", mod=10, imm=1))          # flags on, all clear: nothing is written
    run(m, *loadi32(0, 9))
    assert lreg(m, 0) == [7] * 32
    run(m, cc_op("SFPENCC", mod=0))                  # set every flag
    assert m.s.sfpu.cc == ALL and m.s.sfpu.cc_en


def test_push_compc_pop_make_if_else():
    m = machine()
    set_lreg(m, 1, signs(0x0F0F0F0F))
    run(m, cc_op("SFPPUSHC"), cc_op("SFPSETCC", mod=0, c=1), *loadi32(2, 1),   # if (x < 0) y = 1
        cc_op("SFPCOMPC"), *loadi32(2, 2),                                    # else y = 2
        cc_op("SFPPOPC"))
    assert lreg(m, 2) == [1 if 0x0F0F0F0F >> lane & 1 else 2 for lane in range(32)]
    assert m.s.sfpu.cc == ALL and m.s.sfpu.cc_stack == []


def test_compc_on_empty_stack_inverts_flags():
    m = machine()
    set_lreg(m, 1, signs(0x000000F0))
    run(m, cc_op("SFPSETCC", mod=0, c=1), cc_op("SFPCOMPC"))
    assert m.s.sfpu.cc == 0xFFFFFF0F


def test_flag_stack_overflow_and_underflow_are_undefined():
    with pytest.raises(UndefinedBehaviour):
        run(machine(), *[cc_op("SFPPUSHC")] * 9)
    run(machine(), *[cc_op("SFPPUSHC")] * 8)
    with pytest.raises(UndefinedBehaviour):
        run(machine(), cc_op("SFPPOPC"))


def test_setcc_with_flags_disabled_is_not_modelled():
    with pytest.raises(NotModelled):
        run(machine(), cc_op("SFPENCC", mod=10, imm=2), cc_op("SFPSETCC", mod=0, c=1))


@pytest.mark.parametrize("name, d, c, want", [
    ("SFPGT", 0x00000000, 0x80000000, True),      # +0 > -0 in sign-magnitude order
    ("SFPLE", 0x80000000, 0x00000000, True),
    ("SFPGT", 0x7FC00000, 0x7F800000, True),      # NaN patterns sort above +Inf
    ("SFPGT", 0xBF800000, 0xC0000000, True),      # -1 > -2
    ("SFPLE", 0x3F800000, 0x3F800000, True),
    ("SFPGT", 0x3F800000, 0x3F800000, False),
])
def test_gt_le_to_flags_and_to_register(name, d, c, want):
    m = machine()
    set_lreg(m, 1, [c] * 32)
    set_lreg(m, 2, [d] * 32)
    run(m, (name, dict(imm12_math=0, lreg_c=1, lreg_dest=2, instr_mod1=1)))
    assert m.s.sfpu.cc == (ALL if want else 0)
    m = machine()
    set_lreg(m, 1, [c] * 32)
    set_lreg(m, 2, [d] * 32)
    run(m, (name, dict(imm12_math=0, lreg_c=1, lreg_dest=2, instr_mod1=8)))
    assert lreg(m, 2) == [ALL if want else 0] * 32


def test_swap_plain_and_min_max_modes():
    m = machine()
    set_lreg(m, 1, [0x80000000] * 32)              # -0
    set_lreg(m, 2, [0x00000000] * 32)              # +0
    run(m, ("SFPSWAP", dict(imm12_math=0, lreg_src_c=1, lreg_dest=2, instr_mod1=1)))   # VD = min
    assert lreg(m, 2)[0] == 0x80000000 and lreg(m, 1)[0] == 0
    set_lreg(m, 1, [0x40000000] * 32)              # 2.0
    set_lreg(m, 2, [0x3F800000] * 32)              # 1.0
    run(m, ("SFPSWAP", dict(imm12_math=0, lreg_src_c=1, lreg_dest=2, instr_mod1=2)))   # min to VD in rows 0-1
    assert lreg(m, 2)[:16] == [0x3F800000] * 16 and lreg(m, 2)[16:] == [0x40000000] * 16
    run(m, ("SFPSWAP", dict(imm12_math=0, lreg_src_c=1, lreg_dest=2, instr_mod1=0)))   # plain swap
    assert lreg(m, 1)[16:] == [0x40000000] * 16 and lreg(m, 2)[16:] == [0x3F800000] * 16


def test_transp_transposes_each_column_of_two_four_register_blocks():
    m = machine()
    for r in range(8):
        set_lreg(m, r, [100 * r + lane for lane in range(32)])
    run(m, cc_op("SFPTRANSP"))
    for r in range(8):
        base, i = r & 4, r & 3
        for lane in range(32):
            j, col = lane // 8, lane % 8
            assert lreg(m, r)[lane] == 100 * (base + j) + i * 8 + col


def test_config_writes_constant_registers_and_lane_config():
    m = machine()
    run(m, *loadi32(0, 0x40000000),
        ("SFPCONFIG", dict(imm16_math=0, config_dest=12, instr_mod1=0)),
        ("SFPCONFIG", dict(imm16_math=0, config_dest=11, instr_mod1=1)),
        ("SFPCONFIG", dict(imm16_math=0x104, config_dest=15, instr_mod1=1)))
    assert lreg(m, 12) == [0x40000000] * 32 and lreg(m, 11) == [0xBF800000] * 32
    assert m.s.sfpu.lane_config == 0x104
    with pytest.raises(UndefinedBehaviour):     # erratum TEN-2932 with ENABLE_DEST_INDEX
        run(m, ("SFPMAD", dict(lreg_src_a=0, lreg_src_b=0, lreg_src_c=0, lreg_dest=5, instr_mod1=0)))


def test_config_of_loadmacro_state_is_not_modelled():
    with pytest.raises(NotModelled):
        run(machine(), ("SFPCONFIG", dict(imm16_math=0, config_dest=4, instr_mod1=0)))
