"""The memos of the passed-wait probes (tensix_diff.passed_waits): the cells a try reads are put back as
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


def test_put_back_is_what_back_puts_back(cases, monkeypatch):
    attempt, seen = passed_waits.Prober._attempt, []

    def checked(self, rec, t, d, index, b, x, back, memo):
        full, mine = passed_waits._back(self.by[b], x), self.changes[b]
        for cell in full.keys() | mine.keys():
            want, got = full.get(cell), passed_waits._put_back(mine, x, cell)
            assert want == got if want is None or got is None else \
                want[0] is got[0] and want[1:] == got[1:], (cell, want, got)
            assert self._since(b, frozenset([cell]), x) == (cell in full)
            seen.append(cell in full)
        return attempt(self, rec, t, d, index, b, x, back, memo)
    monkeypatch.setattr(passed_waits.Prober, "_attempt", checked)
    for c in cases:
        _run(c, recorder=Recorder())
    assert True in seen and False in seen
