"""The reset prologue each TRISC runs before a case: everything the case can observe or depend on back to
golden's power-on state, overlaid with the case's ``init`` (hw/program.py assembles it)."""
from __future__ import annotations

from functools import lru_cache
from itertools import chain

import numpy as np

from golden import isa
from golden.isa import to_stream
from golden.registers import thread_config_field
from golden.state import COLS, DEST_ROWS, GPRS, REPLAY_BUFFER, SEMAPHORES
from tensix_diff.case import Case

from . import dbus
from . import l1_map as M
from . import rv32 as rv
from .actions import drain, load_used
from .platform import Platform


@lru_cache(maxsize=4096)
def tensix_word(name: str, **fields: int) -> int:
    """The Tensix word of ``name`` with ``fields`` (golden.isa.encode), cached: the prologue repeats a few."""
    return isa.encode(name, fields)


# --- what the prologue resets --------------------------------------------------------------------------
# Each thread's replay buffer (a pending load completed, all 32 entries NOP) and MOP mask (MOP_CFG 0), GPRs,
# MOP config words, ThreadConfig, both Config states, RWCs and the ADCs of every thread, Src banks, valid bits
# and implied formats, semaphores, SFPU lanes/flags/LaneConfig/constants/LRegs 0..7 and macro configuration,
# Dest and its valid bits; L1 outside the harness is zeroed. What it cannot reach (the SFPU flag stack, Sync
# Unit mutexes, packer continuation, latched waits, mailboxes) is hw/leftovers.py's.


def frontend(p: rv.Program) -> None:
    """The thread's expanders back to a known state (REPLAY.md, MOP_CFG.md; ttsim replay_expander): 32 NOPs
    finish any load a previous case left pending (a load takes at most 32), two loads of 16 fill the
    replay buffer with NOP, MOP_CFG 0 clears the mask's top half. Runs before any other instruction."""
    nop = tensix_word("NOP")
    for _ in range(REPLAY_BUFFER):
        p.tensix(nop)
    half = REPLAY_BUFFER // 2
    for start in (0, half):
        p.tensix(tensix_word("REPLAY", start_idx=start, len=half, execute_while_loading=0, load_mode=1))
        for _ in range(half):
            p.tensix(nop)
    p.tensix(tensix_word("MOP_CFG", zmask_hi16=0))


def store_words(p: rv.Program, base: int, values: list[tuple[int, int]]) -> None:
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
    """store_words's words for the GPR file: loading its base, and per GPR the store of zero and of T1."""
    return (rv.li_words(rv.T0, M.REGFILE_BASE), [rv.sw(rv.ZERO, rv.T0, 4 * i) for i in range(GPRS)],
            [rv.sw(rv.T1, rv.T0, 4 * i) for i in range(GPRS)])


def gprs(p: rv.Program, case: Case, t: int) -> None:
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


def thread_config(p: rv.Program, values: dict[int, int], plat: Platform, only_set: bool = False) -> None:
    """SETC16 the issuing thread's ThreadConfig: every writable index (or only the non-zero ones)."""
    for idx in sorted(plat.thread_config_writable):
        if values.get(idx, 0) or not only_set:
            p.tensix(tensix_word("SETC16", setc16_reg=idx, setc16_value=values.get(idx, 0)))


def config(p: rv.Program, values: dict[int, dict[int, int]], plat: Platform, only_set: bool = False) -> None:
    """Config state 0 by RISC stores; state 1 by WRCFG from GPR 63 with CFG_STATE_ID = 1 (then back to 0).
    Every writable index, or only those with a non-zero value. The stores land before any later push reads
    them: a fence emits them all and a consumed load from Config (processed in order after them) returns
    after they did; each GPR 63 store is read back and consumed before the WRCFG that reads it
    (MemoryOrdering.md)."""
    writable = plat.config_writable
    v0, v1 = values.get(0, {}), values.get(1, {})
    set0 = sorted(i for i, v in v0.items() if v and i in writable)       # the writable indices with a value
    set1 = sorted(i for i, v in v1.items() if v and i in writable)
    store_words(p, M.CFG_BASE, [(4 * i, v0[i]) for i in set0] if only_set else
                 [(4 * i, v0.get(i, 0)) for i in sorted(writable)])
    if set0 or not only_set:
        p.emit(rv.fence())
        load_used(p, rv.T1, rv.T0, 4 * min(plat.config_readable))
    state_id = thread_config_field("CFG_STATE_ID_StateID")
    p.li(rv.T0, M.REGFILE_BASE).emit(rv.sw(rv.ZERO, rv.T0, 4 * 63))
    load_used(p, rv.T1, rv.T0, 4 * 63)
    p.tensix(tensix_word("SETC16", setc16_reg=state_id.index, setc16_value=state_id.put(0, 1)))
    if not only_set:
        for idx in sorted(writable):
            if not v1.get(idx, 0):
                p.tensix(tensix_word("WRCFG", gpraddress=63, wr128b=0, cfgreg=idx))
    for idx in set1:
        drain(p)
        p.li(rv.T1, v1[idx]).emit(rv.sw(rv.T1, rv.T0, 4 * 63))
        load_used(p, rv.T1, rv.T0, 4 * 63)
        p.tensix(tensix_word("WRCFG", gpraddress=63, wr128b=0, cfgreg=idx))
    p.tensix(tensix_word("SETC16", setc16_reg=state_id.index, setc16_value=0))
    drain(p)


def src_reset(p: rv.Program, plat: Platform) -> None:
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
        release = tensix_word("SETRWC", clear_ab_vld=clear, bitmask=0)
        handover = tensix_word("UNPACR_NOP", unpacker_select=sel, set_dvalid=1, unpack_pop=1)
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
        p.tensix(tensix_word("SETC16", setc16_reg=dis.index, setc16_value=dis.put(0, 1))).tensix(release)
        p.tensix(tensix_word("SETC16", setc16_reg=dis.index, setc16_value=0)).jump(f"{name}_loop")
        p.label(f"{name}_round").tensix(handover).tensix(release).jump(f"{name}_loop")
        p.label(f"{name}_formats")
        p.tensix(handover).tensix(release).tensix(handover).tensix(release)
        p.label(f"{name}_done")
    drain(p)


# SFPU power-on constants that SFPCONFIG can overwrite (LRegs 11..14), as ttsim's tensix_init sets them.
SFPU_CONSTANTS = {11: 0xBF800000, 12: 0x3B000000, 13: 0xBF2CC4C7, 14: 0xBEB08FF9}


def sfpu(p: rv.Program) -> None:
    """SFPU back to power-on: lanes enabled with all flags set, LaneConfig and the SFPLOADMACRO
    configuration zero, the programmable constants restored, LRegs 0..7 zero."""
    p.tensix(tensix_word("SFPENCC", imm12_math=3, instr_mod1=10))
    p.tensix(tensix_word("SFPCONFIG", imm16_math=0, config_dest=15, instr_mod1=1))     # LaneConfig
    for k, value in SFPU_CONSTANTS.items():
        p.tensix(tensix_word("SFPLOADI", lreg_ind=0, instr_mod0=8, imm16=value >> 16))
        p.tensix(tensix_word("SFPLOADI", lreg_ind=0, instr_mod0=10, imm16=value & 0xFFFF))
        p.tensix(tensix_word("SFPCONFIG", imm16_math=0, config_dest=k, instr_mod1=0))
    p.tensix(tensix_word("SFPLOADI", lreg_ind=0, instr_mod0=2, imm16=0))
    for dest in range(4):
        p.tensix(tensix_word("SFPCONFIG", imm16_math=0, config_dest=dest, instr_mod1=0))   # macro templates := LReg0 (0)
    for dest in range(4, 9):
        p.tensix(tensix_word("SFPCONFIG", imm16_math=0, config_dest=dest, instr_mod1=1))   # sequences, misc := 0
    for r in range(8):
        p.tensix(tensix_word("SFPLOADI", lreg_ind=r, instr_mod0=2, imm16=0))


@lru_cache(maxsize=None)
def _fill_words() -> tuple[tuple[int, ...], tuple[int, ...], int, int, int]:
    """Stream words of the Dest fill, precomputed: the zero store per Dest address, SFPIADD per lane k,
    the SFPLOADI base (imm16 in bits 15:0), SFPENCC, SFPSTORE-from-LReg0 base (address in bits 12:0)."""
    zero = tuple(to_stream(tensix_word("SFPSTORE", lreg_ind=7, instr_mod0=6, dest_reg_addr=a)) for a in range(DEST_ROWS))
    iadd = tuple(to_stream(tensix_word("SFPIADD", imm12_math=(-(2 * k + 1)) & 0xFFF, lreg_c=15, lreg_dest=1, instr_mod1=1))
                 for k in range(32))
    return (zero, iadd, tensix_word("SFPLOADI", lreg_ind=0, instr_mod0=2, imm16=0), to_stream(tensix_word("SFPENCC", instr_mod1=0)),
            tensix_word("SFPSTORE", lreg_ind=0, instr_mod0=6, dest_reg_addr=0))


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


def dest(p: rv.Program, case: Case) -> None:
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
        p.tensix(tensix_word("SFPLOADI", lreg_ind=r, instr_mod0=2, imm16=0))


def shared_state(p: rv.Program) -> None:
    """Src banks zeroed, semaphores at (0, max 0), MOP config cleared."""
    p.tensix(tensix_word("ZEROSRC", zero_val=0, write_mode=0, bank_mask=1, src_mask=3))
    for s in range(SEMAPHORES):
        p.tensix(tensix_word("SEMINIT", max_value=0, init_value=0, sem_sel=1 << s))


def counters(p: rv.Program) -> None:
    p.tensix(tensix_word("SETRWC", clear_ab_vld=0, rwc_cr=0, rwc_d=0, rwc_b=0, rwc_a=0, bitmask=15))
    p.tensix(tensix_word("SETADCXY", cntsetmask=7, bitmask=15))
    p.tensix(tensix_word("SETADCZW", cntsetmask=7, bitmask=15))


def wait_flags(p: rv.Program, base: int, threads: range, label: str, value: int = 1) -> None:
    """Spin until every thread's flag holds ``value``. The fence invalidates a Blackhole RISC's L1 data
    cache (write-through), so another core's store is seen; ttsim has no such cache."""
    p.li(rv.T0, base).li(rv.T2, value).label(label).emit(rv.fence())
    for u in threads:
        p.emit(rv.lw(rv.T1, rv.T0, 4 * u)).branch("bne", rv.T1, rv.T2, label)
