"""Architectural state of one Blackhole Tensix coprocessor, as plain typed objects.

Sources: tt-isa-documentation Dst.md, SrcASrcB.md, RWCs.md, ADCs.md, BackendConfiguration.md
(BlackholeA0 where present, else WormholeB0), and ../shared/spec/blackhole-deltas.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import UndefinedBehaviour
from .registers import CONFIG_STATES, CONFIG_WORDS, thread_config_words

THREADS = 3
DEST_ROWS = 1024
SRC_ROWS = 64
COLS = 16
GPRS = 64
SEMAPHORES = 8
L1_SIZE = 1536 * 1024
ADC_UNITS = ("unpack0", "unpack1", "pack")

# Counter widths (RWCs.md; ADCs.md with Blackhole's 13-bit Z/W, blackhole-deltas #6).
SRC_MASK = 0x3F
DST_MASK = 0x3FF
FIDELITY_MASK = 0x3
ADC_X_MASK = (1 << 18) - 1
ADC_Y_MASK = (1 << 13) - 1
ADC_ZW_MASK = (1 << 13) - 1


@dataclass
class Rwc:
    """Per-thread read-write counters; ``bias`` is ExtraAddrModBit."""
    srca: int = 0
    srca_cr: int = 0
    srcb: int = 0
    srcb_cr: int = 0
    dst: int = 0
    dst_cr: int = 0
    fidelity: int = 0
    bias: int = 0

    FIELDS = ("srca", "srca_cr", "srcb", "srcb_cr", "dst", "dst_cr", "fidelity", "bias")


@dataclass
class AdcChannel:
    """One channel of an address counter unit (ADCs.md): X, Y, Z, W and their carriage-return copies."""
    x: int = 0
    x_cr: int = 0
    y: int = 0
    y_cr: int = 0
    z: int = 0
    z_cr: int = 0
    w: int = 0
    w_cr: int = 0

    FIELDS = ("x", "x_cr", "y", "y_cr", "z", "z_cr", "w", "w_cr")


def _adc_units() -> dict[str, list[AdcChannel]]:
    return {u: [AdcChannel(), AdcChannel()] for u in ADC_UNITS}


@dataclass
class Dest:
    """DstBits[1024][16] raw 16-bit cells plus one valid bit per row."""
    bits: np.ndarray = field(default_factory=lambda: np.zeros((DEST_ROWS, COLS), dtype=np.uint16))
    valid: np.ndarray = field(default_factory=lambda: np.ones(DEST_ROWS, dtype=bool))


MATRIX_UNIT = "matrix"
UNPACKERS = "unpackers"


@dataclass
class SrcBank:
    """One bank of SrcA or SrcB (SrcASrcB.md): its rows, the client allowed to write it, its implied format."""
    rows: np.ndarray = field(default_factory=lambda: np.zeros((SRC_ROWS, COLS), dtype=np.uint32))  # 19-bit cells
    allowed_client: str = UNPACKERS
    implied_format: int | None = None  # Blackhole implied data format (blackhole-deltas #17)


@dataclass
class SrcFile:
    """SrcA or SrcB: two banks, the matrix unit's and the unpacker's bank pointers, per-thread row cursors."""
    banks: list[SrcBank] = field(default_factory=lambda: [SrcBank(), SrcBank()])
    matrix_bank: int = 0
    unpacker_bank: int = 0
    unpacker_row: list[int] = field(default_factory=lambda: [0] * THREADS)


@dataclass
class Semaphore:
    """One of the Sync Unit's semaphores: its value and the maximum SEMINIT gave it."""
    value: int = 0
    max: int = 0


class L1:
    """1.5 MiB of L1, allocated lazily in 4 KiB pages; unwritten bytes read as zero."""

    PAGE = 4096

    def __init__(self) -> None:
        self.pages: dict[int, bytearray] = {}

    def _check(self, addr: int, n: int) -> None:
        if addr < 0 or n < 0 or addr + n > L1_SIZE:
            raise UndefinedBehaviour(f"L1 access [{addr:#x}, {addr + n:#x}) outside 0..{L1_SIZE:#x}")

    def read(self, addr: int, n: int) -> bytes:
        self._check(addr, n)
        page, off = divmod(addr, self.PAGE)
        if off + n <= self.PAGE:                    # within one page (nearly every access)
            p = self.pages.get(page)
            return bytes(p[off:off + n]) if p is not None else bytes(n)
        out = bytearray()
        while n:
            page, off = divmod(addr, self.PAGE)
            take = min(n, self.PAGE - off)
            p = self.pages.get(page)
            out += p[off:off + take] if p is not None else bytes(take)
            addr += take
            n -= take
        return bytes(out)

    def write(self, addr: int, data: bytes) -> None:
        self._check(addr, len(data))
        pos = 0
        while pos < len(data):
            page, off = divmod(addr + pos, self.PAGE)
            take = min(len(data) - pos, self.PAGE - off)
            p = self.pages.get(page)
            if p is None:
                p = self.pages[page] = bytearray(self.PAGE)
            p[off:off + take] = data[pos:pos + take] if pos or take < len(data) else data
            pos += take

    def read32(self, addr: int) -> int:
        return int.from_bytes(self.read(addr, 4), "little")

    def write32(self, addr: int, value: int) -> None:
        self.write(addr, (value & 0xFFFFFFFF).to_bytes(4, "little"))


# Vector unit (SFPU). Facts: LReg.md / VectorUnit.md (WormholeB0) and ttsim v1.10.0's Blackhole reset state.
SFPU_LANES = 32
SFPU_LREGS = 16            # 0..7 general; 8..10, 15 read-only constants; 11..14 written only by SFPCONFIG
SFPU_CC_STACK_DEPTH = 8
SFPU_LREG_RESET = {8: 0x3F56594B, 9: 0x00000000, 10: 0x3F800000, 11: 0xBF800000,
                   12: 0x3B000000, 13: 0xBF2CC4C7, 14: 0xBEB08FF9}   # LReg[15] lane i holds 2*i


def _sfpu_lreg_reset() -> np.ndarray:
    r = np.zeros((SFPU_LREGS, SFPU_LANES), dtype=np.uint32)
    for i, v in SFPU_LREG_RESET.items():
        r[i, :] = v
    r[15, :] = np.arange(SFPU_LANES, dtype=np.uint32) * 2
    r.flags.writeable = False
    return r


_LREG_RESET = _sfpu_lreg_reset()     # built once; each machine gets its own copy


def _sfpu_lregs() -> np.ndarray:
    return _LREG_RESET.copy()


@dataclass
class SfpuState:
    """One SFPU shared by all threads: LReg[16][32] of 32-bit lanes, lane flags (bit i = lane i) with
    their enable, the flag stack of (cc_en, cc) pairs, LaneConfig, and the Blackhole SFPU stack pointer
    (SETRWC BitMask bit 4; its effect on addressing is undocumented)."""
    lreg: np.ndarray = field(default_factory=_sfpu_lregs)
    cc_en: bool = True          # UseLaneFlagsForLaneEnable, all lanes at once (ttsim resets it to true)
    cc: int = 0xFFFFFFFF        # LaneFlags
    cc_stack: list[tuple[bool, int]] = field(default_factory=list)
    lane_config: int = 0
    sp: int = 0

    def lane_mask(self) -> int:
        """Lanes an ordinary SFPU instruction writes."""
        return self.cc if self.cc_en else 0xFFFFFFFF


@dataclass
class LatchedWait:
    """A thread's Wait Gate latch (STALLWAIT / SEMWAIT, WormholeB0 STALLWAIT.md): the block mask (B0..B8)
    and what it waits for: STALLWAIT conditions (Blackhole numbering C0..C12) or SEMWAIT semaphore conditions."""
    block_mask: int
    condition_mask: int = 0
    semaphore_mask: int = 0
    semaphore_conditions: int = 0


REPLAY_BUFFER = 32     # entries per thread (ttsim REPLAY_BUF_SIZE; REPLAY.md)
MOP_CFG_WORDS = 9


@dataclass
class Frontend:
    """A thread's MOP and replay expanders (MOPExpander.md, REPLAY.md): MOP_CFG's mask high half, the
    MopCfg words RISCV writes (None: never written), the replay buffer (None: never loaded) and the
    REPLAY load in progress (entries still to capture, next buffer index, whether they also execute)."""
    mop_mask_hi: int = 0
    mop_cfg: list[int | None] = field(default_factory=lambda: [None] * MOP_CFG_WORDS)
    replay: list[int | None] = field(default_factory=lambda: [None] * REPLAY_BUFFER)
    load_left: int = 0
    load_index: int = 0
    load_exec: bool = False


@dataclass
class Packer:
    """What the packer carries from one PACR to the next until a PACR with Last or Flush (ttsim v1.10.0:
    packer_valid, dst addresses, tile position counters; OutputAddressGenerator.md NeedsNewAddress)."""
    continuing: bool = False   # the next PACR appends at data_addr instead of computing new addresses
    data_addr: int = 0         # L1 byte address of the next datum
    exp_addr: int = 0          # L1 byte address of the next exponent (formats under 16 bits)
    x: int = 0                 # datum within the current row (edge masking)
    y: int = 0                 # row within the current XY plane (TILE_ROW_SET_MAPPING index)
    z: int = 0                 # XY plane


@dataclass
class TensixState:
    """Everything golden models. Power-on values are fixed here; cases set what they depend on."""
    dest: Dest = field(default_factory=Dest)
    srca: SrcFile = field(default_factory=SrcFile)
    srcb: SrcFile = field(default_factory=SrcFile)
    rwc: list[Rwc] = field(default_factory=lambda: [Rwc() for _ in range(THREADS)])
    adc: list[dict[str, list[AdcChannel]]] = field(default_factory=lambda: [_adc_units() for _ in range(THREADS)])
    gpr: list[list[int]] = field(default_factory=lambda: [[0] * GPRS for _ in range(THREADS)])
    config: list[list[int]] = field(default_factory=lambda: [[0] * CONFIG_WORDS for _ in range(CONFIG_STATES)])
    thread_config: list[list[int]] = field(
        default_factory=lambda: [[0] * thread_config_words() for _ in range(THREADS)])
    semaphores: list[Semaphore] = field(default_factory=lambda: [Semaphore() for _ in range(SEMAPHORES)])
    l1: L1 = field(default_factory=L1)
    sfpu: SfpuState = field(default_factory=SfpuState)
    wait_gate: list[LatchedWait | None] = field(default_factory=lambda: [None] * THREADS)
    mutex: dict[int, int] = field(default_factory=dict)   # Sync Unit mutex index -> holding thread
    frontend: list[Frontend] = field(default_factory=lambda: [Frontend() for _ in range(THREADS)])
    packer: Packer = field(default_factory=Packer)
    mailboxes: dict[tuple[int, int], int] = field(default_factory=dict)   # (from thread, to thread) -> value
    # Which config state (0/1) each thread's config instructions address: ThreadConfig CFG_STATE_ID_StateID.
