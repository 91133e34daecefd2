"""Case -> the per-TRISC RISC-V programs and the host job that runs them on a Tensix core.

Each TRISC t runs, from its reset PC: a reset prologue that puts everything the case can observe or
depend on into golden's power-on state (GPRs, MOP config, ThreadConfig, Config, Dest, Src banks,
semaphores, RWCs, ADCs) overlaid with the case's ``init``; a barrier so no thread starts the case
before every prologue has drained; the case's Tensix words issued inline (``rotl(W, 2)``); a drain
(Manual TTSync, actions.drain: a store to, load from and use of PC_BUF's CoprocessorDoneCheck, done once
the thread's Tensix instructions finish); a copy of its GPRs into L1; a done flag. TRISC0 then collects
Dest, the counters and Config into L1 and raises the all-done flag that the host polls. Everything lands
in one block the host reads at once. The pieces: prologue.py (the reset), collect.py (what is copied out).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import lru_cache

from golden import isa
from golden.state import L1_SIZE, THREADS
from tensix_diff.case import Case

from . import actions as hw_actions
from . import dbus
from . import l1_map as M
from . import rv32 as rv
from .actions import drain
from .collect import collect_config, config_reads, copy_gprs
from .platform import Platform
from .prologue import config, counters, dest, frontend, gprs, shared_state, sfpu, src_reset, store_words, thread_config
from .prologue import wait_flags

MAX_CYCLES = 1_000_000     # simulated cycles before a case counts as hung (a case needs ~62K)


class Refusal(Exception):
    """The case cannot run on this platform through this harness (reason in the message)."""


@dataclass
class Job:
    """What the device worker does for one case; plain data so it crosses the process boundary."""
    name: str
    writes: list[tuple[int, bytes]]
    reads: list[tuple[int, int]]
    release: int
    done_addr: int = M.ALL_DONE
    done_value: int = M.DONE_TOKEN
    max_cycles: int = MAX_CYCLES
    zero: list[tuple[int, int]] = field(default_factory=list)       # L1 ranges the worker zeroes first
    regs: list[tuple[int, int]] = field(default_factory=list)       # MMIO words written before the release
    cfg_reads: dict[int, list[int]] = field(default_factory=dict)   # state -> indices, dump order
    l1_regions: list[tuple[int, int]] = field(default_factory=list)
    unobserved_config: list[str] = field(default_factory=list)

    def payload(self) -> dict:
        """The job as the plain dict the worker is sent: dataclasses.asdict's keys and values, sharing the job's
        lists rather than deep-copying them (the dict is pickled across the process boundary)."""
        return {f.name: getattr(self, f.name) for f in _JOB_FIELDS}


_JOB_FIELDS = fields(Job)


# --- checks -------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _plain_words() -> dict[int, int]:
    """Per opcode of an instruction ttsim supports, the bits outside its fields (isa.decode refuses them)."""
    return {op: ~ins.payload_mask & 0xFFFFFF for op, ins in isa.by_opcode().items() if not ins.ttsim_unsupported}


def check(case: Case, plat: Platform) -> None:
    """Raise Refusal for what this platform or harness cannot do."""
    if plat.refuse_isa_unsupported:
        plain = _plain_words()
        for t, words in case.threads.items():
            for i, w in enumerate(words):
                if w >> 24 in plain and not w & plain[w >> 24]:
                    continue
                ins, _ = isa.decode(w)       # an unknown opcode or stray bits raise here
                if ins.ttsim_unsupported:
                    raise Refusal(f"thread {t} instruction {i}: {ins.name} is not supported by {plat.name}")
    for st, regs in case.init.config.items():
        for idx in regs:
            if idx not in plat.config_writable:
                raise Refusal(f"init.config state {st} index {idx} cannot be written on {plat.name}")
    for t, regs in case.init.thread_config.items():
        for idx, v in regs.items():
            if idx not in plat.thread_config_writable or v > 0xFFFF:
                raise Refusal(f"init.thread_config thread {t} index {idx} value {v:#x} cannot be set on {plat.name}")
    for t, acts in case.actions.items():
        for k, (_, a) in enumerate(acts):
            if a.kind == "cfg" and a.fields.index not in plat.config_writable:
                raise Refusal(f"thread {t} action {k}: Config word {a.fields.index} cannot be written on {plat.name}")
            if a.kind == "cfg" and a.fields.mask is not None and a.fields.index not in plat.config_readable:
                raise Refusal(f"thread {t} action {k}: a masked store to Config word {a.fields.index} reads it, "
                              f"which {plat.name} cannot")
            if a.kind == "feature_disable" and a.fields.value and not plat.raw.get("feature_disable_writable", True):
                raise Refusal(f"thread {t} action {k}: DBG_FEATURE_DISABLE = {a.fields.value:#x} is not supported "
                              f"by {plat.name}")
    lo, hi = M.RESERVED
    action_l1 = [(a.fields.addr, len(a.fields.data)) for acts in case.actions.values() for _, a in acts if a.kind == "l1"]
    for addr, size in case.observed_l1() + [(a, len(d)) for a, d in case.init.l1] + action_l1:
        if addr < 0 or addr + size > L1_SIZE:
            raise Refusal(f"L1 region [{addr:#x}, {addr + size:#x}) is outside L1")
        if addr < hi and addr + size > lo:
            raise Refusal(f"L1 region [{addr:#x}, {addr + size:#x}) overlaps the harness area [{lo:#x}, {hi:#x})")


# --- whole programs -----------------------------------------------------------------------------------
_SEGMENTS: dict[tuple[str, int, str], bytes] = {}


def _segment(kind: str, t: int, plat: Platform) -> bytes:
    """A part of thread t's program that no case changes, assembled once per platform table (as bytes). Its
    branches and jumps are pc-relative and stay inside it, so it runs wherever it is placed."""
    key = (kind, t, plat.name)
    if key not in _SEGMENTS:
        _SEGMENTS[key] = _assemble_segment(kind, t, plat)
    return _SEGMENTS[key]


def _assemble_segment(kind: str, t: int, plat: Platform) -> bytes:
    p = rv.Program(0)
    if kind == "reset":
        frontend(p)
        store_words(p, M.MOP_CFG_BASE, [(4 * i, 0) for i in range(9)])
        thread_config(p, {}, plat)
        counters(p)
        if t == 0:     # shared state, in an order where each step finds what it relies on at power-on
            config(p, {}, plat)
            src_reset(p, plat)
            shared_state(p)
            sfpu(p)
    elif kind == "barrier":
        counters(p)
        drain(p)
        p.li(rv.T0, M.READY + 4 * t).li(rv.T1, 1).emit(rv.sw(rv.T1, rv.T0, 0))
        wait_flags(p, M.READY, range(THREADS), "barrier")
    elif kind == "finish":
        drain(p)
        copy_gprs(p, t)
        p.li(rv.T0, M.DONE + 4 * t).li(rv.T1, M.DONE_TOKEN).emit(rv.sw(rv.T1, rv.T0, 0))
        if t == 0:
            wait_flags(p, M.DONE, range(1, THREADS), "others_done", M.DONE_TOKEN)
            p.li(rv.T0, M.SOFT_RESET_0).li(rv.T1, M.RESET_ALL & ~M.RESET_TRISC[0]).emit(rv.sw(rv.T1, rv.T0, 0))
            dbus.collect(p, plat.dbus_reads(), M.DBUS_DUMP)
            dbus.collect_dest(p)
    return p.to_bytes()


def thread_program(case: Case, t: int, plat: Platform, cfg_reads: dict[int, list[int]]) -> rv.Program:
    p = rv.Program(M.TRISC_RESET_PC[t])
    tcfg = case.init.thread_config.get(t, {})
    p.blob(_segment("reset", t, plat))
    if t == 0:
        dest(p, case)
        config(p, case.init.config, plat, only_set=True)
    gprs(p, case, t)
    thread_config(p, tcfg, plat, only_set=True)
    p.blob(_segment("barrier", t, plat))
    words, acts = case.threads.get(t, []), case.actions.get(t, [])
    done = 0          # golden.riscv.interleave's order: each action before the word at its index (or after the last)
    for j, (idx, action) in enumerate(acts):
        at = min(max(done, idx), len(words))
        p.tensix_words(words[done:at])
        hw_actions.emit(p, t, action, f"action{at + j}", plat.config_readable)    # its place among words and actions
        done = at
    p.tensix_words(words[done:])
    p.blob(_segment("finish", t, plat))
    if t == 0:
        collect_config(p, cfg_reads)
        p.li(rv.T0, M.ALL_DONE).li(rv.T1, M.DONE_TOKEN).emit(rv.sw(rv.T1, rv.T0, 0))
    p.label("park").jump("park")
    return p


def build(case: Case, plat: Platform) -> Job:
    """The job for one case; raises Refusal when the case cannot run here."""
    check(case, plat)
    reads, missing = config_reads(case, plat)
    writes: list[tuple[int, bytes]] = [(M.FLAGS, bytes(M.FLAG_BYTES))]
    for t in range(THREADS):
        code = thread_program(case, t, plat, reads).to_bytes()
        if len(code) > M.CODE_SIZE[t]:
            raise Refusal(f"thread {t} program is {len(code)} bytes; the harness allows {M.CODE_SIZE[t]}")
        writes.append((M.TRISC_RESET_PC[t], code))
    regions = case.observed_l1()
    writes += [(a, bytes(d)) for a, d in case.init.l1]
    release = M.RESET_ALL & ~sum(M.RESET_TRISC)
    zero = [(0, M.RESERVED[0])] + ([(M.RESERVED[1], L1_SIZE - M.RESERVED[1])] if M.RESERVED[1] < L1_SIZE else [])
    regs = [(M.TRISC_RESET_PC_REG[t], M.TRISC_RESET_PC[t]) for t in range(THREADS)]
    regs.append((M.TRISC_RESET_PC_OVERRIDE, (1 << THREADS) - 1))
    return Job(name=case.name, writes=writes, zero=zero, regs=regs, reads=[(M.RESULTS, M.RESULTS_END - M.RESULTS)] + regions,
               release=release, cfg_reads=reads, l1_regions=regions, unobserved_config=missing)
