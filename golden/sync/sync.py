"""Sync unit and Wait Gate: NOP, STALLWAIT, SEMWAIT, SEMINIT, SEMPOST, SEMGET, ATGETM, ATRELM.

Sources: tt-isa-documentation WormholeB0 STALLWAIT.md (block-mask table, Wait Gate model), SEMWAIT.md,
SEMINIT.md, SEMPOST.md, SEMGET.md, SyncUnit.md, ATGETM.md, ATRELM.md; Blackhole condition numbering
C0..C12 from tt-llk assembly.yaml (blackhole-deltas #18): thcon, unpack0, unpack1, packer, math,
SrcA cleared, SrcB cleared, SrcA valid, SrcB valid, mover, trisc cfg, sfpu, cfg unit. Blackhole has
mutexes 0, 2, 3, 4 (assembly.yaml; ttsim holds five).

Sequential model: STALLWAIT / SEMWAIT latch a wait in the thread's Wait Gate; each later instruction of
that thread first re-evaluates the latch (forgotten once its conditions hold) and, if the block mask
covers the instruction's unit, waits (errors.Blocked; a wait nothing can satisfy ends as Hang). Pipeline-busy
conditions always hold here (nothing is ever in flight); Src bank ownership (C5..C8) and semaphores are
real state and can block.
"""
from __future__ import annotations

from ..errors import Blocked
from ..errors import NotModelled, UndefinedBehaviour
from ..handlers import pre_issue, semantics
from ..isa import table
from ..state import MATRIX_UNIT, SEMAPHORES, UNPACKERS, LatchedWait

ALL_BLOCKS = 0x1FF
B_MISC, B_SYNC, B_PACK, B_UNPACK, B_MOVER, B_THCON, B_MATH, B_CFG, B_SFPU = (1 << i for i in range(9))
# Block bits by isa.yaml unit (STALLWAIT.md table); None: never reaches the Wait Gate.
_UNIT_BLOCKS = {"TDMA": B_MISC, "THCON": B_MISC | B_THCON, "PACK": B_MISC | B_PACK, "UNPACK": B_MISC | B_UNPACK,
                "XMOV": B_MISC | B_MOVER, "SYNC": B_SYNC, "MATH": B_MATH, "CFG": B_CFG, "SFPU": B_SFPU, "NONE": 0}
_OVERRIDES = {"DMANOP": B_MISC | B_THCON, "RSTDMA": B_MISC, "STALLWAIT": ALL_BLOCKS,
              "MOP": None, "MOP_CFG": None, "REPLAY": None}
BLOCKED_BY = {name: _OVERRIDES.get(name, _UNIT_BLOCKS[ins.unit]) for name, ins in table().items()}

BH_CONDITIONS = 13                              # C0..C12
C_SRCA_CLEARED, C_SRCB_CLEARED, C_SRCA_VALID, C_SRCB_VALID = 5, 6, 7, 8
_BANK_CONDITIONS = sum(1 << c for c in (C_SRCA_CLEARED, C_SRCB_CLEARED, C_SRCA_VALID, C_SRCB_VALID))
SEM_ZERO, SEM_MAX = 1, 2                        # SEMWAIT condition bits
SEM_LIMIT = 15                                  # Value and Max are 4 bits
MUTEXES = (0, 2, 3, 4)


def _bank_waits(m) -> dict[int, tuple[bool, str]]:
    """STALLWAIT conditions backed by state: condition -> (keep waiting?, why)."""
    sa, sb = m.s.srca, m.s.srcb
    return {
        C_SRCA_CLEARED: (sa.banks[sa.unpacker_bank].allowed_client != UNPACKERS, "SrcA unpacker bank not free"),
        C_SRCB_CLEARED: (sb.banks[sb.unpacker_bank].allowed_client != UNPACKERS, "SrcB unpacker bank not free"),
        C_SRCA_VALID: (sa.banks[sa.matrix_bank].allowed_client != MATRIX_UNIT, "SrcA matrix bank not valid"),
        C_SRCB_VALID: (sb.banks[sb.matrix_bank].allowed_client != MATRIX_UNIT, "SrcB matrix bank not valid"),
    }


def _semaphore_waits(m, w: LatchedWait) -> list[str]:
    out = []
    for i in range(SEMAPHORES):
        if w.semaphore_mask >> i & 1:
            sem = m.s.semaphores[i]
            if w.semaphore_conditions & SEM_ZERO and sem.value == 0:
                out.append(f"semaphore {i} is 0")
            if w.semaphore_conditions & SEM_MAX and sem.value >= sem.max:
                out.append(f"semaphore {i} is at its max {sem.max}")
    return out


def unmet(m, w: LatchedWait) -> list[str]:
    """Reasons a latched wait still holds (empty when every selected condition is met)."""
    if not w.condition_mask & _BANK_CONDITIONS:        # no Src bank is read for a wait that names none
        return _semaphore_waits(m, w)
    out = [why for c, (waiting, why) in _bank_waits(m).items() if w.condition_mask >> c & 1 and waiting]
    return out + _semaphore_waits(m, w)


def holds_back(w: LatchedWait, name: str) -> bool:
    """Whether latched wait ``w``, while unmet, holds instruction ``name`` back: its block mask covers the
    instruction, and it waits on state that can leave it unmet (Src banks, semaphores; the pipeline-busy
    conditions always hold here)."""
    if not (w.condition_mask & _BANK_CONDITIONS or w.semaphore_mask):
        return False
    blocks = BLOCKED_BY[name]
    return w.block_mask == ALL_BLOCKS if blocks == 0 else bool(blocks and blocks & w.block_mask)


@pre_issue
def wait_gate(m, t, d) -> None:
    """Wait Gate: forget a satisfied latch; hold an instruction the latched block mask covers."""
    w = m.s.wait_gate[t]
    if w is None:
        return
    reasons = unmet(m, w)
    if not reasons:
        m.s.wait_gate[t] = None
        return
    if holds_back(w, d.ins.name):
        raise Blocked(f"latched wait (block mask {w.block_mask:#x}): " + ", ".join(reasons))


def _block_mask(mask: int) -> int:
    return mask if mask else B_MATH      # an all-zero block mask means B6 (STALLWAIT.md / SEMWAIT.md)


@semantics("NOP")
def nop(m, t, f) -> None:
    """NOP: no effect (the Wait Gate holds it only when a latched block mask has all nine bits)."""


@semantics("STALLWAIT")
def stallwait(m, t, f) -> None:
    """STALLWAIT.md (WormholeB0): latch BlockMask / ConditionMask; BH conditions C0..C12 (delta #18)."""
    if f.wait_res >> BH_CONDITIONS:
        raise UndefinedBehaviour(f"STALLWAIT ConditionMask={f.wait_res:#x}: Blackhole has conditions C0..C12 only")
    if not f.wait_res:
        raise NotModelled("STALLWAIT ConditionMask=0: the Wormhole default (0x7F) names different conditions "
                          "on Blackhole and no Blackhole source states the default")
    m.s.wait_gate[t] = LatchedWait(_block_mask(f.stall_res), condition_mask=f.wait_res)


@semantics("SEMWAIT")
def semwait(m, t, f) -> None:
    """SEMWAIT.md (WormholeB0): latch a wait while selected semaphores are 0 (C0) and/or at Max (C1)."""
    if f.sem_sel >> SEMAPHORES:
        raise UndefinedBehaviour(f"SEMWAIT SemaphoreMask={f.sem_sel:#x}: there are {SEMAPHORES} semaphores")
    if not f.wait_sem_cond:
        raise NotModelled("SEMWAIT ConditionMask=0 falls back to STALLWAIT's default conditions, "
                          "which no Blackhole source states")
    m.s.wait_gate[t] = LatchedWait(_block_mask(f.stall_res), semaphore_mask=f.sem_sel,
                                   semaphore_conditions=f.wait_sem_cond)


def _semaphores(m, name: str, mask: int) -> list:
    if mask >> SEMAPHORES:
        raise UndefinedBehaviour(f"{name} SemaphoreMask={mask:#x}: there are {SEMAPHORES} semaphores")
    return [m.s.semaphores[i] for i in range(SEMAPHORES) if mask >> i & 1]


@semantics("SEMINIT")
def seminit(m, t, f) -> None:
    """SEMINIT.md (WormholeB0): Value = NewValue, Max = NewMax for every selected semaphore."""
    for sem in _semaphores(m, "SEMINIT", f.sem_sel):
        sem.value, sem.max = f.init_value, f.max_value


@semantics("SEMPOST")
def sempost(m, t, f) -> None:
    """SEMPOST.md (WormholeB0): Value += 1 for each selected semaphore, saturating at 15 (Max is not used)."""
    for sem in _semaphores(m, "SEMPOST", f.sem_sel):
        sem.value = min(sem.value + 1, SEM_LIMIT)


@semantics("SEMGET")
def semget(m, t, f) -> None:
    """SEMGET.md (WormholeB0): Value -= 1 for each selected semaphore, saturating at 0."""
    for sem in _semaphores(m, "SEMGET", f.sem_sel):
        sem.value = max(sem.value - 1, 0)


# Handlers whose one effect is +1 or -1 on the Value of each semaphore they select, saturating at a bound: two
# such steps commute while neither meets a bound (the race check, tensix_diff.happens_before, relies on it).
COUNTING = frozenset({sempost, semget})


def _mutex(name: str, index: int) -> int:
    if index >> 16:
        raise UndefinedBehaviour(f"{name} index={index:#x}: bits 23:16 are outside the 16-bit Index field")
    if index in MUTEXES:
        return index
    if index == 1 or index > 7:
        raise Blocked(f"{name} mutex {index} does not exist: the wait never ends (ATGETM.md)")
    raise NotModelled(f"{name} mutex {index}: Blackhole has mutexes 0, 2, 3, 4; Wormhole's 5..7 are undocumented")


@semantics("ATGETM")
def atgetm(m, t, f) -> None:
    """ATGETM.md (WormholeB0): wait until no other thread holds the mutex, then hold it."""
    index = _mutex("ATGETM", f.mutex_index)
    holder = m.s.mutex.get(index)
    if holder is not None and holder != t:
        raise Blocked(f"mutex {index} is held by thread {holder}")
    m.s.mutex[index] = t


@semantics("ATRELM")
def atrelm(m, t, f) -> None:
    """ATRELM.md (WormholeB0): release the mutex if this thread holds it; otherwise no effect."""
    index = _mutex("ATRELM", f.mutex_index)
    if m.s.mutex.get(index) == t:
        del m.s.mutex[index]
