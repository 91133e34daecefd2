"""The math TRISC of tt-llk Blackhole kernels, call by call (tt_llk_blackhole/llk_lib/llk_math_*.h and
common/inc/cmath_common.h, commit 36b092e8), for 32x32 tiles in a 16-bit or 32-bit (is_fp32_dest_acc_en) Dest
with SyncHalf."""
from __future__ import annotations

from .llk_thread import KernelThread, replay, word

MATH_PACK = 1
DEST_HALF = 512                                       # DEST_REGISTER_HALF_SIZE
STALL_MATH_SFPU_SYNC = 0x40 | 0x100 | 0x2
BCAST = {"NONE": 0, "COL": 1, "ROW": 2, "SCALAR": 3}


def setrwc(clear: int = 0, cr: int = 0, d: int = 0, b: int = 0, a: int = 0, mask: int = 0) -> int:
    return word("SETRWC", clear_ab_vld=clear, rwc_cr=cr, rwc_d=d, rwc_b=b, rwc_a=a, bitmask=mask)


def pack_sync_init(m: KernelThread) -> None:
    """llk_math_common.h _llk_math_pack_sync_init_<SyncHalf>."""
    m.act("sem_wait", MATH_PACK, "==", 0)
    m.op("SEMINIT", max_value=2, init_value=0, sem_sel=1 << MATH_PACK)
    m.setc16("DEST_TARGET_REG_CFG_MATH_Offset", 0)


def hw_configure(m: KernelThread, fp32_dest: bool = False, int8: bool = False) -> None:
    """llk_math_common.h _llk_math_hw_configure_<fp32_dest>; ``int8``: an Int8 (or Int32) operand format, which
    sets INT8_math_enabled. Left out: the Int8 path's _llk_math_dbg_feature_disable_ (RISCV_DEBUG_REG_DBG_
    FEATURE_DISABLE = 1 << 11, the feature_disable action): ttsim refuses a nonzero write, golden does not model
    what it disables."""
    m.rmw_field("DEST_ACCESS_CFG_zeroacc_absolute_tile_mode", 0)
    m.stallwait(0x80, 0x10)
    m.rmw_field("ALU_ACC_CTRL_INT8_math_enabled", int(int8))
    for name in ("ALU_ACC_CTRL_Fp32_enabled", "ALU_ACC_CTRL_SFPU_Fp32_enabled"):
        m.rmw_field(name, int(fp32_dest))


def reconfig_remap(m: KernelThread, enable: bool = True) -> None:
    """llk_math_common.h _llk_math_reconfig_remap_: after the packs drain, Dst address remapping (the stride of
    16 rows that pack untilize reads with) on or off."""
    m.act("sem_wait", MATH_PACK, "==", 0)                 # tensix_sync, then semaphore_read(MATH_PACK) == 0
    m.rmw_field("DEST_ACCESS_CFG_remap_addrs", int(enable))
    m.rmw_field("DEST_ACCESS_CFG_swizzle_32b", int(enable))


def wait_for_dest(m: KernelThread) -> None:
    """_llk_math_wait_for_dest_available_ (math_dest_wait)."""
    m.op("SEMWAIT", stall_res=STALL_MATH_SFPU_SYNC, sem_sel=1 << MATH_PACK, wait_sem_cond=2)


def dest_section_done(m: KernelThread, new_base: int) -> None:
    """_llk_math_dest_section_done_<SyncHalf>: set_math_semaphores, dest_section_flip."""
    m.stallwait(0x2, 0x810)
    m.op("SEMPOST", sem_sel=1 << MATH_PACK)
    m.stallwait(0x80, 0x810)
    m.setc16("DEST_TARGET_REG_CFG_MATH_Offset", new_base)


def _run(m: KernelThread, dst_index: int, base: int, runs: int = 1) -> None:
    m.setc16("DEST_TARGET_REG_CFG_MATH_Offset", (dst_index << 6) + base)   # math::set_dst_write_addr
    for _ in range(runs):
        m.run_mop()


def datacopy_init(m: KernelThread, tilize: bool = False, fp32_dest: bool = False) -> None:
    """llk_math_eltwise_unary_datacopy.h _llk_math_eltwise_unary_datacopy_init_<A2D, fp32_dest, NONE, tilize>:
    MOVA2D, or with a 32-bit Dest ELWADD of SrcA and the zeroed SrcB (eltwise_unary_configure_mop)."""
    m.addr_mod(3)
    m.addr_mod(0, srca=(1, 0, 0), dest=(1, 0, 0, 0))
    m.addr_mod(2, srca=(8, 0, 0), dest=(8, 0, 0, 0))
    move = word("ELWADD", addr_mode=2) if fp32_dest else word("MOVA2D", addr_mode=2, instr_mod=2)
    m.template(1 if tilize else 4, 8 if tilize else 2, move, end0=setrwc(3, mask=3))
    m.setc16("CLR_DVALID_SrcA_Disable", 0)
    m.raw(setrwc(mask=15))


def datacopy(m: KernelThread, dst_index: int, base: int) -> None:
    """_llk_math_eltwise_unary_datacopy_<A2D, SyncHalf>(dst_index)."""
    _run(m, dst_index, base)
    m.raw(setrwc(mask=4))                                                   # clear_dst_reg_addr


def binary_init(m: KernelThread, kind: str, fidelity: int, bcast: str) -> None:
    """llk_math_eltwise_binary.h _llk_math_eltwise_binary_init_<kind, bcast, fidelity>(32x32, 0)."""
    hifi = int(fidelity > 0)
    m.addr_mod(0, srca=(8, 0, 0), srcb=(8 if bcast in ("NONE", "COL") else 0, 0, 0), dest=(8, 0, 0, 0))
    m.addr_mod(1)
    m.addr_mod(2, srca=(0, 1, 0), srcb=(0, 1, 0), dest=(0, 0, 1, 0), fidelity=(hifi, 0))
    m.addr_mod(3, srca=(0, 1, 0), srcb=(0, 1, 0), dest=(8, 0, 0, 1), fidelity=(0, 1))
    clr = 1 if bcast in ("COL", "SCALAR") else 3
    b = BCAST[bcast]

    def op(clear, am):
        return word(kind, clear_dvalid=clear, instr_mod19=b, addr_mode=am)
    if kind == "ELWMUL" and hifi:
        m.template(fidelity, 2, op(0, 0), last_inner=op(0, 2), last_outer=op(clr, 3))
    else:
        m.template(2 if bcast == "COL" else 4, 2, op(0, 0), end0=setrwc(clr, 3, mask=3))
    m.setc16("CLR_DVALID_SrcA_Disable", 0)
    m.raw(setrwc(mask=15))


def binary(m: KernelThread, kind: str, fidelity: int, bcast: str, dst_index: int, base: int) -> None:
    """_llk_math_eltwise_binary_<kind, bcast, SyncHalf, false, fidelity>(dst_index)."""
    hifi_mul = kind == "ELWMUL" and fidelity > 0
    if bcast == "COL":
        m.setc16("DEST_TARGET_REG_CFG_MATH_Offset", (dst_index << 6) + base)
        for _ in range(2):                                                  # face rows
            for _ in range(2 if hifi_mul else 1):                           # fidelity loop: num_faces_c_dim
                m.run_mop()
            m.raw(setrwc(2))
    else:
        _run(m, dst_index, base, 4 if hifi_mul else 1)
        if bcast == "SCALAR":
            m.raw(setrwc(2, mask=4))
    m.raw(setrwc(mask=4))


def matmul_init(m: KernelThread, fidelity: int) -> None:
    """llk_math_matmul.h _llk_math_matmul_init_<fidelity>(32x32 x 32x32): AddrMods, 16 MVMULs at replay 16."""
    hifi = int(fidelity > 0)
    m.addr_mod(0, srcb=(8, 0, 0), dest=(8, 0, 0, 0))
    m.addr_mod(5, srca=(0, 1, 1), srcb=(0, 1, 1), dest=(0, 1, 1, 0), fidelity=(hifi, 0))
    m.addr_mod(1, srca=(16, 0, 0), srcb=(0, 0, 1), dest=(8, 0, 0, 0))
    m.addr_mod(2, srca=(0, 0, 1), srcb=(32, 0, 1), dest=(8, 0, 0, 0))
    m.addr_mod(4, srca=(32, 0, 1), srcb=(48, 0, 1), dest=(0, 0, 1, 0))
    m.raw(replay(16, 16, load=True))
    m.raw(*(word("MVMUL", addr_mode=am) for am in (0, 1, 0, 2, 0, 1, 0, 4, 0, 1, 0, 2, 0, 1, 0)))
    m.raw(word("MVMUL", clear_dvalid=0 if hifi else 1, addr_mode=5))
    if hifi:
        m.template(1, fidelity, replay(16, 16), end0=setrwc(1, mask=15))
    else:
        m.template(1, 1, replay(16, 16))
    m.raw(setrwc(mask=15))


def matmul(m: KernelThread, ct_dim: int, base: int) -> None:
    """_llk_math_matmul_<fidelity>(0, ct_dim, 1): one output tile per column, SrcB released at the end."""
    for rut in range(ct_dim):
        _run(m, rut, base)
    m.raw(setrwc(2, mask=15))


def _pool(kind: str, clear: int, dst: int = 0) -> int:
    return word("GAPOOL" if kind == "SUM" else "GMPOOL", clear_dvalid=clear, instr_mod19=1, dst=dst)


def reduce_init(m: KernelThread) -> None:
    """llk_math_reduce.h _llk_math_reduce_init_<pool, dim, false, LoFi>."""
    m.addr_mod(0, fidelity=(0, 1))
    m.addr_mod(1, srcb=(1, 0, 0), dest=(1, 0, 0, 0))
    m.addr_mod(2, srcb=(8, 0, 0), dest=(8, 0, 0, 0))
    m.setc16("CLR_DVALID_SrcA_Disable", 0)
    m.raw(setrwc(mask=15))


def _row_transpose(m: KernelThread) -> None:
    """reduce_row_perform_transpose (16-bit Dest): the row results back into a column."""
    movd2b = word("MOVD2B", src=0x10)
    m.raw(setrwc(0, 4, mask=3), movd2b, word("TRNSPSRCB"), movd2b, setrwc(0, 2, b=8, mask=2), setrwc(0, 2, b=8, mask=2),
          word("ZEROSRC", write_mode=1, src_mask=1), word("ELWADD", addr_mode=2), word("ELWADD", addr_mode=2))


def reduce(m: KernelThread, kind: str, dim: str, dst_index: int, base: int) -> None:
    """_llk_math_reduce_<pool, dim, false, LoFi>(dst_index) for a 32x32 tile."""
    m.setc16("DEST_TARGET_REG_CFG_MATH_Offset", (dst_index << 6) + base)
    if dim == "ROW":
        for second in (False, True):
            if second:
                m.raw(setrwc(0, 4, 8, mask=4), setrwc(0, 4, 8, mask=4), setrwc(0, 4, 8, mask=4), setrwc(3, 4, 8, mask=6))
            m.raw(_pool(kind, 3), _pool(kind, 0))
            _row_transpose(m)
        m.raw(setrwc(3, mask=6))
    elif dim == "COL":
        for _ in range(2):
            m.raw(_pool(kind, 0), setrwc(0, 4, 8, mask=4), setrwc(3, 4, 8, mask=4), _pool(kind, 0), setrwc(3, mask=5))
    else:
        m.raw(_pool(kind, 3, 4), _pool(kind, 3, 4), _pool(kind, 3, 4), _pool(kind, 0, 4), setrwc(0, 4, mask=3),
              word("MOVD2B", src=0x10, dst=4))
        gate = word("GATESRCRST", reset_srcb_gate_control=1, reset_srca_gate_control=1)
        m.raw(gate, word("TRNSPSRCB"), gate)
        m.raw(*(word("MOVB2A", srca=k, instr_mod=2, srcb=0x10 + k) for k in (0, 4, 8, 12)))
        m.raw(gate, word("ZEROACC", where=4), _pool(kind, 3))

