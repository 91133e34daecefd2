"""Helpers for the register-file tests (Dst, SrcA/SrcB, movers, packer addresses, frontend)."""
from __future__ import annotations

import numpy as np

from golden.core import Tensix
from golden.isa import encode
from golden.registers import config_field, thread_config_field
from golden.state import MATRIX_UNIT

from machine_util import set_tcfg  # noqa: F401  (re-exported for the register-file tests)

T = 1   # the math thread


def set_cfg(m: Tensix, name: str, value: int, state: int = 0) -> None:
    f = config_field(name)
    m.s.config[state][f.index] = f.put(m.s.config[state][f.index], value)


def dst_addr_mod(m: Tensix, section: int, incr: int, t: int = T) -> None:
    """ADDR_MOD_DST_SEC[section].DestIncr = incr (everything else zero)."""
    m.s.thread_config[t][thread_config_field("ADDR_MOD_DST_SEC0_DestIncr").index + section] = incr & 0x3FF


def machine(implied: int | None = None, give: bool = False) -> Tensix:
    """A fresh machine; implied: the implied format of every Src bank; give: the matrix unit owns both
    SrcA and SrcB bank 0."""
    m = Tensix()
    for src in (m.s.srca, m.s.srcb):
        for bank in src.banks:
            bank.implied_format = implied
        if give:
            src.banks[src.matrix_bank].allowed_client = MATRIX_UNIT
    return m


def run1(m: Tensix, name: str, t: int = T, **fields) -> Tensix:
    m.run({t: [encode(name, fields)]})
    return m


def row(values) -> np.ndarray:
    """A 16-column row, cycling ``values``."""
    v = list(values)
    return np.array([v[i % len(v)] for i in range(16)], dtype=np.uint32)


def put32(m: Tensix, phys_hi: int, value: int) -> None:
    """Store a Dst32b cell value in every column of the DstBits row pair (phys_hi, phys_hi + 8)."""
    m.s.dest.bits[phys_hi] = value >> 16
    m.s.dest.bits[phys_hi + 8] = value & 0xFFFF
