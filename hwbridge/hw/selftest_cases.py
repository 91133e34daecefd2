"""The small cases the hw self-check runs (hwbridge/hw/selftest.py): each puts distinct, known values into
one initial-state region or counter, so a value read back in the wrong place, or not at all, shows.

Pure data: no device here. Values are chosen so every field of every thread differs from every other
(a swapped or shifted field cannot read back equal), and golden runs every case to the same values
(tests/hwbridge/test_selftest.py). Instruction semantics: golden/UNIT/ (SETRWC.md, INCRWC.md, SETADC.md, INCADCXY.md,
ZEROACC.md, AddrMods via ThreadConfig ADDR_MOD_*), Dst.md for the 32-bit Dest view.
"""
from __future__ import annotations

from golden import isa
from golden.config_words import GLOBAL_BASE, word_mask
from golden.registers import config_field, fields
from golden.riscv import RiscvAction
from golden.state import ADC_UNITS, COLS, DEST_ROWS, GPRS, THREADS
from tensix_diff.case import Case, Init, Observe

from . import l1_map as M
from .platform import Platform

# --- Dest -------------------------------------------------------------------------------------------
DEST_SLICE = 256          # rows per case: a slice of distinct values fits TRISC0's code area (l1_map.CODE_SIZE)


def dest_value(row: int, col: int) -> int:
    """A distinct 16-bit value per Dest cell (odd multiplier: a bijection on 16 bits)."""
    return ((row * COLS + col) * 40503 + 0x1234) & 0xFFFF


def dest16_cases() -> list[Case]:
    """Every Dest row, a slice per case, each cell its own value; the rows outside the slice must read zero
    (the previous slice's values were there: the reset prologue clears them)."""
    out = []
    for lo in range(0, DEST_ROWS, DEST_SLICE):
        rows = [(r, [dest_value(r, c) for c in range(COLS)]) for r in range(lo, lo + DEST_SLICE)]
        out.append(Case(f"selftest-dest16-rows-{lo}", "Dest rows by the reset prologue's SFPSTOREs, read back"
                        " through DBG_ARRAY_RD", {}, init=Init(dest=rows)))
    return out


FP32_ENABLED = config_field("ALU_ACC_CTRL_Fp32_enabled")
DST32_STORES = 8          # SFPSTOREs of 32-bit values into Dst32b rows 128 + 4k


def dest32_case() -> Case:
    """Dest in 32-bit mode (ALU_ACC_CTRL_Fp32_enabled): DstBits rows 0..255 from the prologue, then the SFPU
    stores eight FP32 values (distinct high and low halves) into Dst32b rows 128, 132, ... (DstBits 256..)."""
    words = []
    for k in range(DST32_STORES):
        hi, lo = 0x3F80 + 0x111 * k, 0x1357 + 0x2222 * k & 0xFFFF
        words += [isa.encode("SFPLOADI", {"lreg_ind": 0, "instr_mod0": 8, "imm16": hi}),
                  isa.encode("SFPLOADI", {"lreg_ind": 0, "instr_mod0": 10, "imm16": lo}),
                  isa.encode("SFPSTORE", {"lreg_ind": 0, "instr_mod0": 3, "dest_reg_addr": 128 + 4 * k})]
    rows = [(r, [dest_value(r, c) for c in range(COLS)]) for r in range(DEST_SLICE)]
    init = Init(dest=rows, config={0: {FP32_ENABLED.index: FP32_ENABLED.put(0, 1)}})
    return Case("selftest-dest32", "Dest in 32-bit mode: prologue rows and SFPU FP32 stores", {1: words}, init=init)


# --- counters -------------------------------------------------------------------------------------
RWC_FIELDS = ("srca", "srca_cr", "srcb", "srcb_cr", "dst", "dst_cr")
SRC_VALUES = (0x2A, 0x15, 0x33, 0x0C, 0x39, 0x06, 0x27, 0x18, 0x3C, 0x03, 0x2D, 0x12)   # 6 bits, distinct
DST_VALUES = (0x2AA, 0x155, 0x333, 0x0CC, 0x3C3, 0x21C)                      # 10 bits, none of the above
STEP = 15                 # the largest INCRWC increment (4-bit fields)


def rwc_plan() -> dict[int, dict[str, int]]:
    """thread -> RWC field -> the value the RWC-layout case leaves there (all 18 distinct)."""
    plan = {}
    for t in range(THREADS):
        a, acr, b, bcr = SRC_VALUES[4 * t: 4 * t + 4]
        plan[t] = {"srca": a, "srca_cr": acr, "srcb": b, "srcb_cr": bcr,
                   "dst": DST_VALUES[2 * t], "dst_cr": DST_VALUES[2 * t + 1]}
    return plan


def _steps(left: list[int]) -> list[tuple[int, ...]]:
    """Increments of at most STEP per field that add up to ``left``, field by field."""
    out = []
    while any(left):
        step = tuple(min(STEP, x) for x in left)
        out.append(step)
        left = [x - d for x, d in zip(left, step)]
    return out


def rwc_layout_case() -> Case:
    """Each thread: SETRWC clears its RWCs; SETRWCs with the SrcA/SrcB checkpoint bits and INCRWCs with the
    Dst one (the forms ttsim accepts: tensix.cpp SETRWC, INCRWC) raise each checkpoint, and its counter, to
    the _cr value; INCRWCs without them then move each counter on to its own value."""
    threads = {}
    for t, p in rwc_plan().items():
        words = [isa.encode("SETRWC", {"bitmask": 15})]
        words += [isa.encode("SETRWC", {"rwc_cr": 3, "bitmask": 3, "rwc_a": a, "rwc_b": b})
                  for a, b in _steps([p["srca_cr"], p["srcb_cr"]])]
        words += [isa.encode("INCRWC", {"rwc_cr": 4, "rwc_d": d}) for d, in _steps([p["dst_cr"]])]
        left = [(p["srca"] - p["srca_cr"]) % 64, (p["srcb"] - p["srcb_cr"]) % 64, (p["dst"] - p["dst_cr"]) % 1024]
        words += [isa.encode("INCRWC", {"rwc_a": a, "rwc_b": b, "rwc_d": d}) for a, b, d in _steps(left)]
        threads[t] = words
    return Case("selftest-rwc-layout", "every RWC field of every thread set to its own value", threads)


# ThreadConfig ADDR_MOD registers of AddrMod section s: AB at 12 + s, DST at 28 + s, BIAS at 47 + s
# (golden/addrmod.py); DST bits 14:13 are the fidelity increment.
AB_SEC0, DST_SEC0 = 12, 28
FIDELITY_INCR_LSB = 13


def fidelity_plan() -> dict[int, int]:
    return {t: t + 1 for t in range(THREADS)}


def adc_plan() -> dict[tuple[str, int, str], tuple[int, int]]:
    """(unit, channel, dim) -> (checkpoint value set by SETADC, increment INCADC adds to the counter). The low
    bytes (all the debug bus shows of Z and W) differ by 5 or more, increments are 1..3: no counter can
    equal another field's checkpoint."""
    out = {}
    for u, unit in enumerate(ADC_UNITS):
        for ch in range(2):
            for d, dim in enumerate("xyzw"):
                k = 8 * u + 4 * ch + d
                high = (0x9E37 * (k + 1)) & (0xFF00 if dim == "x" else 0x1F00)
                out[(unit, ch, dim)] = (high | (47 * k + 0x11) & 0xFF, 1 + k % 3)
    return out


def counters_case() -> Case:
    """Fidelity: thread t applies an AddrMod with fidelity increment t + 1 (ZEROACC one-row mode). ADCs:
    thread 0 sets unpacker 0 and 1, thread 2 the packer (the units the debug bus shows), each counter and
    checkpoint of each channel its own value."""
    threads: dict[int, list[int]] = {}
    init_tc = {}
    for t, fid in fidelity_plan().items():
        init_tc[t] = {DST_SEC0 + 1: fid << FIDELITY_INCR_LSB}
        threads[t] = [isa.encode("ZEROACC", {"clear_mode": 0, "addr_mode": 1, "where": 100 + t})]
    plan = adc_plan()
    for t, units in ((0, ("unpack0", "unpack1")), (2, ("pack",))):
        for unit in units:
            mask = 1 << ADC_UNITS.index(unit)
            for ch in range(2):
                for d, dim in enumerate("xyzw"):
                    threads[t].append(isa.encode("SETADC", {"cntsetmask": mask, "channelindex": ch,
                                                            "dimensionindex": d, "value": plan[(unit, ch, dim)][0]}))
            for name, dims in (("INCADCXY", "xy"), ("INCADCZW", "zw")):
                inc = {f"ch{ch}_{'x' if i == 0 else 'y'}": plan[(unit, ch, dim)][1]
                       for ch in range(2) for i, dim in enumerate(dims)}
                threads[t].append(isa.encode(name, {"cntsetmask": mask, **inc}))
    return Case("selftest-counters", "fidelity phase per thread, every ADC field of the units the debug bus shows",
                threads, init=Init(thread_config=init_tc))


def thread_config_case() -> Case:
    """ThreadConfig from the case's init: AddrMod section 2 of each thread with its own SrcA/SrcB/Dst
    increments, applied by a ZEROACC one-row; the RWCs show whether the init landed."""
    init_tc, threads = {}, {}
    for t in range(THREADS):
        a, b, d = 3 + t, 9 + 2 * t, 17 + 5 * t
        init_tc[t] = {AB_SEC0 + 2: b << 8 | a, DST_SEC0 + 2: d}
        threads[t] = [isa.encode("ZEROACC", {"clear_mode": 0, "addr_mode": 2, "where": 200 + t})] * (t + 1)
    return Case("selftest-thread-config", "ThreadConfig init seen through the AddrMod it selects", threads,
                init=Init(thread_config=init_tc))


# --- Src valid bits --------------------------------------------------------------------------------
def _w(text: str) -> list[int]:
    return isa.assemble(text)


_UNPACK_A = "UNPACR_NOP unpacker_select=0 set_dvalid=1 unpack_pop=1"      # hand SrcA's unpacker bank over
_UNPACK_B = "UNPACR_NOP unpacker_select=1 set_dvalid=1 unpack_pop=1"
_RELEASE = "SETRWC clear_ab_vld=3 bitmask=0"                               # the matrix side gives both back
# Per Src, (valid0, valid1, matrix_bank, unpack_bank): a0 1001 (SrcB 0000); ab0 1001; released 0011; bank1
# 0110: every pair of the four bits differs in one of them, so swapped positions show. fresh comes last: after
# bank1, its zeros are the reset prologue's work.
SRC_STATES = {
    "a0": {1: _w(_UNPACK_A)},
    "ab0": {1: _w(f"{_UNPACK_A}; {_UNPACK_B}")},
    "released": {1: _w(f"{_UNPACK_A}; {_UNPACK_B}; {_RELEASE}")},
    "bank1": {1: _w(f"{_UNPACK_A}; {_UNPACK_B}; {_RELEASE}; {_UNPACK_A}; {_UNPACK_B}")},
    "fresh": {},
}


def src_cases() -> list[Case]:
    """Cases that leave SrcA/SrcB bank state (valid bits, matrix and unpacker banks) in distinct settings."""
    return [Case(f"selftest-src-{name}", "Src bank state left for the debug bus to show", threads)
            for name, threads in SRC_STATES.items()]


# --- GPRs, Config, L1 ------------------------------------------------------------------------------
def gpr_value(t: int, i: int) -> int:
    return (0x9E3779B9 * (GPRS * t + i + 1)) & 0xFFFFFFFF


def gpr_case() -> Case:
    """Every GPR of every thread from init; SETDMAREG (Tensix) and a RISC-V store overwrite two of each."""
    init = Init(gpr={t: {i: gpr_value(t, i) for i in range(GPRS)} for t in range(THREADS)})
    threads, actions = {}, {}
    for t in range(THREADS):
        threads[t] = [isa.encode("SETDMAREG", {"payload_sigsel": 0x1234 + 0x111 * t, "regindex16b": 2 * (10 + t)})]
        actions[t] = [(1, RiscvAction("gpr", (20 + t, 0xC0DE0000 | t)))]
    return Case("selftest-gpr", "GPR init, a Tensix write and a RISC-V store", threads, init=init, actions=actions)


# Config fields whose value changes how later instructions, the RISCs or the read-back behave (formats,
# rounding, ECC scrubbing, RISC Dest access, state reset, clock gating, Dest/Src access, chicken bits): the
# Config check reads them back as the prologue left them (zero) but never writes other values there.
CONTROL_PREFIXES = ("ALU_", "STACC_RELU", "DISABLE_RISC_BP", "ECC_SCRUBBER", "RISC_DEST_ACCESS", "STATE_RESET",
                    "CG_", "DEST_ACCESS_CFG", "SRC_ACCESS_CFG", "CHICKEN_BITS")


def _control_words() -> frozenset[int]:
    return frozenset(f.index for n, f in fields("config").items() if n.startswith(CONTROL_PREFIXES))


def config_words(plat: Platform) -> tuple[list[int], list[int]]:
    """(words the Config check writes, control words it only reads): both readable and writable."""
    both = sorted(plat.config_readable & plat.config_writable)
    control = _control_words()
    return [i for i in both if i not in control and word_mask(i)], [i for i in both if i in control]


def config_value(state: int, index: int, plat: Platform, invert: bool = False) -> int:
    """A distinct value per word and state, in the word's named fields, outside the fields the platform
    refuses a nonzero value in (``config_zero_fields``)."""
    v = (0x85EBCA6B * (index + 1) ^ (0x5A5A5A5A if state else 0)) & 0xFFFFFFFF
    keep = word_mask(index)
    for name in plat.raw.get("config_zero_fields", ()):
        f = config_field(name)
        keep &= ~f.mask if f.index == index else ~0
    return (v ^ 0xFFFFFFFF if invert else v) & keep


def config_cases(plat: Platform) -> list[Case]:
    """Config state 0 (RISC stores) and the banked words of state 1 (WRCFG), a value and its complement,
    read back by RISC loads and RDCFG."""
    written, control = config_words(plat)
    out = []
    for invert in (False, True):
        config = {0: {i: config_value(0, i, plat, invert) for i in written},
                  1: {i: config_value(1, i, plat, invert) for i in written if i < GLOBAL_BASE}}
        observe = Observe(config={0: written + control, 1: [i for i in written + control if i < GLOBAL_BASE]})
        out.append(Case(f"selftest-config{'-inverted' if invert else ''}", "Config words round trip", {},
                        init=Init(config=config), observe=observe))
    return out


L1_REGIONS = ((0x0, 0x1000), (0x80000, 0x1000), (M.RESERVED[0] - 0x1000, 0x1000))
L1_ACTION_AT = 0x40000


def l1_bytes(addr: int, size: int) -> bytes:
    return b"".join(((0x2545F491 * (addr + 4 * i + 1)) & 0xFFFFFFFF).to_bytes(4, "little") for i in range(size // 4))


def l1_cases() -> list[Case]:
    """L1 at its bottom, middle and just below the harness area, plus a RISC-V store; then the same regions
    observed with nothing written (the harness zeroes L1 between cases)."""
    regions = [(a, l1_bytes(a, n)) for a, n in L1_REGIONS]
    acts = {1: [(0, RiscvAction("l1", (L1_ACTION_AT, l1_bytes(L1_ACTION_AT, 64))))]}
    observed = list(L1_REGIONS) + [(L1_ACTION_AT, 64)]
    return [Case("selftest-l1", "L1 regions from init and a RISC-V store", {1: []}, init=Init(l1=regions),
                 observe=Observe(l1=observed), actions=acts),
            Case("selftest-l1-zeroed", "the same L1 regions, nothing written", {}, observe=Observe(l1=observed))]
