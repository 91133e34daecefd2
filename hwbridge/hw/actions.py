"""A case's RISC-V actions (golden.riscv) as TRISC code between the Tensix words the thread pushes.

Each action waits for the thread's earlier Tensix instructions to complete (``drain``: Manual TTSync) so it
lands where golden applies it, in program order. Stores that later Tensix instructions depend on are read
back where the platform can read them, else fenced; L1 stores are fenced and their last word read back.
Every load the harness waits on is consumed by the next instruction (``load_used``), so nothing after it
starts before its value arrives (tt-isa-documentation BlackholeA0/TensixTile/BabyRISCV/MemoryOrdering.md,
"Enforcing stronger ordering"), and no PC_BUF or mailbox load is ever in flight beside another
(ManualTTSync.md's hardware bug). Addresses: ttsim v1.10.0 tile_regs.h and tile.cpp (PC_BUF semaphores,
mailboxes).
"""
from __future__ import annotations

from golden.riscv import RiscvAction

from . import l1_map as M
from . import rv32 as rv


_SYNC = M.PC_BUF_TENSIX_SYNC - M.PC_BUF_BASE
_DRAIN = (rv.lui(rv.T6, M.PC_BUF_BASE >> 12), rv.sw(rv.ZERO, rv.T6, _SYNC), rv.lw(rv.T6, rv.T6, _SYNC),
          rv.andi(rv.T6, rv.T6, 0))


def drain(p: rv.Program) -> None:
    """Wait until every Tensix instruction the thread pushed has completed: Manual TTSync's sequence
    (tt-isa-documentation BlackholeA0/TensixTile/BabyRISCV/ManualTTSync.md; tt-llk's ``tensix_sync``): a store
    to CoprocessorDoneCheck (so the load cannot overtake the pushes before it), the load, and an ALU
    instruction consuming its value (nothing later starts before it returns; no other PC_BUF or mailbox load
    overlaps it)."""
    p.words.extend(_DRAIN)


def load_used(p: rv.Program, rd: int, base: int, off: int = 0) -> None:
    """``lw rd, off(base)`` and an ALU instruction consuming rd that keeps its value (tt-llk's ``load_blocking``):
    no later instruction starts before the load's value returns (MemoryOrdering.md)."""
    p.emit(rv.lw(rd, base, off), rv.and_(rd, rd, rd))


def _store(p: rv.Program, addr: int, value: int, read_back: bool = True) -> None:
    """Store ``value``; with ``read_back``, load it back and consume it, so the store has been processed before
    anything later starts (MemoryOrdering.md: store, load of the same address, a use)."""
    p.li(rv.T0, addr).li(rv.T1, value).emit(rv.sw(rv.T1, rv.T0, 0))
    if read_back:
        load_used(p, rv.T1, rv.T0)


def _until(p: rv.Program, op: str, n: int, done: str) -> None:
    """Branch to ``done`` when T1 OP n (T2 is scratch)."""
    if op in ("==", "!=", "<", ">"):
        p.li(rv.T2, n)
        kind, a, b = {"==": ("beq", rv.T1, rv.T2), "!=": ("bne", rv.T1, rv.T2),
                      "<": ("blt", rv.T1, rv.T2), ">": ("blt", rv.T2, rv.T1)}[op]
    elif op == "<=":
        p.li(rv.T2, n + 1)
        kind, a, b = "blt", rv.T1, rv.T2
    else:  # ">="
        p.li(rv.T2, n - 1)
        kind, a, b = "blt", rv.T2, rv.T1
    p.branch(kind, a, b, done)


def emit(p: rv.Program, t: int, a: RiscvAction, label: str, cfg_readable: frozenset[int]) -> None:
    """TRISC t's code for one action (``label`` makes its loop labels unique); ``cfg_readable``: the Config
    words a RISC load can read on this platform (a cfg store to any other is fenced, then a readable word
    read: Config processes its requests in order)."""
    f = a.fields
    drain(p)
    if a.kind == "cfg":
        addr = M.CFG_BASE + 4 * f.index
        if f.mask is None:
            _store(p, addr, f.value, read_back=f.index in cfg_readable)
            if f.index not in cfg_readable:     # every store emitted, then a word Config processes after it
                p.emit(rv.fence()).li(rv.T0, M.CFG_BASE + 4 * min(cfg_readable))
                load_used(p, rv.T1, rv.T0)
        else:
            p.li(rv.T0, addr).emit(rv.lw(rv.T1, rv.T0, 0)).li(rv.T2, ~f.mask & 0xFFFFFFFF)
            p.emit(rv.and_(rv.T1, rv.T1, rv.T2)).li(rv.T2, f.value & f.mask)
            p.emit(rv.or_(rv.T1, rv.T1, rv.T2), rv.sw(rv.T1, rv.T0, 0))
            load_used(p, rv.T1, rv.T0)
    elif a.kind == "mop_cfg":
        _store(p, M.MOP_CFG_BASE + 4 * f.index, f.value, read_back=False)   # ttsim cannot read MopCfg back
        p.emit(rv.fence())
    elif a.kind == "gpr":
        _store(p, M.REGFILE_BASE + 4 * f.index, f.value)
    elif a.kind == "l1":
        data = bytes(f.data)
        p.li(rv.T0, f.addr)
        for off in range(0, len(data), 4):
            word = int.from_bytes(data[off:off + 4], "little")
            if word:
                p.li(rv.T1, word).emit(rv.sw(rv.T1, rv.T0, off))
            else:
                p.emit(rv.sw(rv.ZERO, rv.T0, off))
        p.emit(rv.fence())          # L1 processes one port's requests in order: the last word read back and
        load_used(p, rv.T1, rv.T0, 4 * ((len(data) - 1) // 4))     # consumed means every store has landed
    elif a.kind in ("sem_post", "sem_get"):
        _store(p, M.PC_BUF_SEMAPHORE + 4 * f.sem, 0 if a.kind == "sem_post" else 1)
    elif a.kind == "sem_wait":
        p.li(rv.T0, M.PC_BUF_SEMAPHORE + 4 * f.sem).label(f"{label}_poll")
        load_used(p, rv.T1, rv.T0)
        _until(p, f.op, f.value, f"{label}_done")
        p.jump(f"{label}_poll").label(f"{label}_done")
    elif a.kind == "mailbox_write":
        _store(p, M.MAILBOX_BASE + M.MAILBOX_STRIDE * (f.to + 1), f.value, read_back=False)  # a read would consume
    elif a.kind == "mailbox_read":
        p.li(rv.T0, M.MAILBOX_BASE + M.MAILBOX_STRIDE * (getattr(f, "from") + 1))
        load_used(p, rv.T1, rv.T0)
        p.li(rv.T0, M.REGFILE_BASE + 4 * f.gpr).emit(rv.sw(rv.T1, rv.T0, 0))
        load_used(p, rv.T1, rv.T0)
    elif a.kind == "feature_disable":
        _store(p, M.DBG_FEATURE_DISABLE, f.value)
    else:
        raise ValueError(f"no TRISC code for RISC-V action {a.kind}")
