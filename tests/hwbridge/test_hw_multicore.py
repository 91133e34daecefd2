"""Several Tensix cores of one device at once (``--jobs``, ``--core``): the same results as one core, case by case,
from one simulator process; a failure on one core leaves the others' results; pytest-xdist workers on their own
cores. Needs a Blackhole libttsim.so (``pytest --simulator=PATH`` or TENSIX_DIFF_SIMULATOR); skipped otherwise.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from golden import isa
from tensix_cli.core_equivalence import outcome
from tensix_diff.case import Case, Init, dump_case
from tensix_diff.result import OK, REFUSED

ROOT = Path(__file__).resolve().parents[2]
PROFILES = ("default", "sfpu", "pipeline", "counters", "formats", "scalar")
PER_PROFILE = 10                 # 60 cases over 8 cores


def sample() -> list[Case]:
    from generators.bulk import generate
    from generators.profiles import load_profile
    return [c for p in PROFILES for _, c in generate(4242, PER_PROFILE, load_profile(p))]


def test_eight_cores_give_what_one_core_gives(sim_path):
    from hwbridge.hw.backend import HwBackend
    cases = sample()
    with HwBackend(sim_path) as one:
        alone = [one.run(c) for c in cases]
    with HwBackend(sim_path, jobs=8) as eight:
        assert len(eight.cores) == 8 and len(set(eight.cores)) == 8
        starts = eight.worker.starts
        side_by_side = eight.run_many(cases)
        restarts = eight.worker.starts - starts
        pids = {r.provenance.get("core") for r in side_by_side}
    assert sum(r.status == OK for r in alone) >= 50
    differ = [c.name for c, a, b in zip(cases, alone, side_by_side) if outcome(a) != outcome(b)]   # cycles too
    assert not differ, f"{len(differ)} of {len(cases)} differ, e.g. {differ[:3]}"
    assert len(pids) == 8                     # every core ran cases
    assert restarts < len(cases) // 8 + 8     # one simulator for the batch; replaced only after leftovers


ONE = isa.assemble("SETDMAREG payload_sigselsize=0 payload_sigsel=0x1234 setsignalsmode=0 regindex16b=8")


def test_a_failing_core_leaves_the_others_results(sim_path):
    """In one batch: a case that makes ttsim exit (the whole simulator goes), one that hangs, and good ones:
    each good case still gets its own result, in case order, and only the culprits say so."""
    from hwbridge.hw.backend import HwBackend
    good = [Case(f"mc-good-{i}", "", {0: ONE}, init=Init(gpr={0: {9: i}})) for i in range(4)]
    exits = Case("mc-exits", "", {0: []}, init=Init(config={0: {1: 0x2}}))      # stochastic rounding: ttsim exits
    hangs = Case("mc-hangs", "", {0: isa.assemble("SEMWAIT stall_res=0 sem_sel=1 wait_sem_cond=1")})
    cases = [good[0], exits, good[1], hangs, good[2], exits, good[3]]
    with HwBackend(sim_path, jobs=4, max_cycles=200_000) as b:
        results = b.run_many(cases)
        after = b.run_many(good)
    statuses = [r.status for r in results]
    assert statuses == [OK, REFUSED, OK, "hang", OK, REFUSED, OK], [(r.status, r.message[:80]) for r in results]
    for r, i in zip((results[0], results[2], results[4], results[6]), range(4)):
        assert r.state["gpr"]["0"][9] == i and r.state["gpr"]["0"][4] == 0x1234
    assert "ERROR: UnsupportedFunctionality" in results[1].message and results[1].provenance["refused_by"] == "simulator"
    assert [r.status for r in after] == [OK] * 4


def _cli_module(module: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return _cli_module("tensix_cli.cli", *args)


def test_the_equivalence_command(sim_path, tmp_path):
    from tensix_diff.case import write_bundle
    write_bundle(tmp_path / "s.cases.jsonl.gz", sample()[::5])
    out = _cli_module("tensix_cli.core_equivalence", str(tmp_path / "s.cases.jsonl.gz"), "--simulator", sim_path,
                      "--jobs", "4", "--core", "all")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "12 cases on ttsim 1.10.0: 12 the same on 4 cores as on core 1,2 alone, 0 differ" in out.stdout


def test_run_and_record_take_jobs_and_cores(sim_path, tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    for c in sample()[:12]:
        (cases / f"{c.name}.yaml").write_text(dump_case(c))
    one = _cli("run", str(cases), "--backend", "hw", "--simulator", sim_path, "-q")
    many = _cli("run", str(cases), "--backend", "hw", "--simulator", sim_path, "-q", "--jobs", "4", "--core", "all")
    assert one.returncode == many.returncode and one.returncode in (0, 1), one.stdout + one.stderr
    assert one.stdout.splitlines()[-2:] == many.stdout.splitlines()[-2:]     # the same summary lines
    rec = _cli("record", str(cases), "--simulator", sim_path, "--jobs", "3", "--core", "5,3;6,3;7,3",
               "--recordings", str(tmp_path / "store"), "-q")
    assert rec.returncode == 0 and "on 3 core(s)" in rec.stderr, rec.stdout + rec.stderr
    from tensix_diff.store import Store
    store = Store(tmp_path / "store")
    cores = {store.get(h, structural=True).provenance["core"] for h in store.hashes()}
    assert cores == {"noc0 5,3", "noc0 6,3", "noc0 7,3"}


@pytest.mark.parametrize("args, says", [
    (["--core", "0,0"], "core 0,0 is not a Tensix core of this device"),
    (["--core", "8,2"], "core 8,2 is not a Tensix core"),
    (["--jobs", "141"], "--jobs 141 needs 141 cores; the device has 140"),
    (["--device-id", "1"], "no device 1 (tt-exalens found 0)"),
])
def test_choices_the_device_cannot_honour_exit_2(sim_path, tmp_path, args, says):
    case = tmp_path / "c.yaml"
    case.write_text(dump_case(Case("mc-c", "", {0: ONE})))
    out = _cli("run", str(case), "--backend", "hw", "--simulator", sim_path, *args)
    err = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(err) == 1 and says in err[0], out.stdout + out.stderr


XDIST_TEST = '''
import json, os
def test_where(backend):
    out = os.environ["WHERE_DIR"]
    name = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(out, name), "w") as f:
        json.dump({"cores": backend.cores, "device": backend.device, "id": backend.identity["device_id"]}, f)
'''


def test_xdist_workers_each_take_their_own_core(sim_path, tmp_path):
    pytest.importorskip("xdist")
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    (tmp_path / "test_where.py").write_text(XDIST_TEST)
    where = tmp_path / "where"
    where.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "WHERE_DIR": str(where)}
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "xdist.plugin", "-q", "-n", "2", "--backend=hw",
                        f"--simulator={sim_path}", "--core=3,4;5,6", "--dist", "each", "test_where.py"],
                       cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    import json
    seen = {f.name: json.loads(f.read_text()) for f in where.iterdir()}
    assert p.returncode == 0 and sorted(seen) == ["gw0", "gw1"], p.stdout + p.stderr
    assert seen["gw0"]["cores"] == [[3, 4]] and seen["gw1"]["cores"] == [[5, 6]]
    assert {s["device"] for s in seen.values()} == {"ttsim 1.10.0"}


def test_pytest_refuses_a_core_the_device_lacks_in_one_line_exit_2(sim_path, tmp_path):
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    (tmp_path / "test_where.py").write_text(XDIST_TEST)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "WHERE_DIR": str(tmp_path)}
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--backend=hw",
                        f"--simulator={sim_path}", "--core=0,0", "test_where.py"],
                       cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    said = [ln for ln in (p.stdout + p.stderr).splitlines() if "tensix-diff" in ln]
    assert p.returncode == 2 and len(said) == 1 and "core 0,0 is not a Tensix core of this device" in said[0], \
        p.stdout + p.stderr


def test_card_mode_recovers_a_hung_core_in_place_and_leaves_an_unrecoverable_one_out(sim_path):
    """Under a card's constraints (one simulator, never replaced), in one batch of 4 cores: a SEMWAIT nobody
    posts (recovered on its core: the health check passes) and a wait no thread can end (its core stays
    tainted). The good cases keep their results; later cases run on the 3 healthy cores, none tainted."""
    from hwbridge.hw.backend import HwBackend
    good = [Case(f"mc-card-{i}", "", {0: ONE}, init=Init(gpr={0: {9: i}})) for i in range(8)]
    hangs = Case("mc-semwait", "", {1: isa.assemble("SEMWAIT stall_res=0 sem_sel=8 wait_sem_cond=1")})
    stuck = Case("mc-stuck", "", {t: isa.assemble("SEMWAIT stall_res=0 sem_sel=8 wait_sem_cond=2") for t in range(3)})
    with HwBackend(sim_path, jobs=4, isolation="card", max_cycles=200_000) as b:
        starts = b.worker.starts
        first = b.run_many([good[0], hangs, good[1], stuck])
        assert [r.status for r in first] == [OK, "hang", OK, "hang"], [r.message[:90] for r in first]
        assert first[1].provenance["hang"]["health_check"] == "passed"
        assert first[3].provenance["hang"]["health_check"] == "it hung"
        later = b.run_many(good[2:])
        assert b.worker.starts == starts              # one simulator throughout
    assert [r.status for r in later] == [OK] * 6
    assert [r.state["gpr"]["0"][9] for r in later] == list(range(2, 8))
    assert first[3].provenance["core"] not in {r.provenance["core"] for r in later}
    assert len({r.provenance["core"] for r in later}) == 3
