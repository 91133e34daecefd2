"""Card isolation's analysis (hwbridge/hw/leftovers.py) and clean-up job (cleanup.py), without a device: what
golden's end state says each kind of leftover is, the clean-up each gets, the check of a clean-up on golden, the
cases nothing can isolate, and the TRISC code and host writes of the clean-up job."""
from __future__ import annotations

from golden import isa
from golden.isa import to_stream
from hwbridge.hw import cleanup, l1_map as M, leftovers as L
from hwbridge.hw.platform import load
from tensix_diff.case import Case, parse_case

TTSIM, SILICON = load("ttsim"), load("blackhole")


def _case(name: str, threads: dict[int, str]) -> Case:
    return Case(name, "", {t: isa.assemble(text) for t, text in threads.items()})


def _acting(plan: L.Plan) -> list[tuple[str, list[L.Step]]]:
    return [(f.text, f.steps) for f in plan.acting]


def test_each_kind_is_read_from_golden_end_state_with_its_clean_up():
    sfppopc, atrelm = isa.encode("SFPPOPC", {}), isa.encode("ATRELM", {"mutex_index": 0})
    p = L.plan(_case("flags", {1: "SFPPUSHC; SFPPUSHC; SFPPUSHC; SFPPOPC"}), TTSIM)
    assert _acting(p) == [("SFPU flag stack depth 2", [L.Step(0, sfppopc)] * 2)] and p.refuse is None
    p = L.plan(_case("mutex", {2: "ATGETM mutex_index=0"}), TTSIM)
    assert _acting(p) == [("mutex 0 held by thread 2", [L.Step(2, atrelm)])]
    released = L.plan(_case("mutex-released", {2: "ATGETM mutex_index=0; ATRELM mutex_index=0"}), TTSIM)
    assert released.golden == "ok" and released.found == []
    p = L.plan(_case("semwait", {2: "SEMINIT max_value=1 init_value=0 sem_sel=1;"
                                    " SEMWAIT stall_res=1 sem_sel=1 wait_sem_cond=1"}), TTSIM)
    (text, steps), = _acting(p)
    assert text == "thread 2 wait latched (semaphore 0 is 0)"
    assert [(s.thread, s.action.kind, s.action.args) for s in steps] == [(2, "sem_post", (0,))]
    assert "semaphore 0 = 0 (max 1)" in p.predicted           # the prologue's SEMINIT resets it: no step
    p = L.plan(_case("full", {1: "SEMINIT max_value=1 init_value=1 sem_sel=4;"
                                 " SEMWAIT stall_res=1 sem_sel=4 wait_sem_cond=2"}), TTSIM)
    assert [(s.thread, s.action.kind, s.action.args) for s in p.steps()] == [(1, "sem_get", (2,))]
    p = L.plan(_case("stallwait", {1: "STALLWAIT stall_res=1 wait_res=0x80"}), TTSIM)
    assert p.steps() == [L.Step(0, isa.encode("UNPACR_NOP", {"unpacker_select": 0, "set_dvalid": 1, "unpack_pop": 1}))]


def test_the_packer_clean_up_repeats_the_last_pacr_with_last_from_its_thread():
    from test_hw_leaks import _delta08
    p = L.plan(_delta08(0), TTSIM)
    (text, steps), = _acting(p)
    pacr = [w for w in _delta08(1).threads[2] if w >> 24 == isa.lookup("PACR").opcode]
    assert text.startswith("packer mid-row at L1 0x10130") and steps == [L.Step(2, pacr[-1])]
    assert L.plan(_delta08(1), TTSIM).found == []


def test_mailboxes_are_read_where_a_risc_reset_keeps_them():
    case = parse_case("name: x\nthreads:\n  0:\n    - mailbox_write: {to: 1, value: 7}\n")
    (text, steps), = _acting(L.plan(case, TTSIM))
    assert text == "mailbox 0 -> 1 holds 0x7" and [(s.thread, s.action.kind) for s in steps] == [(1, "mailbox_read")]
    on_silicon = L.plan(case, SILICON)
    assert on_silicon.acting == [] and on_silicon.predicted == ["mailbox 0 -> 1 holds 0x7"]


def test_prologue_kinds_are_predicted_but_need_no_clean_up():
    p = L.plan(_case("all", {1: "MOP_CFG zmask_hi16=0xffff; REPLAY start_idx=0 len=4 execute_while_loading=0"
                                " load_mode=1; NOP; SFPPUSHC; SFPPOPC"}), TTSIM)
    assert p.predicted == ["thread 1 replay load pending (entries to come: 1)", "thread 1 MOP mask top half 0xffff"]
    assert p.acting == []
    assert L.plan(_case("nothing", {1: "MOP_CFG zmask_hi16=0xffff"}), TTSIM) is L.NOTHING   # golden not run


def test_a_clean_up_that_golden_says_falls_short_is_caught():
    case = _case("flags", {1: "SFPPUSHC; SFPPUSHC; SFPPUSHC"})
    m = L.Watched()
    m.run(case.threads)
    pop = L.Step(1, isa.encode("SFPPOPC", {}))
    short = L.Found("sfpu-flag-stack", "SFPU flag stack depth 3", "two pops", [pop] * 2)
    assert L.verify(m, case, TTSIM, [short]) == "the clean-up leaves SFPU flag stack depth 1"
    too_many = L.Found("sfpu-flag-stack", "", "", [pop] * 4)
    assert "cannot run on golden" in L.verify(m, case, TTSIM, [too_many])


def test_what_golden_cannot_predict_is_refused_unless_a_blind_clean_up_exists():
    # STALLWAIT ConditionMask=0 is not modelled by golden: no end state
    flags = _case("blind-flags", {1: "SFPPUSHC; STALLWAIT stall_res=1 wait_res=0"})
    on_ttsim = L.plan(flags, TTSIM)
    assert on_ttsim.golden == "not-modelled" and "latched-wait, sfpu-flag-stack" in on_ttsim.refuse
    assert on_ttsim.predicted[0] == "golden: not-modelled (no end state)"
    mutex = L.plan(_case("blind-mutex", {0: "ATGETM mutex_index=0; UNPACR last=0"}), SILICON)
    assert "mutex, unpacker-continuation" in mutex.refuse
    only_flags = L.plan(_case("blind-sfpu", {1: "SFPPUSHC; SFPPUSHC; SFPPOPC; SFPPOPC; SFPPOPC"}), SILICON)
    assert only_flags.golden == "undefined-behaviour" and only_flags.refuse is None
    assert only_flags.reset_units() == L.SFPU_RESET == 0x400 and only_flags.regs() == []
    assert L.plan(_case("blind-sfpu", {1: "SFPPUSHC; SFPPOPC; SFPPOPC"}), TTSIM).refuse   # ttsim: no unit reset


def test_a_golden_hang_is_left_to_hang_recovery():
    p = L.plan(_case("hang", {0: "ATGETM mutex_index=0", 1: "ATGETM mutex_index=0"}), TTSIM)
    assert p.golden == "hang" and p.refuse is None and p.acting == []


def test_feature_disable_is_reset_by_a_host_write():
    case = parse_case("name: x\nthreads:\n  1:\n    - feature_disable: 0x800\n")
    p = L.plan(case, SILICON)       # golden does not model the value: no end state, but the write clears it
    assert p.refuse is None and p.regs() == [(M.DBG_FEATURE_DISABLE, 0)]


def test_the_clean_up_job_runs_each_step_on_its_thread_then_signals_done():
    p = L.plan(_case("many", {0: "ATGETM mutex_index=0", 1: "SFPPUSHC; SFPPUSHC",
                              2: "SEMINIT max_value=1 init_value=0 sem_sel=2; SEMWAIT stall_res=1 sem_sel=2"
                                 " wait_sem_cond=1"}), TTSIM)
    job = cleanup.job("many", p)
    assert job.zero == [] and job.reads == [] and job.done_addr == M.ALL_DONE and job.max_cycles == cleanup.MAX_CYCLES
    code = {t: cleanup.thread_program(t, [s for s in p.steps() if s.thread == t]).assemble() for t in range(3)}
    assert code[0].count(to_stream(isa.encode("ATRELM", {"mutex_index": 0}))) == 1
    assert code[0].count(to_stream(isa.encode("SFPPOPC", {}))) == 2
    sem = M.PC_BUF_SEMAPHORE + 4
    assert any(w >> 12 == (sem + 0x800) >> 12 for w in code[2] if w & 0x7F == 0x37)     # lui of the post's address
    assert dict(job.writes)[M.TRISC_RESET_PC[2]] == cleanup.thread_program(2, [s for s in p.steps()
                                                                               if s.thread == 2]).to_bytes()
    from test_hw_ttsync import decode, violations
    mail = L.plan(parse_case("name: x\nthreads:\n  0:\n    - mailbox_write: {to: 1, value: 7}\n"), TTSIM)
    for t in range(3):      # the waits and PC_BUF/mailbox loads follow ManualTTSync.md, as the case programs do
        for plan in (p, mail):
            assert violations(decode(cleanup.thread_program(t, [s for s in plan.steps() if s.thread == t])
                                     .assemble())) == [], f"thread {t}"
    assert cleanup.describe(p) == ["SFPU flag stack depth 2: SFPPOPC x2 from thread 0",
                                   "mutex 0 held by thread 0: ATRELM 0 from thread 0",
                                   "thread 2 wait latched (semaphore 1 is 0): semaphore 1 posted through PC_BUF"
                                   " by thread 2"]
