"""Coverage of the ISA table by the corpus and its recordings; the HTML report and its Dest heatmaps."""
from __future__ import annotations

import base64
import copy
import json
import re
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from golden import isa
from tensix_diff.result import OK, Result
from hwbridge.golden_backend import GoldenBackend
from tensix_diff.case import Case, dump_case
from tensix_cli.cli import main
from tensix_diff.assess import assess
from tensix_cli.coverage import DEFAULT_CORPUS, LEVELS, html_report, measure, value_class
from tensix_diff.effects import observed_effects
from tensix_diff.report_html import dest_heatmap, png
from tensix_diff.store import Recording, Store


def asm(*lines: str) -> list[int]:
    return [isa.assemble_line(x) for x in lines]


def device(case: Case, edit=None) -> Result:
    """What a device returns: golden's dump (or, where golden cannot run the case, an empty program's)."""
    r = GoldenBackend().run(case)
    state = copy.deepcopy(r.state if r.ok else GoldenBackend().run(Case("empty", "", {})).state)
    if edit:
        edit(state)
    return Result(OK, state, provenance={"device": "test-fixture", "platform": "ttsim"})


COMPARED = Case("cmp", "", {0: asm("SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=15",
                                   "ZEROACC clear_mode=0 addr_mode=2 where=5")})
GOLDEN_ONLY = Case("gold", "", {1: asm("INCRWC rwc_cr=0 rwc_d=1 rwc_b=15 rwc_a=0")})
NOT_MODELLED = Case("unmodelled", "", {0: asm("ZEROACC clear_mode=4 addr_mode=7 where=0")})


def _run(case, dev):
    """What coverage.collect makes of one case: golden's result, the recording, observed effects, verdict."""
    g = GoldenBackend().run(case)
    if dev is None or not (dev.ok and g.ok):
        return (case, g, dev, None, None, "")
    v = assess(case, g, dev, ("golden", "device"), "replay")
    observed = observed_effects(case, dev.state, g.state).observed if v.outcome == "matched" else None
    return (case, g, dev, observed, v.outcome, v.message)


def _runs():
    return [_run(COMPARED, device(COMPARED)), _run(GOLDEN_ONLY, None), _run(NOT_MODELLED, device(NOT_MODELLED))]


def test_value_classes():
    assert [value_class(v, 4) for v in (0, 1, 15, 7)] == ["zero", "one", "max", "other"]
    assert value_class(1, 1) == "one"


def test_the_classes_a_constraint_allows():
    from generators.coverage_weights import all_reachable_classes, possible_classes, range_classes
    assert range_classes(0, 15, 4) == {"zero", "one", "max", "other"}
    assert range_classes(2, 3, 4) == {"other"} and range_classes(1, 1, 4) == {"one"}
    assert range_classes(0, 14, 4, align=2) == {"zero", "other"} and range_classes(5, 4, 4) == set()
    assert range_classes(0, 3, 2) == {"zero", "one", "max", "other"}      # 2 is "other" at width 2
    assert value_class(2, 2) == "other" and possible_classes(isa.Field("f", 1, 0)) == {"zero", "one", "max", "other"}
    table = isa.table()
    for name, f, k in all_reachable_classes():
        assert k in possible_classes(next(x for x in table[name].fields if x.name == f)), (name, f, k)


def test_each_instruction_gets_its_strongest_evidence():
    cov = measure(_runs())
    ins = cov.instructions
    # SETRWC clears counters that are already 0: it ran in a matched case, but its effect was never seen
    assert ins["SETRWC"].level == "compared" and ins["ZEROACC"].level == "observed"
    assert ins["INCRWC"].level == "golden"
    assert ins["MVMUL"].level == "never"
    assert ins["ZEROACC"].addr_modes("observed") == [2]
    assert ins["ZEROACC"].cases == {"observed": 1, "compared": 0, "recorded": 1, "golden": 0}
    assert ins["SETRWC"].cases == {"observed": 0, "compared": 1, "recorded": 0, "golden": 0}
    assert ("addr_mode", 7) in ins["ZEROACC"].seen("modes", "recorded")       # device ran it, golden could not
    assert ("rwc_b", "max") in ins["INCRWC"].seen("classes", "golden")
    assert not ins["INCRWC"].seen("classes", "compared")
    assert sum(cov.count(lv) for lv in LEVELS) == len(isa.table()) == 137
    assert cov.case_levels == {"observed": 0, "compared": 1, "recorded": 1, "golden": 1, "never": 0}
    text = "\n".join(cov.summary_lines())
    assert "1 with an observed effect in a matched case, 1 more ran in compared cases" in text
    assert "1 ran on golden only" in text and "134 never ran" in text
    supported = sum(i.golden == "modelled" and not i.ttsim_unsupported for i in isa.table().values())
    assert (f"modelled by golden and run by ttsim: {supported} instructions, 1 at the bar (1 with an observed effect"
            " in >= 1 matched cases, 0 that isa.yaml marks unobserved in >= 1 matched cases)") in cov.supported_line(1)
    assert "ZEROACC" not in cov.supported_line(bar=1) and "ZEROACC 1" in cov.supported_line()


def test_accepted_classes_are_the_constraints_and_what_a_recording_ran(monkeypatch):
    """The denominator of the field-value class figure: what constraints.yaml lets a profile draw, plus what
    ttsim ran in a recording (even where golden could not); never what ran on golden only."""
    from generators import coverage_weights
    monkeypatch.setattr(coverage_weights, "all_reachable_classes", lambda: {("ZEROACC", "where", "one")})
    cov = measure(_runs())
    acc = cov.accepted_class_set()
    assert ("ZEROACC", "where", "one") in acc                    # constraints only
    assert ("ZEROACC", "addr_mode", "max") in acc                # NOT_MODELLED: ttsim ran it, golden refused
    assert ("ZEROACC", "addr_mode", "other") in acc and ("SETRWC", "bitmask", "other") in acc
    assert not any(n == "INCRWC" for n, _, _ in acc)             # golden only
    accepted, total, observed, compared = cov.accepted_classes()
    assert accepted == len(acc) and observed <= compared <= accepted < total
    assert observed == len(cov.instructions["ZEROACC"].seen("classes", "observed")) > 0
    assert f"{accepted} of {total}; {observed} observed" in cov.accepted_classes_line()


def test_an_unobserved_instruction_meets_the_bar_by_compared_cases_and_no_other_does():
    """NOP (isa.yaml: unobserved) in a matched case counts; SETRWC, which has effects a dump can show but showed
    none here, does not."""
    case = Case("nop", "", {0: asm("NOP", "SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=15",
                                   "ZEROACC clear_mode=0 addr_mode=2 where=5")})
    cov = measure([_run(case, device(case))])
    assert isa.lookup("NOP").unobserved and not isa.lookup("SETRWC").unobserved
    assert cov.instructions["NOP"].cases["compared"] == 1 and cov.instructions["NOP"].cases["observed"] == 0
    line = cov.supported_line(bar=1)
    assert "2 at the bar (1 with an observed effect in >= 1 matched cases, 1 that isa.yaml marks unobserved" in line
    below = line.split("below: ")[1]
    assert re.search(r"(?<![A-Z_])SETRWC 0\b", below) and not re.search(r"(?<![A-Z_])NOP \d", below)
    assert "NOP 1 (unobserved: compared)" in cov.supported_line(bar=2)


def test_the_html_report_is_self_contained_and_draws_the_dest_difference():
    def flip(state):
        state["dest"][700][3] ^= 0x00FF
    runs = _runs()
    runs[0] = _run(COMPARED, device(COMPARED, flip))
    cov = measure(runs)
    assert [c.name for c, *_ in cov.divergences] == ["cmp"]
    page = html_report(cov)
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)            # no external asset
    assert page.index('class="cards"') < page.index("<h2>Divergences") < page.index("<h2>Summary")   # what matters first
    assert page.count("data:image/png;base64,") == 1 and "1 Dest cells differ (rows 700..700)" in page
    assert "<tr><td>ZEROACC</td><td>addr_mode</td><td>-</td><td>2</td><td>7</td><td>-</td>" in page   # 7: recorded
    raw = base64.b64decode(re.search(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page).group(1))
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", raw[16:24])
    img = dest_heatmap(runs[0][2].state["dest"], runs[0][1].state["dest"])
    assert (height, width) == img.shape[:2]
    # row 700 is in the third panel (rows 512..767), line 188; column 3; eight differing bits: red
    red = img[188 * 2, 2 * (16 * 5 + 4) + 3 * 5]
    assert red[0] == 255 and red[1] == red[2] == 180 - 8 * 10
    assert tuple(img[0, 0]) == (238, 238, 238)


def test_png_encoder_round_trips():
    rgb = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    raw = png(rgb)
    idat = raw[raw.index(b"IDAT") + 4:raw.index(b"IEND") - 8]
    rows = zlib.decompress(idat)
    assert rows == b"\x00" + rgb[0].tobytes() + b"\x00" + rgb[1].tobytes()


def test_the_command_reads_a_corpus_and_its_recordings(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))       # the effects cache, kept out of $HOME
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for c in (COMPARED, GOLDEN_ONLY, NOT_MODELLED):
        (corpus / f"{c.name}.yaml").write_text(dump_case(c))
    store = Store(tmp_path / "rec")
    for c in (COMPARED, NOT_MODELLED):
        store.put(Recording.from_result(c, device(c)))
    out_html, out_json = tmp_path / "cov.html", tmp_path / "cov.json"
    code = main(["coverage", str(corpus), "--recordings", str(tmp_path / "rec"), "--html", str(out_html),
                 "--json", str(out_json)])
    text = capsys.readouterr().out
    assert code == 0
    assert re.search(r"^ZEROACC\s+MATH\s+\S+\s+observed\s+1\s+1\s+0\s+2\s", text, re.M)
    assert "corpus: 3 cases: 1 compared, 1 recorded, 1 golden, 0 never" in text
    figures = json.loads(out_json.read_text())
    assert figures["levels"]["golden"] == 1 and figures["instructions"]["INCRWC"]["evidence"] == "golden"
    assert out_html.read_text().startswith("<!DOCTYPE html>")
    assert list((tmp_path / "cache" / "tensix-diff" / "effects").glob("*.json"))     # effects were cached
    assert main(["coverage", str(corpus), "--recordings", str(tmp_path / "rec"), "--summary"]) == 0
    assert "1 with an observed effect in a matched case" in capsys.readouterr().out  # the same from the cache


def test_a_run_stopped_part_way_keeps_the_effects_it_computed(tmp_path, monkeypatch):
    """The effects cache is written while coverage works (here after every case), so an interrupted run over
    a big corpus loses at most the last interval."""
    import tensix_cli.coverage as cov_mod
    import tensix_cli.coverage_effects as effects_mod
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(effects_mod, "SAVE_EVERY_S", 0.0)
    cases = [Case(f"z{i}", "", {0: asm(f"ZEROACC clear_mode=0 addr_mode=2 where={i}")}) for i in range(3)]
    store = Store(tmp_path / "rec")
    for c in cases:
        store.put(Recording.from_result(c, device(c)))
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for c in cases:
        (corpus / f"{c.name}.yaml").write_text(dump_case(c))
    real, calls = effects_mod.effects, []

    def stop_at_third(item):
        calls.append(item)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(item)
    monkeypatch.setattr(effects_mod, "effects", stop_at_third)
    try:
        cov_mod.collect([corpus], recordings=str(tmp_path / "rec"), jobs=1)
    except KeyboardInterrupt:
        pass
    (saved,) = (tmp_path / "cache" / "tensix-diff" / "effects").glob("*.json")
    assert len(json.loads(saved.read_text())) == 2


def test_curated_cases_are_measured_against_all_137_instructions(capsys, monkeypatch, tmp_path):
    """The spec and delta cases, a REPLAY kernel and a three-thread tt-llk kernel (MOPs, RISC-V actions),
    cold cache, on this test's own process: ablating every instruction of all 74 kernels took ~290 CPU-s,
    which is `tensix-diff coverage`'s job, not the suite's; every curated case is compared by its own test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    kernels = DEFAULT_CORPUS / "kernels"
    paths = [DEFAULT_CORPUS / "spec", DEFAULT_CORPUS / "deltas", kernels / "matmul-addrmod-replay.yaml",
             kernels / "kernel-datacopy-bf16.yaml"]
    assert main(["coverage", *map(str, paths), "--summary", "--jobs", "1"]) == 0
    text = capsys.readouterr().out
    m = re.search(r"(\d+) with an observed effect in a matched case, (\d+) more ran in compared cases \(effect never"
                  r" seen\), (\d+) recorded on a device but not compared, (\d+) ran on golden only, (\d+) never ran", text)
    assert m and sum(map(int, m.groups())) == 137


def test_the_format_matrix_table_counts_verdicts_per_cell(tmp_path, capsys):
    from tensix_diff.case import load_bundle, write_bundle
    source = Path(__file__).parents[1] / "fuzz_corpus" / "ttsim-formats-s3001-part01.cases.jsonl.gz"
    bundle = tmp_path / "few.cases.jsonl.gz"
    write_bundle(bundle, load_bundle(source)[:6])
    assert main(["coverage", str(bundle), "--matrix-only"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["SrcA", "SrcB", "Dst", "phase"]
    rows = [line.split() for line in out[1:-1]]
    assert rows and all(int(r[5]) + int(r[6]) + int(r[7]) + int(r[8]) == int(r[4]) for r in rows)
    assert sum(int(r[6]) for r in rows) == 0 and out[-1].endswith("with fewer")     # recorded on ttsim: no divergence


def test_exhaustive_and_provenance_together_are_refused_in_one_line(tmp_path, capsys, monkeypatch):
    """Two ways to find observed effects at once: a usage error (exit 2) before anything runs, never one
    of them taken silently."""
    import tensix_cli.coverage as cov_mod
    monkeypatch.setattr(cov_mod, "collect", lambda *a, **k: pytest.fail("coverage ran"))
    assert main(["coverage", str(tmp_path), "--exhaustive", "--provenance"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--provenance" in err and "--exhaustive" in err
