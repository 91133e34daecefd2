"""Configuration unit: SETC16 (ThreadConfig), WRCFG, RDCFG, RMWCIB0..3, CFGSHIFTMASK (Config of the thread's
CFG_STATE_ID).

Sources: tt-isa-documentation WormholeB0 SETC16.md, WRCFG.md, RMWCIB.md, BackendConfiguration.md,
ConfigurationUnit.md, BlackholeA0 CFGSHIFTMASK.md; Blackhole field positions from ttsim data/bh/tensix_isa.json and blackhole-deltas
#12 (WRCFG: CfgReg 10:0, wr128b 15, GprAddress 21:16) and #13 (SETC16 writes the issuing thread's
ThreadConfig). How a Config word is read and written: golden.config_words.
"""
from __future__ import annotations

from ..config_words import _check_index, read_config, write_config
from ..errors import UndefinedBehaviour
from ..handlers import semantics
from ..registers import CONFIG_WORDS, config_field, thread_config_words
from ..state import GPRS


def _check_gpr(name: str, gpr: int) -> None:
    if gpr >= GPRS:
        raise UndefinedBehaviour(f"{name} GPR index {gpr}: bits 23:22 of the GPR field are reserved")


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
    mask = f.mask << shift
    old = read_config(m, t, f.cfgregaddr, name, bits=0)        # only kept outside the mask, never used
    write_config(m, t, f.cfgregaddr, (old & ~mask) | (f.data << shift & mask), name, reset=False, bits=mask)


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
