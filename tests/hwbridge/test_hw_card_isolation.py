"""Card isolation through the CLI's run path: ``tensix-diff run A.yaml B.yaml --backend hw --simulator=PATH
--isolation=card`` gives B the verdict it gets alone, for each kind of leftover A leaves (SFPU flag stack, mutex,
packer mid-row, latched wait, replay, MOP mask, mailbox), in one process whose simulator is never replaced; and a
case whose leftovers nothing clears is refused with the reason. Needs a Blackhole libttsim.so
(``pytest --simulator=PATH`` or TENSIX_DIFF_SIMULATOR); skipped otherwise."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tensix_cli import cli
from tensix_cli import run as run_cmd
from tensix_diff.case import dump_case
from test_hw_leaks import directed_dirty, probes

ROOT = Path(__file__).resolve().parents[2]

# kind -> (A: leaves it, B: a probe it would disturb)
KINDS = {"flag stack": ("leak-flag-stack-depth3", "probe-push-pop"),
         "mutex": ("leak-mutex-held", "probe-mutex"),
         "packer mid-row": ("leak-delta08-last0", "leak-delta08-last1"),
         "latched wait": ("leak-semwait-zero", "probe-mop-mask"),
         "replay": ("leak-replay-load-pending", "probe-replay-play"),
         "MOP mask": ("leak-mop-mask", "probe-mop-mask"),
         "mailbox": ("leak-mailbox-unread", "probe-mailbox")}


@pytest.fixture(scope="module")
def sim_path(request):
    path = request.config.getoption("simulator", None) or os.environ.get("TENSIX_DIFF_SIMULATOR")
    if not path:
        pytest.skip("needs a Blackhole libttsim.so: --simulator=PATH or TENSIX_DIFF_SIMULATOR")
    return path


@pytest.fixture(scope="module")
def case_files(tmp_path_factory):
    out = tmp_path_factory.mktemp("card-cases")
    paths = {}
    for case in directed_dirty() + probes():
        paths[case.name] = out / f"{case.name}.yaml"
        paths[case.name].write_text(dump_case(case))
    return paths


def _run(monkeypatch, capsys, sim_path: str, *files) -> dict[str, str]:
    """``tensix-diff run FILES --backend hw --isolation=card`` in this process: each case's verdict line."""
    opened = []

    def open_backend(*a, **kw):
        backend = real(*a, **kw)
        opened.append(backend)
        return backend
    real = run_cmd.open_backend
    monkeypatch.setattr(run_cmd, "open_backend", open_backend)
    try:
        cli.main(["run", *map(str, files), "--backend", "hw", f"--simulator={sim_path}", "--isolation=card"])
    finally:
        monkeypatch.setattr(run_cmd, "open_backend", real)
        for backend in opened:
            getattr(backend, "close", lambda: None)()
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ": " in ln and not ln.startswith(" ")]
    return {ln.split(" ", 2)[1].rstrip(":"): ln for ln in lines if len(ln.split(" ", 2)) == 3}


@pytest.mark.parametrize("kind", KINDS)
def test_b_after_a_gets_the_verdict_it_gets_alone(kind, sim_path, case_files, monkeypatch, capsys):
    a, b = KINDS[kind]
    alone = _run(monkeypatch, capsys, sim_path, case_files[b])
    after = _run(monkeypatch, capsys, sim_path, case_files[a], case_files[b])
    assert a in after and b in alone
    assert after[b] == alone[b], f"{kind}: alone {alone[b]!r}, after {a} {after[b]!r}"


def test_a_case_nothing_can_isolate_is_refused_with_the_reason(sim_path, case_files, monkeypatch, capsys):
    a, b = "leak-unpacker-mid-row", "probe-push-pop"
    after = _run(monkeypatch, capsys, sim_path, case_files[a], case_files[b])
    assert "hw: refused: harness: card isolation: golden cannot predict what it leaves" in after[a]
    assert "unpacker-continuation" in after[a]
    assert after[b] == _run(monkeypatch, capsys, sim_path, case_files[b])[b]


def test_the_corpus_hang_case_costs_the_cases_after_it_nothing(sim_path, monkeypatch, capsys):
    """tests/corpus's NOP held by an all-blocks STALLWAIT hangs golden and ttsim alike; the core is recovered in
    place, so the two corpus cases after it get the verdicts they get alone (not 'tainted')."""
    spec = Path(__file__).resolve().parents[1] / "corpus" / "spec"
    hang, *after = (spec / f"{n}.yaml" for n in ("stallwait-all-blocks-holds-nop", "wrcfg-low-word-no-state-reset",
                                                   "matmul-addrmod-trace"))
    together = _run(monkeypatch, capsys, sim_path, hang, *after)
    assert together["spec-stallwait-all-blocks-holds-nop"].startswith("matched"), together
    assert "health check passed" in together["spec-stallwait-all-blocks-holds-nop"]
    for f in after:
        name = "spec-" + f.stem
        alone = _run(monkeypatch, capsys, sim_path, f)[name]
        assert together[name] == alone and alone.startswith("matched"), (together[name], alone)


def test_a_hang_nothing_recovers_runs_after_the_cases_it_would_taint(sim_path, tmp_path, monkeypatch, capsys):
    """TRISC0 holds a NOP behind an all-blocks STALLWAIT for SrcA, and ttsim stalls TRISC1 and TRISC2 at a SEMWAIT
    on a semaphore at its Max 0: no thread is free to hand the bank over or SEMINIT, and ttsim has no reset, so
    the core stays hung. Golden predicts the hang (no tag needed): the case runs after the others, which get the
    verdicts they get alone."""
    from generators.bulk import generate_one
    from golden import isa
    from tensix_diff.case import Case
    at_max = isa.assemble("SEMWAIT stall_res=0 sem_sel=8 wait_sem_cond=2")
    stuck = Case("hang-every-thread", "", {0: isa.assemble("STALLWAIT stall_res=0x1FF wait_res=0x80; NOP"),
                                           1: at_max, 2: at_max})
    files = []
    for case in [stuck] + [generate_one(2401, i, "default") for i in range(3)]:
        files.append(tmp_path / f"{case.name}.yaml")
        files[-1].write_text(dump_case(case))
    out = _run(monkeypatch, capsys, sim_path, *files)
    names = [f.stem for f in files]
    assert [k for k in out if k in names] == names[1:] + names[:1]          # run (and printed) last
    assert "hang-every-thread" in out["last"]                               # "run last (known to hang; ...)"
    assert "health check failed" in out["hang-every-thread"]                # honest: the core stayed hung
    for f in files[1:]:
        assert out[f.stem].startswith("matched"), out[f.stem]


def _collected(*opts: str) -> list[str]:
    """The curated cases' test ids pytest collects from tests/corpus/spec, in run order."""
    out = subprocess.run([sys.executable, "-m", "pytest", "tests/corpus/spec", "-n", "0", "-q", "--collect-only", *opts],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    return [ln for ln in out.splitlines() if "::" in ln]


def test_pytest_runs_the_curated_cases_known_to_hang_last_under_the_hw_backend():
    hw, replay = _collected("--backend=hw"), _collected()
    hangs = [i for i in hw if "stallwait-all-blocks-holds-nop" in i]
    assert hangs and hw[-len(hangs):] == hangs
    assert sorted(hw) == sorted(replay) and replay[-len(hangs):] != hangs
