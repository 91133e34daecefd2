"""The pack TRISC of tt-llk Blackhole kernels, call by call (tt_llk_blackhole/llk_lib/llk_pack*.h, including
llk_pack_untilize.h, and common/inc/cpack_common.h, commit 36b092e8), for 32x32 tiles from a 16-bit Dest with
SyncHalf."""
from __future__ import annotations

from golden.fpu_formats import INT8
from golden.registers import config_field

from .llk_thread import NOP, KernelThread, replay, word

MATH_PACK = 1
STALL_CFG, THCON, PACK = 0x80, 0x1, 0x8
TMP0, TMP1, TMP_LO = 28, 29, 30                     # ckernel_gpr_map.h p_gpr_pack
OUTPUT_ADDR, OUTPUT_ADDR_OFFSET = 12, 50
REPLAY_OFFSET = 16                                  # cpack_common.h replay_buf_offset
DATUM_BYTES = {0: 4, 1: 2, 5: 2}                    # ckernel_defs.h SCALE_DATUM_SIZE (FP32, FP16, BF16)
APPLY_RELU, RELU_THRESHOLD = config_field("STACC_RELU_ApplyRelu"), config_field("STACC_RELU_ReluThreshold")


def _x_stride(fmt: int) -> int:
    return {0: 4, 1: 2}.get(fmt & 3, 1)


def _strides(p: KernelThread, src_fmt: int, tilize: bool, untilize: bool = False) -> None:
    """set_packer_strides<untilize, tilize>(src_fmt, 32)."""
    x = _x_stride(src_fmt)
    y = 16 * x
    p.setdmareg(0, 2 * TMP0)
    p.setdmareg(y, 2 * TMP0 + 1)
    p.setdmareg((2 if tilize != untilize else 1) * 16 * y, 2 * TMP1)
    p.setdmareg(4 * 256 * x, 2 * TMP1 + 1)
    p.stallwait(STALL_CFG, THCON)
    p.wrcfg(TMP0, 12)
    p.wrcfg(TMP1, 13)
    p.raw(NOP, NOP)
    if tilize:                                      # Channel 1 Z: 16 rows
        p.setdmareg(16 * y, 2 * TMP1)
        p.setdmareg(0, 2 * TMP1 + 1)
        p.stallwait(STALL_CFG, THCON)
        p.wrcfg(TMP1, config_field("PCK0_ADDR_CTRL_ZW_REG_1_Zstride").index)
        p.raw(NOP, NOP)


def hw_configure(p: KernelThread, src_fmt: int, dst_fmt: int, relu: int = 0, tilize: bool = False,
                 untilize: bool = False, fp32_dest: bool = False) -> None:
    """llk_pack.h _llk_pack_hw_configure_<fp32_dest, untilize, tilize>(src, dst, 16*16*4, 16, 32, 4, .., relu)."""
    _strides(p, src_fmt, tilize, untilize)
    p.op("ATGETM", mutex_index=0)
    p.rmw_field("THCON_SEC0_REG1_Pac_LF8_4b_exp", 0)
    p.rmw_field("ALU_FORMAT_SPEC_REG2_Dstacc", src_fmt & 0xF)
    # configure_pack: relu_config_u into STACC_RELU under ApplyRelu | ReluThreshold masks. With relu 0 the
    # recorded corpus kernels leave ApplyRelu (0 from reset) out of the mask; re-transcribing them would make
    # their recordings stale, so that word keeps the threshold mask alone (Config ends the same from reset).
    relu_word = (relu & 0xF) << APPLY_RELU.shift | (relu >> 16 & 0xFFFF) << RELU_THRESHOLD.shift
    p.rmw(APPLY_RELU.index, 0, (APPLY_RELU.mask if relu else 0) | RELU_THRESHOLD.mask, relu_word)
    p.op("ATRELM", mutex_index=0)
    p.rmw(71, 0, 0x100000 | 0xFF000000, 0)                                # reconfigure_exp_threshold<false>
    p.cfg(68, (0 if dst_fmt == INT8 else 4) << 16)                          # Exp_section_size (Int8: 0)
    p.cfg(70, 1 | dst_fmt << 4 | src_fmt << 8)
    reconfig_l1_acc(p, 0)
    rd = config_field("PCK_DEST_RD_CTRL_Read_32b_data"), config_field("PCK_DEST_RD_CTRL_Round_10b_mant")
    p.cfg(rd[0].name, int(fp32_dest or src_fmt == 0) << rd[0].shift | int(fp32_dest and src_fmt == 1) << rd[1].shift)
    p.act("gpr", 52, 4 << 16)                                               # regfile[EXP0_SEC_SIZE_BFP]
    p.cfg("PACK_COUNTERS_SEC0_pack_per_xy_plane", 16 << 8)
    p.cfg("PCK_EDGE_OFFSET_SEC0_mask", 0xFFFF)
    p.cfg("TILE_ROW_SET_MAPPING_0_row_set_mapping_0", 0)
    for i, v in enumerate((16 * 16 * 4, 0, 0, 0)):                          # regfile[TILE_HEADER..+3]
        p.act("gpr", 16 + i, v)
    p.op("SETADCXX", cntsetmask=4, x_end2=15)


def reconfig_l1_acc(p: KernelThread, enable: int) -> None:
    """llk_pack_common.h _llk_pack_reconfig_l1_acc_ -> cpack_common.h reconfigure_packer_l1_acc."""
    p.stallwait(STALL_CFG, PACK)
    p.rmw_field("THCON_SEC0_REG1_Disable_pack_zero_flags", enable)
    p.rmw_field("THCON_SEC0_REG1_Pack_L1_Acc", enable)


def _pacr(addr_mode: int, intf: int, concat: int = 0, last: int = 0) -> int:
    return word("PACR", addrmode=addr_mode, readintfsel=intf, concat=concat, last=last)


def init(p: KernelThread, tilize: bool = False, y_cr: bool = False) -> None:
    """llk_pack.h _llk_pack_init_<false, false, tilize>(dst, 16, 32, 4): AddrMods and the MOP. ``y_cr``: AddrMods 1
    and 2 return the input Y counter to its checkpoint (YsrcCR with no increment: 0, as the clear leaves it)
    instead of clearing it, which ttsim v1.10.0 accepts for Ysrc only (tensix.cpp PACR, y1_cr refused)."""
    if tilize:                                      # the Blackhole tilize workaround: row pairs unswizzled
        p.pack_addr_mod(0, y_src=(4, 0, 0), y_dst=(2, 0, 0))
        p.pack_addr_mod(1, y_src=(0, 1, 0), y_dst=(0, 1, 0))
        p.pack_addr_mod(2, y_src=(0, 1, 0), y_dst=(0, 1, 0), z_src=(1, 0))
        p.raw(replay(0, 15, load=True), *[_pacr(0, 0b0101, 1)] * 7, _pacr(1, 0b0101, 1), *[_pacr(0, 0b1010, 1)] * 7)
        p.template(2, 1, replay(0, 15), _pacr(2, 0b1010), last_outer=_pacr(2, 0b1010, last=1),
                   end0=word("SETADCZW", cntsetmask=4, ch1_x=2, bitmask=0b0100))
        return
    p.pack_addr_mod(0, y_src=(4, 0, 0), y_dst=(4, 0, 0))
    back = (0, 0, 1) if y_cr else (0, 1, 0)
    p.pack_addr_mod(1, y_src=back, y_dst=(0, 1, 0), z_src=(0, 1))
    p.pack_addr_mod(2, y_src=back, y_dst=(4, 0, 0), z_src=(1, 0))
    p.template(4, 4, _pacr(0, 0), last_inner=_pacr(2, 0), last_outer=_pacr(1, 0, last=1))   # ALL_INTF_ACTIVE = 0


def reduce_mask(p: KernelThread, dim: str) -> None:
    """llk_pack_common.h _llk_pack_reduce_mask_config_<false, dim>: edge masks keep the reduced row/column."""
    select = {"ROW": 0b01010101, "COL": 0b0101, "SCALAR": 0b01}[dim] << 17
    mapping = 0x55555555 if dim == "ROW" else 1
    p.setdmareg(select & 0xFFFF, 2 * TMP0)
    p.setdmareg(select >> 16, 2 * TMP0 + 1)
    p.setdmareg(0xFFFF if dim == "COL" else 1, 2 * TMP_LO)
    p.setdmareg(mapping & 0xFFFF, 2 * TMP1)
    p.setdmareg(mapping >> 16, 2 * TMP1 + 1)
    p.stallwait(STALL_CFG, PACK)
    p.wrcfg(TMP0, 24)
    p.wrcfg(TMP_LO, 25)
    p.wrcfg(TMP1, 21)
    p.raw(NOP, NOP)


def reduce_mask_clear(p: KernelThread) -> None:
    """llk_pack_common.h _llk_pack_reduce_mask_clear_."""
    p.setdmareg(0xFFFF, 2 * TMP0)
    p.setdmareg(0, 2 * TMP0 + 1)
    p.stallwait(STALL_CFG, PACK)
    for gpr, index in ((TMP0, 24), (TMP0, 25), (0, 20), (0, 21)):
        p.wrcfg(gpr, index)
    p.raw(NOP, NOP)


def dest_init(p: KernelThread) -> None:
    """llk_pack_common.h _llk_pack_dest_init_<SyncHalf, false>."""
    p.stallwait(0x21, PACK)
    p.setdmareg(0, 2 * 4)                                                   # DEST_OFFSET_LO
    p.setdmareg(512, 2 * 8)                                                 # DEST_OFFSET_HI
    p.stallwait(STALL_CFG, THCON)
    p.wrcfg(4, 180, wide=1)                                                 # select_packer_dest_registers
    p.op("DMANOP")
    p.op("DMANOP")
    p.op("SETADCXY", cntsetmask=4, bitmask=0b1011)                          # packer_addr_counter_init
    p.op("SETADCZW", cntsetmask=4, bitmask=0b1111)


def wait_for_math(p: KernelThread) -> None:
    """_llk_packer_wait_for_math_done_."""
    p.op("SEMWAIT", stall_res=1, sem_sel=1 << MATH_PACK, wait_sem_cond=1)


def _destination(p: KernelThread, address: int) -> None:
    """cpack_common.h program_packer_destination(address)."""
    new = 1 << 31 | address
    p.setdmareg(address & 0xFFFF, 2 * OUTPUT_ADDR)
    p.setdmareg(new >> 16, 2 * OUTPUT_ADDR + 1)
    p.stallwait(STALL_CFG, THCON)
    p.wrcfg(OUTPUT_ADDR, 69)
    p.setdmareg(address >> 16, 2 * OUTPUT_ADDR + 1)
    p.op("DMANOP")


def tile(p: KernelThread, tile_index: int, address: int) -> None:
    """llk_pack.h _llk_pack_<SyncHalf, false>(tile_index, address)."""
    p.op("SETADC", cntsetmask=4, channelindex=0, dimensionindex=3, value=tile_index)     # set_dst_write_addr
    _destination(p, address)
    p.run_mop()
    p.op("SETADCZW", cntsetmask=4, bitmask=0b0101)


def untilize_init(p: KernelThread, block_ct: int, full_ct: int, src_fmt: int, dst_fmt: int) -> None:
    """llk_pack_untilize.h _llk_pack_untilize_init_<block_ct, full_ct>(src, dst, 16, 4): AddrMod 0, the MOP
    (per row: W to the next tile and a strided two-interface PACR per tile, the last closing the row; then Y
    to the next row and the replayed L1 address bump), Z stride of two faces, the row offset, 16 datums."""
    p.pack_addr_mod(0)
    strided = word("PACR", dstaccessmode=1, readintfsel=0b0011)
    closing = word("PACR", dstaccessmode=1, readintfsel=0b0011, last=1)
    p.raw(replay(REPLAY_OFFSET, 4, load=True),
          word("ADDDMAREG", resultregindex=OUTPUT_ADDR, opbregindex=OUTPUT_ADDR, oparegindex=OUTPUT_ADDR_OFFSET),
          word("STALLWAIT", stall_res=STALL_CFG, wait_res=THCON), word("WRCFG", gpraddress=OUTPUT_ADDR, cfgreg=69),
          NOP)
    p.template(16, block_ct, word("INCADCZW", cntsetmask=4, ch0_y=1), strided,
               start=word("ADDRCRZW", cntsetmask=4, bitmask=0b0010),
               end0=word("INCADCXY", cntsetmask=4, ch0_y=1), end1=replay(REPLAY_OFFSET, 4),
               last_inner=closing, last_outer=closing)
    p.rmw_field("PCK0_ADDR_CTRL_ZW_REG_0_Zstride", 2 * 16 * 16 * _x_stride(src_fmt))
    p.setdmareg(DATUM_BYTES[dst_fmt] * full_ct * 2 * 16 // 16, 2 * OUTPUT_ADDR_OFFSET)
    p.op("SETADCXX", cntsetmask=4, x_end2=15)


def untilize_block(p: KernelThread, address: int) -> None:
    """llk_pack_untilize.h _llk_pack_untilize_<block_ct, full_ct>(address, dst, 16, 4): top faces, then bottom."""
    _destination(p, address)
    p.op("SETADCZW", cntsetmask=4, bitmask=0b0001)
    p.op("SETADC", cntsetmask=4, channelindex=0, dimensionindex=3, value=15)    # W_Cr: the first INCADCZW wraps
    p.op("SETADCXY", cntsetmask=4, bitmask=0b0011)
    for _ in range(2):
        p.run_mop()
        p.op("INCADCZW", cntsetmask=4, ch0_x=1)
        p.op("SETADCXY", cntsetmask=4, bitmask=0b0010)
    p.op("SETADCZW", cntsetmask=4, bitmask=0b0101)
    p.op("SETADC", cntsetmask=4, channelindex=0, dimensionindex=3, value=0)     # set_dst_write_addr(0)


def untilize_uninit(p: KernelThread, src_fmt: int) -> None:
    """llk_pack_untilize.h _llk_pack_untilize_uninit_(src): the Z stride back to one face."""
    p.stallwait(STALL_CFG, PACK)
    p.rmw_field("PCK0_ADDR_CTRL_ZW_REG_0_Zstride", 256 * DATUM_BYTES[src_fmt])


def dest_section_done(p: KernelThread, half: int, fp32_dest: bool = False) -> None:
    """llk_pack_common.h _llk_pack_dest_section_done_<SyncHalf, fp32_dest>: clear the half, release it, flip."""
    p.stallwait(0x40, PACK)
    p.op("ZEROACC", clear_mode=2, use_32_bit_mode=int(fp32_dest), addr_mode=1, where=half % 2)
    p.op("SEMGET", sem_sel=1 << MATH_PACK)
    p.wrcfg(8 if half % 2 == 0 else 4, 180, wide=1)
    p.op("DMANOP")
    p.op("DMANOP")
