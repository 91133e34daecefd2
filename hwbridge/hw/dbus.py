"""A TRISC's reads of the debug bus (DBG_BUS_CTRL, DBG_RD_DATA) and of Dest (DBG_ARRAY_RD_CMD, _DATA): a select
store, then a load of another register of the block, in the order the documents prescribe.

tt-isa-documentation WormholeB0/TensixTile/DebugDaisychain.md: the select's write-request must be emitted before
the data's read-request, and software waits at least five cycles after changing the select before it reads the
data; tt-llk's ``dbg_get_array_row`` (ckernel_debug.h) waits five cycles between DBG_ARRAY_RD_CMD and
DBG_ARRAY_RD_DATA too. BlackholeA0/TensixTile/BabyRISCV/MemoryOrdering.md: a store and a later load of another
address can be emitted in either order; a ``fence`` between them emits the store first; requests to one memory
region (here tile control/debug/status, 0xFFB12000..0xFFB12FFF) are processed in the order they were emitted.
BabyRISCV/README.md (EX1): an instruction enters EX1 once its register operands are known and the one before it
has left; ``divu`` by anything but 0 or 1 stays in EX1 six to 33 cycles.

So every read here is: ``sw`` the select; ``fence``; ``lw`` the data register (the ordering read: processed after
the select); ``divu`` of that value by WAIT_DIVISOR (it waits for the value, then holds EX1 for at least six
cycles); ``lw`` the data register, at least SETTLE cycles after the select took effect. ttsim 1.10.0 stops on a
load of DBG_BUS_CTRL or DBG_ARRAY_RD_CMD and on a store to either data register (tile_regs.h), so neither a
read-back of the select nor the document's dummy stores to the data register can run there; reading the data
register has no side effect.
"""
from __future__ import annotations

from golden.state import DEST_ROWS

from . import l1_map as M
from . import rv32 as rv

SETTLE = 5                                     # cycles from a select taking effect to its data load
DIVISOR, WAIT_DIVISOR = rv.T5, 2               # the register ``setup`` loads, and what it holds
CTRL, DATA = M.DBG_BUS_CTRL - M.DEBUG_REGS, M.DBG_RD_DATA - M.DEBUG_REGS
ARRAY_EN, ARRAY_CMD = M.DBG_ARRAY_RD_EN - M.DEBUG_REGS, M.DBG_ARRAY_RD_CMD - M.DEBUG_REGS
ARRAY_DATA = M.DBG_ARRAY_RD_DATA - M.DEBUG_REGS


def select(daisy: int, sig: int, read32: int) -> int:
    """DBG_BUS_CTRL enabling the 32 bits ``read32`` of group (daisy_sel, signal_sel)."""
    return M.DBG_BUS_ENABLE | read32 << 25 | daisy << 16 | sig


def setup(p: rv.Program) -> None:
    """S0 := DEBUG_REGS and DIVISOR := WAIT_DIVISOR, which ``select_read`` relies on."""
    p.li(rv.S0, M.DEBUG_REGS).li(DIVISOR, WAIT_DIVISOR)


def select_read(p: rv.Program, sel: int, select_off: int, data_off: int, rd: int, order: int | None = None) -> None:
    """Store register ``sel`` to ``select_off(S0)``, then load ``data_off(S0)`` into ``rd`` at least SETTLE cycles
    after the store took effect (after ``setup``); the ordering read goes to ``order`` (default ``rd``)."""
    o = rd if order is None else order
    p.emit(rv.sw(sel, rv.S0, select_off), rv.fence(), rv.lw(o, rv.S0, data_off), rv.divu(o, o, DIVISOR),
           rv.lw(rd, rv.S0, data_off))


def bus_read(p: rv.Program, daisy: int, sig: int, read32: int, rd: int = rv.T1) -> None:
    """``rd`` := 32 bits of a debug-bus group (after ``setup``); the select stays enabled."""
    p.li(rd, select(daisy, sig, read32))
    select_read(p, rd, CTRL, DATA, rd)


def bit(p: rv.Program, word_reg: int, bit: int, rd: int) -> None:
    """``rd`` := bit ``bit % 32`` of ``word_reg``."""
    p.emit(rv.srli(rd, word_reg, bit % 32), rv.andi(rd, rd, 1))


def collect(p: rv.Program, reads: list[tuple[int, int, int]], out: int) -> None:
    """Each (daisy_sel, signal_sel, read32_sel) word stored at ``out + 4k`` in order, then the bus disabled."""
    setup(p)
    p.li(rv.T2, out)
    for k, (daisy, sig, read32) in enumerate(reads):
        bus_read(p, daisy, sig, read32)
        p.emit(rv.sw(rv.T1, rv.T2, 4 * k))
    p.emit(rv.sw(rv.ZERO, rv.S0, CTRL))


def collect_dest(p: rv.Program) -> None:
    """Every Dest row through DBG_ARRAY_RD: CMD = row | sel << 12 | 2 << 16. Stored sel-major (the words of one
    sel for rows 0..1023, then the next sel), eight rows per loop turn."""
    setup(p)
    p.li(rv.T1, 1).emit(rv.sw(rv.T1, rv.S0, ARRAY_EN))
    p.li(rv.A0, M.DEST_DUMP).li(rv.A1, M.DEST_ARRAY_SEL).li(rv.A3, M.DEST_ARRAY_SEL + (8 << 12))
    p.li(rv.T2, (1 << 12) - DEST_ROWS)
    p.label("dest_sel").li(rv.A2, DEST_ROWS // 8)
    p.label("dest_rows")
    for i in range(8):
        select_read(p, rv.A1, ARRAY_CMD, ARRAY_DATA, rv.T3, order=rv.T1)
        p.emit(rv.sw(rv.T3, rv.A0, 4 * i), rv.addi(rv.A1, rv.A1, 1))
    p.emit(rv.addi(rv.A0, rv.A0, 32), rv.addi(rv.A2, rv.A2, -1)).branch("bne", rv.A2, rv.ZERO, "dest_rows")
    p.emit(rv.add(rv.A1, rv.A1, rv.T2)).branch("bne", rv.A1, rv.A3, "dest_sel")      # next sel, row 0
    p.emit(rv.sw(rv.ZERO, rv.S0, ARRAY_CMD), rv.sw(rv.ZERO, rv.S0, ARRAY_EN))
