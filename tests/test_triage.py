"""Divergence signatures, grouping by signature, known-divergence matching."""
from __future__ import annotations

import copy

import pytest

from golden import isa
from hwbridge.base import OK, Result
from hwbridge.golden_backend import GoldenBackend
from planted_bug import SECTION, planted_addrmod_bug, planted_golden
from tensix_diff.case import Case, Init
from tensix_diff.triage import (Divergence, Signature, classify, group, load_known, no_longer_reproducing,
                                same_divergence, triage_report)

AB = 12


def asm(*lines: str) -> list[int]:
    return [isa.assemble_line(x) for x in lines]


def device_result(case: Case, edit=None) -> Result:
    """Golden's dump of ``case`` labelled as a device result, optionally edited (a fake device bug)."""
    r = GoldenBackend().run(case)
    state = copy.deepcopy(r.state)
    if edit:
        edit(state)
    return Result(OK, state, provenance={"device": "test-fixture"})


def sig_of(case: Case, model: Result, edit=None) -> Signature | None:
    return classify(case, device_result(case, edit), model)[1]


@pytest.fixture
def planted():
    with planted_addrmod_bug():
        yield planted_golden()


def test_the_planted_addrmod_bug_has_one_signature_across_cases(planted):
    a = Case("a", "", {0: asm(f"ZEROACC clear_mode=0 addr_mode={SECTION} where=3")},
             Init(thread_config={0: {AB + SECTION: 0x0100}}))
    b = Case("b", "", {1: asm("INCRWC rwc_cr=0 rwc_d=1 rwc_b=2 rwc_a=3",
                              f"ZEROACC clear_mode=0 addr_mode={SECTION} where=9", "ZEROACC clear_mode=0 addr_mode=0 where=1")},
             Init(thread_config={1: {AB + SECTION: 0x0700}}))
    cr = Case("cr", "", {0: asm(f"ZEROACC clear_mode=0 addr_mode={SECTION} where=3")},
              Init(thread_config={0: {AB + SECTION: 0x4100}}))     # SrcBCR: the checkpoint goes wrong too
    sa, sb, scr = (sig_of(c, planted.run(c)) for c in (a, b, cr))
    assert sa == sb == Signature(("rwc.srcb",), "MATH")
    assert str(scr) == "rwc.srcb+rwc.srcb_cr @MATH"
    assert same_divergence(scr, sa) and not same_divergence(scr, sa, strict=True)
    assert sig_of(a, GoldenBackend().run(a)) is None


def test_the_instruction_class_is_the_unit_that_last_wrote_the_field():
    case = Case("gpr", "", {0: asm("SETDMAREG payload_sigselsize=0 payload_sigsel=7 setsignalsmode=0 regindex16b=10")})
    model = GoldenBackend().run(case)

    def flip(reg):
        def edit(state):
            state["gpr"]["0"][reg] ^= 1
        return edit

    assert str(sig_of(case, model, flip(5))) == "gpr @THCON"      # SETDMAREG (THCON) wrote r5's low half
    assert str(sig_of(case, model, flip(9))) == "gpr @THCON"      # same field: gpr, whichever register
    other = Case("untouched", "", {0: asm("ZEROACC clear_mode=0 addr_mode=0 where=0")})
    assert str(sig_of(other, GoldenBackend().run(other), flip(9))) == "gpr @?"   # no instruction wrote it


def test_a_status_divergence_has_its_own_signature():
    case = Case("hangs", "", {0: asm("ZEROACC clear_mode=0 addr_mode=0 where=0")})
    verdict, sig = classify(case, device_result(case), Result("hang", message="no thread can proceed"))
    assert verdict.outcome == "diverged" and str(sig) == "status.ok-hang @?"


def test_signature_text_round_trips_and_orders_fields_by_propagation():
    s = Signature(("rwc.dst", "dest.bits"), "MATH")
    assert Signature.parse(str(s)) == s
    with pytest.raises(ValueError):
        Signature.parse("no-unit")
    assert not same_divergence(s, Signature(("dest.bits",), "MATH"))           # primary field lost
    assert not same_divergence(s, Signature(("rwc.dst", "l1"), "MATH"))         # a field it never showed
    assert not same_divergence(s, Signature(("rwc.dst",), "SFPU"))              # another instruction class
    assert same_divergence(s, Signature(("rwc.dst",), "MATH"))


def _div(name: str, n: int, sig: str) -> Divergence:
    return Divergence(Case(name, "", {0: asm(*["ZEROACC clear_mode=0 addr_mode=0 where=0"] * n)}), Signature.parse(sig))


def test_grouping_counts_signatures_and_keeps_the_smallest_example(tmp_path):
    divs = [_div("c1", 9, "rwc.srcb @MATH"), _div("c2", 3, "rwc.srcb @MATH"), _div("c3", 5, "gpr @THCON"),
            _div("c4", 4, "rwc.srcb @MATH")]
    groups = group(divs)
    assert [(str(g.signature), g.count, g.smallest.case.name) for g in groups] == [
        ("rwc.srcb @MATH", 3, "c2"), ("gpr @THCON", 1, "c3")]
    assert groups[0].line().startswith("    3 x rwc.srcb @MATH  smallest: c2 (3 instructions)")


def test_known_divergences_match_by_signature_and_stale_ones_are_reported(tmp_path):
    known = tmp_path / "known.yaml"
    known.write_text(
        "- signature: 'gpr @*'\n  reason: ttsim does not model X\n  case: scalar-x\n"
        "- signature: 'rwc.fidelity @MATH'\n  reason: fidelity phase wrap\n  case: fidelity-wrap\n  backend: hw\n")
    entries = load_known(known)
    divs = [_div("c1", 2, "rwc.srcb @MATH"), _div("c3", 5, "gpr @THCON")]
    rep = triage_report(divs, seen={"scalar-x": Signature.parse("gpr @THCON"), "fidelity-wrap": None},
                        backend="hw", known_path=known)
    assert rep["new"] == 1
    by_sig = {g["signature"]: g for g in rep["groups"]}
    assert by_sig["gpr @THCON"]["known"] == "ttsim does not model X" and by_sig["rwc.srcb @MATH"]["known"] is None
    assert [k["case"] for k in rep["stale_known"]] == ["fidelity-wrap"]
    assert any("KNOWN (xfail): ttsim does not model X" in line for line in rep["lines"])
    assert any(line.startswith("known divergence no longer reproduces: rwc.fidelity @MATH") for line in rep["lines"])
    # an entry for another backend neither matches nor goes stale
    assert no_longer_reproducing(entries, {"fidelity-wrap": None}, backend="replay") == []


def test_a_malformed_known_divergences_file_is_one_clear_error(tmp_path):
    bad = tmp_path / "known.yaml"
    bad.write_text("- signature: 'gpr @*'\n")
    with pytest.raises(ValueError, match="entry 0 needs 'signature' and 'reason'"):
        load_known(bad)
    assert load_known(tmp_path / "absent.yaml") == []


def test_campaign_triage_and_the_test_run_hooks(planted, tmp_path):
    from tensix_diff.report_html import campaign_html
    from tensix_diff.triage import CampaignTriage, known_reason, stale_known
    known = tmp_path / "known.yaml"
    known.write_text("- signature: 'rwc.srcb @MATH'\n  reason: planted for this test\n  case: gone\n")
    cases = [Case(f"k{i}", "", {0: asm(*[f"ZEROACC clear_mode=0 addr_mode={SECTION} where={i}"] * (i + 1))},
                  Init(thread_config={0: {AB + SECTION: 0x0100}})) for i in range(3)]
    tri = CampaignTriage("replay", keep=2, known_path=known)
    for c in cases:
        verdict, _ = classify(c, device_result(c), planted.run(c))
        assert str(tri.add(c, verdict)) == "rwc.srcb @MATH"
        assert known_reason(c, verdict, "replay", known) == "known divergence rwc.srcb @MATH: planted for this test"
    rep = tri.report()
    assert [(g["count"], g["smallest"], g["known"]) for g in rep["groups"]] == [(3, "k0", "planted for this test")]
    assert rep["new"] == 0 and len(tri.examples) == 2
    page = campaign_html({"seed": 7, "summary": {"cases": 3, "diverged": 3}, "triage": rep}, tri.examples)
    assert "planted for this test" in page and "<h3>k1</h3>" in page and "<h3>k2</h3>" not in page
    gone = Case("gone", "", {0: asm("ZEROACC clear_mode=0 addr_mode=0 where=0")})
    verdict, _ = classify(gone, device_result(gone), planted.run(gone))
    assert stale_known(gone, verdict, "replay", known) == [
        "known divergence no longer reproduces: rwc.srcb @MATH (case gone): planted for this test"]
    assert stale_known(cases[0], verdict, "replay", known) == []


def test_the_campaign_page_draws_a_dest_difference_from_the_comparison():
    from tensix_diff.report_html import campaign_html
    case = Case("dest-diff", "", {0: asm("ZEROACC clear_mode=0 addr_mode=0 where=0")})

    def edit(state):
        state["dest"][17][2] = 0x3F80
    verdict, sig = classify(case, device_result(case, edit), GoldenBackend().run(case))
    assert str(sig) == "dest.bits @?"
    page = campaign_html({"seed": 1}, [(case, verdict)])
    assert page.count("data:image/png;base64,") == 1 and "1 Dest cells differ (rows 17..17)" in page


def test_pytest_xfails_known_divergences_and_reports_stale_ones(tmp_path):
    """The plugin end to end in a scratch project: a recorded divergence listed in the known-divergences
    file is an xfail with its reason; a listed case that now matches is reported as no longer reproducing."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from tensix_diff.case import dump_case
    from tensix_diff.store import Recording, Store
    root = Path(__file__).resolve().parents[1]
    shutil.copy(root / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = tests\naddopts = -p no:cacheprovider\n")
    corpus = tmp_path / "tests" / "corpus"
    corpus.mkdir(parents=True)
    store = Store(tmp_path / "recordings")
    for name, edit, half in (("odd-gpr", lambda s: s["gpr"]["0"].__setitem__(9, 1), 10), ("fixed-now", None, 12)):
        case = Case(name, "", {0: asm("SETDMAREG payload_sigselsize=0 payload_sigsel=7 setsignalsmode=0 "
                                      f"regindex16b={half}")})
        (corpus / f"{name}.yaml").write_text(dump_case(case))
        store.put(Recording.from_result(case, device_result(case, edit)))
    known = tmp_path / "known.yaml"
    known.write_text("- signature: 'gpr @THCON'\n  reason: planted for the plugin test\n  case: odd-gpr\n"
                     "- signature: 'rwc.* @*'\n  reason: was fixed\n  case: fixed-now\n")
    env = {**os.environ, "TENSIX_DIFF_KNOWN": str(known), "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rx", "--backend=replay",
                           f"--recordings={tmp_path / 'recordings'}"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "1 passed, 1 xfailed" in out and "known divergence gpr @THCON: planted for the plugin test" in out
    assert "known divergence no longer reproduces: rwc.* @* (case fixed-now): was fixed" in out
    assert "2 cases compared, 1 matched, 0 diverged" in out and "1 known" in out


def test_run_reports_known_divergences_as_xfail_and_does_not_fail_on_them(tmp_path, monkeypatch, capsys):
    from tensix_diff.case import dump_case
    from tensix_diff.cli import main
    from tensix_diff.store import Recording, Store
    store = Store(tmp_path / "rec")
    paths = []
    for name, edit, half in (("odd-gpr", lambda s: s["gpr"]["0"].__setitem__(9, 1), 10), ("fixed-now", None, 12)):
        case = Case(name, "", {0: asm(f"SETDMAREG payload_sigselsize=0 payload_sigsel=7 setsignalsmode=0 "
                                      f"regindex16b={half}")})
        paths.append(tmp_path / f"{name}.yaml")
        paths[-1].write_text(dump_case(case))
        store.put(Recording.from_result(case, device_result(case, edit)))
    known = tmp_path / "known.yaml"
    known.write_text("- signature: 'gpr @THCON'\n  reason: listed\n  case: odd-gpr\n"
                     "- signature: 'rwc.* @*'\n  reason: was fixed\n  case: fixed-now\n")
    monkeypatch.setenv("TENSIX_DIFF_KNOWN", str(known))
    args = ["run", *map(str, paths), "--backend", "replay", "--recordings", str(tmp_path / "rec")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "XFAIL odd-gpr: DIVERGED" in out and "    known divergence gpr @THCON: listed" in out
    assert "known divergence no longer reproduces: rwc.* @* (case fixed-now): was fixed" in out
    assert "2 cases (replay vs golden): 1 known, 1 matched" in out
    known.write_text("[]\n")
    assert main(args) == 1                               # not listed: a divergence again
