"""Schedule independence (tensix_diff.race, golden.schedule): a case whose observed state depends on the
thread interleaving is racy, never a divergence and never a match; a proper handshake removes the race."""
from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

from golden import isa
from tensix_diff.result import OK, Result
from hwbridge.golden_backend import GoldenBackend
from tensix_cli.cli import main
from tensix_diff.assess import RACY, assess
from tensix_diff.case import Case, dump_case, load_case
from tensix_diff.race import check

ROOT = Path(__file__).resolve().parents[2]
PACK = load_case(ROOT / "tests" / "corpus" / "deltas" / "delta-08-packer-ystride.yaml")
MATH_WRITE = ["NOP"] * 10 + ["SFPLOADI lreg_ind=0 instr_mod0=2 imm16=0x4040",
                             "SFPSTORE lreg_ind=0 instr_mod0=6 sfpu_addr_mode=0 dest_reg_addr=0"]


def _case(name: str, math: list[str], pack_prefix: list[str]) -> Case:
    """Thread 1 (math) writes Dest row 0; thread 2 (pack) packs Dest row 0 to L1 (delta-08's packer)."""
    return replace(PACK, name=name, threads={1: isa.assemble("; ".join(math)),
                                             2: [isa.assemble_line(x) for x in pack_prefix] + PACK.threads[2]})


UNSYNCED = _case("race-unsynced", MATH_WRITE, [])
SYNCED = _case("race-synced", ["SEMINIT max_value=1 init_value=0 sem_sel=1"] + MATH_WRITE + ["SEMPOST sem_sel=1"],
               ["SEMWAIT stall_res=4 sem_sel=1 wait_sem_cond=1"])     # the packer waits while semaphore 0 is 0


def test_a_pack_thread_reading_dest_rows_math_writes_without_a_semaphore_is_racy():
    report = check(UNSYNCED)
    assert report.racy and report.first == "sequential" and report.second.startswith("round-robin")
    assert any(d.startswith("l1 ") for d in report.differences), report.text()


def test_the_same_pair_with_a_semaphore_handshake_is_not_racy():
    report = check(SYNCED)
    assert not report.racy, report.text()
    assert len(report.tried) == 1 + 2 + 4        # sequential, both round-robin orders, four random


def test_one_thread_needs_one_schedule():
    assert check(PACK).tried == ["sequential"]


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
    assert "race-unsynced: RACY: schedules 'sequential' and 'round-robin" in out and "2 cases: 1 racy" in out


def test_generated_cases_are_never_racy():
    from generators.bulk import generate
    cases = [c for _, c in generate(11, 40, "counters")]
    assert sum(1 for c in cases if len([t for t, w in c.threads.items() if w]) > 1) >= 10
    assert not any(check(c).racy for c in cases)
