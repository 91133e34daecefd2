"""The race check's record of a step is sound (tensix_diff.happens_before, tensix_diff.state_parts): a step does
not depend on state its record does not name. Each step of recorded cases is run again from a copy of the state
before it, once as it was and once with every Dest row, Config bit, SrcA / SrcB bank, L1 page and semaphore it
neither read nor wrote changed; the two runs must end equal everywhere but there, and the step must leave those
as they were. A handler that reads Dest without indexing it, Config bits beyond those its reader names, or a
semaphore it does not take would go unreported and hide races: it fails here."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from golden.core import Tensix
from golden.errors import Blocked, GoldenError
from golden.config_words import FULL
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
    except (Blocked, GoldenError):
        return None
    return m


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c.name)
def test_a_step_depends_on_nothing_its_record_does_not_name(case):
    rec = Steps()
    _run(case, recorder=rec)
    rec.candidates()
    rng = np.random.default_rng(7)
    checked = 0
    for s, (snap, t, d, index) in zip(rec.steps, rec.before):
        plain = _after(copy_state(snap), t, d, index)
        moved = copy_state(snap)
        unnamed = _change_unnamed(moved, s, rng)
        changed = _after(moved, t, d, index)
        what = f"step {s.local} of thread {t} ({d.ins.name if getattr(d, 'ins', None) else repr(d)[:60]})"
        if plain is None or changed is None:
            assert plain is None and changed is None, f"{what}: fails only with unnamed state changed"
            continue
        for name, kept, put in unnamed:
            assert kept(changed.s) == kept(moved), f"{what}: set {name}, which its record does not name"
            put(changed.s, plain.s)
        assert same_state(plain.s, changed.s), f"{what} depends on state its record does not name"
        checked += 1
    assert checked, "no step of the case was checked"


def _change_unnamed(s, step, rng) -> list:
    """Change, in state ``s``, every Dest row, Config bit, Src bank, L1 page and semaphore ``step`` neither read
    nor wrote; per family: (name, what it holds there, put the other state's values there)."""
    out = []
    read, wrote = step.reads.get(DEST, 0), step.writes.get(DEST, 0)
    if read is not ALL and wrote is not ALL:
        named = read | wrote                 # Dest rows as a mask: row r is bit r
        rows = np.array([r for r in range(len(s.dest.valid)) if not named >> r & 1], dtype=np.int64)
        s.dest.bits[rows] = rng.integers(0, 1 << 16, (len(rows), s.dest.bits.shape[1]), dtype=np.uint16)
        s.dest.valid[rows] = ~s.dest.valid[rows]
        out.append((f"Dest rows", lambda x: (x.dest.bits[rows].tobytes(), x.dest.valid[rows].tobytes()),
                    lambda x, y: (x.dest.bits.__setitem__(rows, y.dest.bits[rows]),
                                  x.dest.valid.__setitem__(rows, y.dest.valid[rows]))))
    for o, words in enumerate(s.config):
        named = step.reads.get(("config", o), 0)
        named = ALL if named is ALL else named | step.writes.get(("config", o), 0)
        if named is ALL:
            continue
        keep = [(named >> 32 * i) & FULL for i in range(len(words))]
        for i, k in enumerate(keep):
            words[i] ^= int(rng.integers(0, 1 << 32)) & ~k & FULL
        out.append((f"Config state {o} bits", lambda x, o=o, keep=keep: [w & ~k for w, k in zip(x.config[o], keep)],
                    lambda x, y, o=o, keep=keep: x.config[o].__setitem__(
                        slice(None), [a & k | b & ~k & FULL for a, b, k in zip(x.config[o], y.config[o], keep)])))
    for src in ("srca", "srcb"):
        for i, bank in enumerate(getattr(s, src).banks):
            if (src, "rows", i) in step.reads or (src, "rows", i) in step.writes:
                continue
            bank.rows[:] = rng.integers(0, 1 << 32, bank.rows.shape, dtype=np.uint32)
            out.append((f"{src} bank {i}", lambda x, src=src, i=i: getattr(x, src).banks[i].rows.tobytes(),
                        lambda x, y, src=src, i=i: getattr(x, src).banks[i].rows.__setitem__(
                            slice(None), getattr(y, src).banks[i].rows)))
    named = step.reads.get(("l1",), frozenset())
    named = ALL if named is ALL else named | step.writes.get(("l1",), frozenset())
    if named is not ALL:
        pages = sorted(set(s.l1.pages) - named)
        for p in pages:
            s.l1.pages[p][:] = rng.integers(0, 256, len(s.l1.pages[p]), dtype=np.uint8).tobytes()
        out.append(("L1 pages", lambda x: [bytes(x.l1.pages[p]) for p in pages],
                    lambda x, y: [x.l1.pages[p].__setitem__(slice(None), y.l1.pages[p]) for p in pages]))
    sems = [i for i in range(len(s.semaphores))
            if ("semaphores", i) not in step.reads and ("semaphores", i) not in step.writes]
    for i in sems:
        s.semaphores[i].value, s.semaphores[i].max = (int(v) for v in rng.integers(0, 16, 2))
    out.append(("semaphores", lambda x: [(x.semaphores[i].value, x.semaphores[i].max) for i in sems],
                lambda x, y: [setattr(x.semaphores[i], k, getattr(y.semaphores[i], k)) for i in sems
                              for k in ("value", "max")]))
    return out


def test_the_fields_taken_quietly_lie_in_no_part():
    """The state's fields the recorder takes without a report (state_parts.STRUCTURE) lie in no part, so the
    record misses nothing: each only leads to containers whose own cells are reported."""
    from golden.analysis import traced_state
    from tensix_diff.state_parts import STRUCTURE
    m = Tensix()
    rec = Recorder()
    rec.attach(m)
    traced_state.ACTIVE = rec
    try:
        for name in sorted(STRUCTURE):
            assert rec.where((m.s, name)) is None, f"{name} lies in a part: taking it must be reported"
            getattr(m.s, name)
        taken = list(rec.taken)
        m.s.dest
    finally:
        traced_state.ACTIVE = None
    assert taken == [] and rec.taken == [(m.s, "dest")]
