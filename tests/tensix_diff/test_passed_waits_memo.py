"""The memos of the passed-wait probes (tensix_diff.passed_waits): a try kept from another run (``_TRIED``,
``_QUIET``), RISC-V actions among them, ends as running it would, and the cells a try reads are put back as
``_back`` puts them."""
from __future__ import annotations

from pathlib import Path

import pytest

from tensix_diff import passed_waits
from tensix_diff.case import load_bundle
from tensix_diff.happens_before import Recorder
from tensix_diff.race import _run

BUNDLE = Path(__file__).resolve().parents[2] / "tests/fuzz_corpus/ttsim-pipeline-s4100-part01.cases.jsonl.gz"
NAMES = ("fuzz-pipeline-s4100-00080", "fuzz-pipeline-s4100-00004")


@pytest.fixture(scope="module")
def cases():
    by_name = {c.name: c for c in load_bundle(BUNDLE)}
    return [by_name[n] for n in NAMES]


def _recorded(case, monkeypatch) -> tuple[list, list, int]:
    """(each step's passed waits with their cells as parts, the race candidates, the tries run) of a recording."""
    ran = []

    def counted(*args):
        ran.append(args[1])
        return would_block(*args)
    would_block = passed_waits.would_block
    monkeypatch.setattr(passed_waits, "would_block", counted)
    rec = Recorder()
    _run(case, recorder=rec)
    cands = rec.candidates()
    monkeypatch.setattr(passed_waits, "would_block", would_block)
    s = rec.m.s
    named = {id(obj): i for i, obj in enumerate([*s.semaphores, s.srca, s.srcb, *s.srca.banks, *s.srcb.banks,
                                                 s.srca.unpacker_row, s.srcb.unpacker_row])}
    passed = [[(p.n, p.t, p.b, p.j, p.since, p.held, sorted((named[obj], key) for obj, key in p.cells))
               for p in s.passed] for s in rec.steps]
    return passed, cands, len(ran)


def test_tries_kept_from_another_run_end_as_running_them_would(cases, monkeypatch):
    monkeypatch.setattr(passed_waits, "_QUIET", {})
    monkeypatch.setattr(passed_waits, "_TRIED", {})
    fresh = [_recorded(c, monkeypatch) for c in cases]
    assert all(ran for _, _, ran in fresh)
    assert any(p for passed, _, _ in fresh for p in passed)            # some wait was ordered by a probe
    again = [_recorded(c, monkeypatch) for c in cases]
    assert [ran for _, _, ran in again] == [0] * len(cases)            # every try was kept from the first runs
    assert [x[:2] for x in again] == [x[:2] for x in fresh]


def test_a_riscv_action_is_tried_once_per_case(cases, monkeypatch):
    monkeypatch.setattr(passed_waits, "_QUIET", {})
    monkeypatch.setattr(passed_waits, "_TRIED", {})
    actions = []
    would_block = passed_waits.would_block

    def counted(m, t, d, *args):
        if d.ins is None:
            actions.append((t, d))
        return would_block(m, t, d, *args)
    monkeypatch.setattr(passed_waits, "would_block", counted)
    for c in cases:
        _run(c, recorder=Recorder())
    assert actions and len(actions) == len(set(actions))


def test_put_back_is_what_back_puts_back(cases, monkeypatch):
    attempt, seen = passed_waits.Prober._attempt, []

    def checked(self, rec, t, d, index, b, x, by, backs, memo):
        assert by is self.by[b]
        full, mine = passed_waits._back(by, x), self.changes[b]
        for cell in full.keys() | mine.keys():
            want, got = full.get(cell), passed_waits._put_back(mine, x, cell)
            assert want == got if want is None or got is None else \
                want[0] is got[0] and want[1:] == got[1:], (cell, want, got)
            assert self._since(b, frozenset([cell]), x) == (cell in full)
            seen.append(cell in full)
        return attempt(self, rec, t, d, index, b, x, by, backs, memo)
    monkeypatch.setattr(passed_waits.Prober, "_attempt", checked)
    for c in cases:
        _run(c, recorder=Recorder())
    assert True in seen and False in seen
