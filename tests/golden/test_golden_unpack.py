"""UNPACR: L1 -> SrcA / SrcB / Dst for uncompressed non-BFP formats. Src cells are checked directly
(golden's 19-bit layout) and through round trips that end where a device can see them: L1 -> Dst -> PACR
-> L1 for FP32 / INT32, and L1 -> SrcA -> MOVA2D -> Dst -> PACR -> L1 for BF16. Expected bits are derived
by hand from UNPACR_Regular.md and the Blackhole facts of ttsim v1.10.0 (see golden.pack_formats)."""
from __future__ import annotations

import struct

import pytest

from golden import fpu_formats as ff
from golden.core import decode
from golden.errors import Blocked
from golden.errors import Hang, NotModelled, UndefinedBehaviour
from golden.handlers import load_all
from golden.isa import encode
from golden.registers import config_field
from golden.state import MATRIX_UNIT, UNPACKERS
from golden.unpack.unpacr import unpacr

from regfile_util import machine, set_cfg, set_tcfg
from test_golden_pack import configure_packer, pacr_word

U0 = 0                # the unpack thread
L1 = 0x40000          # THCON_SEC*_REG3_Base_address 0x3FFF: +1 for the tile header, in 16-byte units
FP32, FP16, TF32, BF16, INT32, UINT16, INT8 = ff.FP32, ff.FP16, ff.TF32, ff.BF16, ff.INT32, 9, ff.INT8


def unpacker(in_fmt: int, out_fmt: int, count: int = 16, which: int = 0, to_dst: bool = False, row: int = 0):
    """A machine set up like Blackhole LLK code: MultiContextMode context 0, SetOvrdWithAddr for Src,
    X dim 16, output row ``row`` through THCON_SEC0_REG5_Dest_cntx0_address (64 + 16 * row)."""
    m = machine()
    sec = f"THCON_SEC{which}_"
    set_desc(m, which, in_fmt | 16 << 16, 4 | 1 << 16)     # X dim 16, Y dim 4, Z dim 1
    set_cfg(m, sec + "REG2_Out_data_format", out_fmt)
    set_cfg(m, sec + "REG2_Disable_zero_compress_cntx0", 1)
    set_cfg(m, sec + "REG3_Base_address", L1 // 16 - 1)
    if which == 0:
        set_cfg(m, "THCON_SEC0_REG2_Unpack_if_sel_cntx0", int(to_dst))
        set_cfg(m, "THCON_SEC0_REG5_Tile_x_dim_cntx0", 16)
        set_cfg(m, "THCON_SEC0_REG5_Dest_cntx0_address", 64 + 16 * row)
    set_tcfg(m, U0, "SRCA_SET_SetOvrdWithAddr", 0 if to_dst else 1)
    unit = ("unpack0", "unpack1")[which]
    m.s.adc[U0][unit][1].x = count - 1
    return m


def set_desc(m, which: int, w0: int, w1: int) -> None:
    """Words 0 and 1 of the 128-bit tile descriptor (registers.yaml names only its first word)."""
    i = config_field(f"THCON_SEC{which}_REG0_TileDescriptor").index
    m.s.config[0][i], m.s.config[0][i + 1] = w0, w1


def unpacr_word(which=0, setdatvalid=1, addrmode=0, ovrd=1, **more):
    fields = dict(unpack_block_selection=which, addrmode=addrmode, cfgcontextcntinc=0, cfgcontextid=0,
                  addrcntcontextid=0, ovrdthreadid=ovrd, setdatvalid=setdatvalid, srcb_bcast=0, zerowrite2=0,
                  autoinccontextid=0, rowsearch=0, searchcacheflush=0, last=1)
    return encode("UNPACR", {**fields, **more})


def put_l1(m, code: str, values, addr=L1):
    m.s.l1.write(addr, struct.pack(f"<{len(values)}{code}", *values))


def run(m, *words, t=U0):
    m.run({t: list(words) or [unpacr_word()]})
    return m


def srca_cells(m, bank=0, row=0, n=16):
    return [int(v) for v in m.s.srca.banks[bank].rows[row:row + (n + 15) // 16].reshape(-1)[:n]]


# --- conversions into Src cells (sign 18, mantissa 17:8, exponent 7:0) ---
def cell(sign, exp, man):
    return sign << 18 | man << 8 | exp


FP32_TO_TF32 = [(0x3F800000, cell(0, 0x7F, 0)), (0xBF801FFF, cell(1, 0x7F, 0)),   # low 13 bits dropped
                (0x3F802000, cell(0, 0x7F, 1)), (0x00000001, 0),                # no rounding, no flush
                (0x00400000, cell(0, 0, 0x200)), (0x7FC00000, cell(0, 0xFF, 0x200)),
                (0xFF800000, cell(1, 0xFF, 0))]
FP32_TO_BF16 = [(0x3F80FFFF, cell(0, 0x7F, 0)), (0x3F818000, cell(0, 0x7F, 0x008)),  # 16 bits dropped
                (0x00400000, 0), (0x80400000, cell(1, 0, 0)),                         # denormals: signed zero
                (0x7F800001, cell(0, 0xFF, 0)), (0x00800000, cell(0, 1, 0))]
FP32_TO_FP16 = [(0x3F800000, cell(0, 15, 0)), (0x3F801FFF, cell(0, 15, 0)),          # truncated
                (0x477FE000, cell(0, 30, 0x3FF)), (0x47800000, cell(0, 31, 0)),
                (0x48000000, cell(0, 31, 0x3FF)), (0xFF800000, cell(1, 31, 0x3FF)),  # saturate, sign kept
                (0x38000000, cell(0, 0, 0)), (0x38200000, cell(0, 0, 0x100)),        # exponent 112 -> 0
                (0xB7FFFFFF, cell(1, 0, 0))]                                         # below: signed zero


@pytest.mark.parametrize("out_fmt,table", [(TF32, FP32_TO_TF32), (BF16, FP32_TO_BF16), (FP16, FP32_TO_FP16)])
def test_fp32_into_srca(out_fmt, table):
    m = unpacker(FP32, out_fmt)
    put_l1(m, "I", [v for v, _ in table])
    assert srca_cells(run(m), n=len(table)) == [c for _, c in table]


@pytest.mark.parametrize("fmt,vals,cells", [
    (FP16, [0x3C00, 0x8001, 0x7C01, 0xFBFF], [cell(0, 15, 0), cell(1, 0, 1), cell(0, 31, 1), cell(1, 30, 0x3FF)]),
    (BF16, [0x3F80, 0x8001, 0x7FC1, 0x0000], [cell(0, 0x7F, 0), cell(1, 0, 8), cell(0, 0xFF, 0x208), 0]),
    (UINT16, [0xFFFF, 0x1234, 0x0080, 0x8000], [0x7F8FF, 0x12 << 11 | 0x34, 0x80, 0x40000])])
def test_fp16_bf16_uint16_move_without_flushing(fmt, vals, cells):
    m = unpacker(fmt, fmt)
    put_l1(m, "H", vals)
    assert srca_cells(run(m), n=4) == cells


@pytest.mark.parametrize("unsigned,cells", [
    (0, [0, cell(1, 0, 0), cell(0, 16, 0x7F), cell(1, 16, 0x7F), cell(0, 16, 1)]),
    (1, [0, cell(0, 16, 0x80), cell(0, 16, 0x7F), cell(0, 16, 0xFF), cell(0, 16, 1)])])
def test_int8_becomes_integer_8(unsigned, cells):
    m = unpacker(INT8, INT8)
    set_cfg(m, "ALU_FORMAT_SPEC_REG0_SrcAUnsigned", unsigned)
    put_l1(m, "B", [0x00, 0x80, 0x7F, 0xFF, 0x01])
    assert srca_cells(run(m), n=5) == cells


# --- round trips that end in L1 ---
def pack_back(m, fmt, read32, rows, out=0x30000, t=2):
    """PACR of ``rows`` Dst rows (4, or 1) in format ``fmt`` to L1 at ``out``; returns the bytes."""
    configure_packer(m, read32, fmt, fmt, out, t)
    m.run({t: [pacr_word(readintfsel=0 if rows == 4 else 1)]})
    return m.s.l1.read(out, 16 * rows * (4 if read32 else 2))


F32_EDGES = [0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000,
             0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF, 0x3F800000, 0x3F808000, 0x12345678, 0xDEADBEEF]


@pytest.mark.parametrize("in_fmt,out_fmt", [(FP32, FP32), (FP32, TF32), (INT32, INT32)])
def test_l1_to_dst_to_l1_keeps_all_32_bits(in_fmt, out_fmt):
    m = unpacker(in_fmt, out_fmt, count=64, to_dst=True)
    data = F32_EDGES * 4
    put_l1(m, "I", data)
    run(m, unpacr_word(setdatvalid=0))
    assert struct.unpack("<64I", pack_back(m, INT32 if in_fmt == INT32 else FP32, 1, 4)) == tuple(data)


def test_l1_bf16_through_srca_mova2d_and_pacr():
    vals = [0x3F80, 0xBF81, 0x7F7F, 0x0080, 0x7F80, 0xFF80, 0x4049, 0xC2F7,
            0x8000, 0x0001, 0x807F, 0x7FC0, 0x7F81, 0xFFC1, 0x1234, 0x0000]
    m = unpacker(BF16, BF16)
    put_l1(m, "H", vals)
    set_cfg(m, "ALU_ACC_CTRL_Zero_Flag_disabled_src", 1)   # MOVA2D keeps denormals
    m.run({U0: [unpacr_word()], 1: [encode("MOVA2D", dict(dest_32b_lo=0, src=0, addr_mode=0, instr_mod=2, dst=0))]})
    assert int(m.s.dest.bits[0][0]) == ff.bits_to_dst16_bf16(0x3F80)
    got = struct.unpack("<16H", pack_back(m, BF16, 0, 1))
    # the packer flushes a zero exponent to +0 and turns NaNs into infinities of the same sign
    want = vals[:8] + [0, 0, 0, 0x7F80, 0x7F80, 0xFF80, 0x1234, 0]
    assert list(got) == want


# --- output position ---
def u16_cell(v):
    return ((v & 0xFF00) << 3) | (v & 0xFF)


def test_rows_follow_dest_cntx_address_and_skip_the_first_four():
    m = unpacker(UINT16, UINT16, count=32)
    set_cfg(m, "THCON_SEC0_REG5_Dest_cntx0_address", 48)    # positions 48..79: 48..63 fall before SrcA
    set_cfg(m, "THCON_SEC0_REG1_ovrd_default_throttle_mode", 1)   # Throttle_mode 0: one-row bursts
    put_l1(m, "H", list(range(1, 33)))
    run(m)
    assert srca_cells(m, row=0) == [u16_cell(v) for v in range(17, 33)]
    assert srca_cells(m, row=1) == [0] * 16
    assert srca_cells(m, row=63) == [0] * 16


def test_ch1_y_stride_adds_to_the_context_address():
    m = unpacker(BF16, BF16)
    set_cfg(m, "UNP0_ADDR_CTRL_XY_REG_1_Ystride", 32)   # one row of BF16 per Y
    set_cfg(m, "UNP0_ADD_DEST_ADDR_CNTR_add_dest_addr_cntr", 1)
    m.s.adc[U0]["unpack0"][1].y = 3
    put_l1(m, "H", [0x3F80] * 16)
    assert srca_cells(run(m), row=3, n=16) == [cell(0, 0x7F, 0)] * 16
    assert srca_cells(m, row=0, n=16) == [0] * 16


def test_srca_rows_wrap_at_64_with_set_ovrd_with_addr():
    m = unpacker(UINT16, UINT16, row=63)
    set_cfg(m, "THCON_SEC0_REG1_ovrd_default_throttle_mode", 1)
    m.s.adc[U0]["unpack0"][1].x = 31
    put_l1(m, "H", [7] * 16 + [9] * 16)
    run(m)
    assert srca_cells(m, row=63) == [7] * 16 and srca_cells(m, row=0) == [9] * 16


def test_input_position_from_channel0_counters_and_dims():
    m = unpacker(UINT16, UINT16)
    ch0 = m.s.adc[U0]["unpack0"][0]
    ch0.x, ch0.y, ch0.z = 2, 1, 1                  # datum 2 + 16 * (1 + 4 * 1) = 82
    m.s.adc[U0]["unpack0"][1].x = 17
    put_l1(m, "H", list(range(200)))
    assert srca_cells(run(m), n=16) == [u16_cell(v) for v in range(82, 98)]


def test_srcb_and_movb2d():
    m = unpacker(BF16, BF16, which=1)
    put_l1(m, "H", [0x4000 + i for i in range(16)])
    set_cfg(m, "ALU_ACC_CTRL_Zero_Flag_disabled_src", 1)
    m.run({U0: [unpacr_word(which=1)],
           1: [encode("MOVB2D", dict(dest_32b_lo=0, src=0, addr_mode=0, movb2d_instr_mod=4, dst=0))]})
    # MOVB2D drops SrcB mantissa bits 2:0, which BF16 never sets
    assert [int(v) for v in m.s.dest.bits[0]] == [ff.bits_to_dst16_bf16(0x4000 + i) for i in range(16)]


# --- counters, bank hand-over, implied format ---
def test_addrmode_increments_and_set_dat_valid():
    m = unpacker(FP32, TF32)
    run(m, unpacr_word(addrmode=0b10_01_11_01))
    ch0, ch1 = m.s.adc[U0]["unpack0"]
    assert (ch0.z, ch0.y, ch1.z, ch1.y) == (1, 3, 1, 2)
    bank = m.s.srca.banks[0]
    assert bank.allowed_client == MATRIX_UNIT and bank.implied_format == TF32
    assert m.s.srca.unpacker_bank == 1


def test_without_set_dat_valid_the_bank_stays():
    m = unpacker(BF16, BF16)
    run(m, unpacr_word(setdatvalid=0))
    assert m.s.srca.banks[0].allowed_client == UNPACKERS and m.s.srca.unpacker_bank == 0


def test_waits_for_the_unpackers_bank():
    m = unpacker(BF16, BF16)
    m.s.srca.banks[0].allowed_client = MATRIX_UNIT
    with pytest.raises(Hang):
        run(m)
    with pytest.raises(Blocked):
        unpacr(m, U0, decode(unpacr_word()).fields)


# --- refusals and undefined behaviour ---
@pytest.mark.parametrize("name,value", [
    ("THCON_SEC0_REG2_Unpack_fifo_size", 1), ("THCON_SEC0_REG2_Upsample_and_interleave", 1), ("THCON_SEC0_REG2_Upsample_rate", 1),
    ("THCON_SEC0_REG2_Shift_amount_cntx0", 1), ("THCON_SEC0_REG2_Disable_zero_compress_cntx0", 0),
    ("THCON_SEC0_REG2_Ovrd_data_format", 1)])
def test_refused_modes(name, value):
    m = unpacker(BF16, BF16)
    set_cfg(m, name, value)
    with pytest.raises(NotModelled):
        run(m)


def test_haloize_writes_each_16x16_block_of_srca_transposed():
    m = unpacker(BF16, BF16, count=256)
    set_cfg(m, "THCON_SEC0_REG2_Haloize_mode", 1)
    put_l1(m, "H", [0x3F80 + i for i in range(256)])       # datum i = row i // 16, column i % 16 of the face
    run(m)
    rows = m.s.srca.banks[0].rows
    for r, c in ((0, 1), (1, 0), (3, 14), (15, 2)):
        assert int(rows[r, c]) == bf16_cell(0x3F80 + 16 * c + r)


def test_tileize_reads_rows_of_32_datums_a_shift_amount_stride_apart():
    m = unpacker(BF16, BF16, count=64)
    set_cfg(m, "THCON_SEC0_REG2_Tileize_mode", 1)
    set_cfg(m, "THCON_SEC0_REG2_Shift_amount_cntx0", 8)          # 8 << 4 = 128 bytes between input rows
    put_l1(m, "H", [0x3F80 + i for i in range(128)])
    run(m)
    got = srca_cells(m, n=64)
    assert got[:32] == [bf16_cell(0x3F80 + i) for i in range(32)]
    assert got[32:] == [bf16_cell(0x3F80 + 64 + i) for i in range(32)]   # L1 bytes 128..191


def test_haloize_refusals():
    with pytest.raises(NotModelled):                    # unpacker 1 (refused with the modes above)
        m = unpacker(BF16, BF16, which=1)
        set_cfg(m, "THCON_SEC1_REG2_Haloize_mode", 1)
        run(m, unpacr_word(which=1))
    m = unpacker(FP32, FP32, count=16, to_dst=True)
    set_cfg(m, "THCON_SEC0_REG2_Haloize_mode", 1)
    with pytest.raises(UndefinedBehaviour):
        run(m)
    m = unpacker(BF16, BF16)
    set_cfg(m, "THCON_SEC0_REG2_Haloize_mode", 1)
    m.s.adc[U0]["unpack0"][0].x, m.s.adc[U0]["unpack0"][1].x = 1, 16   # datum 1: not 16-byte aligned
    with pytest.raises(UndefinedBehaviour):
        run(m)


@pytest.mark.parametrize("fields", [dict(last=0), dict(rowsearch=1), dict(cfgcontextid=1), dict(addrcntcontextid=1)])
def test_refused_fields(fields):
    with pytest.raises(NotModelled):
        run(unpacker(BF16, BF16), unpacr_word(**fields))


# --- block floats: a 64-datum tile (X 16, Y 4) has 4 exponent bytes, a section rounded up to 16 bytes ---
def bf16_cell(v):
    return cell(v >> 15, (v >> 7) & 0xFF, (v & 0x7F) << 3)


def bfp_tile(fmt, exps, data: bytes):
    m = unpacker(fmt, fmt, count=32)
    m.s.l1.write(L1, bytes(exps) + bytes(16 - len(exps)) + data)
    return run(m)


def test_bfp8_datums_normalise_against_their_row_exponent():
    # exponent 0x7F for datums 0..15, 0x02 for 16..31; values worked from UNPACR_Regular.md BFP8ToBF16
    data = bytes([0x40, 0x20, 0x61, 0x80, 0x00, 0xC0] + [0] * 10 + [0x01, 0x7F] + [0] * 14)
    m = bfp_tile(ff.BFP8, [0x7F, 0x02, 0, 0], data)
    got = srca_cells(m, n=32)
    want = [0x3F80, 0x3F00, 0x3FC2, 0xFF80, 0x0000, 0xBF80]     # 1, 0.5, 1.515625, -0 -> -inf, +0, -1
    assert got[:6] == [bf16_cell(v) for v in want]
    assert got[16] == bf16_cell(0x7E00)                          # 2 - 6 leading zeros wraps to exponent 0xFC
    assert got[17] == bf16_cell(0x017E)                          # 0x7F: no leading zero, six mantissa bits


def test_bfp4_and_bfp2_take_the_low_bits_first():
    m = bfp_tile(ff.BFP4, [0x7F, 0x80], bytes([0xC4]) + bytes(7) + bytes([0x04]) + bytes(7))
    got = srca_cells(m, n=32)
    assert got[:2] == [bf16_cell(0x3F80), bf16_cell(0xBF80)] and got[16] == bf16_cell(0x4000)
    m = bfp_tile(ff.BFP2, [0x7F], bytes([0xE1]) + bytes(7))
    assert srca_cells(m, n=4) == [bf16_cell(0x3F80), 0, bf16_cell(0xFF80), bf16_cell(0xBF80)]


def test_forced_shared_exponent_reads_no_exponent_section():
    m = unpacker(ff.BFP8, ff.BFP8)
    set_cfg(m, "THCON_SEC0_REG2_Force_shared_exp", 1)
    set_cfg(m, "UNP0_FORCED_SHARED_EXP_shared_exp", 0x80)
    m.s.l1.write(L1, bytes([0x40, 0xC0]))
    run(m)
    assert srca_cells(m, n=2) == [bf16_cell(0x4000), bf16_cell(0xC000)]


def test_bfp_refusals_and_multicontext_from_another_thread():
    with pytest.raises(NotModelled):
        run(unpacker(ff.BFP8A, ff.BFP8A))                        # 5-bit exponents: ttsim does not implement
    with pytest.raises(NotModelled):
        run(unpacker(ff.BFP8, ff.BFP8, to_dst=True))             # ttsim refuses BFP into Dst
    m = unpacker(ff.BFP4, ff.BFP4)
    set_desc(m, 0, ff.BFP4 | 1 << 5 | 16 << 16, 4 | 1 << 16)     # NoBFPExpSection
    with pytest.raises(NotModelled):
        run(m)
    with pytest.raises(NotModelled):
        run(unpacker(BF16, BF16), t=1)


def test_misaligned_srca_burst_is_refused():
    m = unpacker(BF16, BF16, count=32, row=2)        # BF16 bursts are 4 rows; row 2 is not aligned
    with pytest.raises(NotModelled):
        run(m)


@pytest.mark.parametrize("in_fmt,out_fmt", [(BF16, FP16), (FP32, INT8), (FP32, FP32), (INT32, INT32)])
def test_undefined_format_pairs(in_fmt, out_fmt):
    with pytest.raises(UndefinedBehaviour):
        run(unpacker(in_fmt, out_fmt))


def test_dst_partial_write_of_an_invalid_row_is_undefined():
    m = unpacker(FP32, FP32, count=8, to_dst=True)
    m.s.dest.valid[:] = False
    with pytest.raises(UndefinedBehaviour):
        run(m)


def test_registered_semantics():
    assert load_all()["UNPACR"] is unpacr
