"""The hw self-check (hwbridge/hw/selftest.py, ``tensix-diff selftest``).

Without a device: the self-check's cases reach the values they plan on golden, build for both platforms, and
the Dest-window model follows Dst.md; the command refuses bad usage with exit 2. With one
(``pytest -m selftest --backend=hw [--simulator=PATH]``): every check passes (or is skipped where the
platform lacks what it needs), a wrong platform layout fails, and the command's exit status and lines.
"""
from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from golden.core import Tensix
from golden.dest_view import adj32
from golden.registers import config_field
from golden.state import ADC_UNITS, MATRIX_UNIT
from hwbridge.golden_backend import GoldenBackend
from hwbridge.hw import probe, program, selftest_cases as C
from hwbridge.hw.platform import load
from hwbridge.hw.selftest import CHECKS, FAIL, OK_, SKIP, Selftest, rwc_layout_result
from tensix_cli.cli import main
from tensix_diff.golden_run import apply_init

PLATFORMS = ("ttsim", "blackhole")


def _golden(case):
    r = GoldenBackend().run(case)
    assert r.status == "ok", r.message
    return r.state


# --- no device ------------------------------------------------------------------------------------
def test_rwc_layout_case_sets_each_field_to_its_planned_value():
    plan = C.rwc_plan()
    values = [v for p in plan.values() for v in p.values()]
    assert len(set(values)) == 18
    rwc = _golden(C.rwc_layout_case())["rwc"]
    assert {t: {f: rwc[str(t)][f] for f in C.RWC_FIELDS} for t in range(3)} == plan
    assert rwc_layout_result(rwc, "golden")[0] == OK_


def test_rwc_layout_result_names_the_field_a_value_belongs_to():
    rwc = {str(t): dict(p) for t, p in C.rwc_plan().items()}
    rwc["1"]["srca"] = C.rwc_plan()[1]["srca_cr"]
    status, detail = rwc_layout_result(rwc, "x")
    assert status == FAIL and "thread 1 srca read" in detail and "the value planned for thread 1 srca_cr" in detail


def test_counters_case_sets_fidelity_and_every_shown_adc_field():
    st = _golden(C.counters_case())
    assert [st["rwc"][str(t)]["fidelity"] for t in range(3)] == [1, 2, 3]
    plan = C.adc_plan()
    shown = {"unpack0": "0", "unpack1": "0", "pack": "2"}
    seen = []
    for unit in ADC_UNITS:
        for ch in range(2):
            got = st["adc"][shown[unit]][unit][str(ch)]
            for dim in "xyzw":
                cr, inc = plan[(unit, ch, dim)]
                assert (got[f"{dim}_cr"], got[dim]) == (cr, cr + inc), (unit, ch, dim)
                seen += [got[f"{dim}_cr"] & 0xFF, got[dim] & 0xFF]
    assert len(set(seen)) == len(seen)        # distinct even in the 8 bits the chain shows of Z/W


def test_thread_config_case_moves_every_counter():
    rwc = _golden(C.thread_config_case())["rwc"]
    moved = [rwc[str(t)][f] for t in range(3) for f in ("srca", "srcb", "dst")]
    assert all(moved) and len(set(moved)) == len(moved)


def _src_state(case):
    m = Tensix()
    apply_init(m.s, case)
    m.run(case.threads, case.actions)
    return tuple((int(f.banks[0].allowed_client == MATRIX_UNIT), int(f.banks[1].allowed_client == MATRIX_UNIT),
                  f.matrix_bank, f.unpacker_bank) for f in (m.s.srca, m.s.srcb))


def test_src_states_tell_every_pair_of_bits_apart_and_end_fresh():
    states = [_src_state(c) for c in C.src_cases()]
    for src in range(2):
        for i in range(4):
            for j in range(i + 1, 4):
                assert any(s[src][i] != s[src][j] for s in states), (src, i, j)
    assert states[-1] == ((0, 0, 0, 0), (0, 0, 0, 0)) and list(C.SRC_STATES)[-1] == "fresh"
    assert any(s[0] != s[1] for s in states)        # SrcA and SrcB bits differ somewhere


def test_dest_slices_cover_every_row_with_distinct_values():
    cells = [(r, c, v) for case in C.dest16_cases() for r, vals in case.init.dest for c, v in enumerate(vals)]
    assert sorted({r for r, _, _ in cells}) == list(range(1024))
    assert len({v for _, _, v in cells}) == len(cells) == 1024 * 16


@pytest.mark.parametrize("name", PLATFORMS)
def test_every_selftest_case_builds(name):
    plat = load(name)
    cases = (C.dest16_cases() + [C.dest32_case(), C.gpr_case(), C.rwc_layout_case(), C.counters_case(),
             C.thread_config_case()] + C.src_cases() + C.config_cases(plat) + C.l1_cases())
    for case in cases:
        program.build(case, plat)            # raises Refusal (too big, a register the platform refuses)
        _golden(case)


def test_config_values_keep_out_of_fields_ttsim_refuses():
    plat = load("ttsim")
    written, control = C.config_words(plat)
    assert written and control and not set(written) & set(control)
    refused = [config_field(n) for n in plat.raw["config_zero_fields"]]
    for case in C.config_cases(plat):
        for st, words in case.init.config.items():
            for i, v in words.items():
                assert not any(f.index == i and v & f.mask for f in refused), (st, i)
    values = [v for v in C.config_cases(plat)[0].init.config[0].values() if v]
    assert len(set(values)) == len(values) > 20


def test_window_model_follows_dst_md():
    rng = np.random.default_rng(5)
    dest = rng.integers(0, 1 << 16, size=(1024, 16)).tolist()
    raw = probe.window_model(dest, 0, no_swizzle=True)
    swz = probe.window_model(dest, 0, no_swizzle=False)
    for r in (0, 7, 8, 100, 511):
        hi = adj32(r, False, False)
        for c in (0, 15):
            v = dest[hi][c] << 16 | dest[hi + 8][c]
            assert raw[16 * r + c] == v
            # Dst.md Load32: from Dst32b bit layout to CPU bit layout
            assert swz[16 * r + c] == (v & 0x8000FFFF) | ((v & 0x7F000000) >> 8) | ((v & 0x00FF0000) << 7)
    remap = probe.REMAP.put(0, 1)
    assert probe.window_model(dest, remap, True)[16 * 8] == dest[adj32(8, True, False)][0] << 16 \
        | dest[adj32(8, True, False) + 8][0]


def test_probe_jobs_run_trisc0_alone_and_fit():
    from hwbridge.hw import l1_map as M
    for job in (probe.window_job(False), probe.window_job(True), probe.dbus_job([(6, 9), (3, 2)])):
        code = dict(job.writes)[M.TRISC_RESET_PC[0]]
        assert len(code) < M.CODE_SIZE[0] and job.release == M.RESET_ALL & ~M.RESET_TRISC[0]
        assert not job.zero and job.reads[0][0] == M.RESULTS
        assert M.RESULTS + job.reads[0][1] <= M.RESULTS_END


def test_src_bits_decode_the_platform_positions():
    plat = load("ttsim")
    bits = plat.raw["src_state_bits"]
    word = 1 << (bits["srca"]["valid1"] - 64) | 1 << (bits["srcb"]["unpack_bank"] - 64)    # words 2 and 3
    got = probe.src_bits([0, 0, word & 0xFFFFFFFF, word >> 32], plat)
    assert got["srca"] == {"valid0": 0, "valid1": 1, "matrix_bank": 0, "unpack_bank": 0}
    assert got["srcb"] == {"valid0": 0, "valid1": 0, "matrix_bank": 0, "unpack_bank": 1}


def test_platform_tables_say_whether_there_is_a_dest_window():
    assert load("ttsim").raw["dest_window"] is False and load("blackhole").raw["dest_window"] is True


@pytest.mark.parametrize("argv", [["selftest", "--checks", "nonesuch"], ["selftest", "--backend", "golden"],
                                  ["selftest", "--simulator", "/nonexistent/libttsim.so"]])
def test_usage_mistakes_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tensix-diff: error:")


class _WindowStub:
    """A device whose read-back is golden's and whose Dest window returns ``window(dest, no_swizzle)``."""

    def __init__(self, window):
        from types import SimpleNamespace
        self.platform = dataclasses.replace(load("blackhole"), raw={**load("blackhole").raw, "dest_window": True})
        self.window = window
        self.worker = SimpleNamespace(conn=object(), starts=1, run=self._probe)
        self.dest = None

    def run(self, case):
        r = GoldenBackend().run(case)
        self.dest = r.state["dest"]
        return r

    def _probe(self, job):
        from types import SimpleNamespace
        words = self.window(self.dest, job.name.endswith("-raw")).astype("<u4")
        return SimpleNamespace(status="ok", blobs=[words.tobytes()], message="")


def test_dest_window_check_passes_a_window_that_follows_dst_md_and_names_a_wrong_word():
    from hwbridge.hw.selftest import check_dest32_window
    good = _WindowStub(lambda dest, raw: probe.window_model(dest, 0, raw))
    status, detail = check_dest32_window(Selftest(good))
    assert status == OK_ and "either path" in detail, detail

    def one_wrong(dest, raw):
        w = probe.window_model(dest, 0, raw).copy()
        w[16 * 130 + 3] ^= 1 << 20
        return w
    status, detail = check_dest32_window(Selftest(_WindowStub(one_wrong)))
    assert status == FAIL and "Dst32b row 130 col 3" in detail and "fmt 0, swizzled" in detail, detail


def test_dest_window_check_says_to_use_the_window_when_dbg_array_rd_loses_low_halves():
    """The Wormhole behaviour tt-exalens works around: DBG_ARRAY_RD returning zeros for the low 16 bits."""
    from hwbridge.hw.selftest import check_dest32_window
    stub = _WindowStub(lambda dest, raw: probe.window_model(dest, 0, raw))
    golden_run = stub.run

    def run(case):
        r = golden_run(case)
        st = dict(r.state)
        st["dest"] = [row if (i // 8) % 2 == 0 else [0] * 16 for i, row in enumerate(r.state["dest"])]
        return dataclasses.replace(r, state=st)
    stub.run = run
    status, detail = check_dest32_window(Selftest(stub))
    assert status == OK_ and "DBG_ARRAY_RD differs: read a 32-bit Dest through the window" in detail, detail


def test_the_note_settles_an_unverified_table_only_when_its_checks_ran():
    from types import SimpleNamespace
    from hwbridge.hw.selftest import SETTLES, platform_note
    bh = load("blackhole")
    all_ok = SimpleNamespace(plat=bh, settled={n: True for n in SETTLES})
    assert "set 'verified: true' in hwbridge/hw/platforms/blackhole.yaml" in platform_note(all_ok)
    one_bad = SimpleNamespace(plat=bh, settled={**all_ok.settled, "src-bits": False})
    assert "src-bits failed" in platform_note(one_bad) and "stays unverified" in platform_note(one_bad)
    assert platform_note(SimpleNamespace(plat=bh, settled={"rwc-layout": True})) is None    # not all ran
    assert platform_note(SimpleNamespace(plat=load("ttsim"), settled=all_ok.settled)) is None


def test_the_selftest_marker_is_registered(pytestconfig):
    assert any(m.startswith("selftest:") for m in pytestconfig.getini("markers"))


# --- on a device (pytest -m selftest --backend=hw [--simulator=PATH]) -------------------------------
@pytest.fixture(scope="module")
def selftest(backend):
    return Selftest(backend)


@pytest.mark.hw
@pytest.mark.selftest
@pytest.mark.parametrize("name", list(CHECKS))
def test_selftest_check(selftest, name):
    (outcome,) = selftest.run([name])
    if outcome.status == SKIP:
        pytest.skip(outcome.detail)
    assert outcome.status == OK_, outcome.line()


@pytest.mark.hw
def test_a_wrong_rwc_layout_fails_the_check(backend):
    """The blackhole table's RWC positions differ from ttsim's for SrcA/SrcB of threads 1 and 2: decoding a
    ttsim run with them must fail and name a field (on a card, with ttsim's positions if they differ)."""
    other = "blackhole" if backend.platform.name == "ttsim" else "ttsim"
    right = backend.platform
    layout = load(other).raw["rwc_layout"]
    if layout == right.raw["rwc_layout"]:
        pytest.skip(f"the {other} table places every RWC field as {right.name} does")
    backend.platform = dataclasses.replace(right, raw={**right.raw, "rwc_layout": layout})
    try:
        (outcome,) = Selftest(backend).run(["rwc-layout"])
    finally:
        backend.platform = right
    assert outcome.status == FAIL and "fields wrong in rwc_layout" in outcome.detail, outcome.line()


@pytest.mark.hw
def test_ttsim_stops_on_the_dest_window(backend):
    """What ttsim.yaml's dest_window: false stands on: a read of the window ends the simulator."""
    if backend.platform.name != "ttsim":
        pytest.skip("a ttsim fact")
    reply = backend.worker.run(probe.window_job(False))
    assert reply.status == "died" and "UnimplementedFunctionality" in reply.message and "tensix_dst" in reply.message
    assert backend.run(C.gpr_case()).status == "ok"      # the next case gets a fresh simulator


def _simulator(pytestconfig) -> str:
    sim = pytestconfig.getoption("simulator")
    if not sim:
        pytest.skip("the command is run on a simulator only (a card is held by this session's backend)")
    return sim


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "tensix_cli.cli", "selftest", *args]


@pytest.mark.hw
def test_command_prints_one_line_per_check_and_exits_0(pytestconfig):
    sim = _simulator(pytestconfig)
    out = subprocess.run(_cli("--simulator", sim, "--checks", "device,rwc-layout,dest32-window"),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert [ln.split()[:2] for ln in lines[:3]] == [["device", "ok"], ["dest32-window", "skip"], ["rwc-layout", "ok"]]
    assert lines[-1].startswith("selftest on ttsim") and "2 ok, 0 failed, 1 skipped" in lines[-1]


@pytest.mark.hw
def test_command_interrupted_exits_130(pytestconfig):
    sim = _simulator(pytestconfig)
    proc = subprocess.Popen(_cli("--simulator", sim, "--checks", "device,corpus"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    first = proc.stdout.readline()          # the device line: the corpus check is under way
    assert first.startswith("device"), first + proc.stderr.read()
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "tensix-diff: interrupted"
