"""Schedule independence (tensix_diff.race, tensix_diff.happens_before, golden.schedule): a case whose observed
state depends on the thread interleaving is racy, never a divergence and never a match; a proper handshake
removes the race. The racy-case suite (tests/race_cases plus the Dest cases here) holds races the seven
sampled schedules of the former check (tests/race_sampler.py) find and races none of them shows."""
from __future__ import annotations

import copy
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from golden import isa
from golden.analysis import traced_state
from golden.core import Decoded, Tensix
from tensix_diff.result import OK, Result
from hwbridge.golden_backend import GoldenBackend
from tensix_cli.cli import main
from tensix_diff.assess import RACY, assess
from tensix_diff.case import Case, dump_case, load_bundle, load_case
from tensix_diff.happens_before import ALL, Recorder
from tensix_diff.race import Hold, _fingerprint, _run, check, reversals

from race_sampler import sampled_racy

ROOT = Path(__file__).resolve().parents[2]
PACK = load_case(ROOT / "tests" / "corpus" / "deltas" / "delta-08-packer-ystride.yaml")
MATH_WRITE = ["NOP"] * 10 + ["SFPLOADI lreg_ind=0 instr_mod0=2 imm16=0x4040",
                             "SFPSTORE lreg_ind=0 instr_mod0=6 sfpu_addr_mode=0 dest_reg_addr=0"]


def _case(name: str, math: list[str], pack_prefix: list[str]) -> Case:
    """Thread 1 (math) writes Dest row 0; thread 2 (pack) packs Dest row 0 to L1 (delta-08's packer)."""
    return replace(PACK, name=name, threads={1: isa.assemble("; ".join(math)),
                                             2: [isa.assemble_line(x) for x in pack_prefix] + PACK.threads[2]})


UNSYNCED = _case("race-unsynced", MATH_WRITE, [])
LATE_PACK = _case("race-dest-late-pack", MATH_WRITE[10:], ["NOP"] * 20)   # packs 20 instructions after the math
SYNCED = _case("race-synced", ["SEMINIT max_value=1 init_value=0 sem_sel=1"] + MATH_WRITE + ["SEMPOST sem_sel=1"],
               ["SEMWAIT stall_res=4 sem_sel=1 wait_sem_cond=1"])     # the packer waits while semaphore 0 is 0


def test_a_pack_thread_reading_dest_rows_math_writes_without_a_semaphore_is_racy():
    report = check(UNSYNCED)
    assert report.racy and report.first == "round-robin 0-1-2", report.text()
    assert report.second == "round-robin 0-1-2, thread 2 held before its step 7 until thread 1 has run 12"
    assert any(d.startswith("l1 ") for d in report.differences), report.text()


def test_the_same_pair_with_a_semaphore_handshake_is_not_racy():
    """The packer's wait blocks until the SEMPOST (an edge), so Dest's write and read are ordered; the Wait
    Gate's reads of the semaphore only decide when the packer moves: no candidate, one run."""
    report = check(SYNCED)
    assert not report.racy and report.candidates == 0 and report.tried == ["round-robin 0-1-2"], report.text()
    rec = Recorder()
    _run(SYNCED, recorder=rec)
    assert rec.candidates() == []
    waited = [s for s in rec.steps if s.waited]
    assert [(s.thread, s.local) for s in waited] == [(2, 8)] and ("semaphores", 0) in waited[0].waited
    post = next(s for s in rec.steps if s.thread == 1 and ("semaphores", 0) in s.writes and s.local > 1)
    assert waited[0].clock[1] == post.local                   # the packer's PACR is ordered after the post
    unsynced = Recorder()
    _run(UNSYNCED, recorder=unsynced)
    assert [c.part for c in unsynced.candidates()] == [("dest",)]


def test_one_thread_needs_one_schedule():
    assert check(PACK).tried == ["sequential"]


RACE_CASES = sorted((ROOT / "tests" / "race_cases").glob("*.yaml"))
SUITE = [load_case(p) for p in RACE_CASES] + [UNSYNCED, SYNCED, LATE_PACK]
MISSED_BY_SAMPLING = {"race-config-late-reader", "race-write-after-post", "race-dest-late-pack"}
NOT_RACY = {"race-benign-same-value", "race-synced"}


def test_the_racy_case_suite_holds_races_the_sampled_schedules_find_and_races_they_miss():
    sampled = {c.name: sampled_racy(c) for c in SUITE}
    assert len(RACE_CASES) >= 5 and all(len(c.threads) >= 2 for c in SUITE)
    assert {n for n, s in sampled.items() if s is None} == MISSED_BY_SAMPLING | NOT_RACY, sampled
    assert {n for n, s in sampled.items() if s} == {"race-unsynced", "race-config-two-writers", "race-mutex-order"}


def test_every_case_the_sampled_schedules_find_racy_the_analysis_finds_racy_and_more():
    reports = {c.name: check(c) for c in SUITE}
    racy = {n for n, r in reports.items() if r.racy}
    assert racy == {c.name for c in SUITE} - NOT_RACY, {n: r.text() for n, r in reports.items()}
    assert {c.name for c in SUITE if sampled_racy(c)} < racy
    assert MISSED_BY_SAMPLING <= racy
    for n in MISSED_BY_SAMPLING:        # each named by the schedule that shows it, and what differs
        assert "held before its step" in reports[n].second and reports[n].differences, reports[n].text()


def test_a_conflict_whose_reversal_changes_nothing_is_not_racy():
    """Two unordered writes of the same value conflict (a candidate), but reversing them observes nothing new."""
    report = check(load_case(ROOT / "tests" / "race_cases" / "same-value.yaml"))
    assert not report.racy and report.candidates == 1 and len(report.tried) == 1 + 1 + 6, report.text()


def test_a_mutex_makes_sections_exclusive_but_orders_nothing():
    report = check(load_case(ROOT / "tests" / "race_cases" / "mutex-order.yaml"))
    assert report.racy and "thread 0 held before its step 1 " in report.second, report.text()  # before its ATGETM
    assert report.differences == ["config state 0 [69]: expected 0x22, actual 0x11"]


def test_a_race_that_needs_two_reversals_at_once_is_found_by_the_first_run_after_the_recorded_one():
    """A literal datacopy kernel (pinned sequential): the math thread's SETRWC CLR_AB flips SrcB without waiting
    for the unpacker's UNPACR_NOP to give it the bank. One flip ahead is benign (the next UNPACR_NOP waits for
    the bank the flip handed back); two in a row leave the unpacker waiting for a bank the matrix unit holds, and
    the case hangs. No candidate reversed alone shows it, nor does any sampled schedule; every candidate of the
    pair of threads reversed at once, each at its own step, does."""
    case = load_case(ROOT / "tests" / "corpus" / "kernels" / "kernel-datacopy-bf16.yaml")
    report = check(case)
    assert report.racy and report.tried == ["round-robin 0-1-2", report.second], report.text()
    assert report.second == ("round-robin 0-1-2, thread 0 held before each of its steps 55..61 (4) until thread 1"
                             " has run 33..42 (4)")
    assert report.differences[0].startswith("status: ok vs hang"), report.differences
    rec = Recorder()
    base = _fingerprint(_run(case, recorder=rec), case)
    alone = [Hold(c.first, c.second, {c.i: c.j}) for c in rec.candidates()]
    assert len(alone) == 4 and all(_fingerprint(_run(case, hold=h), case) == base for h in alone)
    assert sampled_racy(case) is None


def test_a_hold_lifts_only_the_pair_that_cannot_be_reversed():
    """Thread 0's pair (its mailbox write, step 8 -> thread 1's step 1) cannot be reversed: thread 1's step 1
    reads that mailbox and waits for it. It is lifted; the other pair of the same hold (9 -> 36) still runs in
    the held order."""
    case = load_case(ROOT / "tests" / "corpus" / "kernels" / "kernel-datacopy-fp32-unpack-to-dest.yaml")
    rec = Recorder()
    _run(case, recorder=rec)
    hold = reversals(rec.candidates())[0]
    assert (hold.first, hold.second, hold.at) == (0, 1, {8: 1, 9: 36})
    assert _run(case, hold=hold)[0] == "ok" and hold.lifted == {8}
    assert hold.name().endswith("until thread 1 has run 1 and 36 (1 of 2 released: nothing else could move)")


def test_a_racy_case_is_never_a_divergence_nor_a_match():
    g = GoldenBackend().run(UNSYNCED)
    other = copy.deepcopy(g.state)
    other["gpr"]["0"][1] = 5                      # a device showing something else entirely
    for device in (Result(OK, g.state), Result(OK, other)):
        v = assess(UNSYNCED, g, device, ("golden", "ttsim"))
        assert v.outcome == "uncompared" and v.why == RACY


def test_a_racy_case_pinned_to_the_sequential_schedule_is_judged_and_says_so():
    """A literal kernel that relies on hardware timing may pin golden's sequential schedule (tag
    schedule:sequential): it is compared, it can diverge, and its verdict names the schedule that differs."""
    pinned = replace(UNSYNCED, tags=["schedule:sequential"])
    g = GoldenBackend().run(pinned)
    same = assess(pinned, g, Result(OK, g.state), ("golden", "ttsim"))
    assert same.outcome == "matched" and "schedule pinned to sequential" in same.message, same.message
    other = copy.deepcopy(g.state)
    other["gpr"]["0"][1] = 5
    assert assess(pinned, g, Result(OK, other), ("golden", "ttsim")).outcome == "diverged"


def test_the_race_command_explains_one_case(tmp_path, capsys):
    for c in (UNSYNCED, SYNCED):
        (tmp_path / f"{c.name}.yaml").write_text(dump_case(c))
    assert main(["race", str(tmp_path / "race-synced.yaml")]) == 0
    assert main(["race", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "race-unsynced: RACY: schedules 'round-robin 0-1-2' and 'round-robin 0-1-2, thread 2 held" in out
    assert "2 cases: 1 racy" in out


def test_generated_cases_are_never_racy():
    from generators.bulk import generate
    cases = [c for _, c in generate(11, 40, "counters")]
    assert sum(1 for c in cases if len([t for t, w in c.threads.items() if w]) > 1) >= 10
    assert not any(check(c).racy for c in cases)


def test_per_thread_parts_are_whole_and_another_threads_written_only_when_changed():
    """A step's own RWCs are read and written whole; another thread's ADCs (adc[adc_thread]) are read, and
    written only when the step changed them."""
    rec = Recorder()
    rec.attach(Tensix())
    s = rec.state

    def step(t, body):
        rec.own, traced_state.ACTIVE = t, rec
        try:
            body()
        finally:
            traced_state.ACTIVE = None
        return rec._finish()

    assert step(0, lambda: s.rwc[0]) == ({("rwc", 0): ALL}, {("rwc", 0): ALL})
    assert step(0, lambda: s.adc[1]["pack"][0].x) == ({("adc", 1): ALL}, {})

    def bump():
        s.adc[1]["pack"][0].y += 1
    assert step(0, bump) == ({("adc", 1): ALL}, {("adc", 1): ALL})


def test_a_case_every_schedule_hangs_is_not_racy_wherever_each_thread_waits():
    """A verdict judges a hang by the hang alone (both hang: matched), so schedules whose threads stop at other
    places agree; a hang in one schedule and a finished run in another still disagree."""
    held = load_case(ROOT / "tests" / "corpus" / "spec" / "stallwait-all-blocks-holds-nop.yaml")
    every = replace(held, name="race-all-hang", threads={t: held.threads[0] for t in (0, 1, 2)})
    report = check(every)
    assert not report.racy and len(report.tried) > 1, report.text()
    assert _run(every)[0] == "hang"


def test_golden_run_just_made_of_the_case_is_the_sequential_schedule_the_check_reuses(monkeypatch):
    """A verdict runs golden (sequential) and then the race check, which tries sequential too: the check takes
    golden's run of that very case; the same report either way; a machine of another class is never reused."""
    case = load_case(ROOT / "tests" / "race_cases" / "same-value.yaml")
    runs = []
    real = Tensix.run
    monkeypatch.setattr(Tensix, "run", lambda self, *a, **k: (runs.append(type(self)), real(self, *a, **k))[1])
    alone = check(case)
    n_alone = len(runs)
    runs.clear()
    GoldenBackend().run(case)
    after = check(case)
    assert after == alone and "sequential" in after.tried
    assert len(runs) == n_alone, "golden's own run plus the check's: one run fewer than both apart"

    class Planted(Tensix):
        pass
    runs.clear()
    GoldenBackend(Planted).run(case)
    assert check(case) == alone and len(runs) == 1 + n_alone     # the planted run is not the check's
    runs.clear()
    GoldenBackend().run(case)
    check(replace(case))                                        # an equal case, another object: run afresh
    assert len(runs) == 1 + n_alone


_CANDIDATES = """
import sys
from tensix_diff.case import load_bundle
from tensix_diff.happens_before import Recorder
from tensix_diff.race import Hold, _fingerprint, _run, check, reversals
case = load_bundle(sys.argv[1])[0]
rec = Recorder()
_run(case, recorder=rec)
print(rec.candidates())
print(check(case))
"""


def test_candidates_and_reports_do_not_move_with_the_hash_seed():
    """The candidates' order decides which reversals run first; it follows the run, never a set's order, which
    moves with PYTHONHASHSEED. A pipeline case with candidates on six parts, under three seeds."""
    bundle = ROOT / "tests" / "fuzz_corpus" / "ttsim-pipeline-s4100-part01.cases.jsonl.gz"
    outs = {subprocess.run([sys.executable, "-c", _CANDIDATES, str(bundle)], check=True, capture_output=True,
                           text=True, cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("0", "1", "2")}
    assert len(outs) == 1, "the candidates or the report change with the hash seed"
    assert outs.pop().count("Candidate(") > 6


def test_logged_steps_left_as_entries_give_the_candidates_and_clocks_of_steps_made_first():
    """The analysis reads the steps that reported only cells taken and their own parts from the run's log
    (happens_before.Recorder.candidates) without making them Steps; made Steps first, it must find the same
    candidates in the same order, and every step the same clock. Pipeline cases with and without candidates,
    whose logged steps read semaphores another thread sets."""
    bundle = ROOT / "tests" / "fuzz_corpus" / "ttsim-pipeline-s4100-part01.cases.jsonl.gz"
    cases = [c for c in load_bundle(bundle)[:40] if len(c.threads) > 1][::3]
    some = kept = 0
    for case in cases:
        lazy, made = Recorder(), Recorder()
        _run(case, recorder=lazy)
        _run(case, recorder=made)
        kept += sum(x.__class__ is int for x in lazy._log)
        assert made.steps and made._made == len(made._log)
        got = lazy.candidates()
        assert got == made.candidates(), case.name
        assert [(s.thread, s.local, s.section, s.clock) for s in lazy.steps] == \
               [(s.thread, s.local, s.section, s.clock) for s in made.steps], case.name
        some += bool(got)
    assert kept and 0 < some < len(cases)


def test_a_logged_steps_read_of_another_threads_write_is_a_candidate():
    """A step that only takes cells stays a log entry (Recorder.step), and candidates() reads what it took: a
    packer field thread 0 sets and thread 1 then only reads, nothing ordering them, is a candidate on the packer.
    (No corpus case has such a step: there the logged steps read synchronisation state alone.)"""
    m, rec = Tensix(), Recorder()
    rec.attach(m)

    def sets(m, t, fields):
        m.s.packer.x = m.s.packer.x + 1

    def reads(m, t, fields):
        assert m.s.packer.x == 1

    rec.step(0, Decoded(0, None, (), sets), 0)
    rec.step(1, Decoded(0, None, (), reads), 0)
    assert rec._log[-1].__class__ is int, "the reader should stay a log entry"
    got = [(c.first, c.i, c.second, c.j, c.part) for c in rec.candidates()]
    assert got == [(0, 1, 1, 1, ("packer",))]

