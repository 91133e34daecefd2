"""Which thread of a hung core is stalled, and on what: the case's waits judged against what the device shows.

The device shows: how far each TRISC got (the harness's ready/done flags in L1), whether its Tensix queue
drains once the RISC-V cores are reset (hwbridge.hw.recovery's probe), the semaphore values (PC_BUF loads,
SyncUnit.md), the Src bank state (debug bus, the platform's ``src_state_group``) and, where the platform
table lists ``stall_signals`` (tt-exalens's Blackhole names: trisc<t>_pc, tensix_frontend_t<t>_thread_inst,
..._stalled_*_inst), the instruction at the head of each thread. ttsim's debug bus answers only the counter
and Src groups (tile.cpp debug_bus_rd_data) and no register shows its Sync Unit mutexes, so there the
instruction is the case's own wait whose condition the device state leaves unmet or cannot rule out.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from golden import isa
from golden.state import SEMAPHORES, THREADS
from tensix_diff.case import Case, action_text

from . import l1_map as M
from .platform import Platform

SEM_ZERO, SEM_MAX = 1, 2                      # SEMWAIT ConditionMask C0 (Value == 0), C1 (Value >= Max)
C_SRCA_VALID, C_SRCB_VALID = 7, 8             # STALLWAIT conditions (Blackhole C0..C12, golden.sync.sync)
WAIT_WORDS = ("SEMWAIT", "STALLWAIT", "ATGETM")
WAIT_ACTIONS = ("sem_wait", "mailbox_read")


def trisc(t: int) -> str:
    return f"TRISC{t}"


@dataclass(frozen=True)
class Wait:
    """One place the case makes thread ``thread`` wait: a Tensix word (``index`` in its words) or a RISC-V
    action (``index`` in its actions)."""
    thread: int
    index: int
    kind: str                    # SEMWAIT | STALLWAIT | ATGETM | sem_wait | mailbox_read
    fields: dict
    text: str


def case_waits(case: Case) -> dict[int, list[Wait]]:
    """Every wait of every thread, in program order (words, then actions)."""
    out: dict[int, list[Wait]] = {t: [] for t in range(THREADS)}
    for t, words in case.threads.items():
        for i, w in enumerate(words):
            try:
                ins, f = isa.decode(w)
            except isa.IsaError:
                continue
            if ins.name in WAIT_WORDS:
                out[t].append(Wait(t, i, ins.name, f, _word_text(ins.name, f)))
    for t, acts in case.actions.items():
        for k, (_, a) in enumerate(acts):
            if a.kind in WAIT_ACTIONS:
                out[t].append(Wait(t, k, a.kind, vars(a.fields), action_text(a)))
    return out


def _sems(mask: int) -> list[int]:
    return [i for i in range(SEMAPHORES) if mask >> i & 1]


def _word_text(name: str, f: dict) -> str:
    if name == "SEMWAIT":
        cond = f["wait_sem_cond"]
        why = " and ".join(w for bit, w in ((SEM_ZERO, "while 0"), (SEM_MAX, "while at Max")) if cond & bit)
        return f"SEMWAIT sem {', '.join(map(str, _sems(f['sem_sel'])))}, wait {why or 'on no condition'}"
    if name == "ATGETM":
        return f"ATGETM mutex {f['mutex_index']}"
    return f"STALLWAIT conditions {f['wait_res']:#x}"


def mutex_held_at_end(words: list[int], mutex: int) -> bool:
    """Whether a thread that ran ``words`` to the end holds ``mutex`` (its last ATGETM/ATRELM of it is ATGETM)."""
    held = False
    for w in words:
        try:
            ins, f = isa.decode(w)
        except isa.IsaError:
            continue
        if ins.name in ("ATGETM", "ATRELM") and f["mutex_index"] == mutex:
            held = ins.name == "ATGETM"
    return held


def pushed_all(case: Case, view: "DeviceView", t: int) -> bool:
    """Every word of thread t reached its Tensix queue: it finished, or it passed the start barrier and has no
    RISC-V action (an action first waits for the queue, so a stall can stop the pushing there)."""
    return view.done[t] or (all(view.ready) and not case.actions.get(t))


def holders(case: Case, view: "DeviceView", mutex: int, waiter: int) -> list[int]:
    """The threads other than ``waiter`` that can hold ``mutex``: their queue drains (past their ATGETM), every
    word of theirs was pushed and their words leave it held."""
    return [h for h in range(THREADS) if h != waiter and view.drains and view.drains[h]
            and pushed_all(case, view, h) and mutex_held_at_end(case.threads.get(h, []), mutex)]


@dataclass
class DeviceView:
    """What the device showed after the hang and the probe (None where it could not show it)."""
    ready: list[bool]                      # reached the start barrier (all of them: the case's words were pushed)
    done: list[bool]                       # pushed every word and drained: the case finished on this thread
    drains: list[bool] | None = None       # its Tensix queue drained in the probe after the RISC-V reset
    sems: list[int] | None = None          # semaphore values
    src_valid: dict[str, bool] | None = None   # Src{A,B} matrix bank valid
    heads: dict[int, dict] = field(default_factory=dict)   # thread -> stall signals (platform debug bus)


def flags(block: bytes) -> tuple[list[bool], list[bool]]:
    """ready[t], done[t] from the harness's flag block (hwbridge.hw.l1_map FLAGS)."""
    word = [int.from_bytes(block[i:i + 4], "little") for i in range(0, len(block), 4)]
    ready = [word[(M.READY - M.FLAGS) // 4 + t] == 1 for t in range(THREADS)]
    done = [word[(M.DONE - M.FLAGS) // 4 + t] == M.DONE_TOKEN for t in range(THREADS)]
    return ready, done


# --- the debug bus after a hang -----------------------------------------------------------------------------
def dbus_reads(plat: Platform) -> list[tuple[int, int, int]]:
    """(daisy_sel, signal_sel, read32_sel) the host reads after a hang: the Src state group, then each stall
    signal of each thread (platform ``stall_signals``: name -> [daisy, [signal_sel per thread], read32_sel, mask])."""
    daisy, sig = plat.raw["src_state_group"]
    reads = [(daisy, sig, r) for r in range(4)]
    for d, sigs, rd, _ in plat.raw.get("stall_signals", {}).values():
        reads += [(d, sigs[t], rd) for t in range(THREADS)]
    return reads


def decode_dbus(plat: Platform, words: list[int]) -> tuple[dict[str, bool], dict[int, dict]]:
    """dbus_reads's words as (Src matrix bank valid per Src, per-thread stall signals)."""
    group = sum(w << 32 * i for i, w in enumerate(words[:4]))
    src = {}
    for name, b in plat.raw["src_state_bits"].items():
        bank = group >> b["matrix_bank"] & 1
        src[name] = bool(group >> b["valid1" if bank else "valid0"] & 1)
    heads: dict[int, dict] = {t: {} for t in range(THREADS)}
    at = 4
    for name, (_, _, _, mask) in plat.raw.get("stall_signals", {}).items():
        for t in range(THREADS):
            heads[t][name] = (words[at + t] & mask) >> ((mask & -mask).bit_length() - 1)
        at += THREADS
    return src, {t: h for t, h in heads.items() if h}


def _head_text(head: dict) -> str:
    """The instruction the debug bus shows at a thread's head (``inst_lo`` bits 23:0, ``inst_hi`` 31:24)."""
    word = head.get("inst_lo", 0) | head.get("inst_hi", 0) << 24
    try:
        text = isa.disassemble(word)
    except isa.IsaError:
        text = f"word {word:#010x}"
    stalled = [k[len("stalled_"):] for k, v in head.items() if k.startswith("stalled_") and v]
    pc = f", PC {head['pc']:#x}" if "pc" in head else ""
    return f"{text} (debug bus{pc}{'; stalled ' + ', '.join(stalled) if stalled else ''})"


# --- judging a wait against the device ----------------------------------------------------------------------
def unmet(w: Wait, view: DeviceView, case: Case) -> tuple[bool | None, str]:
    """(True: the device state leaves the wait unmet, False: met, None: cannot tell; the evidence)."""
    sems = view.sems
    if w.kind == "SEMWAIT":
        if sems is None:
            return None, ""
        sel = _sems(w.fields["sem_sel"])
        shown = ", ".join(f"semaphore {i} reads {sems[i]}" for i in sel)
        if w.fields["wait_sem_cond"] & SEM_ZERO and any(sems[i] == 0 for i in sel):
            return True, shown
        if w.fields["wait_sem_cond"] & SEM_MAX:
            return None, shown + "; Max is not readable"
        return False, shown
    if w.kind == "sem_wait":
        if sems is None:
            return None, ""
        v, n = sems[w.fields["sem"]], w.fields["value"]
        ok = {"==": v == n, "!=": v != n, "<": v < n, ">": v > n, "<=": v <= n, ">=": v >= n}[w.fields["op"]]
        return not ok, f"semaphore {w.fields['sem']} reads {v}"
    if w.kind == "STALLWAIT":
        cond, src = w.fields["wait_res"], view.src_valid
        waits = [name for c, name in ((C_SRCA_VALID, "srca"), (C_SRCB_VALID, "srcb")) if cond >> c & 1]
        if src is not None and not all(src[n] for n in waits):
            return True, ", ".join(f"Src{n[3:].upper()} matrix bank {'valid' if src[n] else 'not valid'}"
                                   for n in waits)
        if cond & ~(1 << C_SRCA_VALID | 1 << C_SRCB_VALID):
            return None, "busy conditions are not readable"
        return (False, "Src valid") if src is not None else (None, "the Src state was not read")
    if w.kind == "ATGETM":
        held = holders(case, view, w.fields["mutex_index"], w.thread)
        if len(held) == 1:
            return True, f"held by {trisc(held[0])}: its queue drains and its words leave it held"
        return None, "mutexes are not readable"
    return None, ""


@dataclass
class ThreadStall:
    """One thread after a hang: how far it got and, if stalled, on what."""
    thread: int
    reached: str                 # "prologue" (before the start barrier) | "case"
    stalled: bool                # its Tensix queue did not drain (or, without a probe, it did not finish)
    waits: list[tuple[Wait, str]] = field(default_factory=list)    # unmet or not ruled out, with evidence
    head: str = ""               # the debug bus's view, where the platform shows it

    def text(self) -> str:
        name = trisc(self.thread)
        head = f" [head: {self.head}]" if self.head else ""
        if self.reached == "prologue":
            return f"{name} stalled in the reset prologue (state an earlier case left){head}"
        if not self.waits:
            what = "Tensix thread stalled" if self.stalled else "stopped"
            return f"{name} {what}; no wait of the case explains it{head}"
        waits = "; or at ".join(w.text + (f" ({ev})" if ev else "") for w, ev in self.waits)
        return f"{name} waiting at {waits}{head}" + ("" if self.stalled else ": a RISC-V wait, ended by the reset")


def diagnose(case: Case, view: DeviceView) -> list[ThreadStall]:
    """The threads that did not finish, each with the waits of its case that can hold it (Tensix waits when its
    queue does not drain, RISC-V waits when it does: the reset ended those)."""
    waits = case_waits(case)
    out = []
    for t in range(THREADS):
        if view.done[t] or (view.ready[t] and not all(view.ready)):
            continue                   # finished, or waiting at the start barrier for a thread reported here
        reached = "case" if view.ready[t] else "prologue"
        stalled = True if view.drains is None else not view.drains[t]
        kinds = WAIT_WORDS if stalled else WAIT_ACTIONS
        cand = []
        for w in waits[t] if reached == "case" else ():
            if w.kind in kinds:
                state, evidence = unmet(w, view, case)
                if state is not False:
                    cand.append((w, evidence))
        head = _head_text(view.heads[t]) if stalled and view.heads.get(t) else ""
        if stalled or cand:
            out.append(ThreadStall(t, reached, stalled, cand, head))
    return out
