"""SFPU cross-register and configuration instructions: SFPSWAP, SFPTRANSP, SFPCONFIG, SFPNOP.

Sources: SFPSWAP.md, SFPTRANSP.md, SFPCONFIG.md, SFPNOP.md (WormholeB0), narrowed to what ttsim v1.10.0
models on Blackhole: SFPCONFIG writes LReg[11..14] (broadcast of LReg[0] lane 0, or -1.0 into LReg[11]) and
LaneConfig (bits 2 ENABLE_DEST_INDEX and 8 only); SFPLOADMACRO configuration (targets 0..8) is not modelled.
"""
from __future__ import annotations

from .fp import total_order
from .lanes import LANE_CONFIG_ENABLE_DEST_INDEX, MASK32, flag_only, lanes_of, require, result_reg, sfpu_op

_SWAP_MIN_LANES = {0: MASK32, 1: MASK32, 2: 0x0000FFFF, 3: 0x00FF00FF, 9: 0}
LANE_CONFIG_INVERT_SWAP = 0x100
MINUS_ONE = 0xBF800000


@sfpu_op("SFPSWAP")
def sfpswap(m, t, f):
    """SFPSWAP.md (WormholeB0): mod1=0 swaps VD and VC; otherwise VD gets min and VC max on lanes selected
    by the mode (max/min elsewhere), in sign-magnitude order; LaneConfig bit 8 inverts the decision."""
    vd = result_reg(f.lreg_dest, limit=12)
    vc = f.lreg_src_c
    mod = f.instr_mod1
    require(not 10 <= mod <= 15, f"SFPSWAP instr_mod1={mod}", undefined=True)
    require(mod in _SWAP_MIN_LANES, f"SFPSWAP instr_mod1={mod}")
    s = m.s.sfpu
    index_mode = bool(s.lane_config & LANE_CONFIG_ENABLE_DEST_INDEX)
    require(not index_mode or (vc < 4 and vd < 4), "SFPSWAP with ENABLE_DEST_INDEX on LReg[4..]")
    invert = bool(s.lane_config & LANE_CONFIG_INVERT_SWAP)
    L = s.lreg
    for lane in lanes_of(s.lane_mask()):
        c, d = int(L[vc, lane]), int(L[vd, lane])
        swap = True
        if mod:
            kc, kd = total_order(c), total_order(d)
            swap = kc < kd if _SWAP_MIN_LANES[mod] >> lane & 1 else kc >= kd
            swap ^= invert
        if not swap:
            continue
        if index_mode:
            L[vc, lane], L[vd, lane] = d, c
            L[4 + vc, lane], L[4 + vd, lane] = int(L[4 + vd, lane]), int(L[4 + vc, lane])
        else:
            if vc < 8:
                L[vc, lane] = d
            if vd < 8:
                L[vd, lane] = c


@sfpu_op("SFPTRANSP")
def sfptransp(m, t, f):
    """SFPTRANSP.md (WormholeB0): in each of the 8 columns of the 4x8 lane grid, transpose the 4x4 block
    formed by LReg[0..3] and, separately, by LReg[4..7]; only enabled destination lanes change."""
    flag_only(f.lreg_dest)
    s = m.s.sfpu
    old = s.lreg[:8].copy()
    mask = s.lane_mask()
    for base in (0, 4):
        for i in range(4):
            for j in range(4):
                if i == j:
                    continue
                for col in range(8):
                    if mask >> (j * 8 + col) & 1:
                        s.lreg[base + i, j * 8 + col] = old[base + j, i * 8 + col]


@sfpu_op("SFPCONFIG")
def sfpconfig(m, t, f):
    """SFPCONFIG.md (WormholeB0): LReg[11..14] and LaneConfig; every lane must be enabled."""
    s = m.s.sfpu
    mod, dest, imm = f.instr_mod1, f.config_dest, f.imm16_math
    require(mod <= 1, f"SFPCONFIG instr_mod1={mod}")
    lane0 = int(s.lreg[0, 0])
    if mod == 0:
        require(all(int(v) == lane0 for v in s.lreg[0]), "SFPCONFIG from an LReg[0] whose lanes differ")
        require(imm == 0, f"SFPCONFIG instr_mod1=0 imm16={imm:#x}")
    require(s.lane_mask() == MASK32, "SFPCONFIG with some lanes disabled")
    require(dest not in (9, 10), f"SFPCONFIG target {dest}", undefined=True)
    require(dest >= 11, f"SFPCONFIG target {dest} (SFPLOADMACRO configuration)")
    if dest <= 14:
        require(imm == 0, f"SFPCONFIG LReg[{dest}] with imm16={imm:#x}")
        if mod:
            require(dest == 11, f"SFPCONFIG reset of LReg[{dest}]")
            s.lreg[dest, :] = MINUS_ONE
        else:
            s.lreg[dest, :] = lane0
        return
    value = imm if mod else lane0
    require(not value & ~0x104, f"SFPCONFIG LaneConfig={value:#x} (only bits 2 and 8 modelled)")
    s.lane_config = value


@sfpu_op("SFPNOP")
def sfpnop(m, t, f):
    """SFPNOP.md (WormholeB0): no effect."""
