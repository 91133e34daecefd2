"""What the end of a case's programs collects into L1 for the host: GPRs, and the Config words observed
(state 0 by RISC loads, state 1 by RDCFG); which of those a platform can read."""
from __future__ import annotations

from golden.registers import thread_config_field
from golden.state import GPRS
from tensix_diff.case import Case

from . import l1_map as M
from . import rv32 as rv
from .actions import drain
from .platform import Platform
from .prologue import tensix_word


def copy_gprs(p: rv.Program, t: int) -> None:
    p.li(rv.T0, M.REGFILE_BASE).li(rv.T2, M.GPR_DUMP + 4 * GPRS * t)
    for i in range(GPRS):
        p.emit(rv.lw(rv.T1, rv.T0, 4 * i), rv.sw(rv.T1, rv.T2, 4 * i))


def collect_config(p: rv.Program, reads: dict[int, list[int]]) -> None:
    """State 0 by RISC loads; state 1 by RDCFG into GPRs (CFG_STATE_ID = 1), then copied out."""
    out = M.CFG_DUMP
    if reads.get(0):
        p.li(rv.T0, M.CFG_BASE).li(rv.T2, out)
        for k, idx in enumerate(reads[0]):
            p.emit(rv.lw(rv.T1, rv.T0, 4 * idx), rv.sw(rv.T1, rv.T2, 4 * k))
        out += 4 * len(reads[0])
    idx1 = reads.get(1, [])
    if idx1:
        state_id = thread_config_field("CFG_STATE_ID_StateID")
        p.tensix(tensix_word("SETC16", setc16_reg=state_id.index, setc16_value=state_id.put(0, 1)))
        for start in range(0, len(idx1), GPRS):
            chunk = idx1[start:start + GPRS]
            for g, idx in enumerate(chunk):
                p.tensix(tensix_word("RDCFG", gpraddress=g, cfgreg=idx))
            drain(p)
            p.li(rv.T0, M.REGFILE_BASE).li(rv.T2, out)
            for g in range(len(chunk)):
                p.emit(rv.lw(rv.T1, rv.T0, 4 * g), rv.sw(rv.T1, rv.T2, 4 * g))
            out += 4 * len(chunk)
        p.tensix(tensix_word("SETC16", setc16_reg=state_id.index, setc16_value=0))
        drain(p)



def config_reads(case: Case, plat: Platform) -> tuple[dict[int, list[int]], list[str]]:
    """The observed Config words this platform reads (state -> indices), and the names of those it cannot."""
    reads: dict[int, list[int]] = {}
    missing: list[str] = []
    for st, idx in case.observed_config().items():
        for i in idx:
            if i in plat.config_readable:
                reads.setdefault(st, []).append(i)
            else:
                missing.append(f"config.{st}.{i}")
    return reads, missing
