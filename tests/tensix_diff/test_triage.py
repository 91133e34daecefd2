"""Divergence signatures, grouping by signature, stale known-divergence entries (the registry itself:
test_known.py)."""
from __future__ import annotations

import copy

import pytest

from golden import isa
from tensix_diff.result import OK, Result
from hwbridge.golden_backend import GoldenBackend
from planted_bug import SECTION, planted_addrmod_bug, planted_golden
from tensix_diff.case import Case, Init
from tensix_diff.compare import Verdict
from tensix_diff.known import load_known
from tensix_diff.triage import (CampaignTriage, Divergence, Signature, classify, group, no_longer_reproducing,
                                same_divergence, stale_known, triage_report)

AB = 12


def asm(*lines: str) -> list[int]:
    return [isa.assemble_line(x) for x in lines]


def device_result(case: Case, edit=None) -> Result:
    """Golden's dump of ``case`` labelled as a device result, optionally edited (a fake device bug)."""
    r = GoldenBackend().run(case)
    state = copy.deepcopy(r.state)
    if edit:
        edit(state)
    return Result(OK, state, provenance={"device": "test-fixture", "platform": "ttsim"})


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
    assert verdict.outcome == "diverged" and str(sig) == "status.hang-ok @?"   # (reference, device) as in run


def test_signature_text_round_trips_and_orders_fields_by_propagation():
    s = Signature(("rwc.dst", "dest.bits"), "MATH")
    assert Signature.parse(str(s)) == s
    with pytest.raises(ValueError):
        Signature.parse("no-unit")
    assert not same_divergence(s, Signature(("dest.bits",), "MATH"))           # primary field lost
    assert not same_divergence(s, Signature(("rwc.dst", "l1"), "MATH"))         # a field it never showed
    assert same_divergence(s, Signature(("rwc.dst",), "SFPU"))       # the unit label is derived, never kept
    assert same_divergence(s, Signature(("rwc.dst",), "MATH"))
    assert not same_divergence(s, Signature(("rwc.dst",), "MATH"), strict=True)   # strict: the very same fields
    assert same_divergence(s, Signature(("rwc.dst", "dest.bits"), "SFPU"), strict=True)


def _div(name: str, n: int, sig: str) -> Divergence:
    return Divergence(Case(name, "", {0: asm(*["ZEROACC clear_mode=0 addr_mode=0 where=0"] * n)}), Signature.parse(sig))


def test_grouping_counts_signatures_and_keeps_the_smallest_example(tmp_path):
    divs = [_div("c1", 9, "rwc.srcb @MATH"), _div("c2", 3, "rwc.srcb @MATH"), _div("c3", 5, "gpr @THCON"),
            _div("c4", 4, "rwc.srcb @MATH")]
    groups = group(divs)
    assert [(str(g.signature), g.count, g.smallest.case.name) for g in groups] == [
        ("rwc.srcb @MATH", 3, "c2"), ("gpr @THCON", 1, "c3")]
    assert groups[0].line().startswith("    3 x rwc.srcb @MATH  smallest: c2 (3 instructions)")


def test_stale_known_entries_are_reported_only_for_cases_that_were_compared(planted, tmp_path):
    known = tmp_path / "known.yaml"
    known.write_text("- id: srcb-plant\n  reason: planted for this test\n  case: gone\n"
                     "  explains: [{fields: ['rwc.*.srcb'], when: {pairs: [[0, 1]]}}]\n")
    entries = load_known(known)
    gone = Case("gone", "", {0: asm("ZEROACC clear_mode=0 addr_mode=0 where=0")})
    verdict, _ = classify(gone, device_result(gone), planted.run(gone))
    assert verdict.outcome == "matched"
    assert [k.id for k in no_longer_reproducing(entries, {"gone": verdict}, "replay")] == ["srcb-plant"]
    assert stale_known(gone, verdict, "replay", known) == [
        "known divergence no longer reproduces: srcb-plant (case gone): planted for this test"]
    missing = Verdict("missing", "no recording")
    assert stale_known(gone, missing, "replay", known) == []        # not compared: says nothing
    rep = triage_report([], seen={"gone": verdict}, backend="replay", known_path=known)
    assert [k["id"] for k in rep["stale_known"]] == ["srcb-plant"]


def test_campaign_triage_groups_divergences_and_counts_known_ones(planted, tmp_path):
    from tensix_diff.report_campaign import campaign_html
    cases = [Case(f"k{i}", "", {0: asm(*[f"ZEROACC clear_mode=0 addr_mode={SECTION} where={i}"] * (3 - i))},
                  Init(thread_config={0: {AB + SECTION: 0x0100}})) for i in range(3)]
    tri = CampaignTriage("replay", keep=2)
    for c in cases:
        verdict, _ = classify(c, device_result(c), planted.run(c))
        assert str(tri.add(c, verdict)) == "rwc.srcb @MATH"
    tri.add(cases[0], Verdict("known", "explained", known=("x",)))
    rep = tri.report()
    assert [(g["count"], g["smallest"]) for g in rep["groups"]] == [(3, "k2")]
    assert rep["new"] == 3 and rep["known"] == 1 and len(tri.examples) == 2
    assert list(tri.smallest) == ["rwc.srcb @MATH"] and tri.smallest["rwc.srcb @MATH"][0].name == "k2"
    page = campaign_html({"seed": 7, "profile": "p", "summary": {"cases": 3, "diverged": 3}, "triage": rep},
                         tri.smallest)
    assert page.index("<b>3</b>diverged") < page.index("<h2>rwc.srcb @MATH  (3 cases)</h2>")   # summary first
    assert "smallest case: k2 (1 instructions)" in page and "ZEROACC clear_mode=0" in page
    assert "<th>golden</th>" in page and "1 case(s) fully explained" in page and "<h2>Known divergences</h2>" in page
    assert "tensix-diff minimize" in page


def test_the_campaign_page_draws_a_dest_difference_from_the_comparison():
    from tensix_diff.report_campaign import campaign_html
    case = Case("dest-diff", "", {0: asm("ZEROACC clear_mode=0 addr_mode=0 where=0")})

    def edit(state):
        state["dest"][17][2] = 0x3F80
    verdict, sig = classify(case, device_result(case, edit), GoldenBackend().run(case))
    assert str(sig) == "dest.bits @?"
    rep = {"seed": 1, "triage": {"groups": [{"signature": str(sig), "count": 1, "smallest": case.name,
                                             "smallest_instructions": 1, "cases": [case.name]}]}}
    page = campaign_html(rep, {str(sig): (case, verdict)})
    assert page.count("data:image/png;base64,") == 1 and "1 Dest cells differ (rows 17..17)" in page
    assert ">rows 256-511<" in page and ">+64<" in page and ">column<" in page     # axes
    assert "same, non-zero" in page and "16 bits differ" in page                      # legend


def test_pytest_names_known_divergences_known_and_reports_stale_ones(tmp_path):
    """The plugin end to end in a scratch project: a recorded divergence listed in the known-divergences
    file is "known" (pytest's xfail, named as tensix-diff names it) with its reason; a listed case that
    now matches is reported as no longer reproducing."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from tensix_diff.case import dump_case
    from tensix_diff.store import Recording, Store
    root = Path(__file__).resolve().parents[2]
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
    known.write_text("- id: odd-gpr9\n  reason: planted for the plugin test\n  case: odd-gpr\n"
                     "  explains: [{fields: ['gpr.0.9'], when: {pairs: [[0, 1]]}}]\n"
                     "- id: fixed\n  reason: was fixed\n  case: fixed-now\n"
                     "  explains: [{fields: ['rwc.*'], when: {low_bits_agree: 4}}]\n"
                     "- id: never-used\n  reason: explains nothing\n"
                     "  explains: [{fields: ['l1.*'], when: {low_bits_agree: 4}}]\n")
    env = {**os.environ, "TENSIX_DIFF_KNOWN": str(known), "PYTHONPATH": str(root)}
    env.pop("CI", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rx", "--backend=replay",
                           f"--recordings={tmp_path / 'recordings'}"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "1 passed, 1 known in" in out and "xfail" not in out
    assert "known tests/corpus/odd-gpr.yaml::odd-gpr: known divergence odd-gpr9: planted for the plugin test" in out
    assert "known divergence no longer reproduces: fixed (case fixed-now): was fixed" in out
    assert "2 cases compared, 1 matched, 0 diverged, 1 known" in out
    assert "known-divergence entry never-used explained no difference in this run" in out
    assert "known-divergence entry odd-gpr9" not in out


def test_run_reports_known_divergences_as_xfail_and_does_not_fail_on_them(tmp_path, monkeypatch, capsys):
    from tensix_diff.case import dump_case
    from tensix_cli.cli import main
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
    known.write_text("- id: odd-gpr9\n  reason: listed\n  case: odd-gpr\n"
                     "  explains: [{fields: ['gpr.0.9'], when: {pairs: [[0, 1]]}}]\n"
                     "- id: fixed\n  reason: was fixed\n  case: fixed-now\n"
                     "  explains: [{fields: ['rwc.*'], when: {low_bits_agree: 4}}]\n")
    monkeypatch.setenv("TENSIX_DIFF_KNOWN", str(known))
    args = ["run", *map(str, paths), "--backend", "replay", "--recordings", str(tmp_path / "rec")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "known odd-gpr: 1 of" in out and "    known divergence odd-gpr9: listed" in out
    assert "known divergence no longer reproduces: fixed (case fixed-now): was fixed" in out
    assert "2 cases (replay vs golden): 1 known, 1 matched" in out
    known.write_text("- id: odd-gpr9\n  reason: another value\n"
                     "  explains: [{fields: ['gpr.0.9'], when: {pairs: [[0, 2]]}}]\n")
    assert main(args) == 1                               # the predicate does not hold: a divergence again
    known.write_text("[]\n")
    assert main(args) == 1                               # not listed: a divergence again
