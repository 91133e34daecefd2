"""The race check's Dest rows are sound (tensix_diff.happens_before, tensix_diff.state_parts): a recorded step
whose reads name some Dest rows (or none) does not depend on any other row. Each step of recorded cases is run
again from a copy of the state before it, once as it was and once with every Dest row it neither read nor
wrote set to other bits and validity; the two runs must end equal everywhere but in those rows, which the step
must leave as they were. A handler that reads Dest without indexing it (the rows would go unreported) fails
here."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from golden.core import Tensix
from golden.errors import GoldenError
from golden.state import copy_state, same_state
from tensix_diff.case import load_any, load_bundle
from tensix_diff.happens_before import ALL, Recorder
from tensix_diff.race import _run
from tensix_diff.state_parts import DEST

ROOT = Path(__file__).resolve().parents[2]
FUZZ = ROOT / "tests" / "fuzz_corpus"


def _cases():
    """Cases whose steps read and set Dest by many paths: the matrix unit, the packer, SFPU loads and stores,
    Dest-to-Src moves, ZEROACC, RISC-V reads."""
    out = [c for c in load_any([str(ROOT / "tests" / "corpus")]) if len(c.threads) > 1][::4]
    for bundle, every in (("ttsim-pipeline-s4100-part01", 50), ("ttsim-pipeline-dst32-s9101-part01", 50),
                          ("ttsim-pipeline-int8-s4401-part01", 50), ("ttsim-sfpu-s3003-part01", 80)):
        out += load_bundle(FUZZ / f"{bundle}.cases.jsonl.gz")[::every]
    return out


class Steps(Recorder):
    """A Recorder that keeps, per recorded step, the state just before it and the step's arguments."""

    def __init__(self):
        super().__init__()
        self.before: list = []

    def step(self, t, d, index):
        snap = copy_state(self.m.s)
        n = len(self.steps)
        try:
            super().step(t, d, index)
        finally:
            if len(self.steps) > n:
                self.before.append((snap, t, d, index))


def _after(state, t, d, index) -> Tensix | None:
    m = Tensix(state)
    try:
        m.step(t, d, index)
    except GoldenError:
        return None
    return m


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c.name)
def test_a_step_depends_on_no_dest_row_it_does_not_name(case):
    rec = Steps()
    _run(case, recorder=rec)
    rec.candidates()
    rng = np.random.default_rng(7)
    checked = 0
    for s, (snap, t, d, index) in zip(rec.steps, rec.before):
        read, wrote = s.reads.get(DEST, frozenset()), s.writes.get(DEST, frozenset())
        if read is ALL or wrote is ALL:
            continue
        other = np.setdiff1d(np.arange(len(snap.dest.valid)), np.fromiter(read | wrote, int))
        plain = _after(copy_state(snap), t, d, index)
        moved = copy_state(snap)
        moved.dest.bits[other] = rng.integers(0, 1 << 16, (len(other), moved.dest.bits.shape[1]), dtype=np.uint16)
        moved.dest.valid[other] = ~moved.dest.valid[other]
        changed = _after(moved, t, d, index)
        if plain is None or changed is None:
            assert plain is None and changed is None, f"step {s.local} of thread {t} ({d}): fails on other rows"
            continue
        assert np.array_equal(changed.s.dest.bits[other], moved.dest.bits[other]) and np.array_equal(
            changed.s.dest.valid[other], moved.dest.valid[other]), f"step {s.local} of thread {t}: set an unnamed row"
        changed.s.dest.bits[other] = plain.s.dest.bits[other]
        changed.s.dest.valid[other] = plain.s.dest.valid[other]
        assert same_state(plain.s, changed.s), (
            f"step {s.local} of thread {t} ({d}) depends on Dest rows outside those it names ({sorted(read)[:8]}...)")
        checked += 1
    assert checked, "no step of the case was checked"
