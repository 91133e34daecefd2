"""PACR: Dst -> L1 for every uncompressed conversion golden models, with edge values whose L1 bits are
derived by hand (Blackhole facts from ttsim v1.10.0: NaN -> inf on the 16-bit reads, zero exponents flush
to +0, round half up on magnitude for Dst32b -> BF16 / FP16, truncation elsewhere); read interfaces, edge
masks, invalid rows, ReLU, continuation across PACRs, AddrMod on the packer ADCs, refusals."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from golden import fpu_formats as ff
from golden.dest_view import adj16, adj32
from golden.errors import NotModelled, UndefinedBehaviour
from golden.handlers import load_all
from golden.isa import encode
from golden.pack.pacr import pacr
from golden.state import COLS

from regfile_util import machine, set_cfg, set_tcfg

P = 2                 # the pack thread
OUT = 0x30000         # L1_Dest_addr 0x2FFF: +1 for the tile header, in 16-byte units
FP32, FP16, BF16, INT32, UINT16, INT8 = ff.FP32, ff.FP16, ff.BF16, ff.INT32, 9, ff.INT8


def configure_packer(m, read32: int, in_fmt: int, out_fmt: int, out_addr: int = OUT, t: int = P) -> None:
    """Uncompressed packing of 16-datum rows to ``out_addr`` with all columns kept."""
    set_cfg(m, "ALU_FORMAT_SPEC_REG2_Dstacc", in_fmt)
    set_cfg(m, "PCK_DEST_RD_CTRL_Read_32b_data", read32)
    set_cfg(m, "PCK_EDGE_OFFSET_SEC0_mask", 0xFFFF)
    set_cfg(m, "PACK_COUNTERS_SEC0_pack_reads_per_xy_plane", 4)
    set_cfg(m, "THCON_SEC0_REG1_L1_Dest_addr", out_addr // 16 - 1)
    set_cfg(m, "THCON_SEC0_REG1_Disable_zero_compress", 1)
    set_cfg(m, "THCON_SEC0_REG1_In_data_format", in_fmt)
    set_cfg(m, "THCON_SEC0_REG1_Out_data_format", out_fmt)
    m.s.adc[t]["pack"][1].x = 15          # SETADCXX PAC, 15, 0: one row of 16 datums per interface


def packer(read32: int, in_fmt: int, out_fmt: int, round10: int = 0, unsigned: int = 0):
    m = machine()
    configure_packer(m, read32, in_fmt, out_fmt)
    set_cfg(m, "PCK_DEST_RD_CTRL_Round_10b_mant", round10)
    set_cfg(m, "PCK_DEST_RD_CTRL_Read_unsigned", unsigned)
    return m


def pacr_word(readintfsel=1, last=1, addrmode=0, flush=0, **more):
    fields = dict(cfgcontext=0, rowpadzero=0, dstaccessmode=0, addrmode=addrmode, addrcntcontext=0, zerowrite=0,
                  readintfsel=readintfsel, ovrdthreadid=0, concat=0, ctxtctrl=0, flush=flush, last=last)
    return encode("PACR", {**fields, **more})


def run(m, *words):
    m.run({P: list(words) or [pacr_word()]})
    return m


def put16(m, row, values):
    m.s.dest.bits[row] = [v for v in values] + [0] * (COLS - len(values))


def put_fp32(m, row, bits):
    """Dst32b row ``row`` holds FP32 (or sign-magnitude INT32) patterns ``bits`` (padded with zeroes)."""
    cells = [ff.fp32_to_dst32(b) for b in bits] + [0] * (COLS - len(bits))
    hi = adj32(row, False, False)
    m.s.dest.bits[hi] = [c >> 16 for c in cells]
    m.s.dest.bits[hi + 8] = [c & 0xFFFF for c in cells]


def out(m, fmt_bytes, n=COLS, addr=OUT):
    code = {4: "<I", 2: "<H", 1: "<B"}[fmt_bytes]
    return list(struct.unpack(f"<{n}{code[1]}", m.s.l1.read(addr, n * fmt_bytes)))


# --- conversions: (input patterns, L1 patterns), derived by hand ---
BF16_CASES = [      # BF16 value -> BF16 in L1 (Dst16b read)
    (0x3F80, 0x3F80), (0xBF80, 0xBF80), (0x0000, 0x0000),
    (0x8000, 0x0000),            # -0: zero exponent flushes to +0
    (0x0001, 0x0000), (0x807F, 0x0000),   # denormals flush to +0
    (0x0080, 0x0080), (0x7F7F, 0x7F7F), (0xFF7F, 0xFF7F),   # min / max normals kept
    (0x7F80, 0x7F80), (0xFF80, 0xFF80),   # infinities kept
    (0x7FC0, 0x7F80), (0x7F81, 0x7F80), (0xFFC1, 0xFF80),   # NaNs become infinities
]


def test_dst16b_bf16_to_bf16():
    m = packer(0, BF16, BF16)
    put16(m, 0, [ff.bits_to_dst16_bf16(v) for v, _ in BF16_CASES])
    assert out(run(m), 2)[:len(BF16_CASES)] == [w for _, w in BF16_CASES]


def test_dst16b_bf16_to_fp32_widens_after_the_flushes():
    m = packer(0, BF16, FP32)
    put16(m, 0, [ff.bits_to_dst16_bf16(v) for v, _ in BF16_CASES])
    assert out(run(m), 4)[:len(BF16_CASES)] == [w << 16 for _, w in BF16_CASES]


FP16_CASES = [      # FP16 value -> (FP16, FP32, BF16) in L1 (Dst16b read)
    (0x3C00, 0x3C00, 0x3F800000, 0x3F80),
    (0xBC08, 0xBC08, 0xBF810000, 0xBF81),     # BF16 keeps mantissa bits 9:3 (truncation)
    (0x3C07, 0x3C07, 0x3F80E000, 0x3F80),
    (0x8000, 0x0000, 0x00000000, 0x0000),     # -0 -> +0
    (0x03FF, 0x0000, 0x00000000, 0x0000),     # denormal -> +0
    (0x0400, 0x0400, 0x38800000, 0x3880),     # min normal
    (0x7BFF, 0x7BFF, 0x477FE000, 0x477F),     # max normal
    (0x7C00, 0x7C00, 0x47800000, 0x4780),     # "inf" rebiases to a finite 65536
    (0xFFFF, 0xFFFF, 0xC7FFE000, 0xC7FF),     # NaN pattern too
]


@pytest.mark.parametrize("out_fmt,col", [(FP16, 1), (FP32, 2), (BF16, 3)])
def test_dst16b_fp16_conversions(out_fmt, col):
    m = packer(0, FP16, out_fmt)
    put16(m, 0, [ff.bits_to_dst16_fp16(c[0]) for c in FP16_CASES])
    size = 4 if out_fmt == FP32 else 2
    assert out(run(m), size)[:len(FP16_CASES)] == [c[col] for c in FP16_CASES]


def test_dst16b_uint16_is_opaque():
    m = packer(0, UINT16, UINT16)
    put16(m, 0, [0xFFFF, 0x8000, 0x0001, 0x1234])
    assert out(run(m), 2)[:4] == [0xFFFF, 0x8000, 0x0001, 0x1234]


F32_PASS = [0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x7F800000, 0xFF800000, 0x7FC00001, 0xFFFFFFFF,
            0x3F800000, 0x12345678]


@pytest.mark.parametrize("fmt", [FP32, INT32])
def test_dst32b_fp32_and_int32_pass_through(fmt):
    m = packer(1, fmt, fmt)
    put_fp32(m, 0, F32_PASS)
    assert out(run(m), 4)[:len(F32_PASS)] == F32_PASS


FP32_TO_BF16 = [    # Dst32b FP32 -> BF16 (In_data_format BF16): NaN -> inf, +0x8000 then >> 16, zero exponent -> +0
    (0x3F808000, 0x3F81), (0xBF808000, 0xBF81),       # ties round up in magnitude
    (0x3F807FFF, 0x3F80), (0x3F80FFFF, 0x3F81),
    (0x7F7F8000, 0x7F80),                             # rounds up to infinity
    (0x7FC00000, 0x7F80), (0xFF800001, 0xFF80),       # NaN -> inf of the same sign
    (0x007FFFFF, 0x0080),                             # the largest denormal rounds up to the smallest normal
    (0x007F7FFF, 0x0000), (0x80000000, 0x0000),       # zero exponent after rounding -> +0
]


def test_dst32b_fp32_to_bf16_rounds_half_up():
    m = packer(1, BF16, BF16)
    put_fp32(m, 0, [v for v, _ in FP32_TO_BF16])
    assert out(run(m), 2)[:len(FP32_TO_BF16)] == [w for _, w in FP32_TO_BF16]


FP32_TO_FP16_TRUNC = [   # In_data_format FP32, Out FP16: exponent - 112, mantissa >> 13, no rounding
    (0x3F800000, 0x3C00), (0xBF800000, 0xBC00), (0x3F801FFF, 0x3C00),
    (0x477FE000, 0x7BFF), (0x47800000, 0x7C00), (0x47FFFFFF, 0x7FFF),   # exponent 31 is an ordinary value
    (0x48000000, 0x7FFF), (0x7F800000, 0x7FFF), (0xFFC00000, 0xFFFF),   # beyond: saturate with the sign
    (0x38400000, 0x0200),                          # exponent 112 gives a zero FP16 exponent, not flushed
    (0x37FFFFFF, 0x0000), (0xB7800000, 0x8000),    # below: signed zero
]


def test_dst32b_fp32_to_fp16_truncates():
    m = packer(1, FP32, FP16)
    put_fp32(m, 0, [v for v, _ in FP32_TO_FP16_TRUNC])
    assert out(run(m), 2)[:len(FP32_TO_FP16_TRUNC)] == [w for _, w in FP32_TO_FP16_TRUNC]


FP32_TO_FP16_ROUND = [   # In_data_format FP16 from Dst32b (Round_10b_mant): NaN -> inf, +0x1000 >> 13, flush, rebias
    (0x3F801000, 0x3C01), (0x3F800FFF, 0x3C00), (0xBF803000, 0xBC02),
    (0x477FF000, 0x7C00),                       # rounds into exponent 31
    (0x7F800000, 0x7FFF), (0x7FC00000, 0x7FFF), (0xFF800000, 0xFFFF),
    (0x00001000, 0x0000), (0x80000000, 0x0000),  # zero exponent -> +0
    (0x38000000, 0x0000), (0xB7FFF000, 0x8000),  # exponent 112 -> FP16 exponent 0; below -> signed zero
]


def test_dst32b_fp32_to_fp16_with_round_10b_mant():
    m = packer(1, FP16, FP16, round10=1)
    put_fp32(m, 0, [v for v, _ in FP32_TO_FP16_ROUND])
    assert out(run(m), 2)[:len(FP32_TO_FP16_ROUND)] == [w for _, w in FP32_TO_FP16_ROUND]


def sm(v):
    return (0x80000000 | -v) if v < 0 else v


@pytest.mark.parametrize("unsigned,want", [(0, [0x00, 0x80, 0x05, 0x85, 0x7F, 0xFF, 0x7F]),
                                           (1, [0x00, 0x00, 0x05, 0x00, 0xFF, 0x00, 0xC8])])
def test_dst32b_int32_to_int8_saturates(unsigned, want):
    m = packer(1, INT8, INT8, unsigned=unsigned)
    put_fp32(m, 0, [0, 0x80000000, sm(5), sm(-5), sm(300), sm(-300), sm(200)] + [0] * 9)
    got = out(run(m), 1)
    assert got[:7] == (want if unsigned else [0x00, 0x80, 0x05, 0x85, 0x7F, 0xFF, 0x7F])


def test_dst32b_uint16_takes_the_high_row_raw():
    m = packer(1, UINT16, UINT16)
    put_fp32(m, 0, [0x3F80ABCD])
    # the high DstBits row holds the Dst-layout high half of 0x3F80ABCD: sign | man7 << 8 | exp
    assert out(run(m), 2)[0] == ff.bits_to_dst16_bf16(0x3F80) == 0x007F


# --- ReLU (STACC_RELU), between the Dst read and the output conversion ---
def relu(m, mode, threshold=0):
    set_cfg(m, "STACC_RELU_ApplyRelu", mode)
    set_cfg(m, "STACC_RELU_ReluThreshold", threshold)
    return m


@pytest.mark.parametrize("mode,threshold,cases", [
    (1, 0, [(0x3F80, 0x3F80), (0xBF80, 0), (0xFFC0, 0), (0x7FC0, 0x7F80), (0x0080, 0x0080)]),
    (2, 0x3F80, [(0x3F80, 0), (0x3F81, 0x3F81), (0x3F7F, 0), (0xC000, 0), (0x7F80, 0x7F80)]),
    (3, 0x3F80, [(0x4000, 0x3F80), (0x3F80, 0x3F80), (0x7F80, 0x3F80), (0x3F00, 0x3F00), (0xC000, 0)])])
def test_relu_on_bf16(mode, threshold, cases):
    m = relu(packer(0, BF16, BF16), mode, threshold)
    put16(m, 0, [ff.bits_to_dst16_bf16(v) for v, _ in cases])
    assert out(run(m), 2)[:len(cases)] == [w for _, w in cases]


def test_relu_on_fp32_clamps_by_bits_31_13():
    m = relu(packer(1, FP32, FP32), 3, 0x3F80)
    put_fp32(m, 0, [0x3F801FFF, 0x3F802000, 0xBF800000, 0x80000000, 0x7FC00000])
    assert out(run(m), 4)[:5] == [0x3F801FFF, 0x3F800000, 0, 0, 0x3F800000]
    m = relu(packer(1, FP32, FP32), 2, 0x3F80)
    put_fp32(m, 0, [0x3F800000, 0x3F800001])
    assert out(run(m), 4)[:2] == [0, 0x3F800001]


def test_relu_on_dst32b_fp16_uses_the_threshold_shifted_not_rebiased():
    # the 19-bit value (sign, exp8, man10) is compared with ReluThreshold << 3: FP16 1.0 (0x3C00) becomes
    # exponent 120, so 2.0 clamps to 2**-7, which converts to FP16 0x2000 (ttsim v1.10.0)
    m = relu(packer(1, FP16, FP16, round10=1), 3, 0x3C00)
    put_fp32(m, 0, [0x40000000, 0x3B800000, 0xC0000000])
    assert out(run(m), 2)[:3] == [0x2000, 0x1C00, 0]


def test_relu_on_int32_zeroes_negatives():
    m = relu(packer(1, INT32, INT32), 1)
    put_fp32(m, 0, [sm(5), sm(-5), 0x80000000])
    assert out(run(m), 4)[:3] == [5, 0, 0]


@pytest.mark.parametrize("fmt,mode,threshold,error", [(BF16, 4, 0, NotModelled), (BF16, 1, 0x8000, UndefinedBehaviour),
                                                      (INT32, 2, 0, NotModelled), (UINT16, 1, 0, NotModelled)])
def test_relu_refusals(fmt, mode, threshold, error):
    m = relu(packer(0 if fmt != INT32 else 1, fmt, fmt), mode, threshold)
    with pytest.raises(error):
        run(m)


# --- which rows are read ---
@pytest.mark.parametrize("sel,rows", [(0, [0, 1, 2, 3]), (1, [0]), (3, [0, 1]), (5, [0, 2]), (10, [1, 3])])
def test_read_interfaces_pick_rows(sel, rows):
    m = packer(0, UINT16, UINT16)
    for r in range(4):
        put16(m, r, [0x100 * r + c for c in range(COLS)])
    got = out(run(m, pacr_word(readintfsel=sel)), 2, COLS * len(rows))
    assert got == [0x100 * r + c for r in rows for c in range(COLS)]


def test_eight_datums_with_one_interface():
    m = packer(0, UINT16, UINT16)
    m.s.adc[P]["pack"][1].x = 7
    put16(m, 0, list(range(1, 17)))
    m.s.l1.write(OUT, b"\xaa" * 32)
    assert out(run(m), 2, 16) == list(range(1, 9)) + [0xAAAA] * 8


def test_first_row_from_channel0_y_stride_and_pack_offset():
    m = packer(0, UINT16, UINT16)
    set_cfg(m, "PCK0_ADDR_CTRL_XY_REG_0_Ystride", 64)      # 64 bytes = 2 rows of BF16
    set_cfg(m, "DEST_TARGET_REG_CFG_PACK_SEC0_Offset", 5)
    m.s.adc[P]["pack"][0].y = 3
    put16(m, 11, [0x1111] * 16)
    assert out(run(m), 2) == [0x1111] * 16


@pytest.mark.parametrize("sel,rows", [(0, [0, 16, 32, 48]), (1, [0]), (3, [0, 16])])
def test_strided_mode_reads_rows_16_apart_through_adj16(sel, rows):
    """DstAccessMode=1 (tt-llk pack untilize) needs remap_addrs and swizzle_32b; row R is DstBits[Adj16(R)]."""
    m = packer(0, UINT16, UINT16)
    set_cfg(m, "DEST_ACCESS_CFG_remap_addrs", 1)
    set_cfg(m, "DEST_ACCESS_CFG_swizzle_32b", 1)
    for r in range(64):
        put16(m, adj16(r, True), [0x100 * r + c for c in range(COLS)])
    assert adj16(16, True) == 8 and adj16(8, True) == 32
    got = out(run(m, pacr_word(readintfsel=sel, dstaccessmode=1)), 2, COLS * len(rows))
    assert got == [0x100 * r + c for r in rows for c in range(COLS)]


@pytest.mark.parametrize("remap,swizzle,fields", [(0, 0, dict(dstaccessmode=1)), (1, 0, dict(dstaccessmode=1)),
                                                  (1, 1, dict(dstaccessmode=1, readintfsel=5)), (1, 1, {})])
def test_strided_mode_and_remapping_go_together(remap, swizzle, fields):
    m = packer(0, BF16, BF16)
    set_cfg(m, "DEST_ACCESS_CFG_remap_addrs", remap)
    set_cfg(m, "DEST_ACCESS_CFG_swizzle_32b", swizzle)
    with pytest.raises(NotModelled):
        run(m, pacr_word(**fields))


def test_dst32b_rows_use_adj32():
    m = packer(1, FP32, FP32)
    set_cfg(m, "DEST_TARGET_REG_CFG_PACK_SEC0_Offset", 9)   # Dst32b row 9: DstBits rows 17 and 25
    put_fp32(m, 9, [0x3F800000] * 16)
    assert adj32(9, False, False) == 17
    assert out(run(m), 4) == [0x3F800000] * 16


def test_invalid_rows_read_as_zero_before_conversion():
    m = packer(0, BF16, FP32)
    put16(m, 0, [ff.bits_to_dst16_bf16(0x3F80)] * 16)
    put16(m, 1, [ff.bits_to_dst16_bf16(0x4000)] * 16)
    m.s.dest.valid[0] = False
    assert out(run(m, pacr_word(readintfsel=3)), 4, 32) == [0] * 16 + [0x40000000] * 16


def test_zero_write_reads_zeroes():
    m = packer(0, UINT16, UINT16)
    put16(m, 0, [7] * 16)
    assert out(run(m, pacr_word(zerowrite=1)), 2) == [0] * 16


# --- edge masks ---
def test_edge_masks_by_row_mapping():
    m = packer(0, UINT16, UINT16)
    set_cfg(m, "PCK_EDGE_OFFSET_SEC0_mask", 0x0001)
    set_cfg(m, "PCK_EDGE_OFFSET_SEC1_mask", 0x8000)
    set_cfg(m, "TILE_ROW_SET_MAPPING_0_row_set_mapping_1", 1)   # packer row 1 uses SEC1
    set_cfg(m, "PACK_COUNTERS_SEC0_pack_reads_per_xy_plane", 2)
    for r in range(4):
        put16(m, r, [0x10 * r + 1] * 16)
    got = out(run(m, pacr_word(readintfsel=0)), 2, 64)
    rows = [got[16 * r:16 * r + 16] for r in range(4)]
    assert rows[0] == [0x01] + [0] * 15
    assert rows[1] == [0] * 15 + [0x11]
    assert rows[2] == [0x21] + [0] * 15          # the row counter wrapped after 2 rows
    assert rows[3] == [0] * 15 + [0x31]


def test_edge_mask_row_position_continues_across_pacrs():
    m = packer(0, UINT16, UINT16)
    set_cfg(m, "PCK_EDGE_OFFSET_SEC0_mask", 0xFFFF)
    set_cfg(m, "TILE_ROW_SET_MAPPING_0_row_set_mapping_1", 1)   # SEC1 mask is 0
    put16(m, 0, [9] * 16)
    run(m, pacr_word(last=0), pacr_word(last=1))
    assert out(m, 2, 32) == [9] * 16 + [0] * 16


# --- output addresses and the carried packer state ---
def test_continuation_appends_until_last_then_restarts():
    m = packer(0, UINT16, UINT16)
    set_tcfg(m, P, "ADDR_MOD_PACK_SEC1_YsrcIncr", 1)
    set_cfg(m, "PCK0_ADDR_CTRL_XY_REG_0_Ystride", 32)
    for r in range(3):
        put16(m, r, [r + 1] * 16)
    run(m, pacr_word(last=0, addrmode=1), pacr_word(last=0, addrmode=1), pacr_word(last=1, addrmode=1))
    assert out(m, 2, 48) == [1] * 16 + [2] * 16 + [3] * 16
    assert m.s.adc[P]["pack"][0].y == 3
    assert not m.s.packer.continuing
    m.s.adc[P]["pack"][0].y = 0
    run(m)                                   # starts again at L1_Dest_addr
    assert out(m, 2, 16) == [1] * 16


def test_flush_writes_nothing_and_restarts():
    m = packer(0, UINT16, UINT16)
    put16(m, 0, [5] * 16)
    m.s.l1.write(OUT, b"\xaa" * 64)
    run(m, pacr_word(last=0), pacr_word(flush=1, last=0), pacr_word(last=1))
    assert out(m, 2, 32) == [5] * 16 + [0xAAAA] * 16


def test_output_y_stride_is_a_byte_offset():
    m = packer(0, UINT16, UINT16)
    set_cfg(m, "PCK0_ADDR_CTRL_XY_REG_1_Ystride", 0x100)
    m.s.adc[P]["pack"][1].y = 2
    put16(m, 0, [3] * 16)
    assert out(run(m), 2, addr=OUT + 0x200) == [3] * 16      # (2 * 0x100) >> 4 units of 16 bytes


def test_addrmod_updates_both_channels():
    m = packer(0, UINT16, UINT16)
    set_tcfg(m, P, "ADDR_MOD_PACK_SEC2_YsrcIncr", 2)
    set_tcfg(m, P, "ADDR_MOD_PACK_SEC2_YdstIncr", 3)
    set_tcfg(m, P, "ADDR_MOD_PACK_SEC2_ZdstIncr", 1)
    run(m, pacr_word(addrmode=2))
    ch0, ch1 = m.s.adc[P]["pack"]
    assert (ch0.y, ch0.z, ch1.y, ch1.z) == (2, 0, 3, 1)


# --- block floats: one shared exponent per 16 datums (exponent stream first, Exp_section_size = 1 unit) ---
BFP_ROW = [0x3F80, 0x3F00, 0x3FC0, 0xBF80, 0x0000, 0x3F81, 0x3E00, 0x3B80, 0x3FFF, 0xBB80]
BFP8_ROW = [0x40, 0x20, 0x60, 0xC0, 0x00, 0x41, 0x08, 0x00, 0x7F, 0x00]   # by hand: shared exponent 0x7F,
#   magnitude (hidden bit) >> (shift + 1) rounded half up, 127 at most; sign dropped on a zero magnitude


def bfp_packer(read32, in_fmt, out_fmt):
    m = packer(read32, in_fmt, out_fmt)
    set_cfg(m, "THCON_SEC0_REG1_Exp_section_size", 1)
    return m


@pytest.mark.parametrize("fmt,bits", [(ff.BFP8, 8), (ff.BFP4, 4), (ff.BFP2, 2)])
def test_dst16b_bf16_to_bfp_shares_the_largest_exponent(fmt, bits):
    m = bfp_packer(0, BF16, fmt)
    m.s.l1.write(OUT, b"\xaa" * 96)
    put16(m, 0, [ff.bits_to_dst16_bf16(v) for v in BFP_ROW])      # rows 1..3 stay zero
    run(m, pacr_word(readintfsel=0))                                  # four rows: 64 datums, 4 exponents
    assert m.s.l1.read(OUT, 16) == bytes([0x7F, 0, 0, 0]) + bytes(12)      # padded by Last
    n = 64 * bits // 8
    data = m.s.l1.read(OUT + 16, n + 16)
    got = [(data[i * bits // 8] >> (i * bits % 8)) & ((1 << bits) - 1) for i in range(16)]
    mag = [(v & 0x7F) >> (8 - bits) for v in BFP8_ROW] + [0] * 6    # BFP4/BFP2 truncate the BFP8 magnitude
    assert got == [g | (1 << (bits - 1)) if v >> 7 and g else g for g, v in zip(mag, BFP8_ROW + [0] * 6)]
    assert data[16 * bits // 8:n] == bytes(n - 16 * bits // 8) and data[n:] == b"\xaa" * 16   # zero rows; no pad


def test_dst32b_fp32_to_bfp8_truncates_to_bf16_first():
    m = bfp_packer(1, FP32, ff.BFP8)
    put_fp32(m, 0, [0x3F80FFFF, 0x40000000, 0x00400000, 0x80400000, 0xBF800000])
    run(m)
    assert m.s.l1.read(OUT, 1) == bytes([0x80])                        # 2.0 sets the shared exponent
    assert list(m.s.l1.read(OUT + 16, 5)) == [0x20, 0x40, 0x00, 0x00, 0xA0]   # 1.0 (low bits dropped), 2.0,
    #   the denormals flushed to +0, -1.0


# --- refusals and undefined behaviour ---
# --- L1 accumulation (golden.pack.l1_acc; values derived by hand from the rules in its docstring) ---
L1_ACC_CASES = {
    FP32: [(0x3F800000, 0x3F800000, 0x40000000), (0x00000001, 0x3F800000, 0x3F800000),   # denormal old: zero
           (0x7F800000, 0xFF800000, 0x7FC00000), (0xFFC00001, 0x3F800000, 0x7FC00000),   # NaNs canonical
           (0x00800000, 0x80800001, 0x80000000)],                                         # denormal sum: -0
    BF16: [(0x3F80, 0x3F80, 0x4000), (0x7F80, 0xFF80, 0x7FC0), (0x7FC0, 0x3F80, 0x7F80),  # NaN old: huge
           (0x3F80, 0x3B80, 0x3F80), (0x3F81, 0x3B80, 0x3F82),                            # ties to even
           (0x0001, 0x8000, 0x0000), (0x7F7F, 0x7F7F, 0x7F80)],                           # overflow: inf
    FP16: [(0x3C00, 0x3C00, 0x4000), (0x3C00, 0xBC00, 0x0000), (0x7800, 0xF800, 0x7FFF),  # cancellation
           (0x7BFF, 0x7BFF, 0x7FFF), (0x0400, 0x8001, 0x0400), (0x0401, 0x8400, 0x7FFF)],  # sum below range
}


@pytest.mark.parametrize("fmt", sorted(L1_ACC_CASES))
def test_l1_accumulation_arithmetic(fmt):
    from golden.pack.l1_acc import accumulate
    old, new, want = (np.array(c, dtype=np.uint64) for c in zip(*L1_ACC_CASES[fmt]))
    assert [int(v) for v in accumulate(fmt, old, new)] == [int(v) for v in want]


def test_pacr_with_l1_accumulation_adds_to_l1():
    m = packer(0, BF16, BF16)
    set_cfg(m, "THCON_SEC0_REG1_Pack_L1_Acc", 1)
    put16(m, 0, [ff.bits_to_dst16_bf16(0x3F80)] * 16)
    m.s.l1.write(OUT, struct.pack("<16H", *([0x4000] * 8 + [0xBF80] * 8)))
    assert out(run(m), 2) == [0x4040] * 8 + [0x0000] * 8          # 2 + 1 = 3; -1 + 1 = +0


def test_pacr_l1_accumulation_refuses_block_float():
    m = bfp_packer(0, BF16, ff.BFP8)
    set_cfg(m, "THCON_SEC0_REG1_Pack_L1_Acc", 1)
    with pytest.raises(NotModelled):
        run(m)


@pytest.mark.parametrize("name,value", [
    ("ALU_ROUNDING_MODE_Packer_srnd_en", 1),
    ("DEST_ACCESS_CFG_remap_addrs", 1), ("THCON_SEC0_REG1_Disable_zero_compress", 0),
    ("PCK_DEST_RD_CTRL_Read_int8", 1), ("THCON_SEC0_REG1_Out_data_format", ff.BFP8A),
    ("PCK_DEST_RD_CTRL_Round_10b_mant", 1), ("PCK_EDGE_TILE_ROW_SET_SELECT_select", 2)])
def test_refused_configurations(name, value):
    m = packer(0, BF16, BF16)
    set_cfg(m, name, value)
    with pytest.raises(NotModelled):
        run(m)


@pytest.mark.parametrize("fields", [dict(readintfsel=2), dict(rowpadzero=1),
                                    dict(ovrdthreadid=1), dict(ctxtctrl=1)])
def test_refused_fields(fields):
    with pytest.raises(NotModelled):
        run(packer(0, BF16, BF16), pacr_word(**fields))


def test_a_partial_output_chunk_is_written_and_padded_by_last():
    m = packer(1, INT8, INT8)
    m.s.adc[P]["pack"][1].x = 7          # 8 one-byte datums: half a 16-byte chunk
    m.s.l1.write(OUT, b"\xaa" * 32)
    put_fp32(m, 0, [sm(v) for v in (1, -2, 3, 200, 0, 5, 6, 7)])
    run(m)
    assert m.s.l1.read(OUT, 32) == bytes([1, 0x82, 3, 127, 0, 5, 6, 7]) + bytes(8) + b"\xaa" * 16


def test_in_format_must_match_dstacc():
    m = packer(0, BF16, BF16)
    set_cfg(m, "ALU_FORMAT_SPEC_REG2_Dstacc", FP16)
    with pytest.raises(UndefinedBehaviour):
        run(m)


def test_registered_semantics():
    assert load_all()["PACR"] is pacr


# --- block-float packer inputs: In_data_format = Dstacc = Bfp8_b (6) or Bfp8 (a) (2), by hand from the rules in
# golden.pack_formats (ttsim v1.10.0 PACR: six mantissa bits, half up on the last bit; flush and clamp first) ---
BFP8B_IN_16 = [      # BF16 value in Dst16b -> the packer's Bfp8_b value (BF16 bits)
    (0x3F80, 0x3F80), (0x3F81, 0x3F82),     # an odd last mantissa bit rounds up
    (0x3F83, 0x3F84), (0xBF81, 0xBF82),     # up on the magnitude (the sign rides along)
    (0x3FFF, 0x4000),                       # the carry reaches the exponent
    (0x7F7F, 0x7F80), (0x7FC1, 0x7F80),     # the largest normal rounds to inf; a NaN reads as inf first
    (0x807F, 0x0000), (0x8000, 0x0000)]     # denormal and -0 flush to +0 before the rounding


@pytest.mark.parametrize("out_fmt,width", [(BF16, 2), (FP32, 4)])
def test_dst16b_bfp8b_input_keeps_six_mantissa_bits(out_fmt, width):
    m = packer(0, ff.BFP8, out_fmt)
    put16(m, 0, [ff.bits_to_dst16_bf16(v) for v, _ in BFP8B_IN_16])
    shift = 16 if out_fmt == FP32 else 0
    assert out(run(m), width, len(BFP8B_IN_16)) == [w << shift for _, w in BFP8B_IN_16]


def test_dst32b_bfp8b_input_rounds_the_top_half():
    m = bfp_packer(1, ff.BFP8, ff.BFP8)
    put_fp32(m, 0, [0x3F81FFFF, 0x3F80FFFF, 0x007FFFFF, 0x007EFFFF, 0xBF830000, 0x7FC00001])
    run(m)
    # top halves 0x3F81 -> 0x3F82, 0x3F80 stays (low half ignored), 0x007F -> 0x0080 (rounded before the flush),
    # 0x007E flushed, 0xBF83 -> 0xBF84, the NaN -> inf: shared exponent 0xFF (inf's); every finite datum is then
    # 8 or more binades below it and packs to 0, inf itself to magnitude 0x40
    assert m.s.l1.read(OUT, 1) == bytes([0xFF])
    assert list(m.s.l1.read(OUT + 16, 6)) == [0, 0, 0, 0, 0, 0x40]


def test_dst32b_bfp8b_input_to_bfp8_shares_the_largest_exponent():
    m = bfp_packer(1, ff.BFP8, ff.BFP8)
    put_fp32(m, 0, [0x3F81FFFF, 0x40000000, 0xBF830000])
    run(m)
    # 1.015625 (0x3F82), 2.0 (0x4000: shared exponent 0x80), -1.03125 (0xBF84): magnitudes with the hidden bit
    # (0x82, 0x80, 0x84) shifted by 1 + (shared - own exponent) rounded half up: 0x21, 0x40, 0x21 | sign
    assert m.s.l1.read(OUT, 1) == bytes([0x80])
    assert list(m.s.l1.read(OUT + 16, 3)) == [0x21, 0x40, 0xA1]


def test_dst16b_bfp8a_input_rounds_fp16_to_e5m6_then_widens_to_bf16():
    m = bfp_packer(0, ff.BFP8A, ff.BFP8)
    # FP16 1.0 (0x3C00), 1 + 9/1024 (0x3C09: +8 carries into the kept bits -> 0x3C10), -2.0 (0xC000),
    # a denormal (0x0001: rounds to 0x0000, flushed), 65504 (0x7BFF: -> 0x7C00, i.e. exponent 31)
    put16(m, 0, [ff.bits_to_dst16_fp16(v) for v in (0x3C00, 0x3C09, 0xC000, 0x0001, 0x7BFF)])
    run(m)
    # BF16 after widening: 0x3F80, 0x3F82, 0xC000, 0, 0x4780 (e 31 + 112): the shared exponent is 0x8F (2^16),
    # every other datum is 15 or more binades below it (magnitude 0); 2^16 is 0x80 -> 0x40
    assert m.s.l1.read(OUT, 1) == bytes([0x8F])
    assert list(m.s.l1.read(OUT + 16, 5)) == [0, 0, 0, 0, 0x40]


def test_bfp8b_input_relu_acts_on_the_sixteen_bit_value():
    m = packer(0, ff.BFP8, BF16)
    set_cfg(m, "STACC_RELU_ApplyRelu", 3)
    set_cfg(m, "STACC_RELU_ReluThreshold", 0x3F82)
    put16(m, 0, [ff.bits_to_dst16_bf16(v) for v in (0xBF80, 0x3F81, 0x3F85, 0x3F00)])
    assert out(run(m), 2, 4) == [0, 0x3F82, 0x3F82, 0x3F00]   # -1 -> +0; 0x3F82, 0x3F86 clamp to 0x3F82


@pytest.mark.parametrize("read32,in_fmt,out_fmt", [(0, ff.BFP8, ff.BFP2), (1, ff.BFP8, FP32), (0, ff.BFP8A, BF16)])
def test_block_float_inputs_ttsim_refuses_stay_refused(read32, in_fmt, out_fmt):
    with pytest.raises(NotModelled):
        run(bfp_packer(read32, in_fmt, out_fmt))
