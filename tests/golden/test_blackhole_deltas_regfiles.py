"""Register-file and datapath-address facts where the Wormhole-derived spec and Blackhole disagree
(../shared/spec/blackhole-deltas.md), each checked against ttsim v1.10.0's Blackhole model; one test per
fact, named after its delta."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from golden import fpu_formats as ff
from golden.errors import NotModelled, UndefinedBehaviour
from golden.isa import encode
from golden.matrix.movers import shuffle_tf32
from golden.pack.addr import output_address
from golden.state import MATRIX_UNIT, UNPACKERS

from regfile_util import T, machine, put32, run1, set_cfg, set_tcfg


def zeroacc(m, clear_mode, where, use_32_bit_mode=0):
    return run1(m, "ZEROACC", clear_mode=clear_mode, use_32_bit_mode=use_32_bit_mode, clear_zero_flags=0,
                addr_mode=0, where=where)


def invalid(m):
    return [int(r) for r in np.flatnonzero(~m.s.dest.valid)]


# --- #8: packer output address, Y stride ---
def test_delta08_packer_yzw_term_is_a_byte_offset_shifted_right_4():
    m = machine()
    set_cfg(m, "THCON_SEC0_REG1_L1_Dest_addr", 0x1000)
    set_cfg(m, "THCON_SEC0_REG1_Disable_zero_compress", 1)
    set_cfg(m, "PCK0_ADDR_CTRL_XY_REG_1_Ystride", 0x100)
    m.s.adc[2]["pack"][1].y = 3
    fields = SimpleNamespace(ovrdthreadid=0, addrcntcontext=0, cfgcontext=0, ctxtctrl=0)
    # Blackhole: 0x1001 + (0x300 >> 4); Wormhole's page would give 0x1001 + (0x300 & ~0xf) = 0x1301
    assert output_address(m, 2, fields).data == (0x1001 + 0x30) << 4
    set_cfg(m, "PCK0_ADDR_CTRL_XY_REG_1_Ystride", 0x18)
    m.s.adc[2]["pack"][1].y = 1
    assert output_address(m, 2, fields).data == (0x1001 + 1) << 4


# --- #9: Dst FP32 low half holds mantissa bits 15:0 ---
def test_delta09_movd2a_tf32_takes_mantissa_15_13_from_the_low_half():
    m = machine(implied=ff.TF32)
    set_cfg(m, "ALU_ACC_CTRL_Fp32_enabled", 1)
    put32(m, 0, 0x3F80E000)                 # Dst hi: BF16-shuffled 0x3F80 -> sign 0, man7 0x3F, exp 0x80
    run1(m, "MOVD2A", dest_32b_lo=0, src=0, addr_mode=0, instr_mod=0, dst=0)
    # TF32 mantissa = man7 << 3 | (0xE000 >> 13) = 0x1FF; exponent 0x80
    assert (m.s.srca.banks[0].rows[0] == (0x1FF << 8 | 0x80)).all()


def test_delta09_mova2d_tf32_puts_low_mantissa_in_bits_15_13_of_the_low_half():
    m = machine(implied=ff.TF32, give=True)
    m.s.srca.banks[0].rows[0] = 0x1FF << 8 | 0x80
    run1(m, "MOVA2D", dest_32b_lo=0, src=0, addr_mode=0, instr_mod=0, dst=0)
    assert (m.s.dest.bits[0] == 0x3F80).all() and (m.s.dest.bits[8] == 0xE000).all()


# --- #10: ShuffleTF32 mask ---
def test_delta10_shuffle_tf32_uses_mask_0x7f800():
    # sign and high mantissa (input bits 18:11) pass through; 0x3fc000 would keep only bit 18 of them
    assert int(shuffle_tf32(np.uint32(0x7F800))) == 0x7F800
    assert int(shuffle_tf32(np.uint32(0x7FFFF))) == 0x7FFFF


# --- #11: ZEROACC field widths and the half-relative 16-row mode ---
def test_delta11_zeroacc_sixteen_rows_relative_to_the_current_half():
    m = machine()
    set_tcfg(m, T, "DEST_TARGET_REG_CFG_MATH_Offset", 512)
    zeroacc(m, 1, where=3)
    assert invalid(m) == list(range(560, 576))          # block 3 + 32


def test_delta11_zeroacc_upper_half_from_the_dst_rwc():
    m = machine()
    m.s.rwc[T].dst = 512 + 8
    zeroacc(m, 1, where=0)
    assert invalid(m) == list(range(512, 528))


def test_delta11_zeroacc_absolute_tile_mode():
    m = machine()
    set_tcfg(m, T, "DEST_TARGET_REG_CFG_MATH_Offset", 512)
    set_cfg(m, "DEST_ACCESS_CFG_zeroacc_absolute_tile_mode", 1)
    zeroacc(m, 1, where=3)
    assert invalid(m) == list(range(48, 64))


@pytest.mark.parametrize("offset", [256, 512])
def test_delta11_zeroacc_32bit_sixteen_rows_half_is_bit_8_or_9(offset):
    m = machine()
    set_tcfg(m, T, "DEST_TARGET_REG_CFG_MATH_Offset", offset)
    zeroacc(m, 1, where=0, use_32_bit_mode=1)           # block 0 + 16 -> Dst32b rows 256..271
    assert invalid(m) == list(range(512, 520)) + list(range(528, 536))


@pytest.mark.parametrize("clear_mode", [0b100, 0b1000, 0b10000])
def test_delta11_zeroacc_mode_bits_above_20_not_modelled(clear_mode):
    with pytest.raises(NotModelled):
        zeroacc(machine(), clear_mode, where=0)


# --- #15: ZEROSRC modes ---
def test_delta15_zerosrc_default_clears_the_unpackers_bank_and_neg_inf_fills_srca():
    m = machine()
    m.s.srca.unpacker_bank = 1
    run1(m, "ZEROSRC", zero_val=1, write_mode=0, bank_mask=0, src_mask=1)
    assert (m.s.srca.banks[1].rows == 0x7FFFF).all() and (m.s.srca.banks[0].rows == 0).all()


def test_delta15_zerosrc_neg_inf_for_srcb_not_modelled():
    with pytest.raises(NotModelled):
        run1(machine(), "ZEROSRC", zero_val=1, write_mode=0, bank_mask=1, src_mask=2)


# --- #17: implied Src formats ---
def test_delta17_unpacr_nop_set_dvalid_records_the_implied_format():
    m = machine()
    set_cfg(m, "THCON_SEC1_REG2_Out_data_format", ff.FP16)
    m.run({0: [encode("UNPACR_NOP", {"unpacker_select": 1, "set_dvalid": 1, "unpack_pop": 1})]})
    assert m.s.srcb.banks[0].implied_format == ff.FP16 and m.s.srcb.banks[1].implied_format is None


def test_delta17_cleardvalid_reset_zeroes_implied_formats_and_resets_banks():
    m = machine(implied=ff.FP16, give=True)
    m.s.srca.unpacker_bank = m.s.srcb.matrix_bank = 1
    run1(m, "CLEARDVALID", cleardvalid=0, reset=1)
    for src in (m.s.srca, m.s.srcb):
        assert (src.matrix_bank, src.unpacker_bank) == (0, 0)
        assert [b.allowed_client for b in src.banks] == [UNPACKERS, UNPACKERS]
        assert [b.implied_format for b in src.banks] == [0, 0]


def test_delta17_setdvalid_leaves_the_implied_format_unknown():
    m = machine(implied=ff.BF16)
    run1(m, "SETDVALID", t=0, setvalid=1)
    assert m.s.srca.banks[0].implied_format is None
    with pytest.raises(NotModelled, match="implied"):
        run1(m, "MOVA2D", dest_32b_lo=0, src=0, addr_mode=0, instr_mod=0, dst=0)


def test_delta17_mov_uses_implied_format_over_alu_format_spec():
    m = machine(implied=ff.FP16)
    set_cfg(m, "ALU_FORMAT_SPEC_REG0_SrcA", ff.BF16)
    m.s.dest.bits[0] = 0x0020
    run1(m, "MOVD2A", dest_32b_lo=0, src=0, addr_mode=0, instr_mod=0, dst=0)
    assert (m.s.srca.banks[0].rows[0] == 0x100).all()         # FP16 shuffle
    set_tcfg(m, T, "DISABLE_IMPLIED_SRCA_FMT_Base", 1)
    run1(m, "MOVD2A", dest_32b_lo=0, src=1, addr_mode=0, instr_mod=0, dst=0)
    assert (m.s.srca.banks[0].rows[1] == 0x20).all()          # BF16 shuffle


def test_delta17_movd2b_reads_srcb_implied_format_under_the_srca_switch():
    m = machine()
    m.s.srca.banks[0].implied_format = ff.BF16
    m.s.srcb.banks[0].implied_format = ff.FP16
    set_tcfg(m, T, "DISABLE_IMPLIED_SRCB_FMT_Base", 1)        # irrelevant to MOVD2B
    m.s.dest.bits[0] = 0x0020
    run1(m, "MOVD2B", dest_32b_lo=0, src=0, addr_mode=0, instr_mod=0, dst=0)
    assert (m.s.srcb.banks[0].rows[0] == 0x100).all()


def test_delta17_movb2d_drops_low_mantissa_by_srcb_format():
    m = machine(implied=ff.BF16, give=True)
    set_tcfg(m, T, "DISABLE_IMPLIED_SRCA_FMT_Base", 1)
    set_cfg(m, "ALU_FORMAT_SPEC_REG0_SrcA", ff.TF32)         # Dst32b path keeps low mantissa...
    m.s.srcb.banks[0].rows[0] = 0x1FF << 8 | 0x80
    run1(m, "MOVB2D", dest_32b_lo=0, src=0, addr_mode=0, movb2d_instr_mod=0, dst=0)
    assert (m.s.dest.bits[0] == 0x3F80).all() and (m.s.dest.bits[8] == 0).all()   # ...but BF16 SrcB dropped it
    m.s.srcb.banks[0].implied_format = ff.TF32
    run1(m, "MOVB2D", dest_32b_lo=0, src=0, addr_mode=0, movb2d_instr_mod=0, dst=1)
    assert (m.s.dest.bits[1] == 0x3F80).all() and (m.s.dest.bits[9] == 0xE000).all()


def test_delta17_movb2d_fp16_srcb_drops_high_exponent_after_flushing():
    m = machine(implied=ff.FP16, give=True)
    set_tcfg(m, T, "DISABLE_IMPLIED_SRCA_FMT_Base", 1)
    set_cfg(m, "ALU_FORMAT_SPEC_REG0_SrcA", ff.BF16)
    m.s.srcb.banks[0].rows[0] = [0x123E5, 0x12320] + [0] * 14      # exponents 0xE5, 0x20
    run1(m, "MOVB2D", dest_32b_lo=0, src=0, addr_mode=0, movb2d_instr_mod=0, dst=0)
    # 0xE5 -> 0x05; 0x20 is not flushed (nonzero) but becomes 0 after the drop
    assert m.s.dest.bits[0][:2].tolist() == [0x2405, 0x2400]


def test_delta17_movb2a_copies_without_truncation():
    m = machine(implied=ff.BF16, give=True)
    m.s.srcb.banks[0].rows[0] = 0x12745                         # low mantissa bits set
    run1(m, "MOVB2A", srca=0, addr_mode=0, instr_mod=0, srcb=0)
    assert (m.s.srca.banks[0].rows[0] == 0x12745).all()


def test_delta17_tf32_with_use_dst32b_lo_is_undefined():
    m = machine(implied=ff.TF32, give=True)
    for name, mod in (("MOVA2D", {"instr_mod": 0}), ("MOVB2D", {"movb2d_instr_mod": 0})):
        with pytest.raises(UndefinedBehaviour):
            run1(m, name, dest_32b_lo=1, src=0, addr_mode=0, dst=0, **mod)
    assert m.s.srca.banks[0].allowed_client == MATRIX_UNIT


# --- #18: REPLAY len 0 means 32 ---
def test_delta18_replay_len_zero_means_32():
    m = machine()
    incr = encode("INCRWC", {"rwc_d": 1})
    load = encode("REPLAY", {"start_idx": 0, "len": 0, "load_mode": 1, "execute_while_loading": 0})
    m.run({T: [load] + [incr] * 32 + [encode("REPLAY", {"start_idx": 0, "len": 0})]})
    assert m.s.rwc[T].dst == 32 and m.s.frontend[T].load_left == 0
