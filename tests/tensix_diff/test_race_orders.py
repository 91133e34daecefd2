"""The orders the race check proves beyond blocked waits (tensix_diff.happens_before, tensix_diff.passed_waits):
a wait that passed without blocking, semaphore counts that commute, Config by bits, Dest by rows. Each ordered
case below needs its recorded run alone (the former analysis left it a race candidate and ran every sampled
schedule); each racy variant beside it is still found racy."""
from __future__ import annotations

from dataclasses import replace

from golden import isa
from tensix_diff.case import Case
from tensix_diff.case.model import Init
from tensix_diff.happens_before import Recorder
from tensix_diff.passed_waits import counts
from tensix_diff.race import _run, check

WAIT = "SEMWAIT stall_res=0x1ff sem_sel=1 wait_sem_cond=1"       # every block held while semaphore 0 is 0
LATE = ["NOP"] * 8                                               # the reader arrives after the writer is done


def _case(name: str, writer: list[str], reader: list[str], config: dict | None = None) -> Case:
    return Case(name=name, description=name, threads={0: isa.assemble("; ".join(writer)),
                                                      1: isa.assemble("; ".join(reader))},
                init=Init(gpr={0: {1: 0x11, 2: 0x22}}, config={0: config or {69: 0, 70: 0}}))


def _candidates(case: Case) -> list:
    rec = Recorder()
    _run(case, recorder=rec)
    return rec.candidates()


# Thread 0 writes word 69 and posts; thread 1, late, waits while the semaphore is 0 and reads word 69. Its
# wait never blocks in the recorded run (the post came long before), yet it could not pass without the post.
PASSED = _case("order-passed-wait", ["WRCFG gpraddress=1 wr128b=0 cfgreg=69", "SEMPOST sem_sel=1"],
               LATE + [WAIT, "RDCFG gpraddress=3 cfgreg=69"])
# ... and a second write after the post, which the wait does not order (race-write-after-post, arriving late)
PASSED_RACY = _case("order-passed-wait-racy", ["WRCFG gpraddress=1 wr128b=0 cfgreg=69", "SEMPOST sem_sel=1",
                                               "WRCFG gpraddress=2 wr128b=0 cfgreg=69"],
                    LATE + [WAIT, "RDCFG gpraddress=3 cfgreg=69"])


def test_a_wait_that_passed_without_blocking_orders_what_came_before_the_post():
    rec = Recorder()
    _run(PASSED, recorder=rec)
    assert not any(s.waited for s in rec.steps)            # no wait blocked: the former rule had no edge
    assert rec.candidates() == []
    passed = [p for s in rec.steps for p in s.passed]
    assert passed and all(p.held for p in passed)
    report = check(PASSED)
    assert not report.racy and report.tried == ["round-robin 0-1-2"], report.text()


def test_a_passed_wait_does_not_order_a_write_after_the_post():
    report = check(PASSED_RACY)
    assert report.racy and "held before its step" in report.second, report.text()
    assert report.differences == ["thread 1 r3: expected 0x22, actual 0x11"] or report.differences, report.text()


# Two tiles through a semaphore of two: thread 0 initialises it, writes word 69, posts, writes word 70, posts;
# thread 1, late, waits, reads 69, gets, waits, reads 70, gets. Its second wait passed after its own first
# get; the first get and the second post are unordered, but counts of one commute away from the bounds.
_PRODUCER = ["SEMINIT max_value=2 init_value=0 sem_sel=1", "WRCFG gpraddress=1 wr128b=0 cfgreg=69",
             "SEMPOST sem_sel=1", "WRCFG gpraddress=2 wr128b=0 cfgreg=70", "SEMPOST sem_sel=1"]
TILES = _case("order-counted-semaphore", _PRODUCER,
              LATE + [WAIT, "RDCFG gpraddress=3 cfgreg=69", "SEMGET sem_sel=1",
                      WAIT, "RDCFG gpraddress=4 cfgreg=70", "SEMGET sem_sel=1"])
# ... without the second wait, the read of word 70 may come before its write
TILES_RACY = _case("order-counted-semaphore-racy", _PRODUCER,
                   LATE + [WAIT, "RDCFG gpraddress=3 cfgreg=69", "SEMGET sem_sel=1",
                           "RDCFG gpraddress=4 cfgreg=70", "SEMGET sem_sel=1"])


def test_semaphore_counts_of_two_threads_commute_and_a_passed_wait_after_a_count_is_ordered():
    assert _candidates(TILES) == []
    report = check(TILES)
    assert not report.racy and report.tried == ["round-robin 0-1-2"], report.text()


def test_a_read_the_semaphore_does_not_guard_stays_racy():
    report = check(TILES_RACY)
    assert report.racy and report.differences, report.text()
    assert ("config", 0) in {c.part for c in _candidates(TILES_RACY)}     # and the second get may meet 0


def test_counts_that_may_meet_a_bound_are_not_taken_to_commute():
    """counts: a count down is safe only when the counts up that precede it in every schedule keep the Value
    at 1 or more; a SEMGET the post does not precede could meet 0."""
    class S:
        def __init__(self, thread, local, clock, counting=True):
            self.thread, self.local, self.clock, self.counting = thread, local, clock, counting
    post, get_after, get_unordered = S(0, 1, (1, 0, 0, 0)), S(1, 1, (1, 1, 0, 0)), S(1, 1, (0, 1, 0, 0))
    assert counts([post, get_after], [(0, 0, 1), (1, 1, 0)], 2)
    assert not counts([post, get_unordered], [(0, 0, 1), (1, 1, 0)], 2)


# Config by bits: RMWCIB of two threads on distinct bytes of one word commute; on the same byte they race.
def test_config_writes_of_distinct_bytes_of_one_word_do_not_conflict():
    disjoint = _case("order-config-bytes", ["RMWCIB0 mask=255 data=0x11 cfgregaddr=69"],
                     ["RMWCIB1 mask=255 data=0x22 cfgregaddr=69"])
    assert _candidates(disjoint) == []
    assert check(disjoint).tried == ["round-robin 0-1-2"]
    same = replace(disjoint, name="order-config-same-byte",
                   threads={0: disjoint.threads[0], 1: isa.assemble("RMWCIB0 mask=255 data=0x22 cfgregaddr=69")})
    report = check(same)
    assert report.racy and report.differences == ["config state 0 [69]: expected 0x22, actual 0x11"], report.text()


def test_a_wait_for_both_src_banks_is_ordered_after_the_srcb_unpack_its_first_tries_never_reached():
    """A reduce kernel's GMPOOL waits for the SrcA bank, then the SrcB bank. Its first probe tries blocked at
    SrcA, so they never read SrcB's parts; the kinds of parts its waits read are taken only from a try that
    passed them all, so a later GMPOOL, which would block only without the SrcB unpack, is ordered after it
    (the former analysis left that pair a candidate and ran 14 schedules)."""
    from pathlib import Path
    from tensix_diff.case import load_bundle
    bundle = Path(__file__).resolve().parents[2] / "tests/fuzz_corpus/ttsim-pipeline-s4100-part01.cases.jsonl.gz"
    case = next(c for c in load_bundle(bundle) if c.name == "fuzz-pipeline-s4100-00080")
    assert _candidates(case) == []
    report = check(case)
    assert not report.racy and report.tried == ["round-robin 0-1-2"], report.text()
