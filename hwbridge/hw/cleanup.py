"""The clean-up job: after a case's results are read, clear what golden predicts it left (hw/leftovers.py).

Each TRISC runs, from its reset PC: its RISC-side steps (PC_BUF semaphore posts and gets, read back; mailbox
reads; each load consumed at once, as the actions module does: ManualTTSync.md), with no wait for its Tensix
instructions first (they may be held behind a latched wait these steps release), its Tensix clean-up words, a
wait until they completed (``drain``), and its done flag; TRISC0 then raises the all-done flag the host polls.
No reset prologue runs first: a clean-up such as the packer's PACR needs the case's Config and counters as the
case left them. The job zeroes no L1 (the next case's job does, after it), reads nothing back, and writes its
host registers (the DBG_FEATURE_DISABLE reset) while every RISC is held in reset; a Tensix unit soft reset the
plan needs is pulsed before it (Device.reset_units).
"""
from __future__ import annotations

from golden.state import THREADS

from . import l1_map as M
from . import rv32 as rv
from .actions import drain, load_used
from .leftovers import Plan, Step
from .program import Job
from .prologue import wait_flags

MAX_CYCLES = 200_000       # a clean-up is a few instructions; a job that needs more is stuck


def _risc_step(p: rv.Program, s: Step) -> None:
    a = s.action
    if a.kind in ("sem_post", "sem_get"):       # PC_BUF semaphore: a store of 0 posts, of 1 takes
        p.li(rv.T0, M.PC_BUF_SEMAPHORE + 4 * a.args[0]).li(rv.T1, int(a.kind == "sem_get"))
        p.emit(rv.sw(rv.T1, rv.T0, 0))
        load_used(p, rv.T1, rv.T0)              # processed before anything later starts
    elif a.kind == "mailbox_read":              # the load takes the value the other thread left
        p.li(rv.T0, M.MAILBOX_BASE + M.MAILBOX_STRIDE * (a.args[0] + 1))
        load_used(p, rv.T1, rv.T0)
    else:
        raise ValueError(f"no clean-up code for RISC-V action {a.kind}")


def thread_program(t: int, steps: list[Step]) -> rv.Program:
    p = rv.Program(M.TRISC_RESET_PC[t])
    for s in steps:
        if s.action is not None:
            _risc_step(p, s)
    p.tensix_words([s.word for s in steps if s.word is not None])
    drain(p)
    p.li(rv.T0, M.DONE + 4 * t).li(rv.T1, M.DONE_TOKEN).emit(rv.sw(rv.T1, rv.T0, 0))
    if t == 0:
        wait_flags(p, M.DONE, range(1, THREADS), "others_done", M.DONE_TOKEN)
        p.li(rv.T0, M.ALL_DONE).emit(rv.sw(rv.T1, rv.T0, 0))
    p.label("park").jump("park")
    return p


def job(name: str, plan: Plan) -> Job:
    """The job that clears ``plan``'s leftovers."""
    steps = plan.steps()
    writes: list[tuple[int, bytes]] = [(M.FLAGS, bytes(M.FLAG_BYTES))]
    for t in range(THREADS):
        writes.append((M.TRISC_RESET_PC[t], thread_program(t, [s for s in steps if s.thread == t]).to_bytes()))
    regs = plan.regs() + [(M.TRISC_RESET_PC_REG[t], M.TRISC_RESET_PC[t]) for t in range(THREADS)]
    regs.append((M.TRISC_RESET_PC_OVERRIDE, (1 << THREADS) - 1))
    return Job(name=f"clean-up after {name}", writes=writes, reads=[], release=M.RESET_ALL & ~sum(M.RESET_TRISC),
               max_cycles=MAX_CYCLES, regs=regs)


def describe(plan: Plan) -> list[str]:
    """Provenance: each clean-up done, as '<what was left>: <what cleared it>'."""
    return [f"{f.text}: {f.done}" for f in plan.acting]
