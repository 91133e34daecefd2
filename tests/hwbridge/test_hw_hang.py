"""Hangs on a core that is never replaced (``isolation="card"``, as on a card), proven on ttsim in one process:
the hang is status ``hang`` with the stalled thread named, the core is recovered in place, and every later
case gets an honest verdict: the state it shows alone, or tainted (uncompared, with why) until a health check
passes. Needs a Blackhole libttsim.so (``pytest --backend=hw --simulator=PATH``); skipped otherwise.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from golden import isa
from hwbridge.golden_backend import GoldenBackend
from tensix_diff.assess import assess
from tensix_diff.case import Case, dump_case, parse_case
from tensix_diff.compare import DIVERGED, MATCHED, UNCOMPARED
from tensix_diff.result import OK, TAINTED, same_value
from tensix_diff.store import Store

HANG_CYCLES = 200_000          # a case needs ~62K; the hanging ones spend this budget


@pytest.fixture(scope="module")
def card(sim_path):
    from hwbridge.hw.backend import HwBackend
    with HwBackend(sim_path, isolation="card", max_cycles=HANG_CYCLES) as backend:
        yield backend


@pytest.fixture(scope="module")
def fresh(sim_path):
    """The reference: the same cases on a simulator replaced after anything that may leave state."""
    from hwbridge.hw.backend import HwBackend
    with HwBackend(sim_path, isolation="replace") as backend:
        yield backend


def _clean(n: int) -> list[Case]:
    from generators.bulk import generate_one
    profiles = ("default", "arith", "counters", "regfile", "scalar")
    return [generate_one(2401, i, profiles[i % len(profiles)]) for i in range(n)]


def _honest_after(card, fresh, cases: list[Case]) -> list[str]:
    """Run ``cases`` on the card backend; each must show exactly what it shows on a fresh simulator and get a
    verdict that is a match (or what it gets alone), never a divergence; returns the outcomes."""
    golden, out = GoldenBackend(), []
    for c in cases:
        r, alone = card.run(c), fresh.run(c)
        assert r.status == alone.status == OK, f"{c.name}: {r.status} {r.message}"
        assert same_value(r.state, alone.state), f"{c.name}: differs from the case alone"
        v = assess(c, golden.run(c), r, ("golden", "hw"))
        assert v.outcome not in (DIVERGED,), f"{c.name}: {v.report()}"
        assert v.outcome == assess(c, golden.run(c), alone, ("golden", "hw")).outcome
        out.append(v.outcome)
    return out


def test_a_semwait_never_posted_is_a_hang_then_20_clean_cases_are_honest(card, fresh):
    hang = Case("hang-semwait", "", {1: isa.assemble("SEMWAIT stall_res=0 sem_sel=8 wait_sem_cond=1")})
    r = card.run(hang)
    assert r.status == "hang", r.message
    assert "simulated cycles" in r.message
    assert "TRISC1 waiting at SEMWAIT sem 3, wait while 0 (semaphore 3 reads 0)" in r.message
    prov = r.provenance["hang"]
    assert prov["stalled"] == ["TRISC1 waiting at SEMWAIT sem 3, wait while 0 (semaphore 3 reads 0)"]
    assert prov["recovery"] == ["posted semaphore 3 through PC_BUF (for TRISC1's SEMWAIT)"]
    assert prov["drained"] and prov["health_check"] == "passed" and card.taint == [""]
    starts = card.worker.starts
    outcomes = _honest_after(card, fresh, _clean(20))
    assert outcomes == [MATCHED] * 20, outcomes
    assert card.worker.starts == starts          # one process throughout: nothing was replaced


def test_an_atgetm_on_a_held_mutex_names_the_holder_and_releases_it(card, fresh):
    both = Case("hang-mutex", "", {0: isa.assemble("ATGETM mutex_index=0"), 1: isa.assemble("ATGETM mutex_index=0")})
    r = card.run(both)
    assert r.status == "hang", r.message
    stalled, = r.provenance["hang"]["stalled"]          # one of the two got it first; the other waits
    waiter, holder = (0, 1) if stalled.startswith("TRISC0") else (1, 0)
    assert stalled == (f"TRISC{waiter} waiting at ATGETM mutex 0 (held by TRISC{holder}: its queue drains and"
                       " its words leave it held)")
    assert r.provenance["hang"]["recovery"] == [f"ATRELM mutex 0 from TRISC{holder} (for TRISC{waiter}'s ATGETM)",
                                                f"ATRELM mutex 0 from TRISC{waiter} (its words leave it held)"]
    assert r.provenance["hang"]["health_check"] == "passed"
    user = Case("mutex-user", "", {1: isa.assemble(
        "ATGETM mutex_index=0; SETDMAREG payload_sigselsize=0 payload_sigsel=0x99 setsignalsmode=0 regindex16b=8;"
        " ATRELM mutex_index=0")})
    assert _honest_after(card, fresh, [user] + _clean(3))[0] == MATCHED


def test_a_nop_held_by_an_all_blocks_stallwait_on_trisc0_is_released_by_another_thread(card, fresh):
    """TRISC0, the unpacker thread, is the one waiting for SrcA valid: TRISC1 hands the bank over."""
    held = Case("hang-stallwait-t0", "", {0: isa.assemble("STALLWAIT stall_res=0x1FF wait_res=0x80; NOP")})
    r = card.run(held)
    assert r.status == "hang", r.message
    prov = r.provenance["hang"]
    assert prov["stalled"] == ["TRISC0 waiting at STALLWAIT conditions 0x80 (SrcA matrix bank not valid)"]
    assert prov["recovery"] == ["UNPACR_NOP set_dvalid on SrcA from TRISC1 (for TRISC0's STALLWAIT)"]
    assert prov["drained"] and prov["health_check"] == "passed" and card.taint == [""]
    starts = card.worker.starts
    assert _honest_after(card, fresh, _clean(3)) == [MATCHED] * 3
    assert card.worker.starts == starts


def test_risc_v_waits_are_named_and_ended_by_the_reset(card, fresh):
    case = parse_case("""name: hang-risc-waits
threads:
  1:
    - mailbox_read: {from: 0, gpr: 9}
  2:
    - sem_wait: {sem: 2, until: '>= 1'}
""")
    r = card.run(case)
    assert r.status == "hang"
    assert r.provenance["hang"]["stalled"] == [
        "TRISC1 waiting at {mailbox_read: {from: 0, gpr: 9}}: a RISC-V wait, ended by the reset",
        'TRISC2 waiting at {sem_wait: {sem: 2, until: ">= 1"}} (semaphore 2 reads 0): a RISC-V wait,'
        ' ended by the reset']
    assert r.provenance["hang"]["health_check"] == "passed"
    _honest_after(card, fresh, _clean(2))


def test_a_hang_nothing_unblocks_taints_every_later_case(card, tmp_path):
    """Every thread waits for semaphore 3 to drop below its Max 0: no thread is free to SEMINIT it, ttsim has
    no unit soft reset and no warm reset, so the health check fails and the cases after it are tainted."""
    stuck = Case("hang-all", "", {t: isa.assemble("SEMWAIT stall_res=0 sem_sel=8 wait_sem_cond=2") for t in range(3)})
    r = card.run(stuck)
    assert r.status == "hang" and len(r.provenance["hang"]["stalled"]) == 3
    assert r.provenance["hang"]["recovery"] == [
        "no Tensix unit soft reset on ttsim",
        "no warm reset under ttsim: tt-umd's WarmReset resets PCIe devices and a simulator has none"]
    assert r.provenance["hang"]["health_check"] == "it hung"
    golden, store = GoldenBackend(), Store(tmp_path)
    for c in _clean(3):
        t = card.run(c)
        assert t.status == TAINTED and t.state is None
        v = assess(c, golden.run(c), t, ("golden", "hw"))
        assert v.outcome == UNCOMPARED and v.why.startswith("health check failed"), v.message
        assert store.record(c, t, "all") is None            # never recorded


def test_record_keeps_tainted_cases_out_of_the_store(sim_path, tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    stuck = Case("rec-stuck", "", {t: isa.assemble("SEMWAIT stall_res=0 sem_sel=8 wait_sem_cond=2") for t in range(3)})
    (cases / "a.yaml").write_text(dump_case(stuck))
    (cases / "b.yaml").write_text(dump_case(Case("rec-after", "", {0: isa.assemble(
        "SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=5 rwc_b=3 rwc_a=2 bitmask=7")})))
    store = tmp_path / "store"
    out = subprocess.run([sys.executable, "-m", "tensix_cli.cli", "record", str(cases), "--simulator", sim_path,
                          "--simulator-version", "9.9.9", "--isolation", "card", "--recordings", str(store)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 3, out.stdout + out.stderr
    assert "tainted rec-after: health check failed: it hung" in out.stdout
    assert [Store(store).get(h).status for h in Store(store).hashes()] == ["hang"]


def test_replace_mode_still_replaces_the_simulator_and_names_the_thread_unprobed(fresh):
    starts = fresh.worker.starts
    r = fresh.run(Case("hang-replace", "", {1: isa.assemble("SEMWAIT stall_res=0 sem_sel=8 wait_sem_cond=1")}))
    assert r.status == "hang" and "simulated cycles" in r.message
    assert r.provenance["hang"] == {"stalled": ["TRISC1 waiting at SEMWAIT sem 3, wait while 0"],
                                    "recovery": ["a fresh simulator"]}
    assert fresh.worker.starts > starts          # replaced (the SEMWAIT also counts as leaving state)
    assert fresh.run(_clean(1)[0]).status == OK
