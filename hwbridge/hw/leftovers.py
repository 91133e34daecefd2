"""What a case leaves on the core for the next case, read from golden's end state, and the clean-up for each kind.

A card cannot be thrown away between cases, and the reset prologue (hw/program.py) cannot reach every piece
of state: a case may end with the SFPU flag stack non-empty, a Sync Unit mutex held, the packer in the middle
of a row, a thread's Wait Gate latched, a mailbox value unread. ``plan`` runs the case on golden (only when an
opcode and action scan says it could leave any of these) and reads golden's end state: one entry of KINDS per
kind of leftover, each citing where the state is defined, each returning what is left and the clean-up that
clears it. The clean-up is checked on golden first: run on a copy of the end state it must leave none of the
kinds it addresses and write nothing into the harness area.

The clean-ups run as a separate small job after the case's results are read (hw/cleanup.py), not as an
epilogue of the case's own program: (1) the case's program, its cycle count and its recordings stay the same
in every isolation mode; (2) the job runs after the host has read the case's L1 regions and before the next
job zeroes L1, so a PACR's write lands in L1 that is zeroed before any case reads it; (3) it runs only when
golden predicts something to clear, and also after a hang, where the case's own program never got to an
epilogue (a latched SEMWAIT, which ttsim models by stalling the instruction, is released by its semaphore).

A case golden cannot run to its end (not modelled, undefined) gets the kinds the scan flags: those with a
clean-up that needs no prediction on this platform (``blind``: the SFPU soft reset where the platform accepts
it, the DBG_FEATURE_DISABLE write, mailboxes a RISC reset empties) are cleared that way; any other makes the
plan's ``refuse`` say why, and a card-isolated backend refuses the case rather than trust the next one. A case
golden predicts to hang is left to hang recovery. Limits: golden's sequential schedule decides the end state
(a racy case could end otherwise on a card), and a device that diverged from golden may have left more.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterator

from golden import isa
from golden.core import Tensix
from golden.errors import GoldenError, Hang
from golden.riscv import RiscvAction
from golden.state import THREADS
from golden.sync.sync import C_SRCA_CLEARED, C_SRCA_VALID, C_SRCB_CLEARED, C_SRCB_VALID, unmet
from tensix_diff.case import Case, case_hash
from tensix_diff.golden_run import apply_init

from . import l1_map as M
from .platform import Platform


@dataclass(frozen=True)
class Step:
    """One clean-up instruction on a TRISC: a Tensix word it pushes, or a RISC-side action (a semaphore post or
    get through PC_BUF, a mailbox read) that it performs before any of its words."""
    thread: int
    word: int | None = None
    action: RiscvAction | None = None


@dataclass
class Found:
    """One leftover: what golden predicts is left (``text``), and what clears it (``done``, with the steps)."""
    kind: str
    text: str
    done: str
    steps: list[Step] = field(default_factory=list)
    regs: list[tuple[int, int]] = field(default_factory=list)     # host MMIO writes, RISCs held in reset
    units: int = 0                                                # Tensix unit soft-reset bits to pulse

    @property
    def acts(self) -> bool:
        """Whether anything must run for it (otherwise the next case's reset prologue clears it)."""
        return bool(self.steps or self.regs or self.units)


@dataclass(frozen=True)
class Kind:
    name: str
    spec: str
    find: Callable[["Watched", Case, Platform], Iterator[Found]]
    blind: Callable[[Case, Platform], Found | None] | None = None   # without a prediction, where possible


KINDS: dict[str, Kind] = {}


def kind(name: str, spec: str, blind=None):
    def register(fn):
        KINDS[name] = Kind(name, spec, fn, blind)
        return fn
    return register


class Watched(Tensix):
    """Golden's machine, noting the last PACR (its thread and word): the packer clean-up repeats it with Last."""

    def __init__(self, state=None):
        super().__init__(state)
        self.last_pacr: tuple[int, int] | None = None

    def step(self, t, d, index=0):
        super().step(t, d, index)
        if d.ins is not None and d.ins.name == "PACR":
            self.last_pacr = (t, d.word)


@lru_cache(maxsize=None)
def _w(name: str, **fields: int) -> int:
    return isa.encode(name, fields)


def _free_thread(m: Watched, busy: int | None = None) -> int:
    """The first thread (other than ``busy``) whose Wait Gate holds nothing, else the first other one."""
    others = [u for u in range(THREADS) if u != busy]
    return next((u for u in others if m.s.wait_gate[u] is None), others[0])


SFPU_RESET = 1 << 10        # SOFT_RESET_0 bit 10: Matrix Unit, Vector Unit (SFPU), SrcA data (SoftReset.md)


def _soft_reset(plat: Platform, bit: int) -> int:
    """``bit`` where the platform lets a Tensix unit soft reset be pulsed (platforms/*.yaml tensix_soft_reset,
    the hang recovery's table; ttsim takes none), else 0."""
    return bit if int(plat.raw.get("tensix_soft_reset", 0)) & bit else 0


# --- the kinds --------------------------------------------------------------------------------------------
def _flag_stack_blind(case: Case, plat: Platform) -> Found | None:
    units = _soft_reset(plat, SFPU_RESET)
    return Found("sfpu-flag-stack", "SFPU flag stack: depth unknown", "SFPU soft reset", units=units) if units else None


@kind("sfpu-flag-stack", "WormholeB0 SFPPUSHC.md / SFPPOPC.md: an 8-deep stack of (enable, flags) shared by "
      "the threads; BlackholeA0 SoftReset.md: the Vector Unit soft reset empties it", blind=_flag_stack_blind)
def _flag_stack(m: Watched, case: Case, plat: Platform) -> Iterator[Found]:
    depth = len(m.s.sfpu.cc_stack)
    if depth:
        t = _free_thread(m)
        yield Found("sfpu-flag-stack", f"SFPU flag stack depth {depth}", f"SFPPOPC x{depth} from thread {t}",
                    [Step(t, _w("SFPPOPC"))] * depth)


@kind("mutex", "WormholeB0 ATGETM.md / ATRELM.md, SyncUnit.md: a mutex stays held until its holder releases it "
      "(another thread's ATGETM waits forever)")
def _mutexes(m: Watched, case: Case, plat: Platform) -> Iterator[Found]:
    for index, holder in sorted(m.s.mutex.items()):
        yield Found("mutex", f"mutex {index} held by thread {holder}", f"ATRELM {index} from thread {holder}",
                    [Step(holder, _w("ATRELM", mutex_index=index))])


@kind("packer-continuation", "WormholeB0 PACR.md, Packers/OutputAddressGenerator.md: after a PACR without Last "
      "the next PACR appends where it stopped instead of taking fresh addresses")
def _packer(m: Watched, case: Case, plat: Platform) -> Iterator[Found]:
    p = m.s.packer
    if p.continuing and m.last_pacr is not None:
        t, word = m.last_pacr
        fields = {**isa.decode(word)[1], "last": 1}
        yield Found("packer-continuation", f"packer mid-row at L1 {p.data_addr:#x} (x {p.x}, y {p.y}, z {p.z})",
                    f"the last PACR again with Last=1 from thread {t} (its write lands in L1 the next job zeroes)",
                    [Step(t, isa.encode("PACR", fields))])


@kind("unpacker-continuation", "UNPACR Last=0 (WormholeB0 UNPACR.md): golden and ttsim refuse it; BlackholeA0 "
      "SoftReset.md: the unpacker soft reset only aborts UNPACRs in flight")
def _unpacker(m: Watched, case: Case, plat: Platform) -> Iterator[Found]:
    return iter(())          # golden never ends a case with it (it refuses UNPACR without Last)


def _satisfy(m: Watched, t: int) -> list[Step]:
    """Steps that make thread t's latched wait hold: semaphores posted or taken through PC_BUF, Src banks handed
    to the side the condition waits for (from another thread)."""
    w, steps = m.s.wait_gate[t], []
    for i, sem in enumerate(m.s.semaphores):
        if w.semaphore_mask >> i & 1:
            if w.semaphore_conditions & 1 and sem.value == 0:
                steps.append(Step(t, action=RiscvAction("sem_post", (i,))))
            elif w.semaphore_conditions & 2 and sem.value >= sem.max and sem.value:
                steps.append(Step(t, action=RiscvAction("sem_get", (i,))))
    u = _free_thread(m, t)
    handover = {C_SRCA_VALID: _w("UNPACR_NOP", unpacker_select=0, set_dvalid=1, unpack_pop=1),
                C_SRCB_VALID: _w("UNPACR_NOP", unpacker_select=1, set_dvalid=1, unpack_pop=1),
                C_SRCA_CLEARED: _w("SETRWC", clear_ab_vld=1, bitmask=0),
                C_SRCB_CLEARED: _w("SETRWC", clear_ab_vld=2, bitmask=0)}
    steps += [Step(u, word) for c, word in handover.items() if w.condition_mask >> c & 1]
    return steps


def _step_text(s: Step) -> str:
    if s.action is None:
        return f"{isa.disassemble(s.word).split()[0]} from thread {s.thread}"
    verb = {"sem_post": "posted", "sem_get": "taken"}[s.action.kind]
    return f"semaphore {s.action.args[0]} {verb} through PC_BUF by thread {s.thread}"


@kind("latched-wait", "WormholeB0 STALLWAIT.md (the Wait Gate latch), SEMWAIT.md; PC_BUF semaphores (ttsim "
      "tile.cpp): a latch holds the thread's later instructions until its conditions are met")
def _latched(m: Watched, case: Case, plat: Platform) -> Iterator[Found]:
    for t, w in enumerate(m.s.wait_gate):
        why = unmet(m, w) if w is not None else []
        if why:
            steps = _satisfy(m, t)
            done = ", ".join(_step_text(s) for s in steps)
            yield Found("latched-wait", f"thread {t} wait latched ({', '.join(why)})", done or "none", steps)


def _mailbox_blind(case: Case, plat: Platform) -> Found | None:
    if plat.raw.get("mailboxes_survive_risc_reset", True):
        return None
    return Found("mailbox", "mailbox values unknown", "discarded by the RISC soft reset (SoftReset.md)")


@kind("mailbox", "BabyRISCV/Mailboxes.md; BlackholeA0 SoftReset.md: a RISC soft reset discards them on silicon; "
      "ttsim (tile.cpp) keeps a value until it is read", blind=_mailbox_blind)
def _mailboxes(m: Watched, case: Case, plat: Platform) -> Iterator[Found]:
    for (src, dst), value in sorted(m.s.mailboxes.items()):
        text = f"mailbox {src} -> {dst} holds {value:#x}"
        if plat.raw.get("mailboxes_survive_risc_reset", True):
            yield Found("mailbox", text, f"read by thread {dst}",
                        [Step(dst, action=RiscvAction("mailbox_read", (src, 0)))])
        else:
            yield Found("mailbox", text, "discarded by the RISC soft reset (SoftReset.md)")


def _feature_value(case: Case) -> int:
    values = [a.fields.value for acts in case.actions.values() for _, a in acts if a.kind == "feature_disable"]
    return values[-1] if values else 0


def _feature_found(case: Case, plat: Platform) -> Found | None:
    value = _feature_value(case)
    if not value:
        return None
    return Found("feature-disable", f"DBG_FEATURE_DISABLE = {value:#x}", "host write of 0",
                 regs=[(M.DBG_FEATURE_DISABLE, 0)])


@kind("feature-disable", "RISCV_DEBUG_REG_DBG_FEATURE_DISABLE (ttsim tile.cpp; 0 at reset): a RISC-side register "
      "golden does not model, read from the case's last write", blind=_feature_found)
def _feature(m: Watched, case: Case, plat: Platform) -> Iterator[Found]:
    found = _feature_found(case, plat)
    return iter([found] if found else [])


# Cleared by the next case's reset prologue (hw/program.py): listed so provenance says what golden predicted.
@kind("replay", "WormholeB0 REPLAY.md: the prologue finishes a pending load (32 NOPs) and refills the buffer")
def _replay(m: Watched, case: Case, plat: Platform) -> Iterator[Found]:
    for t, fe in enumerate(m.s.frontend):
        loaded = sum(e is not None for e in fe.replay)
        if fe.load_left:
            yield Found("replay", f"thread {t} replay load pending (entries to come: {fe.load_left})",
                        "the reset prologue")
        elif loaded:
            yield Found("replay", f"thread {t} replay buffer loaded (entries: {loaded})", "the reset prologue")


@kind("mop-mask", "WormholeB0 MOPExpander.md / MOP_CFG.md: the mask's top half; the prologue's MOP_CFG 0 clears it")
def _mop_mask(m: Watched, case: Case, plat: Platform) -> Iterator[Found]:
    for t, fe in enumerate(m.s.frontend):
        if fe.mop_mask_hi:
            yield Found("mop-mask", f"thread {t} MOP mask top half {fe.mop_mask_hi:#x}", "the reset prologue")


@kind("semaphores", "WormholeB0 SEMINIT.md: the prologue's SEMINITs set every semaphore to (0, max 0)")
def _semaphores(m: Watched, case: Case, plat: Platform) -> Iterator[Found]:
    for i, sem in enumerate(m.s.semaphores):
        if sem.value or sem.max:
            yield Found("semaphores", f"semaphore {i} = {sem.value} (max {sem.max})", "the reset prologue")


# --- the scan: which kinds a case could leave at all (cheap; decides whether golden runs) --------------------
SCAN = {"PACR": "packer-continuation", "UNPACR": "unpacker-continuation", "SFPPUSHC": "sfpu-flag-stack",
        "ATGETM": "mutex", "STALLWAIT": "latched-wait", "SEMWAIT": "latched-wait"}
SCAN_WHEN = {"PACR": ("last", {0}), "UNPACR": ("last", {0})}     # instructions that leave state only in some forms


@lru_cache(maxsize=None)
def _scan_opcodes() -> frozenset[int]:
    return frozenset(op for op, ins in isa.by_opcode().items() if ins.name in SCAN)


def scan(case: Case) -> set[str]:
    """The kinds needing a clean-up that ``case`` could leave: from its words, the words its MOP configuration
    stores could make a MOP issue, and its RISC-V actions."""
    out = set()
    acts = [a for xs in case.actions.values() for _, a in xs]
    words = [w for ws in case.threads.values() for w in ws] + [a.fields.value for a in acts if a.kind == "mop_cfg"]
    opcodes = _scan_opcodes()
    for w in words:
        if w >> 24 not in opcodes:     # any other word decodes to another instruction, or not at all
            continue
        try:
            ins, fields = isa.decode(w)
        except isa.IsaError:           # a MOP loop count, not an instruction
            continue
        cond = SCAN_WHEN.get(ins.name)
        if cond is None or fields.get(cond[0]) in cond[1]:
            out.add(SCAN[ins.name])
    if any(a.kind == "mailbox_write" for a in acts):
        out.add("mailbox")
    if _feature_value(case):
        out.add("feature-disable")
    return out


# --- the plan ----------------------------------------------------------------------------------------------
@dataclass
class Plan:
    """What golden predicts ``case`` leaves (``found``), and, when the leftovers cannot be cleared, why."""
    golden: str                                  # "ok", a golden error kind, or "not run" (the scan found nothing)
    found: list[Found] = field(default_factory=list)
    refuse: str | None = None                    # on a card: why the case cannot be isolated from the next

    @property
    def predicted(self) -> list[str]:
        """Provenance: what golden predicts is left (or that it could not run the case to its end)."""
        head = [] if self.golden in ("ok", "not run") else [f"golden: {self.golden} (no end state)"]
        return head + [f.text for f in self.found]

    @property
    def acting(self) -> list[Found]:
        """The leftovers the clean-up job clears (the rest the next prologue clears)."""
        return [f for f in self.found if f.acts]

    def steps(self) -> list[Step]:
        return [s for f in self.found for s in f.steps]

    def regs(self) -> list[tuple[int, int]]:
        return [r for f in self.found for r in f.regs]

    def reset_units(self) -> int:
        out = 0
        for f in self.found:
            out |= f.units
        return out


NOTHING = Plan("not run")
_PLANS: dict[tuple[str, str], Plan] = {}      # (case hash, platform) -> plan: a case re-run is not re-predicted


def find_all(m: Watched, case: Case, plat: Platform) -> list[Found]:
    """Every leftover in golden's end state ``m``, kind by kind in KINDS order."""
    return [f for k in KINDS.values() for f in k.find(m, case, plat)]


def plan(case: Case, plat: Platform) -> Plan:
    """Golden's prediction of what ``case`` leaves and how to clear it (golden runs only when the scan flags a
    kind that needs a clean-up)."""
    flagged = scan(case)
    if not flagged:
        return NOTHING
    key = (case_hash(case), plat.name)
    if key not in _PLANS:
        if len(_PLANS) >= 4096:
            _PLANS.clear()
        _PLANS[key] = _predict(case, plat, flagged)
    return _PLANS[key]


def _predict(case: Case, plat: Platform, flagged: set[str]) -> Plan:
    m = Watched()
    apply_init(m.s, case)
    try:
        m.run(case.threads, case.actions)
    except Hang:
        return Plan("hang")            # the device hangs too: hang recovery's business, not a clean-up's
    except GoldenError as e:
        return _blind(case, plat, flagged, e)
    found = find_all(m, case, plat)
    problem = verify(m, case, plat, found)
    return Plan("ok", found, f"golden's end state: {problem}" if problem else None)


def _blind(case: Case, plat: Platform, flagged: set[str], e: GoldenError) -> Plan:
    """Without golden's end state: the flagged kinds' prediction-free clean-ups, or why there is none."""
    found, stuck = [], []
    for name in sorted(flagged):
        blind = KINDS[name].blind
        f = blind(case, plat) if blind else None
        (found if f is not None else stuck).append(f if f is not None else name)
    why = None
    if stuck:
        why = (f"golden cannot predict what it leaves ({e.kind}: {e.rule}) and it could leave {', '.join(stuck)}, "
               f"which nothing clears on {plat.name} without that prediction")
    return Plan(e.kind, found, why)


def verify(m: Watched, case: Case, plat: Platform, found: list[Found]) -> str | None:
    """Run the clean-up steps on a copy of golden's end state: None when they leave none of the kinds that need
    one and write nothing into the harness area, else what goes wrong."""
    steps = [s for f in found for s in f.steps]
    if not steps:
        return None
    check = Watched(copy.deepcopy(m.s))
    check.last_pacr = m.last_pacr
    lo, hi = M.RESERVED
    before = check.s.l1.read(lo, hi - lo)
    words = {t: [s.word for s in steps if s.thread == t and s.word is not None] for t in range(THREADS)}
    acts = {t: [(0, s.action) for s in steps if s.thread == t and s.action is not None] for t in range(THREADS)}
    try:
        check.run({t: w for t, w in words.items() if w}, {t: a for t, a in acts.items() if a})
    except GoldenError as e:
        return f"the clean-up cannot run on golden ({e})"
    left = [f.text for f in find_all(check, case, plat) if f.steps]
    if left:
        return f"the clean-up leaves {', '.join(left)}"
    if check.s.l1.read(lo, hi - lo) != before:
        return f"the clean-up writes into the harness area [{lo:#x}, {hi:#x})"
    return None
