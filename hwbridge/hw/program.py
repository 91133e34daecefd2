"""Case -> the per-TRISC RISC-V programs and the host job that runs them on a Tensix core.

Each TRISC t runs, from its reset PC: a reset prologue that puts everything the case can observe or
depend on into golden's power-on state (GPRs, MOP config, ThreadConfig, Config, Dest, Src banks,
semaphores, RWCs, ADCs) overlaid with the case's ``init``; a barrier so no thread starts the case
before every prologue has drained; the case's Tensix words issued inline (``rotl(W, 2)``); a drain
(Manual TTSync, actions.drain: a store to, load from and use of PC_BUF's CoprocessorDoneCheck, done once
the thread's Tensix instructions finish); a copy of its GPRs into L1; a done flag. TRISC0 then collects
Dest, the counters and Config into L1 and raises the all-done flag that the host polls. Everything lands
in one block the host reads at once.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import lru_cache
from itertools import chain

import numpy as np

from golden import isa
from golden.isa import to_stream
from golden.registers import thread_config_field
from golden.state import COLS, DEST_ROWS, GPRS, L1_SIZE, REPLAY_BUFFER, SEMAPHORES, THREADS
from tensix_diff.case import Case

from . import actions as hw_actions
from . import dbus
from .actions import drain, load_used
from . import l1_map as M
from . import rv32 as rv
from .platform import Platform

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


@lru_cache(maxsize=4096)
def _t(name: str, **fields: int) -> int:
    return isa.encode(name, fields)


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


# --- what the prologue resets --------------------------------------------------------------------------
# Each thread's replay buffer (a pending load completed, all 32 entries NOP) and MOP mask (MOP_CFG 0), GPRs,
# MOP config words, ThreadConfig, both Config states, RWCs and the ADCs of every thread, Src banks, valid bits
# and implied formats, semaphores, SFPU lanes/flags/LaneConfig/constants/LRegs 0..7 and macro configuration,
# Dest and its valid bits; L1 outside the harness is zeroed. What it cannot reach (the SFPU flag stack, Sync
# Unit mutexes, packer continuation, latched waits, mailboxes) is hw/leftovers.py's.


# --- prologue pieces ------------------------------------------------------------------------------
def _frontend(p: rv.Program) -> None:
    """The thread's expanders back to a known state (REPLAY.md, MOP_CFG.md; ttsim replay_expander): 32 NOPs
    finish any load a previous case left pending (a load takes at most 32), two loads of 16 fill the
    replay buffer with NOP, MOP_CFG 0 clears the mask's top half. Runs before any other instruction."""
    nop = _t("NOP")
    for _ in range(REPLAY_BUFFER):
        p.tensix(nop)
    half = REPLAY_BUFFER // 2
    for start in (0, half):
        p.tensix(_t("REPLAY", start_idx=start, len=half, execute_while_loading=0, load_mode=1))
        for _ in range(half):
            p.tensix(nop)
    p.tensix(_t("MOP_CFG", zmask_hi16=0))


def _store_words(p: rv.Program, base: int, values: list[tuple[int, int]]) -> None:
    """sw values[i] = (offset, value) relative to base."""
    out = p.words
    out.extend(rv.li_words(rv.T0, base))
    for off, v in values:
        if v:
            out.extend(rv.li_words(rv.T1, v))
            out.append(rv.sw(rv.T1, rv.T0, off))
        else:
            out.append(rv.sw(rv.ZERO, rv.T0, off))


@lru_cache(maxsize=None)
def _gpr_stores() -> tuple[tuple[int, ...], list[int], list[int]]:
    """_store_words's words for the GPR file: loading its base, and per GPR the store of zero and of T1."""
    return (rv.li_words(rv.T0, M.REGFILE_BASE), [rv.sw(rv.ZERO, rv.T0, 4 * i) for i in range(GPRS)],
            [rv.sw(rv.T1, rv.T0, 4 * i) for i in range(GPRS)])


def _gprs(p: rv.Program, case: Case, t: int) -> None:
    """Every GPR to the case's init value or zero: _store_words over all of them, the zero stores from a table.
    The last (GPR 63) is read back and consumed, so every one has landed before a later push can read it
    (GPR stores are processed in order; MemoryOrdering.md)."""
    init = case.init.gpr.get(t, {})
    head, zero, one = _gpr_stores()
    out = p.words
    out.extend(head)
    done = 0
    for i in sorted(i for i, v in init.items() if v and i in range(GPRS)):
        out.extend(zero[done:i])
        out.extend(rv.li_words(rv.T1, init[i]))
        out.append(one[i])
        done = i + 1
    out.extend(zero[done:])
    load_used(p, rv.T1, rv.T0, 4 * (GPRS - 1))


def _thread_config(p: rv.Program, values: dict[int, int], plat: Platform, only_set: bool = False) -> None:
    """SETC16 the issuing thread's ThreadConfig: every writable index (or only the non-zero ones)."""
    for idx in sorted(plat.thread_config_writable):
        if values.get(idx, 0) or not only_set:
            p.tensix(_t("SETC16", setc16_reg=idx, setc16_value=values.get(idx, 0)))


def _config(p: rv.Program, values: dict[int, dict[int, int]], plat: Platform, only_set: bool = False) -> None:
    """Config state 0 by RISC stores; state 1 by WRCFG from GPR 63 with CFG_STATE_ID = 1 (then back to 0).
    Every writable index, or only those with a non-zero value. The stores land before any later push reads
    them: a fence emits them all and a consumed load from Config (processed in order after them) returns
    after they did; each GPR 63 store is read back and consumed before the WRCFG that reads it
    (MemoryOrdering.md)."""
    writable = plat.config_writable
    v0, v1 = values.get(0, {}), values.get(1, {})
    set0 = sorted(i for i, v in v0.items() if v and i in writable)       # the writable indices with a value
    set1 = sorted(i for i, v in v1.items() if v and i in writable)
    _store_words(p, M.CFG_BASE, [(4 * i, v0[i]) for i in set0] if only_set else
                 [(4 * i, v0.get(i, 0)) for i in sorted(writable)])
    if set0 or not only_set:
        p.emit(rv.fence())
        load_used(p, rv.T1, rv.T0, 4 * min(plat.config_readable))
    state_id = thread_config_field("CFG_STATE_ID_StateID")
    p.li(rv.T0, M.REGFILE_BASE).emit(rv.sw(rv.ZERO, rv.T0, 4 * 63))
    load_used(p, rv.T1, rv.T0, 4 * 63)
    p.tensix(_t("SETC16", setc16_reg=state_id.index, setc16_value=state_id.put(0, 1)))
    if not only_set:
        for idx in sorted(writable):
            if not v1.get(idx, 0):
                p.tensix(_t("WRCFG", gpraddress=63, wr128b=0, cfgreg=idx))
    for idx in set1:
        drain(p)
        p.li(rv.T1, v1[idx]).emit(rv.sw(rv.T1, rv.T0, 4 * 63))
        load_used(p, rv.T1, rv.T0, 4 * 63)
        p.tensix(_t("WRCFG", gpraddress=63, wr128b=0, cfgreg=idx))
    p.tensix(_t("SETC16", setc16_reg=state_id.index, setc16_value=0))
    drain(p)


def _src_reset(p: rv.Program, plat: Platform) -> None:
    """Both Src files back to power-on: no bank valid, matrix and unpacker on bank 0, implied formats 0.

    The RISC reads each Src's bank state from the debug bus and acts until it is (0, 0, 0): a bank valid
    at the matrix side is released (SETRWC clear_ab_vld); a valid bank elsewhere, or sides on different
    banks, make the matrix side skip a bank (clear with CLR_DVALID disabled); both sides on bank 1 take
    one handover round. Then two handover rounds with Config zero set both implied formats to 0."""
    daisy, sig = plat.raw["src_state_group"]
    dis_a, dis_b = thread_config_field("CLR_DVALID_SrcA_Disable"), thread_config_field("CLR_DVALID_SrcB_Disable")
    dbus.setup(p)
    for name, clear, sel, dis in (("srca", 1, 0, dis_a), ("srcb", 2, 1, dis_b)):
        bits = plat.raw["src_state_bits"][name]
        rd = bits["valid0"] // 32
        release = _t("SETRWC", clear_ab_vld=clear, bitmask=0)
        handover = _t("UNPACR_NOP", unpacker_select=sel, set_dvalid=1, unpack_pop=1)
        p.li(rv.S1, 8)                                                     # at most 8 rounds
        p.label(f"{name}_loop")
        p.emit(rv.addi(rv.S1, rv.S1, -1)).branch("beq", rv.S1, rv.ZERO, f"{name}_done")
        drain(p)
        dbus.bus_read(p, daisy, sig, rd)
        p.emit(rv.sw(rv.ZERO, rv.S0, dbus.CTRL))
        for reg, key in ((rv.A2, "valid0"), (rv.A3, "valid1"), (rv.A4, "matrix_bank"), (rv.A5, "unpack_bank")):
            dbus.bit(p, rv.T1, bits[key], reg)
        p.emit(rv.addi(rv.A6, rv.A2, 0)).branch("beq", rv.A4, rv.ZERO, f"{name}_mb0").emit(rv.addi(rv.A6, rv.A3, 0))
        p.label(f"{name}_mb0").branch("bne", rv.A6, rv.ZERO, f"{name}_release")
        p.emit(rv.or_(rv.T2, rv.A2, rv.A3)).branch("bne", rv.T2, rv.ZERO, f"{name}_skip")
        p.branch("bne", rv.A4, rv.A5, f"{name}_skip").branch("bne", rv.A4, rv.ZERO, f"{name}_round")
        p.jump(f"{name}_formats")
        p.label(f"{name}_release").tensix(release).jump(f"{name}_loop")
        p.label(f"{name}_skip")
        p.tensix(_t("SETC16", setc16_reg=dis.index, setc16_value=dis.put(0, 1))).tensix(release)
        p.tensix(_t("SETC16", setc16_reg=dis.index, setc16_value=0)).jump(f"{name}_loop")
        p.label(f"{name}_round").tensix(handover).tensix(release).jump(f"{name}_loop")
        p.label(f"{name}_formats")
        p.tensix(handover).tensix(release).tensix(handover).tensix(release)
        p.label(f"{name}_done")
    drain(p)


# SFPU power-on constants that SFPCONFIG can overwrite (LRegs 11..14), as ttsim's tensix_init sets them.
SFPU_CONSTANTS = {11: 0xBF800000, 12: 0x3B000000, 13: 0xBF2CC4C7, 14: 0xBEB08FF9}


def _sfpu(p: rv.Program) -> None:
    """SFPU back to power-on: lanes enabled with all flags set, LaneConfig and the SFPLOADMACRO
    configuration zero, the programmable constants restored, LRegs 0..7 zero."""
    p.tensix(_t("SFPENCC", imm12_math=3, instr_mod1=10))
    p.tensix(_t("SFPCONFIG", imm16_math=0, config_dest=15, instr_mod1=1))     # LaneConfig
    for k, value in SFPU_CONSTANTS.items():
        p.tensix(_t("SFPLOADI", lreg_ind=0, instr_mod0=8, imm16=value >> 16))
        p.tensix(_t("SFPLOADI", lreg_ind=0, instr_mod0=10, imm16=value & 0xFFFF))
        p.tensix(_t("SFPCONFIG", imm16_math=0, config_dest=k, instr_mod1=0))
    p.tensix(_t("SFPLOADI", lreg_ind=0, instr_mod0=2, imm16=0))
    for dest in range(4):
        p.tensix(_t("SFPCONFIG", imm16_math=0, config_dest=dest, instr_mod1=0))   # macro templates := LReg0 (0)
    for dest in range(4, 9):
        p.tensix(_t("SFPCONFIG", imm16_math=0, config_dest=dest, instr_mod1=1))   # sequences, misc := 0
    for r in range(8):
        p.tensix(_t("SFPLOADI", lreg_ind=r, instr_mod0=2, imm16=0))


@lru_cache(maxsize=None)
def _fill_words() -> tuple[tuple[int, ...], tuple[int, ...], int, int, int]:
    """Stream words of the Dest fill, precomputed: the zero store per Dest address, SFPIADD per lane k,
    the SFPLOADI base (imm16 in bits 15:0), SFPENCC, SFPSTORE-from-LReg0 base (address in bits 12:0)."""
    zero = tuple(to_stream(_t("SFPSTORE", lreg_ind=7, instr_mod0=6, dest_reg_addr=a)) for a in range(DEST_ROWS))
    iadd = tuple(to_stream(_t("SFPIADD", imm12_math=(-(2 * k + 1)) & 0xFFF, lreg_c=15, lreg_dest=1, instr_mod1=1))
                 for k in range(32))
    return (zero, iadd, _t("SFPLOADI", lreg_ind=0, instr_mod0=2, imm16=0), to_stream(_t("SFPENCC", instr_mod1=0)),
            _t("SFPSTORE", lreg_ind=0, instr_mod0=6, dest_reg_addr=0))


@lru_cache(maxsize=None)
def _zero_stores() -> bytes:
    """The Dest fill's zero store for each (group, odd) in stream order (Dest addresses 0, 2, 4, ...), as
    little-endian words."""
    zero = _fill_words()[0]
    return np.asarray([zero[a] for a in range(0, DEST_ROWS, 2)], dtype="<u4").tobytes()


@lru_cache(maxsize=None)
def _fill_arrays() -> tuple[np.ndarray, np.ndarray]:
    """_fill_words's zero stores per Dest address, and its SFPIADDs for lanes k = 30..0, as arrays."""
    zero, iadd = _fill_words()[:2]
    return np.asarray(zero, dtype=np.int64), np.asarray(iadd, dtype=np.int64)[30::-1]


_ODD_OFFSETS = np.array([0, 2], dtype=np.int64)


def _rotl2(w):
    """golden.isa.to_stream, inline (an int or an int64 array): the word rotated left by two."""
    return ((w << 2) | (w >> 30)) & 0xFFFFFFFF


def _dest(p: rv.Program, case: Case) -> None:
    """Write every Dest cell (zero or the case's init) with raw 16-bit SFPSTOREs; every row ends valid.

    SFPSTORE (instr_mod0 6) at Dest address 4g (+2) writes rows 4g..4g+3, even (odd) columns, from
    lane ``8 * (row - 4g) + col // 2``. Distinct lane values cost two instructions each: walking k
    from 31 down, SFPIADD LReg1 = LReg15 (2 * lane) - (2k + 1) clears the flag of lane k + 1 (the
    flags only narrow), so SFPLOADI writes v_k into lanes 0..k and later lanes overwrite the rest."""
    loadi, encc, store0 = _fill_words()[2:]
    zero, iadd_ks = _fill_arrays()
    zeros = _zero_stores()
    # the 4-row groups the case gives values to; every other group is its zero store alone
    groups = sorted({r >> 2 for r, v in case.init.dest if any(v)})
    if groups:
        at = {g: 4 * i for i, g in enumerate(groups)}
        rows: dict[int, list[int]] = {}       # grid row -> values; a later entry for the same Dest row wins
        for r, v in case.init.dest:
            if (r >> 2) in at:
                rows[at[r >> 2] + (r & 3)] = v
        grid = np.zeros((len(groups) * 4, COLS), dtype=np.int64)
        grid[list(rows)] = np.fromiter(chain.from_iterable(rows.values()), np.int64, COLS * len(rows)).reshape(-1, COLS)
        # lanes[i, lane] for i = 2 * (group's place) + odd: lane 8 * (row - 4g) + col // 2 of rows 4g..4g+3,
        # columns of that parity
        lanes = grid.reshape(len(groups), 4, COLS // 2, 2).transpose(0, 3, 1, 2).reshape(len(groups) * 2, 32)
        # one row of words per (g, odd) in stream order, and which of them it issues: SFPLOADI of lane 31's value;
        # for k = 30..0, where lane k differs from lane k + 1, SFPIADD k and SFPLOADI of lane k's value; SFPENCC
        # and the SFPSTORE. A (g, odd) holding only zeros issues its zero store alone.
        addrs = (4 * np.asarray(groups, dtype=np.int64)[:, None] + _ODD_OFFSETS).ravel()     # 4g + 2 * odd
        live = lanes.any(axis=1)
        lanes_k = lanes[:, 30::-1]                                        # lanes k = 30..0 (ks), as a view
        words = np.empty((len(addrs), 65), dtype="<u4")
        words[:, 0] = np.where(live, _rotl2(loadi | lanes[:, 31]), zero[addrs])
        words[:, 1:63:2] = iadd_ks
        words[:, 2:63:2] = _rotl2(loadi | lanes_k)
        words[:, 63] = encc
        words[:, 64] = _rotl2(store0 | addrs)
        keep = np.empty(words.shape, dtype=bool)
        keep[:, 0] = True
        differs = (lanes_k != lanes[:, 31:0:-1]) & live[:, None]          # lane k against lane k + 1
        keep[:, 1:63:2] = differs
        keep[:, 2:63:2] = differs
        keep[:, 63:] = live[:, None]
        issued = words[keep].tobytes()                                    # every group's two rows, in order
        ends = (4 * np.cumsum(keep.reshape(len(groups), 130).sum(axis=1))).tolist()
    parts = []
    done = start = 0
    for i, g in enumerate(groups):
        parts += [zeros[4 * done:8 * g], issued[start:ends[i]]]
        done, start = 2 * g + 2, ends[i]
    parts.append(zeros[4 * done:])
    p.blob(b"".join(parts))
    for r in range(2):
        p.tensix(_t("SFPLOADI", lreg_ind=r, instr_mod0=2, imm16=0))


def _shared_state(p: rv.Program) -> None:
    """Src banks zeroed, semaphores at (0, max 0), MOP config cleared."""
    p.tensix(_t("ZEROSRC", zero_val=0, write_mode=0, bank_mask=1, src_mask=3))
    for s in range(SEMAPHORES):
        p.tensix(_t("SEMINIT", max_value=0, init_value=0, sem_sel=1 << s))


def _counters(p: rv.Program) -> None:
    p.tensix(_t("SETRWC", clear_ab_vld=0, rwc_cr=0, rwc_d=0, rwc_b=0, rwc_a=0, bitmask=15))
    p.tensix(_t("SETADCXY", cntsetmask=7, bitmask=15))
    p.tensix(_t("SETADCZW", cntsetmask=7, bitmask=15))


def _wait_flags(p: rv.Program, base: int, threads: range, label: str, value: int = 1) -> None:
    """Spin until every thread's flag holds ``value``. The fence invalidates a Blackhole RISC's L1 data
    cache (write-through), so another core's store is seen; ttsim has no such cache."""
    p.li(rv.T0, base).li(rv.T2, value).label(label).emit(rv.fence())
    for u in threads:
        p.emit(rv.lw(rv.T1, rv.T0, 4 * u)).branch("bne", rv.T1, rv.T2, label)


# --- epilogue pieces ------------------------------------------------------------------------------
def _copy_gprs(p: rv.Program, t: int) -> None:
    p.li(rv.T0, M.REGFILE_BASE).li(rv.T2, M.GPR_DUMP + 4 * GPRS * t)
    for i in range(GPRS):
        p.emit(rv.lw(rv.T1, rv.T0, 4 * i), rv.sw(rv.T1, rv.T2, 4 * i))


def _collect_config(p: rv.Program, reads: dict[int, list[int]]) -> None:
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
        p.tensix(_t("SETC16", setc16_reg=state_id.index, setc16_value=state_id.put(0, 1)))
        for start in range(0, len(idx1), GPRS):
            chunk = idx1[start:start + GPRS]
            for g, idx in enumerate(chunk):
                p.tensix(_t("RDCFG", gpraddress=g, cfgreg=idx))
            drain(p)
            p.li(rv.T0, M.REGFILE_BASE).li(rv.T2, out)
            for g in range(len(chunk)):
                p.emit(rv.lw(rv.T1, rv.T0, 4 * g), rv.sw(rv.T1, rv.T2, 4 * g))
            out += 4 * len(chunk)
        p.tensix(_t("SETC16", setc16_reg=state_id.index, setc16_value=0))
        drain(p)


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
        _frontend(p)
        _store_words(p, M.MOP_CFG_BASE, [(4 * i, 0) for i in range(9)])
        _thread_config(p, {}, plat)
        _counters(p)
        if t == 0:     # shared state, in an order where each step finds what it relies on at power-on
            _config(p, {}, plat)
            _src_reset(p, plat)
            _shared_state(p)
            _sfpu(p)
    elif kind == "barrier":
        _counters(p)
        drain(p)
        p.li(rv.T0, M.READY + 4 * t).li(rv.T1, 1).emit(rv.sw(rv.T1, rv.T0, 0))
        _wait_flags(p, M.READY, range(THREADS), "barrier")
    elif kind == "finish":
        drain(p)
        _copy_gprs(p, t)
        p.li(rv.T0, M.DONE + 4 * t).li(rv.T1, M.DONE_TOKEN).emit(rv.sw(rv.T1, rv.T0, 0))
        if t == 0:
            _wait_flags(p, M.DONE, range(1, THREADS), "others_done", M.DONE_TOKEN)
            p.li(rv.T0, M.SOFT_RESET_0).li(rv.T1, M.RESET_ALL & ~M.RESET_TRISC[0]).emit(rv.sw(rv.T1, rv.T0, 0))
            dbus.collect(p, plat.dbus_reads(), M.DBUS_DUMP)
            dbus.collect_dest(p)
    return p.to_bytes()


def thread_program(case: Case, t: int, plat: Platform, cfg_reads: dict[int, list[int]]) -> rv.Program:
    p = rv.Program(M.TRISC_RESET_PC[t])
    tcfg = case.init.thread_config.get(t, {})
    p.blob(_segment("reset", t, plat))
    if t == 0:
        _dest(p, case)
        _config(p, case.init.config, plat, only_set=True)
    _gprs(p, case, t)
    _thread_config(p, tcfg, plat, only_set=True)
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
        _collect_config(p, cfg_reads)
        p.li(rv.T0, M.ALL_DONE).li(rv.T1, M.DONE_TOKEN).emit(rv.sw(rv.T1, rv.T0, 0))
    p.label("park").jump("park")
    return p


def config_reads(case: Case, plat: Platform) -> tuple[dict[int, list[int]], list[str]]:
    reads: dict[int, list[int]] = {}
    missing: list[str] = []
    for st, idx in case.observed_config().items():
        for i in idx:
            if i in plat.config_readable:
                reads.setdefault(st, []).append(i)
            else:
                missing.append(f"config.{st}.{i}")
    return reads, missing


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
