"""Wall time of the installed `tensix-diff` command, run as a user's shell runs it.

A normal Python installation keeps the bytecode it compiles; some sandboxes set PYTHONDONTWRITEBYTECODE,
which makes every run recompile the project's modules (about 60 ms here). The timed runs leave that
variable out and follow one untimed warm-up run, and the caller prints that it did.
"""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path


def command() -> str:
    """The installed `tensix-diff` console script: the one pip writes beside this interpreter (its #! line names
    the interpreter itself), else the one on PATH (which may be a wrapper such as a pyenv shim)."""
    beside = Path(sys.executable).with_name("tensix-diff")
    if beside.is_file():
        return str(beside)
    return shutil.which("tensix-diff") or sys.exit("tensix-diff is not installed (pip install -e .)")


def command_note(script: str) -> str:
    """The line naming the timed command and what its first line runs."""
    with open(script, "rb") as f:
        first = f.readline().decode(errors="replace").strip()
    return f"timed command: {script} ({first})"


def user_env() -> tuple[dict[str, str], str]:
    """The environment for timed runs, and a line saying what was changed (empty if nothing)."""
    env = dict(os.environ)
    if env.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        return env, "PYTHONDONTWRITEBYTECODE is set here: left out of the timed runs, after one warm-up run"
    return env, ""


def walls(cmd: list[str], runs: int, env: dict[str, str], cwd: str | None = None) -> list[float]:
    """Seconds per run of ``cmd`` (after one untimed run that writes the bytecode)."""
    subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=cwd)
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=cwd)
        out.append(time.perf_counter() - t0)
    return out


def timed(cmd: list[str], env: dict[str, str], cwd: str | None = None) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds of the command and its children, exit status, stdout + stderr) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)      # microseconds, where os.times counts 10 ms ticks
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.returncode, p.stdout + p.stderr


def load_note() -> str:
    """The machine's load averages and cores, printed beside wall times (a shared machine inflates them)."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) {five:.1f} (5 min) on {os.cpu_count()} cores"
