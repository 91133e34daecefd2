"""Configuration unit: SETC16 (ThreadConfig), WRCFG, RDCFG, RMWCIB0..3, CFGSHIFTMASK (Config of the thread's
CFG_STATE_ID).

Sources: tt-isa-documentation WormholeB0 SETC16.md, WRCFG.md, RMWCIB.md, BackendConfiguration.md,
ConfigurationUnit.md, BlackholeA0 CFGSHIFTMASK.md; Blackhole field positions from ttsim data/bh/tensix_isa.json and blackhole-deltas
#12 (WRCFG: CfgReg 10:0, wr128b 15, GprAddress 21:16) and #13 (SETC16 writes the issuing thread's
ThreadConfig); Blackhole section bases from cfg_defines.h (GLOBAL words from 180, THCON words from 64).

A Config word keeps only the bits of its named fields (registers.yaml), as ttsim's register masks do;
words with no named field are refused. Words at or above the GLOBAL base exist once, so a write reaches
both config states. Writing STATE_RESET_EN (other than by RMWCIB) zeroes the state's words below the
GLOBAL base (BackendConfiguration.md).
"""
from __future__ import annotations

from functools import cache

from ..errors import NotModelled, UndefinedBehaviour
from ..registers import CONFIG_STATES, CONFIG_WORDS, config_field, fields, thread_config_words
from ..state import GPRS
from . import semantics

GLOBAL_BASE = config_field("DEST_TARGET_REG_CFG_PACK_SEC0_Offset").index   # first word of the GLOBAL section
THCON_BASE = config_field("THCON_SEC0_REG0_TileDescriptor").index           # first word of the THCON section
STATE_RESET = config_field("STATE_RESET_EN").index
# The 128-bit tile descriptors: registers.yaml names only their first word, the other three exist too.
_TILE_DESCRIPTORS = [config_field(f"THCON_SEC{i}_REG0_TileDescriptor").index for i in (0, 1)]


@cache
def word_mask(index: int) -> int:
    """Bits of Config word ``index`` that hold state (0 when no named field covers the word)."""
    if any(base <= index < base + 4 for base in _TILE_DESCRIPTORS):
        return 0xFFFFFFFF
    mask = 0
    for f in fields("config").values():
        if f.index == index:
            mask |= f.mask
    return mask


def _check_index(name: str, index: int) -> None:
    if index >= CONFIG_WORDS:
        raise UndefinedBehaviour(f"{name} Config index {index} is beyond the {CONFIG_WORDS} words of a config state")
    if not word_mask(index):
        raise NotModelled(f"{name} Config word {index} has no named field: its contents are unknown")


def _check_gpr(name: str, gpr: int) -> None:
    if gpr >= GPRS:
        raise UndefinedBehaviour(f"{name} GPR index {gpr}: bits 23:22 of the GPR field are reserved")


def read_config(m, t: int, index: int, name: str = "config read") -> int:
    _check_index(name, index)
    return m.s.config[m.state_id(t)][index]


def write_config(m, t: int, index: int, value: int, name: str = "config write", reset: bool = True) -> None:
    """Write Config word ``index`` as thread t sees it (masked; GLOBAL words in both states)."""
    _check_index(name, index)
    value &= word_mask(index)
    states = range(CONFIG_STATES) if index >= GLOBAL_BASE else (m.state_id(t),)
    for s in states:
        m.s.config[s][index] = value
        if reset and index == STATE_RESET:
            m.s.config[s][:GLOBAL_BASE] = [0] * GLOBAL_BASE


@semantics("SETC16")
def setc16(m, t, f) -> None:
    """SETC16.md (WormholeB0): ThreadConfig[CurrentThread][CfgIndex] = NewValue (blackhole-deltas #13)."""
    if f.setc16_reg >= thread_config_words():
        raise UndefinedBehaviour(f"SETC16 index {f.setc16_reg} is beyond the {thread_config_words()} "
                                 "ThreadConfig registers")
    m.s.thread_config[t][f.setc16_reg] = f.setc16_value


@semantics("WRCFG")
def wrcfg(m, t, f) -> None:
    """WRCFG.md (WormholeB0): GPR(s) to Config; the 128-bit form aligns both indices down to 4 (delta #12)."""
    _check_gpr("WRCFG", f.gpraddress)
    if f.cfgreg >= CONFIG_WORDS:
        raise UndefinedBehaviour(f"WRCFG CfgReg {f.cfgreg} is beyond the {CONFIG_WORDS} words of a config state")
    gprs = m.s.gpr[t]
    if not f.wr128b:
        write_config(m, t, f.cfgreg, gprs[f.gpraddress], "WRCFG")
        return
    cfg, gpr = f.cfgreg & ~3, f.gpraddress & ~3
    for i in range(4):
        _check_index("WRCFG", cfg + i)    # refuse before writing any of the four words
    for i in range(4):
        write_config(m, t, cfg + i, gprs[gpr + i], "WRCFG")


@semantics("RDCFG")
def rdcfg(m, t, f) -> None:
    """BackendConfiguration.md (RDCFG, no page of its own): GPR = Config word of the thread's state."""
    _check_gpr("RDCFG", f.gpraddress)
    m.s.gpr[t][f.gpraddress] = read_config(m, t, f.cfgreg, "RDCFG")


def _rmwcib(m, t, f, byte: int) -> None:
    name = f"RMWCIB{byte}"
    shift = 8 * byte
    old = read_config(m, t, f.cfgregaddr, name)
    mask = f.mask << shift
    write_config(m, t, f.cfgregaddr, (old & ~mask) | (f.data << shift & mask), name, reset=False)


@semantics("RMWCIB0")
def rmwcib0(m, t, f) -> None:
    """RMWCIB.md (WormholeB0): byte 0 of a Config word = (NewValue & Mask) | (old & ~Mask)."""
    _rmwcib(m, t, f, 0)


@semantics("RMWCIB1")
def rmwcib1(m, t, f) -> None:
    """RMWCIB.md (WormholeB0): byte 1 of a Config word = (NewValue & Mask) | (old & ~Mask)."""
    _rmwcib(m, t, f, 1)


@semantics("RMWCIB2")
def rmwcib2(m, t, f) -> None:
    """RMWCIB.md (WormholeB0): byte 2 of a Config word = (NewValue & Mask) | (old & ~Mask)."""
    _rmwcib(m, t, f, 2)


@semantics("RMWCIB3")
def rmwcib3(m, t, f) -> None:
    """RMWCIB.md (WormholeB0): byte 3 of a Config word = (NewValue & Mask) | (old & ~Mask)."""
    _rmwcib(m, t, f, 3)


_SCRATCH = [config_field(f"SCRATCH_SEC{i}_val").index for i in range(3)]
_ALU = {0: lambda c, s: c | s, 1: lambda c, s: c & s, 2: lambda c, s: c ^ s, 3: lambda c, s: c + s,
        4: lambda c, s: c | ~s, 5: lambda c, s: c & ~s, 6: lambda c, s: c ^ ~s, 7: lambda c, s: c - s}


def _rotr(x: int, n: int) -> int:
    n &= 31
    return ((x >> n) | (x << (32 - n))) & 0xFFFFFFFF


@semantics("CFGSHIFTMASK")
def cfgshiftmask(m, t, f) -> None:
    """CFGSHIFTMASK.md (BlackholeA0): a Config word of the thread's state combined with a masked, rotated
    SCRATCH_SEC[ScratchIndex] (index 3: the issuing thread's) by one of eight ALU modes. (The page's
    scheduling rule, no consumer of the word in the very next instruction, is not checked.)"""
    old = read_config(m, t, f.cfgreg, "CFGSHIFTMASK")
    scratch = m.s.config[m.state_id(t)][_SCRATCH[f.scratch_sel if f.scratch_sel < 3 else t]]
    mask = ((2 << f.mask_width) - 1) & 0xFFFFFFFF
    value = _rotr(scratch & mask, f.right_cshift_amt)
    if f.disable_mask_on_old_val == 0:
        old &= ~_rotr(mask, f.right_cshift_amt)
    write_config(m, t, f.cfgreg, _ALU[f.operation](old, value) & 0xFFFFFFFF, "CFGSHIFTMASK")
