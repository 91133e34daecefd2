"""Ablation from the full run's state before the ablated word (tensix_diff.prefix_ablation) gives exactly what
ablation from scratch gives; golden.state.copy_state copies every part of a state and same_state compares it."""
from __future__ import annotations

import copy
import glob
from pathlib import Path

import numpy as np
import pytest

from golden.core import decode_program
from golden.state import LatchedWait, TensixState, copy_state, same_state
from tensix_cli.coverage_effects import Saturating
from tensix_diff import effects as E
from tensix_diff import prefix_ablation as PA
from tensix_diff.case import load_any, parse_case
from tensix_diff.golden_run import run_golden

ROOT = Path(__file__).resolve().parents[2]
ALL = ("dest", "dest_valid", "rwc", "adc", "gpr", "l1", "config")
BUNDLES = ["ttsim-arith-s2027-part01", "ttsim-sfpu-cc-s3004-part01", "ttsim-formats-s3001-part01",
           "ttsim-regfile-s2101-part01"]


def _leaves(x, path=()):
    """(path, value) of every plain value in a state: dataclass fields, list/dict items, array cells (the first)."""
    if isinstance(x, np.ndarray):
        yield path + ((0,) * x.ndim,), x
    elif hasattr(x, "__dataclass_fields__") or hasattr(x, "pages"):
        for k, v in vars(x).items():
            yield from _leaves(v, path + (("attr", k),))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _leaves(v, path + (i,))
    elif isinstance(x, dict):
        for k, v in x.items():
            yield from _leaves(v, path + (("key", k),))
    else:
        yield path, x


def _change(s, path):
    """Change the value at ``path`` in ``s`` (a container gains an entry where it is empty)."""
    *head, last = path
    for k in head:
        s = getattr(s, k[1]) if isinstance(k, tuple) and k[0] == "attr" else s[k[1]] if isinstance(k, tuple) else s[k]
    if isinstance(s, np.ndarray):
        s[last] = s[last] ^ 1 if s.dtype != bool else not s[last]
        return
    get = (lambda: getattr(s, last[1])) if isinstance(last, tuple) and last[0] == "attr" else (
        lambda: s[last[1] if isinstance(last, tuple) else last])
    v = get()
    new = (not v if isinstance(v, bool) else v ^ 1 if isinstance(v, int) else v + "x" if isinstance(v, str)
           else LatchedWait(1) if v is None else (not v[0], v[1]) if isinstance(v, tuple) else None)
    if isinstance(v, bytearray):
        v[0] ^= 1
    elif isinstance(v, (list, dict)):        # an empty container: add an entry
        v.append((True, 1)) if isinstance(v, list) else v.__setitem__((0, 1) if not v else 99, 1)
    elif isinstance(last, tuple) and last[0] == "attr":
        setattr(s, last[1], new)
    else:
        s[last[1] if isinstance(last, tuple) else last] = new


def test_copy_state_copies_every_part_and_same_state_sees_every_change():
    s = TensixState()
    s.l1.write(0x100, b"\x01\x02")
    paths = [p for p, _ in _leaves(s)]
    assert len(paths) > 1000             # every Config word, GPR, counter field, ... is a leaf
    reference = copy.deepcopy(s)
    for path in paths:
        c = copy_state(s)
        assert same_state(s, c)
        _change(c, path)
        assert not same_state(s, c), path          # the change is seen ...
        assert same_state(s, reference), path      # ... and the original shares nothing with the copy


def _single_thread_cases() -> list:
    cases = [c for b in BUNDLES for c in load_any(glob.glob(str(ROOT / "tests/fuzz_corpus" / f"{b}.cases.jsonl.gz")))[:5]]
    cases += load_any([ROOT / "tests/corpus/spec", ROOT / "tests/corpus/deltas"])
    return [c for c in cases if PA.one_stream(c) and run_golden(c).ok]


@pytest.fixture(scope="module")
def single():
    return _single_thread_cases()


def _answers(cases, monkeypatch, prefix: bool):
    if not prefix:
        monkeypatch.setattr(E, "one_stream", lambda c: False)
    out = [(E.observed_effects(c, ALL), E.observed_effects(c, ALL, saturation=Saturating(cap=2))) for c in cases]
    monkeypatch.undo()
    return out


def test_ablating_from_the_prefix_gives_what_ablating_from_scratch_gives(single, monkeypatch):
    assert len(single) >= 30
    assert _answers(single, monkeypatch, True) == _answers(single, monkeypatch, False)


def test_a_state_taken_one_word_late_would_change_the_answer(single, monkeypatch):
    """The comparison above can fail: taking the state after the word instead of before (the ablated word
    then still ran) changes the answers on these cases."""
    scratch = _answers(single, monkeypatch, False)

    def late(case, visit):
        m = E.Tensix()
        E.apply_init(m.s, case)

        def step(t, d, index):
            m.step(t, d, index)
            visit(index, m)
        m.run(case.threads, step=step)
        return m
    monkeypatch.setattr(E, "walk", late)
    assert _answers(single, monkeypatch, True) != scratch


def test_a_word_whose_nop_rejoins_the_full_run_is_cut_short_and_one_that_differs_is_not():
    """SETRWC A=5 twice: the NOP in place of the second leaves the state as the full run's after it (SAME);
    the NOP in place of the first does not (A stays 0 until the second)."""
    a5 = "SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=5 bitmask=1"
    c = parse_case(f"name: t\ndescription: ''\nthreads:\n  0:\n    - {a5}\n    - {a5}\n    - NOP\n")
    assert PA.one_stream(c)
    states = {}
    end = PA.walk(c, lambda i, m: states.__setitem__(i, copy_state(m.s)))
    states[3] = end.s
    program = decode_program(c.threads[0])
    assert PA.ablated_run(copy_state(states[1]), 0, program, 1, E._NOP, states[2]) is PA.SAME
    first = PA.ablated_run(copy_state(states[0]), 0, program, 0, E._NOP, states[1])
    assert first is not PA.SAME and first.s.rwc[0].srca == 5
    assert E.observed_effects(c, ALL).observed == ((0, 0),)     # neither alone shows: the collective rule


@pytest.mark.parametrize("bundle", BUNDLES[:2])
def test_a_saturating_answer_observes_something_exactly_where_any_observed_does(bundle):
    """coverage leaves the verdict's "nothing observable" to the effects it computes anyway."""
    for c in load_any(glob.glob(str(ROOT / "tests/fuzz_corpus" / f"{bundle}.cases.jsonl.gz")))[:10]:
        state = run_golden(c).state
        if state is not None:
            sat = Saturating(cap=1)
            sat.cases.update({n: 1 for n in ("SETRWC", "SFPLOADI", "SETC16")})
            assert E.any_observed(c, ALL, state) == (E.observed_effects(c, ALL, saturation=sat).count > 0), c.name
