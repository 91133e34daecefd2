"""Builders shared by the SFPU golden tests (holds no tests itself)."""
from __future__ import annotations

import numpy as np

from golden import isa
from golden.core import Tensix
from golden.registers import config_field, thread_config_field

T = 1  # the math thread


def machine() -> Tensix:
    m = Tensix()
    return m


def set_cfg(m: Tensix, name: str, value: int, state: int = 0) -> None:
    f = config_field(name)
    m.s.config[state][f.index] = f.put(m.s.config[state][f.index], value)


def set_tcfg(m: Tensix, name: str, value: int, t: int = T) -> None:
    f = thread_config_field(name)
    m.s.thread_config[t][f.index] = f.put(m.s.thread_config[t][f.index], value)


def run(m: Tensix, *instrs: tuple[str, dict], t: int = T) -> Tensix:
    m.run({t: [isa.encode(name, fields) for name, fields in instrs]})
    return m


def loadi32(vd: int, value: int) -> list[tuple[str, dict]]:
    """Two SFPLOADIs that put a 32-bit constant in every enabled lane of LReg[vd]."""
    return [("SFPLOADI", dict(lreg_ind=vd, instr_mod0=8, imm16=value >> 16)),
            ("SFPLOADI", dict(lreg_ind=vd, instr_mod0=10, imm16=value & 0xFFFF))]


def store(vd: int, mod0: int, addr: int = 0, am: int = 0) -> tuple[str, dict]:
    return ("SFPSTORE", dict(lreg_ind=vd, instr_mod0=mod0, sfpu_addr_mode=am, dest_reg_addr=addr))


def load(vd: int, mod0: int, addr: int = 0, am: int = 0) -> tuple[str, dict]:
    return ("SFPLOAD", dict(lreg_ind=vd, instr_mod0=mod0, sfpu_addr_mode=am, dest_reg_addr=addr))


def set_lreg(m: Tensix, vd: int, values) -> None:
    m.s.sfpu.lreg[vd, :] = np.asarray([v & 0xFFFFFFFF for v in values], dtype=np.uint32)


def lreg(m: Tensix, vd: int) -> list[int]:
    return [int(x) for x in m.s.sfpu.lreg[vd]]
