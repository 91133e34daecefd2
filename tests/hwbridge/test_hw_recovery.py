"""Hang recovery's logic without a device: how a hang is told from a slow simulator, what a hung core's view
names, which documented sequence each wait gets, the probe's code, and what a tainted result is worth."""
from __future__ import annotations

import itertools

import pytest

from golden import isa
from hwbridge.golden_backend import GoldenBackend
from hwbridge.hw import l1_map as M, recovery, stall
from hwbridge.hw.device import Device
from hwbridge.hw.platform import load
from hwbridge.hw.worker import Reply
from tensix_diff.assess import assess
from tensix_diff.case import Case, parse_case
from tensix_diff.compare import UNCOMPARED, judge
from tensix_diff.result import OK, TAINTED, Result
from tensix_diff.store import Store

SEMWAIT3 = isa.assemble("SEMWAIT stall_res=0 sem_sel=8 wait_sem_cond=1")


def _device(clock) -> Device:
    dev = object.__new__(Device)          # no device: _wait only clocks and polls the done flag (a hang holds)
    dev.clock = clock
    dev.noc0s = dev.translateds = dev.xys = [(1, 2)]
    dev.read32 = lambda addr: 0
    dev.write32 = lambda addr, value: None
    return dev


def _wait(dev: Device, job: dict, timeout: float) -> tuple:
    replies: dict = {}
    dev._wait({0: job}, [0], timeout, replies.__setitem__)
    return replies[0][:2]


def test_a_card_that_does_not_finish_hangs_and_a_slow_simulator_is_a_timeout():
    job = {"done_addr": M.ALL_DONE, "done_value": M.DONE_TOKEN, "max_cycles": 10**12}
    status, message = _wait(_device(None), job, 0.01)
    assert status == "hang" and message == "timeout: the case did not finish within 0.01 s"
    status, message = _wait(_device(lambda n: None), job, 0.01)
    assert status == "timeout" and "the simulator ran" in message
    status, message = _wait(_device(lambda n: None), {**job, "max_cycles": 50_000}, 60.0)
    assert status == "hang" and "simulated cycles" in message


def _view(**kw) -> stall.DeviceView:
    view = stall.DeviceView(ready=kw.pop("ready", [True] * 3), done=kw.pop("done", [True] * 3))
    for k, v in kw.items():
        setattr(view, k, v)
    return view


def test_a_stalled_thread_is_named_with_the_wait_the_device_leaves_unmet():
    case = Case("c", "", {1: isa.assemble("SEMWAIT stall_res=0 sem_sel=6 wait_sem_cond=1")})
    view = _view(done=[True, False, True], drains=[True, False, True], sems=[0, 4, 0, 0, 0, 0, 0, 0])
    s, = stall.diagnose(case, view)
    assert s.text() == "TRISC1 waiting at SEMWAIT sem 1, 2, wait while 0 (semaphore 1 reads 4, semaphore 2 reads 0)"
    view.sems = [0, 4, 1, 0, 0, 0, 0, 0]           # both posted: nothing of the case explains the stall
    assert stall.diagnose(case, view)[0].text() == "TRISC1 Tensix thread stalled; no wait of the case explains it"


def test_a_thread_stuck_before_the_barrier_is_in_the_prologue_and_the_waiting_ones_are_not_named():
    view = _view(ready=[False, True, True], done=[False] * 3, drains=[False, True, True], sems=[0] * 8)
    assert [s.text() for s in stall.diagnose(Case("c", "", {1: SEMWAIT3}), view)] == [
        "TRISC0 stalled in the reset prologue (state an earlier case left)"]


def test_the_debug_bus_head_instruction_is_shown_where_the_platform_has_it():
    plat = load("blackhole")
    reads = stall.dbus_reads(plat)
    value = {(1, 8, 1): (SEMWAIT3[0] & 0xFFFFFF) << 8, (1, 8, 2): SEMWAIT3[0] >> 24, (1, 8, 0): 0x100000,
             (7, 15, 1): 0x16C0A4}
    src, heads = stall.decode_dbus(plat, [value.get(r, 0) for r in reads])
    assert src == {"srca": False, "srcb": False}
    view = _view(done=[True, False, True], drains=[True, False, True], sems=[0] * 8, heads=heads)
    s, = stall.diagnose(Case("c", "", {1: SEMWAIT3}), view)
    assert s.text() == ("TRISC1 waiting at SEMWAIT sem 3, wait while 0 (semaphore 3 reads 0) [head: SEMWAIT"
                        " stall_res=0 sem_sel=8 wait_sem_cond=1 (debug bus, PC 0x16c0a4; stalled sync)]")
    assert not stall.dbus_reads(load("ttsim"))[4:]      # ttsim: the Src group only (anything else stops it)


def _plan(case: Case, view: stall.DeviceView) -> recovery.Steps:
    ctx = recovery.Context(case, view, [t for t in range(3) if view.drains[t]])
    return recovery.plan(stall.diagnose(case, view), ctx)


@pytest.mark.parametrize("cond, sem3, said", [
    (1, 0, "posted semaphore 3 through PC_BUF (for TRISC1's SEMWAIT)"),
    (2, 2, "got semaphore 3 through PC_BUF (for TRISC1's SEMWAIT)"),
    (2, 0, "SEMINIT semaphore 3 Value 0 Max 1 from TRISC0 (for TRISC1's SEMWAIT)"),
])
def test_each_semaphore_wait_gets_its_documented_sequence(cond, sem3, said):
    case = Case("c", "", {1: isa.assemble(f"SEMWAIT stall_res=0 sem_sel=8 wait_sem_cond={cond}")})
    steps = _plan(case, _view(done=[True, False, True], drains=[True, False, True], sems=[0, 0, 0, sem3, 0, 0, 0, 0]))
    assert steps.said == [said]


def test_a_held_mutex_is_released_by_its_one_holder_then_by_the_waiter_that_took_it():
    case = Case("c", "", {0: isa.assemble("ATGETM mutex_index=0"), 1: isa.assemble("ATGETM mutex_index=0")})
    view = _view(done=[False, True, False], drains=[False, True, True], sems=[0] * 8)
    ctx = recovery.Context(case, view, [1, 2])
    steps = recovery.plan(stall.diagnose(case, view), ctx)
    assert steps.said == ["ATRELM mutex 0 from TRISC1 (for TRISC0's ATGETM)"]
    assert steps.words == {1: isa.assemble("ATRELM mutex_index=0")}
    view.drains = [True] * 3
    assert recovery.release_mutexes(ctx).said == ["ATRELM mutex 0 from TRISC0 (its words leave it held)"]
    assert recovery.release_mutexes(ctx).said == []          # once each


def test_a_thread_that_may_not_have_pushed_its_atgetm_is_never_asked_to_release():
    """ttsim stops on an ATRELM from a thread not holding the mutex: a thread with RISC-V actions that did not
    finish may have stopped pushing before its ATGETM."""
    case = parse_case("""name: c
threads:
  0:
    - ATGETM mutex_index=0
  1:
    - mailbox_read: {from: 2, gpr: 1}
    - ATGETM mutex_index=0
""")
    view = _view(done=[False, False, True], drains=[False, True, True], sems=[0] * 8)
    assert _plan(case, view).said == []


def test_a_src_valid_wait_is_ended_by_the_unpacker_thread():
    case = Case("c", "", {1: isa.assemble("STALLWAIT stall_res=1 wait_res=0x80")})
    view = _view(done=[True, False, True], drains=[True, False, True], sems=[0] * 8,
                 src_valid={"srca": False, "srcb": True})
    steps = _plan(case, view)
    assert steps.said == ["UNPACR_NOP set_dvalid on SrcA from TRISC0 (for TRISC1's STALLWAIT)"]


def test_a_src_valid_wait_on_the_unpacker_thread_is_ended_by_another_thread():
    """The Src bank state is the unpacker's, not a thread's (SETDVALID.md): TRISC0 waiting, TRISC1 hands it over."""
    case = Case("c", "", {0: isa.assemble("STALLWAIT stall_res=0x1FF wait_res=0x80; NOP")})
    view = _view(done=[False, True, True], drains=[False, True, True], sems=[0] * 8,
                 src_valid={"srca": False, "srcb": False})
    assert _plan(case, view).said == ["UNPACR_NOP set_dvalid on SrcA from TRISC1 (for TRISC0's STALLWAIT)"]
    view.drains = [False, False, False]
    assert _plan(case, view).said == []                       # no thread left to issue it


def test_the_probe_reads_every_semaphore_then_posts_and_pushes_before_its_drain():
    steps = recovery.Steps()
    steps.sem(3, False, "x")
    steps.sem(5, True, "x")
    atrelm = isa.assemble("ATRELM mutex_index=0")[0]
    steps.push(2, atrelm, "ATRELM", "x")
    words0 = recovery.probe_program(0, steps).assemble()
    loads = [w for w in words0 if w & 0x707F == 0x2003]          # lw
    stores = [w for w in words0 if w & 0x707F == 0x2023]         # sw
    assert len(loads) >= 8 + 2 + 1                               # 8 semaphores, 2 read-backs, the drain
    assert len(stores) >= 8 + 2 + 2                              # 8 copies, post and get, done and all-done
    words2 = recovery.probe_program(2, steps).assemble()
    assert isa.to_stream(atrelm) in words2 and isa.to_stream(atrelm) not in words0
    job = recovery.probe_job(steps)
    assert job["reads"] == job["stall_reads"] == [(M.FLAGS, M.FLAG_BYTES), (recovery.SEMS_AT, 32)]
    assert job["zero"] == [] and job["release"] == M.RESET_ALL & ~sum(M.RESET_TRISC)


def test_the_health_check_case_is_golden_clean_and_uses_every_thread():
    r = recovery._golden_health()
    assert r.status == OK and set(recovery.HEALTH.threads) == {0, 1, 2}


class _Worker:
    """Replies in order; records what it was sent."""

    def __init__(self, replies):
        self.replies, self.sent, self.calls = iter(replies), [], []

    def run(self, job, timeout=None):
        self.sent.append(job)
        return next(self.replies)

    def call(self, service, *args):
        self.calls.append(service)
        return "no warm reset here" if service == "warm_reset" else None


def _flags(done) -> bytes:
    words = [1, 1, 1, 0] + [M.DONE_TOKEN if d else 0 for d in done] + [0] * 9
    return b"".join(w.to_bytes(4, "little") for w in words)


def test_a_hang_nothing_unblocks_leaves_the_core_tainted_until_a_health_check_passes():
    hung = Reply("hang", message="x", snapshot={"l1": [_flags([True, False, True]), bytes(32)], "dbus": []})
    worker = _Worker(itertools.chain([hung] * 2, [Reply("hang", message="x", snapshot=None)]))
    rec = recovery.Recovery(worker, load("blackhole"), 1000, 1.0)
    rep = rec.after_hang(Case("c", "", {1: isa.assemble("STALLWAIT stall_res=1 wait_res=0x1")}),
                         {"l1": [_flags([True, False, True])], "dbus": []})
    assert rep.stalled == ["TRISC1 waiting at STALLWAIT conditions 0x1 (busy conditions are not readable)"]
    assert rep.steps == ["Tensix unit soft reset (SOFT_RESET_0 0xfb84ff)", "no warm reset here"]
    assert worker.calls == ["reset_units", "warm_reset"] and not rep.drained
    assert rep.taint() == "health check failed: it hung"
    assert rep.provenance()["health_check"] == "it hung"


def test_a_tainted_result_is_uncompared_with_its_why_and_never_recorded(tmp_path):
    case = Case("c", "", {0: isa.assemble("SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=5 rwc_b=3 rwc_a=2 bitmask=7")})
    tainted = Result(TAINTED, message=recovery.NOT_YET, provenance={"device": "ttsim 1.10.0"})
    golden = GoldenBackend().run(case)
    for v in (judge(golden, tainted, ("golden", "hw")), assess(case, golden, tainted, ("golden", "hw"))):
        assert v.outcome == UNCOMPARED and v.why == "after a hang on this core; health check not yet passed"
    assert Store(tmp_path).record(case, tainted, "all") is None
