"""Ctrl-C on the console script: one line, exit 130, partial reports marked partial, nothing corrupt."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[2]
SCRIPT = shutil.which("tensix-diff")
pytestmark = pytest.mark.skipif(SCRIPT is None, reason="the tensix-diff console script is not installed")


def _interrupt(argv: list[str], ready: str, cwd: Path, timeout: float = 120.0) -> tuple[int, str, str]:
    """Start the command, wait until ``ready`` appears in its output, send SIGINT, collect what it printed."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # SIGINT back to its default in the child: a shell's background job (`pytest &`) ignores SIGINT, the child
    # would inherit that, and Python installs no KeyboardInterrupt handler for a signal ignored at its start.
    proc = subprocess.Popen([SCRIPT, *argv], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        seen, deadline = "", time.monotonic() + timeout
        while ready not in seen:
            line = proc.stdout.readline()
            assert line or proc.poll() is None, f"ended before {ready!r}: {seen}"
            seen += line
            assert time.monotonic() < deadline, f"no {ready!r} within {timeout} s: {seen}"
        time.sleep(0.3)
        assert proc.poll() is None, f"ended before the SIGINT (give it more work): {seen}{proc.stdout.read()}"
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=timeout)
        return proc.returncode, seen, rest
    finally:        # a command that failed the test is not left running
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_fuzz_interrupted_exits_130_with_a_partial_report(tmp_path):
    report = tmp_path / "fuzz.json"
    code, _, rest = _interrupt(["fuzz", "--count", "100000", "--seed", "7", "--profile", "default", "--backend",
                                "golden", "--report", str(report)], "profile:", tmp_path)
    assert code == 130, rest
    assert "Traceback" not in rest and "interrupted after" in rest and "INTERRUPTED, partial:" in rest
    data = json.loads(report.read_text())
    assert data["interrupted"] is True and data["count"] < 100000


def test_run_interrupted_exits_130_in_one_line(tmp_path):
    cases = sorted((ROOT / "tests" / "fuzz_corpus").glob("ttsim-formats-s3*.cases.jsonl.gz"))[:2]   # seconds of work
    code, _, rest = _interrupt(["run", *map(str, cases), "--backend", "golden", "--against", "golden"], "\n", tmp_path)
    assert code == 130, rest
    lines = [ln for ln in rest.splitlines() if ln.strip()]
    assert "Traceback" not in rest and lines[-1] == "tensix-diff: interrupted"


def test_record_interrupted_exits_130_and_keeps_the_store_whole(tmp_path, sim_path):
    sim = sim_path
    bundle = sorted((ROOT / "tests" / "fuzz_corpus").glob("ttsim-default-*part01.cases.jsonl.gz"))[0]
    store = tmp_path / "rec"
    code, _, rest = _interrupt(["record", str(bundle), "--simulator", sim, "--recordings", str(store)],
                               "cases to run", tmp_path)
    assert code == 130, rest
    assert "Traceback" not in rest and "INTERRUPTED, partial: recorded on" in rest
    check = subprocess.run([SCRIPT, "store", "verify", "--recordings", str(store)], capture_output=True, text=True,
                           timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
