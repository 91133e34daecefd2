"""Hang recovery without replacing the device (a card, or ttsim under card constraints).

After a hang the worker has read the core (Device.snapshot) and holds every RISC-V core in reset
(SOFT_RESET_0; SoftReset.md: that ends a TRISC's own waits, not a Tensix thread's). Then, in rounds, a probe
(each TRISC applies its unblocking steps, waits for its Tensix queue to drain and raises its done flag; TRISC0
first reads the semaphores) shows which Tensix threads are still stalled, hwbridge.hw.stall names what holds
them, and one small handler per kind of wait picks the documented sequence that ends it (UNBLOCK). What is
still stalled after that meets the Tensix unit soft resets the platform allows, then a warm reset through
tt-umd. Every case after a hang is tainted until the health-check case matches golden bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from golden import isa
from golden.state import SEMAPHORES, THREADS
from golden.sync.sync import MUTEXES
from tensix_diff.case import Case
from tensix_diff.compare import MATCHED, judge
from tensix_diff.golden_run import run_golden
from tensix_diff.result import OK, Result

from . import l1_map as M
from . import program as hw_program, readback as hw_readback, rv32 as rv
from . import stall
from .actions import drain
from .platform import Platform
from .prologue import wait_flags
from .stall import DeviceView, ThreadStall, Wait, trisc

PROBE_ROUNDS = 4                 # unblocking rounds before the unit resets
PROBE_CYCLES = 100_000           # a probe's simulated-cycle budget (one that drains needs a few hundred)
PROBE_SECONDS = 2.0              # its wall-clock budget on a card
HEALTH_SECONDS = 5.0             # the health check's on a card (it runs in milliseconds)
HEALTH_ATTEMPTS = 3              # recoveries tried for a tainted core before giving up
SEMS_AT = M.RESULTS              # where the probe's TRISC0 stores the semaphore values
NOT_YET = "after a hang on this core; health check not yet passed"

HEALTH = Case("hw-health-check", "every thread runs: semaphores, a wait, a mutex, Dest, GPRs, RWCs, ADCs", {
    0: isa.assemble("SEMINIT max_value=2 init_value=0 sem_sel=32; SEMPOST sem_sel=32;"
                    " SEMWAIT stall_res=0 sem_sel=32 wait_sem_cond=1; SEMGET sem_sel=32;"
                    " ATGETM mutex_index=0; ATRELM mutex_index=0;"
                    " SETDMAREG payload_sigselsize=0 payload_sigsel=0x1a5a setsignalsmode=0 regindex16b=8;"
                    " SETADCXY cntsetmask=1 ch1_y=0 ch1_x=0 ch0_y=3 ch0_x=5 bitmask=3"),
    1: isa.assemble("SFPLOADI lreg_ind=0 instr_mod0=2 imm16=0x3f80;"
                    " SFPSTORE lreg_ind=0 instr_mod0=6 sfpu_addr_mode=0 dest_reg_addr=8;"
                    " SETDMAREG payload_sigselsize=0 payload_sigsel=0x1234 setsignalsmode=0 regindex16b=10;"
                    " SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=6 rwc_b=2 rwc_a=1 bitmask=7"),
    2: isa.assemble("STALLWAIT stall_res=1 wait_res=1;"
                    " SETDMAREG payload_sigselsize=0 payload_sigsel=0x77 setsignalsmode=0 regindex16b=12;"
                    " SETADCZW cntsetmask=4 ch1_y=0 ch1_x=0 ch0_y=2 ch0_x=3 bitmask=3;"
                    " INCRWC rwc_cr=0 rwc_d=2 rwc_b=1 rwc_a=3"),
})


def _t(name: str, **fields: int) -> int:
    return isa.encode(name, fields)


# --- what a round does ----------------------------------------------------------------------------------------
@dataclass
class Steps:
    """One round's unblocking: semaphore posts/gets through PC_BUF (TRISC0) and Tensix words per thread."""
    sem_ops: list[tuple[int, int]] = field(default_factory=list)      # (semaphore, 0 post | 1 get)
    words: dict[int, list[int]] = field(default_factory=dict)
    said: list[str] = field(default_factory=list)

    def sem(self, i: int, get: bool, why: str) -> None:
        self.sem_ops.append((i, int(get)))
        self.said.append(f"{'got' if get else 'posted'} semaphore {i} through PC_BUF ({why})")

    def push(self, t: int, word: int, what: str, why: str) -> None:
        self.words.setdefault(t, []).append(word)
        self.said.append(f"{what} from {trisc(t)} ({why})")


def _for(w: Wait) -> str:
    return f"for {trisc(w.thread)}'s {w.kind}"


@dataclass
class Context:
    """What the handlers know: the case, the device view, the threads whose queue drains, who may hold a mutex."""
    case: Case
    view: DeviceView
    free: list[int]
    released: set = field(default_factory=set)          # (thread, mutex) already released

    def holds(self, t: int, m: int) -> bool:
        return ((t, m) not in self.released and stall.pushed_all(self.case, self.view, t)
                and stall.mutex_held_at_end(self.case.threads.get(t, []), m))


def _semwait(w: Wait, ctx: Context, steps: Steps) -> None:
    """SEMWAIT.md / SyncUnit.md: C0 (Value == 0) ends with a post; C1 (Value >= Max) with a get, or, at Value 0
    (Max 0), a SEMINIT giving Max 1 from a thread whose queue drains."""
    for i in stall._sems(w.fields["sem_sel"]):
        v = ctx.view.sems[i]
        if w.fields["wait_sem_cond"] & stall.SEM_ZERO and v == 0:
            steps.sem(i, False, _for(w))
        elif w.fields["wait_sem_cond"] & stall.SEM_MAX and v:
            steps.sem(i, True, _for(w))
        elif w.fields["wait_sem_cond"] & stall.SEM_MAX and ctx.free:
            steps.push(ctx.free[0], _t("SEMINIT", max_value=1, init_value=0, sem_sel=1 << i),
                       f"SEMINIT semaphore {i} Value 0 Max 1", _for(w))


def _atgetm(w: Wait, ctx: Context, steps: Steps) -> None:
    """ATGETM.md / ATRELM.md: the mutex is released by the thread holding it, the one thread whose queue
    drains and whose words leave it held."""
    m = w.fields["mutex_index"]
    held = [h for h in stall.holders(ctx.case, ctx.view, m, w.thread) if (h, m) not in ctx.released]
    if len(held) == 1:
        ctx.released.add((held[0], m))
        steps.push(held[0], _t("ATRELM", mutex_index=m), f"ATRELM mutex {m}", _for(w))


def _stallwait(w: Wait, ctx: Context, steps: Steps) -> None:
    """STALLWAIT.md C7/C8 (SrcA/SrcB matrix bank valid): a thread whose queue drains hands a bank over (UNPACR_NOP
    setting the data valid, as the reset prologue does). The bank state belongs to the unpacker, not to a thread
    (SETDVALID.md), so when the unpacker thread (TRISC0) is the one waiting, another thread issues it."""
    by = next((t for t in range(THREADS) if t in ctx.free and t != w.thread), None)
    if by is None or ctx.view.src_valid is None:
        return
    for c, name, sel in ((stall.C_SRCA_VALID, "srca", 0), (stall.C_SRCB_VALID, "srcb", 1)):
        if w.fields["wait_res"] >> c & 1 and not ctx.view.src_valid[name]:
            steps.push(by, _t("UNPACR_NOP", unpacker_select=sel, set_dvalid=1, unpack_pop=1),
                       f"UNPACR_NOP set_dvalid on Src{'AB'[sel]}", _for(w))


UNBLOCK = {"SEMWAIT": _semwait, "ATGETM": _atgetm, "STALLWAIT": _stallwait}


def plan(stalls: list[ThreadStall], ctx: Context) -> Steps:
    """The steps that end the waits holding the stalled threads (RISC-V waits need none: the reset ended them)."""
    steps = Steps()
    for s in stalls:
        for w, _ in s.waits if s.stalled else ():
            UNBLOCK[w.kind](w, ctx, steps)
    return steps


def release_mutexes(ctx: Context) -> Steps:
    """Once every queue drains: ATRELM from each thread whose words leave a mutex held (a clean core holds none)."""
    steps = Steps()
    for t in range(THREADS):
        for m in MUTEXES:
            if ctx.holds(t, m):
                ctx.released.add((t, m))
                steps.push(t, _t("ATRELM", mutex_index=m), f"ATRELM mutex {m}", "its words leave it held")
    return steps


# --- the probe --------------------------------------------------------------------------------------------------
def probe_program(t: int, steps: Steps) -> rv.Program:
    """TRISC t: (TRISC0: read every semaphore, then post/get) push its words, drain, raise its done flag; TRISC0
    raises the all-done flag once every thread has."""
    p = rv.Program(M.TRISC_RESET_PC[t])
    if t == 0:
        p.li(rv.T0, M.PC_BUF_SEMAPHORE).li(rv.T2, SEMS_AT)
        for i in range(SEMAPHORES):
            p.emit(rv.lw(rv.T1, rv.T0, 4 * i), rv.sw(rv.T1, rv.T2, 4 * i))
        for i, get in steps.sem_ops:
            p.li(rv.T1, get).emit(rv.sw(rv.T1, rv.T0, 4 * i), rv.lw(rv.T1, rv.T0, 4 * i))   # read back: landed
    p.tensix_words(steps.words.get(t, []))
    drain(p)
    p.li(rv.T0, M.DONE + 4 * t).li(rv.T1, M.DONE_TOKEN).emit(rv.sw(rv.T1, rv.T0, 0))
    if t == 0:
        wait_flags(p, M.DONE, range(1, THREADS), "others_done", M.DONE_TOKEN)
        p.li(rv.T0, M.ALL_DONE).li(rv.T1, M.DONE_TOKEN).emit(rv.sw(rv.T1, rv.T0, 0))
    p.label("park").jump("park")
    return p


def probe_job(steps: Steps, max_cycles: int = PROBE_CYCLES) -> dict:
    """The probe as a worker job (Device.run's keys): what it leaves is read whether or not it finishes."""
    reads = [(M.FLAGS, M.FLAG_BYTES), (SEMS_AT, 4 * SEMAPHORES)]
    regs = [(M.TRISC_RESET_PC_REG[t], M.TRISC_RESET_PC[t]) for t in range(THREADS)]
    return {"name": "hang recovery probe", "zero": [], "regs": regs + [(M.TRISC_RESET_PC_OVERRIDE, (1 << THREADS) - 1)],
            "writes": [(M.FLAGS, bytes(M.FLAG_BYTES))] + [(M.TRISC_RESET_PC[t], probe_program(t, steps).to_bytes())
                                                         for t in range(THREADS)],
            "reads": reads, "stall_reads": reads, "release": M.RESET_ALL & ~sum(M.RESET_TRISC),
            "done_addr": M.ALL_DONE, "done_value": M.DONE_TOKEN, "max_cycles": max_cycles}


def snapshot_payload(job: hw_program.Job, plat: Platform) -> dict:
    """A case's worker payload with what a hang snapshots: the flag block and the debug-bus stall reads."""
    return {**job.payload(), "stall_reads": [(M.FLAGS, M.FLAG_BYTES)], "stall_dbus": stall.dbus_reads(plat),
            "dbus_readback": bool(plat.raw.get("dbus_select_readable", False))}


def view_of(snapshot: dict | None, plat: Platform) -> DeviceView:
    """The device view a hang's snapshot gives (before any probe); without one, nothing finished."""
    if not snapshot:
        return DeviceView([True] * THREADS, [False] * THREADS)
    view = DeviceView(*stall.flags(snapshot["l1"][0]))
    if snapshot.get("dbus"):
        view.src_valid, view.heads = stall.decode_dbus(plat, snapshot["dbus"])
    return view


# --- the health check -------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _golden_health() -> Result:
    return run_golden(HEALTH)


def health_check(worker, plat: Platform, max_cycles: int, timeout: float) -> str:
    """'' when the health-check case matches golden bit for bit on the core; else why not."""
    job = hw_program.build(HEALTH, plat)
    job.max_cycles = max_cycles
    reply = worker.run(snapshot_payload(job, plat), timeout)
    if reply.status != "ok":
        return "it hung" if reply.status == "hang" else f"{reply.status}: {reply.message}"[:160]
    state = hw_readback.decode(job, reply.blobs, plat)
    v = judge(_golden_health(), Result(OK, state=state, unobservable=plat.unobservable() + job.unobserved_config),
              ("golden", "hw"))
    return "" if v.outcome == MATCHED else v.message.splitlines()[0][:160]


# --- the whole recovery -----------------------------------------------------------------------------------------
@dataclass
class Report:
    stalled: list[str] = field(default_factory=list)     # what held each stalled thread
    steps: list[str] = field(default_factory=list)       # what was done, in order
    drained: bool = False                                # every Tensix queue drained in the end
    health: str | None = None                            # '' passed, a reason failed, None not run

    def summary(self) -> str:
        health = {None: "health check not run", "": "health check passed"}.get(self.health,
                                                                                f"health check failed: {self.health}")
        return (f"stalled: {'; '.join(self.stalled) or 'no thread named'}; "
                f"recovery: {'; '.join(self.steps) or 'nothing to unblock'}; {health}")

    def taint(self) -> str:
        """Why later cases are tainted ('' once the health check passed)."""
        return "" if self.health == "" else NOT_YET if self.health is None else f"health check failed: {self.health}"

    def provenance(self) -> dict:
        return {"stalled": self.stalled, "recovery": self.steps, "drained": self.drained,
                "health_check": "passed" if self.health == "" else self.health or "not run"}


class Recovery:
    """Hang recovery for one worker: ``after_hang`` for a hang, ``retry`` while later cases stay tainted."""

    def __init__(self, worker, plat: Platform, max_cycles: int, timeout: float):
        self.worker, self.plat, self.max_cycles, self.timeout = worker, plat, max_cycles, timeout
        self.attempts = 0

    def _probe(self, steps: Steps) -> tuple[list[bool], list[int]] | None:
        reply = self.worker.run(probe_job(steps), self.timeout if self.plat.clocked_by_host else PROBE_SECONDS)
        blobs = reply.blobs if reply.status == "ok" else (reply.snapshot or {}).get("l1")
        if not blobs:
            return None
        done = stall.flags(blobs[0])[1]
        return done, [int.from_bytes(blobs[1][4 * i:4 * i + 4], "little") for i in range(SEMAPHORES)]

    def after_hang(self, case: Case, snapshot: dict | None) -> Report:
        """Name the stalled threads, unblock them, reset what the platform allows, then run the health check."""
        self.attempts = 0
        return self._recover(case, snapshot)

    def retry(self) -> str:
        """Another recovery (no case to name waits from) and health check for a tainted core: '' once it passes."""
        self.attempts += 1
        if self.attempts > HEALTH_ATTEMPTS:
            return f"health check failed {HEALTH_ATTEMPTS} more times; reset the device"
        return self._recover(Case("no case", "", {}), None).taint()

    def _recover(self, case: Case, snapshot: dict | None) -> Report:
        rep = Report()
        view = view_of(snapshot, self.plat)
        ctx = Context(case, view, [])
        steps = Steps()
        for k in range(PROBE_ROUNDS + 1):
            seen = self._probe(steps)
            rep.steps += steps.said
            if seen is None:
                rep.steps.append("the probe did not run")
                return rep
            view.drains, view.sems = seen
            ctx.free = [t for t in range(THREADS) if view.drains[t]]
            stalls = stall.diagnose(case, view)
            if k == 0:
                rep.stalled = [s.text() for s in stalls]
            if all(view.drains):
                rep.drained = True
                steps = release_mutexes(ctx)
                if not steps.said:
                    break
                continue
            steps = plan(stalls, ctx)
            if not steps.said:
                break
        if not rep.drained:
            self._resets(rep)
        rep.health = self._health(rep)
        return rep

    def _resets(self, rep: Report) -> None:
        """Tensix unit soft resets where the platform allows them, then a warm reset; each followed by a probe."""
        bits = int(self.plat.raw.get("tensix_soft_reset", 0))
        if bits:
            self.worker.call("reset_units", bits)
            rep.steps.append(f"Tensix unit soft reset (SOFT_RESET_0 {bits:#x})")
        else:
            rep.steps.append(f"no Tensix unit soft reset on {self.plat.name}")
        seen = self._probe(Steps()) if bits else None
        if seen and all(seen[0]):
            rep.drained = True
            return
        why = self.worker.call("warm_reset")
        rep.steps.append(why or "warm reset through tt-umd")
        if not why:
            self.worker.stop()          # tt-exalens's view of the chip is stale: reopen it
            self.worker.start()
            rep.drained = True

    def _health(self, rep: Report) -> str:
        try:
            return health_check(self.worker, self.plat, self.max_cycles,
                                self.timeout if self.plat.clocked_by_host else min(self.timeout, HEALTH_SECONDS))
        except RuntimeError as e:
            rep.steps.append(f"health check could not run: {e}")
            return f"{e}"[:160]
