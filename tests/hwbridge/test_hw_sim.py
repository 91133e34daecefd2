"""The hw backend on ttsim: observation round trips, isolation of faults, and no state leaking between cases.

Needs a libttsim.so (Blackhole build, outside this repository): ``pytest --simulator=PATH`` or
``TENSIX_DIFF_SIMULATOR=PATH``; skipped otherwise.
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys

import pytest

from golden import isa
from tensix_diff.result import DEVICE_ERROR, OK, REFUSED
from hwbridge.golden_backend import GoldenBackend
from tensix_diff.case import Case, Init, Observe, dump_case
from tensix_diff.compare import MATCHED, compare, judge
from tensix_diff.store import Store


@pytest.fixture(scope="module")
def hw(sim_path):
    from hwbridge.hw.backend import HwBackend
    backend = HwBackend(sim_path)
    yield backend
    backend.close()


def _words(text: str) -> list[int]:
    return isa.assemble(text)


ONE = _words("SETDMAREG payload_sigselsize=0 payload_sigsel=0x1234 setsignalsmode=0 regindex16b=8;"
             " SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=5 rwc_b=3 rwc_a=2 bitmask=7")


def _agree(case: Case, result) -> None:
    verdict = judge(GoldenBackend().run(case), result, ("golden", "hw"))
    assert verdict.outcome == MATCHED, verdict.report()


def test_one_case_gprs_rwcs_and_a_dest_row(hw):
    case = Case("hw-one", "", {0: ONE}, init=Init(dest=[(5, list(range(100, 116)))]))
    r = hw.run(case)
    assert r.status == OK, r.message
    assert r.state["gpr"]["0"][4] == 0x1234
    assert {k: r.state["rwc"]["0"][k] for k in ("srca", "srcb", "dst")} == {"srca": 2, "srcb": 3, "dst": 5}
    assert r.state["dest"][5].tolist() == list(range(100, 116)) and r.state["dest"][4].tolist() == [0] * 16
    assert r.provenance["device"].startswith("ttsim") and r.provenance["device_kind"] == "simulator"
    assert "dest_valid" not in r.state and "dest_valid" in r.unobservable
    _agree(case, r)


def test_initial_state_round_trips(hw):
    rng = random.Random(20)
    init = Init(
        gpr={t: {i: rng.randrange(1 << 32) for i in rng.sample(range(64), 20)} for t in range(3)},
        config={0: {12: rng.randrange(1 << 32), 13: rng.randrange(1 << 32)}, 1: {14: rng.randrange(1 << 32)}},
        l1=[(0x30000, bytes(rng.randrange(256) for _ in range(64)))],
        dest=[(r, [rng.randrange(1 << 16) for _ in range(16)]) for r in sorted(rng.sample(range(1024), 24))],
    )
    case = Case("hw-roundtrip", "", {}, init=init, observe=Observe(l1=[(0x30000, 64), (0x40000, 16)]))
    r = hw.run(case)
    assert r.status == OK, r.message
    st = r.state
    for t in range(3):
        assert [st["gpr"][str(t)][i] for i in sorted(init.gpr[t])] == [init.gpr[t][i] for i in sorted(init.gpr[t])]
    assert st["config"] == {"0": {"12": init.config[0][12], "13": init.config[0][13]}, "1": {"14": init.config[1][14]}}
    assert st["l1"] == {"0x30000": init.l1[0][1].hex(), "0x40000": "00" * 16}
    rows = dict(init.dest)
    assert st["dest"].tolist() == [rows.get(r, [0] * 16) for r in range(1024)]
    _agree(case, r)


def test_a_simulator_exit_is_a_refusal_and_the_next_case_runs(hw):
    starts = hw.worker.starts
    bad = Case("hw-srnd", "", {0: []}, init=Init(config={0: {1: 0x2}}))   # stochastic rounding: ttsim stops
    r = hw.run(bad)
    assert r.status == REFUSED and "ERROR: UnsupportedFunctionality" in r.message
    assert r.provenance["refused_by"] == "simulator"
    ok = hw.run(Case("hw-after", "", {0: ONE}))
    assert ok.status == OK and ok.state["gpr"]["0"][4] == 0x1234
    assert hw.worker.starts == starts + 1


def test_a_case_that_never_finishes_is_a_hang(hw):
    r = hw.run(Case("hw-wait", "", {0: _words("SEMWAIT stall_res=0 sem_sel=1 wait_sem_cond=1")}))
    assert r.status == "hang" and "simulated cycles" in r.message
    assert hw.run(Case("hw-after-hang", "", {0: ONE})).status == OK


def test_a_worker_killed_from_outside_is_a_device_error(hw):
    hw.run(Case("hw-warm", "", {0: ONE}))
    os.kill(hw.worker.pid, signal.SIGKILL)
    r = hw.run(Case("hw-killed", "", {0: ONE}))
    assert r.status == DEVICE_ERROR and "exited" in r.message
    assert hw.run(Case("hw-after-kill", "", {0: ONE})).status == OK


# --- no leaks: a case observes the same state after any other case as on a fresh worker -------------
PROBES = {
    "probe-matmul": {1: _words(
        "SETC16 setc16_reg=12 setc16_value=0x0800; SETC16 setc16_reg=28 setc16_value=0x0008;"
        " UNPACR_NOP unpacker_select=0 set_dvalid=1 unpack_pop=1; UNPACR_NOP unpacker_select=1 set_dvalid=1 unpack_pop=1;"
        " .word 0x26000000; .word 0x26000000;"
        " SETRWC clear_ab_vld=3 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=0")},
    "probe-sfpu": {1: _words(
        "SFPLOAD lreg_ind=0 instr_mod0=6 sfpu_addr_mode=0 dest_reg_addr=4;"
        " SFPSTORE lreg_ind=0 instr_mod0=6 sfpu_addr_mode=0 dest_reg_addr=8;"
        " SFPSTORE lreg_ind=11 instr_mod0=7 sfpu_addr_mode=0 dest_reg_addr=16")},
    "probe-scalar": {0: _words(
        "RDCFG gpraddress=5 cfgreg=12; ADDDMAREG opbisconst=0 resultregindex=6 opbregindex=3 oparegindex=5;"
        " SETADCXY cntsetmask=1 ch1_y=0 ch1_x=0 ch0_y=1 ch0_x=2 bitmask=3; INCRWC rwc_cr=0 rwc_d=3 rwc_b=1 rwc_a=1"),
        2: _words("SEMINIT max_value=2 init_value=1 sem_sel=4; SEMPOST sem_sel=4; SEMGET sem_sel=4")},
}
DIRTY = {
    "dirty-src-banks": {1: _words("UNPACR_NOP unpacker_select=0 set_dvalid=1 unpack_pop=1;"
                                  " UNPACR_NOP unpacker_select=1 set_dvalid=1 unpack_pop=1")},   # left valid
    "dirty-thread-config": {t: _words(
        "SETC16 setc16_reg=0 setc16_value=1; SETC16 setc16_reg=1 setc16_value=8; SETC16 setc16_reg=7 setc16_value=3;"
        " SETC16 setc16_reg=12 setc16_value=0x1111; SETC16 setc16_reg=28 setc16_value=0x0004") for t in range(3)},
    "dirty-sfpu": {1: _words(
        "SFPLOADI lreg_ind=0 instr_mod0=2 imm16=0x104; SFPCONFIG imm16_math=0 config_dest=11 instr_mod1=0;"
        " SFPLOADI lreg_ind=3 instr_mod0=2 imm16=0x77; SFPENCC imm12_math=0 lreg_c=0 lreg_dest=0 instr_mod1=10")},
    "dirty-counters": {t: _words(
        "SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=9 rwc_b=5 rwc_a=3 bitmask=15;"
        " SETADCXY cntsetmask=7 ch1_y=3 ch1_x=1 ch0_y=2 ch0_x=1 bitmask=15;"
        " SETADCZW cntsetmask=7 ch1_y=3 ch1_x=1 ch0_y=2 ch0_x=1 bitmask=15;"
        " SEMINIT max_value=7 init_value=5 sem_sel=1") for t in range(3)},
    "dirty-dest": {1: _words("ZEROACC clear_mode=3 use_32_bit_mode=0 clear_zero_flags=0 addr_mode=0 where=0;"
                             " SFPLOADI lreg_ind=0 instr_mod0=2 imm16=0xbeef;"
                             " SFPSTORE lreg_ind=0 instr_mod0=6 sfpu_addr_mode=0 dest_reg_addr=4")},
}


def _dirty_init() -> Init:
    return Init(gpr={t: {i: 0xA5A5A5A5 for i in range(64)} for t in range(3)},
                config={0: {12: 0xFFFFFFFF, 72: 0x5, 1: 0x0AAA0000}, 1: {12: 0x12345678}},
                thread_config={1: {2: 1, 3: 1}}, l1=[(0x30000, b"\xff" * 256)],
                dest=[(r, [0xFFFF] * 16) for r in range(0, 1024, 37)])


def _generated(profiles=("default", "arith", "counters", "regfile", "scalar"), per=2) -> list[Case]:
    from generators.bulk import generate_one
    return [generate_one(77, i, p) for p in profiles for i in range(per)]


def test_no_state_leaks_between_cases(hw):
    """Hand-made dirty cases hit every state the prologue resets; generated ones are arbitrary."""
    probes = [Case(n, "", p, observe=Observe(l1=[(0x30000, 64)], config={0: [12], 1: [12]}))
              for n, p in PROBES.items()] + _generated(("arith", "counters"), 1)
    dirty = [Case(n, "", p, init=_dirty_init()) for n, p in DIRTY.items()] + _generated()
    for probe in probes:
        hw.worker.stop()                       # the next run starts a fresh worker
        fresh = hw.run(probe)
        assert fresh.status == OK, f"{probe.name}: {fresh.message}"
        for d in dirty:
            assert hw.run(d).status == OK, d.name   # a dirty case that failed would restart the worker
            again = hw.run(probe)
            assert again.status == OK, f"{probe.name} after {d.name}: {again.status} {again.message}"
            c = compare(fresh.state, again.state)
            assert c.matched, f"{probe.name} after {d.name}: {c.summary()}"


def test_record_command_writes_labelled_recordings(sim_path, tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "a.yaml").write_text(dump_case(Case("hw-rec-a", "", {0: ONE})))
    (cases / "b.yaml").write_text(dump_case(Case("hw-rec-b", "", {0: []}, init=Init(config={0: {1: 0x2}}))))
    store = tmp_path / "store"
    out = subprocess.run([sys.executable, "-m", "tensix_cli.cli", "record", str(cases), "--simulator", sim_path,
                          "--simulator-version", "9.9.9", "--recordings", str(store)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    recs = [Store(store).get(h) for h in Store(store).hashes()]
    assert sorted(r.status for r in recs) == [OK, REFUSED]
    for r in recs:
        assert r.provenance["device"] == "ttsim 9.9.9" and r.provenance["device_kind"] == "simulator"
        assert r.provenance["harness"] and r.provenance["date"] and r.provenance["core"]
