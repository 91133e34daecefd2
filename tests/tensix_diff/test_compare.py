"""Bit-exact comparison of observed states and backend Results."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from tensix_diff.result import Result, dump_form, same_value
from tensix_diff.compare import (DIVERGED, MATCHED, NothingCompared, compare, dest_bf16, dest_fp16, judge)


def state() -> dict:
    return {
        "dest": [[0] * 16 for _ in range(1024)],
        "dest_valid": [True] * 1024,
        "rwc": {str(t): dict.fromkeys(("srca", "srca_cr", "srcb", "srcb_cr", "dst", "dst_cr", "fidelity", "bias"), 0)
                for t in range(3)},
        "adc": {str(t): {u: {str(c): dict.fromkeys(("x", "x_cr", "y", "y_cr", "z", "z_cr", "w", "w_cr"), 0)
                             for c in range(2)} for u in ("unpack0", "unpack1", "pack")} for t in range(3)},
        "gpr": {str(t): [0] * 64 for t in range(3)},
        "l1": {"0x20000": "00112233"},
        "config": {"0": {"1": 5}},
    }


def test_equal_states_match_and_count_everything():
    c = compare(state(), state())
    assert c.matched and not c.diffs
    assert c.compared == 16384 + 1024 + 24 + 144 + 192 + 4 + 1
    assert c.signature() == ()


def test_one_bit_in_dest_reads_in_a_few_lines():
    a = state()
    a["dest"][5][3] = 0x007F  # BF16 1.0 in Dst16b storage order (Sign, Man7, Exp8)
    c = compare(state(), a)
    assert not c.matched
    assert len(c.diffs) == 1
    d = c.diffs[0]
    assert (d.region, d.location, d.expected, d.actual) == ("dest", "row 5 col 3", 0, 0x7F)
    report = c.report()
    assert len(report.splitlines()) <= 3
    assert "dest row 5 col 3: expected 0x0, actual 0x7f" in report
    assert "bf16 0 -> 1" in report
    assert c.signature() == (("dest",),)


def test_dest_float_readings_use_storage_bit_order():
    assert dest_bf16(0x007F) == "1"            # exp 127, man 0
    assert dest_bf16(0x807F) == "-1"
    assert dest_bf16(0x4080) == "3"            # man 0x40 (0.5), exp 128: 1.5 * 2
    assert dest_fp16(0x000F) == "1"            # exp 15, man 0
    assert dest_fp16(0x8010) == "-2"           # exp 16
    assert dest_fp16(0x4010) == "3"            # man 0x200 (0.5), exp 16


def test_wholesale_difference_is_summarised():
    a = state()
    a["dest"] = [[0xFFFF] * 16 for _ in range(1024)]
    c = compare(state(), a)
    assert len(c.diffs) == 16384
    report = c.report(limit=5)
    assert "dest: 16384 cells differ in 1024 rows (0..1023), 16 columns" in report
    assert "... and 16379 more" in report
    assert len(report.splitlines()) < 12


def test_fields_regions_and_l1_bytes_are_named():
    a = state()
    a["rwc"]["1"]["dst"] = 4
    a["adc"]["2"]["pack"]["1"]["y"] = 3
    a["gpr"]["0"][7] = 0x12345678
    a["l1"]["0x20000"] = "00112333"
    a["config"]["0"]["1"] = 6
    a["dest_valid"][9] = False
    c = compare(state(), a)
    lines = c.report().splitlines()
    for want in ("rwc thread 1 dst: expected 0x0, actual 0x4",
                 "adc thread 2 pack channel 1 y: expected 0x0, actual 0x3",
                 "gpr thread 0 r7: expected 0x0, actual 0x12345678",
                 "l1 0x20002: expected 0x22, actual 0x23",
                 "config state 0 [1]: expected 0x5, actual 0x6",
                 "dest_valid row 9: expected valid, actual invalid"):
        assert any(want in line for line in lines), want
    assert set(c.signature()) == {("rwc", "1", "dst"), ("adc", "2", "pack", "1", "y"), ("gpr", "0", 7),
                                  ("l1", "0x20000"), ("config", "0", "1"), ("dest_valid",)}


def test_only_commonly_observed_state_is_compared():
    a = state()
    del a["dest_valid"]
    del a["l1"]
    a["gpr"] = {"1": [0] * 64}
    c = compare(state(), a)
    assert c.matched
    assert "dest_valid (only in expected)" in c.unobserved
    assert c.compared == 16384 + 24 + 144 + 64 + 1


def test_nothing_compared_fails_loudly():
    with pytest.raises(NothingCompared):
        compare({"dest": [[0] * 16] * 1024}, {"gpr": {"0": [0] * 64}})
    with pytest.raises(NothingCompared):
        compare({}, {})


def test_shape_mismatch_is_a_difference_not_a_crash():
    a = state()
    a["dest"] = a["dest"][:10]
    a["gpr"]["0"] = "junk"
    c = compare(state(), a)
    assert {d.key for d in c.diffs} == {("dest", "shape"), ("gpr", "shape")}


def test_raw_bits_not_values():
    a, b = state(), state()
    a["dest"][0][0], b["dest"][0][0] = 0x0000, 0x8000  # +0 and -0 differ as bits
    assert not compare(a, b).matched
    a["gpr"]["1"][0], b["gpr"]["1"][0] = 0x7F800000, 0x7FC00000  # two NaN-ish patterns still differ
    assert len(compare(a, b).diffs) == 2


def test_judge_statuses():
    s = state()
    ok = Result("ok", s)
    assert judge(ok, Result("ok", copy.deepcopy(s))).outcome == MATCHED
    bad = copy.deepcopy(s)
    bad["rwc"]["0"]["srca"] = 1
    v = judge(ok, Result("ok", bad))
    assert v.outcome == DIVERGED and v.signature() == (("rwc", "0", "srca"),)
    assert judge(Result("hang", message="x"), Result("hang")).outcome == MATCHED
    v = judge(Result("hang", message="waits"), ok, ("golden", "hw"))
    assert v.outcome == DIVERGED and v.signature() == (("status", "hang", "ok"),)
    assert judge(ok, Result("device-error", message="timeout")).outcome == "device-failed"
    assert judge(ok, Result("missing", message="no recording")).outcome == "missing"
    assert judge(ok, Result("stale", message="old")).outcome == "stale"
    v = judge(Result("not-modelled", message="FOO"), ok, ("golden", "replay"))
    assert v.outcome == "uncompared" and "golden: not-modelled: FOO" in v.message


def test_unobserved_keys_are_listed_in_a_stable_order():
    """Keys one side lacks are listed sorted (numbers by value), so two reports of the same run diff cleanly."""
    e, a = state(), state()
    e["config"] = {"0": {str(k): 5 for k in (10, 1, 2)}}
    a["config"] = {"0": {"1": 5}}
    for u in ("pack", "unpack0"):
        del a["adc"]["2"][u]
    c = compare(e, a)
    assert c.unobserved == ["adc 2 pack (only in expected)", "adc 2 unpack0 (only in expected)",
                            "config 0 2 (only in expected)", "config 0 10 (only in expected)"], c.unobserved


def _arrays(s: dict) -> dict:
    """``s`` with Dest and its valid bits in the in-process form (Result's note)."""
    return {**s, "dest": np.array(s["dest"], dtype=np.uint16), "dest_valid": np.array(s["dest_valid"], dtype=bool)}


def test_dest_as_arrays_compares_and_reports_as_the_dump_lists_do():
    a, b = state(), state()
    a["dest"][5][3], a["dest"][900][15], b["dest"][900][0] = 0x007F, 0x8000, 1
    a["dest_valid"][9] = False
    b["rwc"]["1"]["dst"] = 4
    want = compare(a, b, ("golden", "ttsim"))
    for left, right in ((_arrays(a), _arrays(b)), (_arrays(a), b), (a, _arrays(b))):
        got = compare(left, right, ("golden", "ttsim"))
        assert (got.compared, got.diffs, got.report(2), got.report()) == \
            (want.compared, want.diffs, want.report(2), want.report())
        assert all(type(d.expected) is type(d.actual) is (bool if d.region == "dest_valid" else int) for d in got.diffs)
    assert [d.location for d in want.diffs if d.region == "dest"] == ["row 5 col 3", "row 900 col 0", "row 900 col 15"]
    same = compare(_arrays(a), _arrays(a))
    assert same.matched and same.compared == compare(a, a).compared == 16384 + 1024 + 24 + 144 + 192 + 4 + 1
    assert same_value(_arrays(a), a) and not same_value(_arrays(a), _arrays(b))
    assert dump_form(_arrays(a)) == a
