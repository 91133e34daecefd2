"""The unpack TRISC of tt-llk Blackhole kernels, call by call (tt_llk_blackhole/llk_lib/llk_unpack_*.h and
common/inc/cunpack_common.h, commit 36b092e8). Each function emits what the named LLK function issues for the
given compile-time choices; L1 addresses are in 16-byte units minus one (tt-llk's L1_ADDRESS)."""
from __future__ import annotations

from golden.registers import config_field

from .llk_thread import KernelThread, replay, word

UNPACK_SYNC = 5                  # ckernel_structs.h semaphore indices
STALL_UNPACK, TRISC_CFG, STALL_CFG, THCON = 0x8, 0x400, 0x80, 0x1


def _x_stride(fmt: int) -> int:
    return {0: 4, 1: 2}.get(fmt & 3, 1)


def srca(addr_mode: int = 1, dvalid: int = 1) -> int:
    return word("UNPACR", unpack_block_selection=0, addrmode=addr_mode, ovrdthreadid=1, setdatvalid=dvalid, last=1)


def srcb(addr_mode: int = 1, dvalid: int = 1) -> int:
    return word("UNPACR", unpack_block_selection=1, addrmode=addr_mode, ovrdthreadid=1, setdatvalid=dvalid, last=1)


SRCB_SET_DVALID = word("UNPACR_NOP", unpacker_select=1, set_dvalid=1, unpack_pop=1)
SRCA_CLEAR_ZERO = word("UNPACR_NOP", unpacker_select=0, unpack_pop=1)


def hw_configure(u: KernelThread, a_src: int, b_src: int, a_dst: int, b_dst: int, tile_sizes=(0, 0)) -> None:
    """llk_unpack_common.h _llk_unpack_hw_configure_<false> -> configure_unpack_AB (32x32 tiles, 4 faces)."""
    u.act("sem_wait", UNPACK_SYNC, "==", 0)                                 # wait_for_idle
    u.op("SETADCXY", cntsetmask=3, bitmask=0b1011)                          # unpacker_addr_counter_init
    u.op("SETADCZW", cntsetmask=3, bitmask=0b1111)
    u.cfg("UNP0_ADDR_CTRL_ZW_REG_1_Zstride", 256 * _x_stride(a_dst))
    u.cfg("UNP1_ADDR_CTRL_ZW_REG_1_Zstride", 256 * _x_stride(b_dst))
    u.op("ATGETM", mutex_index=0)                                           # REG_RMW
    u.rmw(0, 0, (1 << 15) - 1, 0)                                           # ALU_FORMAT_SPEC_REG vals/overrides
    u.rmw(1, 0, 0x18007, 0)                                                 # Src{A,B}Unsigned, stochastic rounding
    u.rmw_field("ALU_ACC_CTRL_Zero_Flag_disabled_src", 0)
    u.rmw_field("THCON_SEC0_REG1_Unp_LF8_4b_exp", 0)
    u.rmw_field("THCON_SEC1_REG1_Unp_LF8_4b_exp", 0)
    u.op("ATRELM", mutex_index=0)
    for sec, fmt, x_dim in ((0, a_src, 0), (1, b_src, 256)):                # tile descriptors (2 words)
        base = config_field(f"THCON_SEC{sec}_REG0_TileDescriptor").index
        u.cfg(base, fmt | 1 << 4 | x_dim << 16)
        u.cfg(base + 1, 1 | 4 << 16)
    for sec, fmt in ((0, a_dst), (1, b_dst)):                               # unpack configs (2 words)
        base = config_field(f"THCON_SEC{sec}_REG2_Out_data_format").index
        u.cfg(base, fmt | 2 << 4)
        u.cfg(base + 1, 0xF | 0xF << 16)
    u.op("SETADCXX", cntsetmask=1, x_end2=255)
    u.op("SETADCXX", cntsetmask=2, x_end2=255)
    u.cfg("THCON_SEC0_REG5_Dest_cntx0_address", 64 | 64 << 16)
    u.cfg("THCON_SEC0_REG5_Tile_x_dim_cntx0", 256 | 256 << 16)
    for i, div in enumerate((1, 2, 4, 8, 16)):                              # regfile[FACE_DIM_*x16]
        u.act("gpr", 40 + i, (256 // div) | (256 // div) << 16)
    u.setc16("SRCA_SET_Base", 4)
    u.cfg("UNP0_ADD_DEST_ADDR_CNTR_add_dest_addr_cntr", 1 << 8)
    u.setc16("UNPACK_MISC_CFG_CfgContextOffset_0", 0)                      # reset_config_context
    u.setdmareg(tile_sizes[0], 2 * 36)
    u.setdmareg(tile_sizes[1], 2 * 37)


def _start(u: KernelThread, bases: dict[str, int], context: int) -> None:
    """The common head of every _llk_unpack_*_: wait for a free context, program base addresses, post."""
    u.act("sem_wait", UNPACK_SYNC, "<", 2)                                  # wait_for_next_context(2)
    for sec, addr in bases.items():
        u.cfg(f"THCON_SEC{sec}_REG3_Base_{'address' if context == 0 else 'cntx1_address'}", addr)
    u.act("sem_post", UNPACK_SYNC)
    u.stallwait(STALL_UNPACK, TRISC_CFG)


def _finish(u: KernelThread, context: int) -> None:
    u.op("SEMGET", sem_sel=1 << UNPACK_SYNC)
    u.setc16("UNPACK_MISC_CFG_CfgContextOffset_0", 0x0101 if context == 0 else 0)   # switch_config_context


def A_init(u: KernelThread, transpose: int = 0) -> None:
    """llk_unpack_A.h _llk_unpack_A_init_<NONE, false, NONE, false>(transpose, transpose, 16, 4)."""
    u.rmw_field("THCON_SEC0_REG2_Haloize_mode", transpose)
    u.op("SETADCXX", cntsetmask=1, x_end2=255)
    if transpose:                                # faces 0, 2 then 1, 3 (SrcA Z += 2), SrcB set valid first
        u.raw(replay(0, 2, load=True), SRCB_SET_DVALID, srca(0b10))
        u.template(2, 2, replay(0, 2), end0=word("SETADCZW", cntsetmask=1, ch0_x=1, bitmask=0b0001))
    else:
        u.template(4, 1, SRCB_SET_DVALID, start=srca())


def _one_tile(u: KernelThread, address: int, context: int, adcs: int) -> None:
    """Reset the Z/W counters of the unpackers in ``adcs``, point unpacker 0 at ``address``, run the MOP."""
    u.op("SETADCZW", cntsetmask=adcs, bitmask=0b1111)
    _start(u, {0: address}, context)
    u.run_mop()
    _finish(u, context)


def A(u: KernelThread, address: int, context: int) -> None:
    """llk_unpack_A.h _llk_unpack_A_<NONE, false, NONE, false>(address)."""
    _one_tile(u, address, context, 3)


def AB_init(u: KernelThread, bcast: str = "NONE") -> None:
    """llk_unpack_AB.h _llk_unpack_AB_init_<bcast>(32x32, 0) with _llk_unpack_AB_mop_config_."""
    u.rmw_field("THCON_SEC0_REG2_Haloize_mode", 0)
    u.op("SETADCXX", cntsetmask=3, x_end2=255)
    if bcast == "NONE":
        u.template(2, 2, srca(), srcb())
    elif bcast == "COL":                        # one SrcB face per face row, then SrcB Z = 2
        u.template(2, 2, srca(), start=srcb(), end0=word("SETADCZW", cntsetmask=2, ch0_x=2, bitmask=0b0001))
    elif bcast == "ROW":                        # SrcB faces 0, 1 for each face row, then SrcB Z = 0
        u.template(2, 2, srcb(), srca(), end0=word("SETADCZW", cntsetmask=2, bitmask=0b0001))
    else:                                       # SCALAR: SrcB face 0 once
        u.template(1, 4, srca(), start=srcb())


def AB(u: KernelThread, a: int, b: int, context: int) -> None:
    """llk_unpack_AB.h _llk_unpack_AB_<bcast>(a, b)."""
    u.op("SETADCZW", cntsetmask=3, bitmask=0b1111)
    _start(u, {0: a, 1: b}, context)
    u.run_mop()
    _finish(u, context)


def reduce_init(u: KernelThread, dim: str) -> None:
    """llk_unpack_AB_reduce.h _llk_unpack_AB_reduce_init_<pool, dim>(32x32): SrcA faces, one SrcB scaler row."""
    u.rmw_field("THCON_SEC0_REG2_Haloize_mode", int(dim == "ROW"))
    u.op("SETADCXX", cntsetmask=1, x_end2=255)
    u.op("SETADCXX", cntsetmask=2, x_end2=15)
    u.raw(replay(0, 2, load=True), srca(), srcb())
    if dim == "SCALAR":
        u.template(1, 4, SRCA_CLEAR_ZERO, replay(0, 2))
    else:
        u.template(1, 4, replay(0, 2))


def matmul_init(u: KernelThread, kt_dim: int) -> None:
    """llk_unpack_AB_matmul.h _llk_unpack_AB_matmul_init_(0, ct, rt <= ct, kt): whole tiles per UNPACR, a replay
    of SrcA unpack + base bump per context, run by an unpack MOP template."""
    u.rmw_field("THCON_SEC0_REG2_Haloize_mode", 0)
    u.op("SETADCZW", cntsetmask=3, bitmask=0b1111)
    u.op("SETADCXX", cntsetmask=1, x_end2=1023)
    u.op("SETADCXX", cntsetmask=2, x_end2=1023)
    u.setdmareg(kt_dim, 2 * 38)
    u.raw(replay(0, 12, load=True))
    for name in ("THCON_SEC0_REG3_Base_address", "THCON_SEC0_REG3_Base_cntx1_address"):
        index = config_field(name).index
        u.raw(srca(0))
        u.op("RDCFG", gpraddress=12, cfgreg=index)
        u.op("ADDDMAREG", resultregindex=12, opbregindex=12, oparegindex=36)     # TMP0 += TILE_SIZE_A
        u.stallwait(STALL_CFG, THCON)
        u.wrcfg(12, index)
        u.op("NOP")
    u.unpack_template(False, replay(0, 6), replay(6, 6))


def matmul(u: KernelThread, a: int, b: int, context: int, ct_dim: int) -> None:
    """llk_unpack_AB_matmul.h _llk_unpack_AB_matmul_ for one k (reuse of in0 in SrcB across ct_dim tiles)."""
    _start(u, {0: b, 1: a}, context)            # in1 -> SrcA, in0 -> SrcB
    u.raw(srcb(0))
    u.run_mop(0, ct_dim - 1, 0 if context == 0 else 0xFF)
    _finish(u, context)


def tilize_init(u: KernelThread, fmt: int) -> None:
    """llk_unpack_tilize.h _llk_unpack_tilize_init_(fmt, fmt, ct_dim 1, 16): Tileize_mode rows 64 bytes apart."""
    u.rmw_field("THCON_SEC0_REG2_Haloize_mode", 0)
    u.op("SETADCXX", cntsetmask=1, x_end2=255)
    cfg = fmt | 2 << 4 | 1 << 9 | (32 * 2 >> 4) << 16
    u.setdmareg(cfg & 0xFFFF, 2 * 12)
    u.setdmareg(cfg >> 16, 2 * 12 + 1)
    u.stallwait(STALL_CFG, THCON)
    u.wrcfg(12, config_field("THCON_SEC0_REG2_Out_data_format").index)
    x = 1024
    u.rmw(config_field("THCON_SEC0_REG5_Tile_x_dim_cntx0").index, 0, 0xFFFFFFFF, x | x << 16)
    desc = config_field("THCON_SEC0_REG0_TileDescriptor").index
    u.rmw(desc, 0, 0xFFFF0000, x << 16)
    u.rmw(desc + 1, 0, 0xFFFF0000, 1 << 16)
    u.op("SETADCXX", cntsetmask=1, x_end2=x - 1)
    u.template(1, 1, SRCB_SET_DVALID, start=srca())


def tilize(u: KernelThread, address: int, context: int) -> None:
    """llk_unpack_tilize.h _llk_unpack_tilize_(address, tile 0)."""
    _one_tile(u, address, context, 1)
