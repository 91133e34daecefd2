"""Verdicts never claim more than was observed: edited recordings are rejected, golden refusing what the
device ran fails, a case whose effects nobody can see is not a match, and strict recordings fail when a
recording is missing (issue "evidence you can trust")."""
from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from golden import isa
from golden.core import Tensix
from golden.errors import NotModelled
from tensix_diff.result import OK, Result
from hwbridge.golden_backend import GoldenBackend
from hwbridge.replay import ReplayBackend
from tensix_diff.assess import NOTHING_OBSERVABLE, assess
from tensix_diff.case import Case, case_hash, load_case
from tensix_diff.compare import DIVERGED, MATCHED, UNCOMPARED
from tensix_diff.store import Store, StoreError

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
RMWCIB = CORPUS / "spec" / "scalar-rmwcib.yaml"
PACKER = CORPUS / "deltas" / "delta-08-packer-ystride.yaml"
MATMUL = CORPUS / "kernels" / "matmul-addrmod-replay.yaml"


def _copy_recording(case: Case, root: Path, edit) -> Store:
    """The committed recording of ``case`` copied into a scratch store, its stored JSON edited by ``edit``
    (as a hostile editor would: the state is stored with Dest relative to the case's initial Dest)."""
    src = Store()
    src.lookup(case)
    line = src._choose(case_hash(case), None)            # noqa: SLF001 (the raw stored line)
    doc = json.loads(line.payload)
    if doc["state"] is not None:
        doc["state"].setdefault("l1", {})
        doc["state"].setdefault("config", {})
    edit(doc)
    root.mkdir(parents=True)
    text = f"P\t{doc['p']}\t{src._blobs[doc['p']]}\n"     # noqa: SLF001
    text += "\t".join(("R", line.case_hash, line.device, line.case_name, json.dumps(doc))) + "\n"
    (root / "b0001.jsonl.gz").write_bytes(gzip.compress(text.encode()))
    return Store(root)


@pytest.mark.parametrize("path, edit, message", [
    (RMWCIB, lambda d: d["state"].pop("dest"), "lacks dest"),
    (RMWCIB, lambda d: [d["state"].pop(k) for k in ("dest", "adc", "gpr", "l1", "config")], "lacks dest, adc"),
    (RMWCIB, lambda d: d["state"]["rwc"].pop("1"), "lacks rwc.1"),
    (RMWCIB, lambda d: d["state"]["config"]["0"].pop("70"), "lacks config.0.70"),
    (PACKER, lambda d: d["state"].update(l1={}), "lacks l1.0x"),
], ids=["dest", "all-but-rwc", "rwc-thread-1", "config-70", "l1-region"])
def test_a_recording_missing_what_its_platform_observes_is_rejected(tmp_path, path, edit, message):
    case = load_case(path)
    assert ReplayBackend().run(case).ok           # the committed recording is whole
    store = _copy_recording(case, tmp_path / "rec", edit)
    with pytest.raises(StoreError, match=f"corrupt recording of case '{case.name}': " + message):
        ReplayBackend(store=store).run(case)


def test_a_status_that_disagrees_with_the_state_is_rejected(tmp_path):
    case = load_case(RMWCIB)
    store = _copy_recording(case, tmp_path / "rec", lambda d: d.update(status="refused"))
    with pytest.raises(StoreError, match="status refused with an observed state"):
        ReplayBackend(store=store).run(case)


def test_a_run_over_an_edited_recording_is_one_line_and_exit_2(tmp_path):
    case = load_case(RMWCIB)
    _copy_recording(case, tmp_path / "rec", lambda d: d["state"].pop("config"))
    p = subprocess.run([sys.executable, "-m", "tensix_cli.cli", "run", str(RMWCIB), "--recordings",
                        str(tmp_path / "rec")], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 2 and "lacks config" in p.stderr and p.stderr.count("\n") == 1, p.stdout + p.stderr


def test_golden_refusing_a_recorded_instruction_fails(monkeypatch):
    """A planted golden refusal of MVMUL: every recorded case using it that ttsim ran now fails."""
    case = load_case(MATMUL)
    g, r = GoldenBackend(), ReplayBackend()
    assert assess(case, g.run(case), r.run(case), ("golden", "ttsim"), "replay").outcome == MATCHED
    step = Tensix.step

    def refusing(self, t, d, index=0):
        if d.ins.name == "MVMUL":
            raise NotModelled("planted: MVMUL refused")
        return step(self, t, d, index)
    monkeypatch.setattr(Tensix, "step", refusing)
    v = assess(case, g.run(case), r.run(case), ("golden", "ttsim"), "replay")
    assert v.outcome == DIVERGED and "golden not-modelled on a case ttsim ran" in v.message
    assert v.signature() == (("status", "not-modelled", "ok"),)


def test_expected_refusals_are_uncompared_with_their_reason(tmp_path):
    entries = tmp_path / "refusals.yaml"
    entries.write_text("expected:\n  - id: planted\n    reason: out of scope\n    status: not-modelled\n"
                       "    message: 'planted: MVMUL'\n")
    from tensix_diff.refusals import load_refusals
    case = load_case(MATMUL)
    v = assess(case, Result("not-modelled", message="planted: MVMUL refused"), ReplayBackend().run(case),
               ("golden", "ttsim"), "replay", expected_refusals=load_refusals(entries))
    assert v.outcome == UNCOMPARED and v.why == "expected golden refusal planted"


@pytest.mark.parametrize("line", ["SETC16 setc16_reg=12 setc16_value=0x0808", "NOP"])
def test_a_case_whose_only_effect_is_invisible_is_not_a_match(line):
    case = Case("invisible", "", {0: [isa.assemble_line(line)]})
    g = GoldenBackend().run(case)
    device = Result(OK, {k: v for k, v in g.state.items() if k != "dest_valid"}, provenance={"device": "fixture"})
    v = assess(case, g, device, ("golden", "fixture"))
    assert v.outcome == UNCOMPARED and v.why == NOTHING_OBSERVABLE, v.message
    visible = Case("visible", "", {0: [isa.assemble_line("SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=15"),
                                       isa.assemble_line("INCRWC rwc_cr=0 rwc_d=0 rwc_b=1 rwc_a=0")]})
    g = GoldenBackend().run(visible)
    assert assess(visible, g, Result(OK, g.state), ("golden", "fixture")).outcome == MATCHED


def test_strict_recordings_under_ci_fail_on_an_empty_store(tmp_path):
    """`CI=true pytest tests/corpus --recordings=<empty dir>` fails, listing how to record what is missing."""
    (tmp_path / "empty").mkdir()
    env = {**os.environ, "CI": "true"}
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/corpus/spec",
                        f"--recordings={tmp_path / 'empty'}"], capture_output=True, text=True, cwd=ROOT, env=env,
                       timeout=300)
    assert p.returncode == 1, p.stdout[-2000:]
    assert "strict recordings" in p.stdout and "record them with:" in p.stdout
    assert "tensix-diff record " in p.stdout and "scalar-rmwcib.yaml" in p.stdout


def test_effects_that_cancel_out_are_still_observed():
    """A counter set and cleared again: the whole program leaves the state as it found it, yet removing the
    clear changes what is observed, so the case observes an effect (tests/corpus setrwc-loop-boundary)."""
    case = Case("cancel", "", {0: [isa.assemble_line("SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=3 rwc_b=2 rwc_a=1 bitmask=7"),
                                   isa.assemble_line("SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=15")]})
    g = GoldenBackend().run(case)
    assert assess(case, g, Result(OK, g.state), ("golden", "fixture")).outcome == MATCHED
