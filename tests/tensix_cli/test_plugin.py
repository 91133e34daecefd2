"""The pytest plugin end to end: a scratch project with the repository's conftest.py, curated cases, a
Hypothesis test using check_case, a replay store; run in a subprocess as a user would."""
from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tensix_diff.result import Result
from hwbridge.golden_backend import GoldenBackend
from tensix_diff.case import load_case
from tensix_diff.store import Recording, Store

ROOT = Path(__file__).resolve().parents[2]
DEVICE = {"device": "ttsim 1.10.0", "platform": "ttsim", "exalens": "0.4.2", "umd": "0.9.14", "core": "0,0"}
CASE = "name: {name}\nthreads:\n  0:\n    - SETRWC bitmask=15 rwc_a={a}\n    - INCRWC rwc_b=1\n"

FUZZ_TEST = '''
from hypothesis import given, strategies as st
from golden import isa
from tensix_diff.case import Case

@given(st.integers(0, 15))
def test_fuzz_setrwc(check_case, a):
    case = Case(f"fuzz-{a}", "", {1: [isa.encode("SETRWC", {"bitmask": 15, "rwc_a": a})]})
    check_case(case)

def test_backend_fixture(backend):
    assert backend.name in ("golden", "replay", "hw")

import pytest

@pytest.mark.hw
def test_needs_a_device(backend):
    assert backend.name == "hw"
'''


def record(store: Store, case, tamper=None) -> None:
    state = copy.deepcopy(GoldenBackend().run(case).state)
    if tamper:
        tamper(state)
    store.put(Recording.from_result(case, Result("ok", state, provenance=DEVICE)))


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("proj")
    shutil.copy(ROOT / "conftest.py", root / "conftest.py")
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = tests\naddopts = -p no:cacheprovider\n")
    corpus = root / "tests" / "corpus" / "sub"
    corpus.mkdir(parents=True)
    for name, a in (("good", 1), ("bad", 2), ("unrecorded", 3), ("edited", 4)):
        (corpus / f"{name}.yaml").write_text(CASE.format(name=name, a=a))
    (root / "tests" / "test_fuzzish.py").write_text(FUZZ_TEST)
    store = Store(root / "rec")
    record(store, load_case(corpus / "good.yaml"))
    record(store, load_case(corpus / "bad.yaml"), tamper=lambda s: s["rwc"]["0"].__setitem__("srca", 9))
    record(store, load_case(corpus / "edited.yaml"))
    (corpus / "edited.yaml").write_text(CASE.format(name="edited", a=5))   # the case changed after recording
    from golden import isa
    from tensix_diff.case import Case
    for a in range(0, 16, 2):   # half the fuzz cases have recordings
        record(store, Case(f"fuzz-{a}", "", {1: [isa.encode("SETRWC", {"bitmask": 15, "rwc_a": a})]}))
    return root


def pytest_run(project: Path, *args: str) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}   # start-up time
    env.pop("HYPOTHESIS_PROFILE", None)
    env.pop("CI", None)   # CI makes recordings strict; these runs choose with --strict-recordings
    plugins = ["-p", "_hypothesis_pytestplugin", "-p", "xdist.plugin"]
    p = subprocess.run([sys.executable, "-m", "pytest", *plugins, "-q", "-rfs", "--recordings", str(project / "rec"),
                        *args],
                       cwd=project, capture_output=True, text=True, env=env, timeout=300)
    return p.returncode, p.stdout + p.stderr


def summary(out: str) -> str:
    m = re.search(r"^tensix-diff .*$", out, re.M)
    assert m, out
    return m.group(0)


def test_replay_end_to_end(project):
    code, out = pytest_run(project)
    assert code == 1, out   # the tampered recording diverges
    # fuzz-0 (SETRWC clearing counters that are already 0) changes nothing observable: uncompared, not matched
    assert summary(out) == ("tensix-diff (golden vs replay): 9 cases compared, 8 matched, 1 diverged, 0 known,"
                            " 9 missing recordings, 1 stale, 1 uncompared")
    assert "uncompared: 1 nothing the case does is observable" in out
    assert "tests/corpus/sub/bad.yaml::bad" in out                  # curated cases are tests named by case
    assert re.search(r"rwc thread 0 srca: golden 0x2, \S.* 0x9", out), out    # the report, sides named
    assert re.search(r"SKIPPED .*unrecorded: replay: missing: no recording for case 'unrecorded'", out), out
    assert re.search(r"SKIPPED .*edited: replay: stale: case 'edited' changed since it was recorded", out), out
    assert re.search(r"SKIPPED .*needs a card or simulator", out), out
    assert "Traceback" not in out


def test_xdist_workers_report_one_summary(project):
    code, out = pytest_run(project, "-n", "2")
    assert code == 1, out
    assert summary(out).startswith("tensix-diff (golden vs replay): 9 cases compared, 8 matched, 1 diverged")


def test_strict_recordings_fail_missing_and_stale(project):
    code, out = pytest_run(project, "--strict-recordings", "tests/corpus")
    assert code == 1
    assert "unrecorded: replay: missing" in out and "edited: replay: stale" in out


def test_golden_backend_and_usage_errors(project):
    code, out = pytest_run(project, "--backend=golden")
    assert code == 0, out
    assert summary(out).startswith("tensix-diff (golden only): 20 cases run on golden")
    code, out = pytest_run(project, "--record-mode=all")
    assert code == 4 and "--record-mode records what a device returned: it needs --backend=hw" in out


def test_hw_without_a_device_fails_with_one_line_unless_asked_to_skip(project):
    code, out = pytest_run(project, "--backend=hw", "tests/test_fuzzish.py")
    assert code == 3 and re.search(r"tensix-diff: --backend=hw: (no device configured|no card found)", out), out
    assert "Traceback" not in out
    code, out = pytest_run(project, "--backend=hw", "--allow-no-device", "tests/test_fuzzish.py")
    assert code in (0, 5), out
    assert re.search(r"SKIPPED .*(no device configured|no card found)", out), out
    code, out = pytest_run(project, "--backend=hw", "--simulator=/nonexistent/libttsim.so", "tests/test_fuzzish.py")
    assert code == 2 and "--simulator=/nonexistent/libttsim.so: no such file" in out and "Traceback" not in out
