"""Probes: a small TRISC0 program run on the same core right after a case, to read what the case's
read-back does not collect (hwbridge/hw/selftest.py uses them).

- debug-bus groups (e.g. the SrcA/SrcB bank state the reset prologue acts on), read as the collector reads
  the counters (hwbridge.hw.dbus: the select, then DBG_RD_DATA in the documented order), four 32-bit words
  per 128-bit group;
- Dest through the RISC-V Dest window at 0xFFBD8000 in its 32-bit view, the path tt-exalens takes for a
  32-bit Dest on Blackhole (debug_tensix.direct_dest_read: TRISC0 loads, RISC_DEST_ACCESS_CTRL_SEC0 as
  software left it), where the harness reads DBG_ARRAY_RD. Dst.md "RISCV access to Dst": Load32 returns
  Dst32b[Addr / 16][Addr % 16] (Adj32 rows), swizzled to IEEE layout unless no_swizzle. ttsim 1.10.0 does
  not implement the window (tile.cpp TENSIX_DST_BASE: UnimplementedFunctionality): platform key
  ``dest_window``.
"""
from __future__ import annotations

import numpy as np

from golden.dest_view import LO_OFFSET, adj32
from golden.fpu_formats import dst32_to_fp32
from golden.registers import config_field
from golden.state import COLS

from . import dbus
from . import l1_map as M
from . import rv32 as rv
from .actions import load_used
from .platform import Platform
from .program import Job

DEST_WINDOW = 0xFFBD8000
DST32_ROWS = 512
WINDOW_WORDS = DST32_ROWS * COLS
RISC_DEST_ACCESS = config_field("RISC_DEST_ACCESS_CTRL_SEC0_no_swizzle").index     # Config word 3 (state 0)
NO_SWIZZLE = config_field("RISC_DEST_ACCESS_CTRL_SEC0_no_swizzle")
WINDOW_FORMAT = config_field("RISC_DEST_ACCESS_CTRL_SEC0_fmt")
REMAP = config_field("DEST_ACCESS_CFG_remap_addrs")
SWIZZLE_32B = config_field("DEST_ACCESS_CFG_swizzle_32b")


def _job(name: str, p: rv.Program, nbytes: int) -> Job:
    """TRISC0 alone runs ``p`` (ending with the all-done flag); nothing else in L1 or the core is touched."""
    p.li(rv.T0, M.ALL_DONE).li(rv.T1, M.DONE_TOKEN).emit(rv.sw(rv.T1, rv.T0, 0))
    p.label("park").jump("park")
    return Job(name=name, writes=[(M.FLAGS, bytes(M.FLAG_BYTES)), (M.TRISC_RESET_PC[0], p.to_bytes())],
               reads=[(M.RESULTS, nbytes)], release=M.RESET_ALL & ~M.RESET_TRISC[0],
               regs=[(M.TRISC_RESET_PC_REG[0], M.TRISC_RESET_PC[0]), (M.TRISC_RESET_PC_OVERRIDE, 1)])


def dbus_job(groups: list[tuple[int, int]]) -> Job:
    """Read each (daisy_sel, signal_sel) group's four words into the results block, in order."""
    p = rv.Program(M.TRISC_RESET_PC[0])
    dbus.collect(p, [(d, s, r) for d, s in groups for r in range(4)], M.RESULTS)
    return _job("probe-dbus", p, 16 * len(groups))


def src_bits(words: list[int], plat: Platform) -> dict[str, dict[str, int]]:
    """The platform table's SrcA/SrcB state bits from the four words of its src_state_group."""
    value = sum((w & 0xFFFFFFFF) << (32 * i) for i, w in enumerate(words))
    return {src: {k: value >> bit & 1 for k, bit in bits.items()} for src, bits in plat.raw["src_state_bits"].items()}


def window_job(no_swizzle: bool) -> Job:
    """TRISC0 reads Dst32b[512][16] through the Dest window with RISC_DEST_ACCESS_CTRL_SEC0 = fmt 0 (FP32 /
    uint32 view) and the given no_swizzle; the Config word is put back afterwards. Each store is read back and
    the value consumed before the loads that depend on it (MemoryOrdering.md: the window is another region)."""
    value = NO_SWIZZLE.put(WINDOW_FORMAT.put(0, 0), int(no_swizzle))
    p = rv.Program(M.TRISC_RESET_PC[0])
    p.li(rv.S0, M.CFG_BASE + 4 * RISC_DEST_ACCESS).emit(rv.lw(rv.S1, rv.S0, 0))      # S1: the word as it was
    p.li(rv.T1, value).emit(rv.sw(rv.T1, rv.S0, 0))
    load_used(p, rv.T1, rv.S0)
    p.li(rv.A0, DEST_WINDOW).li(rv.A1, M.RESULTS).li(rv.A2, DEST_WINDOW + 4 * WINDOW_WORDS)
    p.label("copy")
    for i in range(4):
        p.emit(rv.lw(rv.T1, rv.A0, 4 * i), rv.sw(rv.T1, rv.A1, 4 * i))
    p.emit(rv.addi(rv.A0, rv.A0, 16), rv.addi(rv.A1, rv.A1, 16)).branch("bne", rv.A0, rv.A2, "copy")
    p.emit(rv.sw(rv.S1, rv.S0, 0))
    load_used(p, rv.T1, rv.S0)
    return _job(f"probe-dest-window{'-raw' if no_swizzle else ''}", p, 4 * WINDOW_WORDS)


def window_model(dest: list[list[int]], access_cfg: int, no_swizzle: bool) -> np.ndarray:
    """What Load32 of Dst.md returns for each of the window's 512 x 16 words, from DstBits ``dest``
    (1024 x 16 raw cells) and Config DEST_ACCESS_CFG (Adj32's remap and swizzle)."""
    bits = np.asarray(dest, dtype=np.uint32)
    rows = np.array([adj32(r, bool(REMAP.get(access_cfg)), bool(SWIZZLE_32B.get(access_cfg)))
                     for r in range(DST32_ROWS)])
    raw = bits[rows] << 16 | bits[rows + LO_OFFSET]
    return (raw if no_swizzle else dst32_to_fp32(raw.astype(np.int64)).astype(np.uint32)).reshape(-1)


def words(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<u4")
