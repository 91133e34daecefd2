"""The three-way oracle assigns blame from golden, a simulator's and a card's recordings of one case
(fixtures only: two device kinds in a scratch store, never labelled silicon in the committed store)."""
from __future__ import annotations

import copy

import pytest

from golden import isa
from tensix_diff.result import OK, Result
from hwbridge.golden_backend import GoldenBackend
from tensix_diff.case import Case, dump_case
from tensix_cli.cli import main
from tensix_diff.store import Store
from tensix_diff.three_way import three_way

SIM = {"device": "ttsim 1.10.0", "device_kind": "simulator", "platform": "ttsim", "exalens": "0.4.2",
       "umd": "0.9.14", "core": "1,2"}
CARD = {**SIM, "device": "card-fixture p150a (test data, not a device)", "device_kind": "silicon",
        "platform": "blackhole"}
CASE = Case("three", "", {0: [isa.assemble_line("SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=15"),
                              isa.assemble_line("INCRWC rwc_cr=0 rwc_d=3 rwc_b=1 rwc_a=2")]})


def _result(prov: dict, srca: int | None = None) -> Result:
    state = copy.deepcopy(GoldenBackend().run(CASE).state)
    state.pop("dest_valid")
    if srca is not None:
        state["rwc"]["0"]["srca"] = srca
    return Result(OK, state, provenance=prov)


@pytest.mark.parametrize("sim, card, golden_srca, blame", [
    (None, None, None, "agree"),
    (None, None, 9, "model bug"),
    (9, None, None, "simulator"),
    (None, 9, None, "erratum/harness"),
    (7, 9, None, "unresolved"),
])
def test_blame_in_each_pattern(tmp_path, sim, card, golden_srca, blame):
    store = Store(tmp_path)
    store.record(CASE, _result(SIM, sim), "all")
    store.record(CASE, _result(CARD, card), "all")
    golden = GoldenBackend().run(CASE)
    if golden_srca is not None:
        golden.state["rwc"]["0"]["srca"] = golden_srca
    tw = three_way(CASE, golden, Store(tmp_path))
    assert tw.blame == blame, tw.line()
    assert tw.devices == {"simulator": "ttsim 1.10.0", "silicon": CARD["device"]}


def test_two_answers_name_the_pair_and_the_command_reports(tmp_path, capsys):
    store = Store(tmp_path / "rec")
    store.record(CASE, _result(SIM), "all")
    assert three_way(CASE, GoldenBackend().run(CASE), Store(tmp_path / "rec")).blame == "golden=ttsim"
    store.record(CASE, _result(CARD, 9), "all")
    path = tmp_path / "three.yaml"
    path.write_text(dump_case(CASE))
    code = main(["run", str(path), "--three-way", "--recordings", str(tmp_path / "rec"),
                 "--html", str(tmp_path / "t.html")])
    out = capsys.readouterr().out
    assert code == 1 and f"three: golden: ok; ttsim 1.10.0: ok; {CARD['device']}: ok ->" in out
    assert "-> erratum/harness" in out and "1 cases (three-way): 1 erratum/harness" in out
    assert "erratum/harness" in (tmp_path / "t.html").read_text()


CARD_B = {**CARD, "device": "card-fixture p150a second card (test data, not a device)"}


def test_one_column_per_recorded_device_and_no_silicon_said(tmp_path, capsys):
    store = Store(tmp_path / "rec")
    store.record(CASE, _result(SIM), "all")
    store.record(CASE, _result({**SIM, "device": "ttsim 1.9.0"}), "all")
    tw = three_way(CASE, GoldenBackend().run(CASE), Store(tmp_path / "rec"))
    assert list(tw.columns) == ["ttsim 1.10.0", "ttsim 1.9.0"] and tw.devices == {"simulator": "ttsim 1.10.0"}
    assert tw.line() == "three: golden: ok; ttsim 1.10.0: ok; ttsim 1.9.0: ok; no silicon recording -> golden=ttsim"
    store.record(CASE, _result(CARD), "all")
    store.record(CASE, _result(CARD_B), "all")
    tw = three_way(CASE, GoldenBackend().run(CASE), Store(tmp_path / "rec"))
    assert len(tw.columns) == 4 and "no silicon recording" not in tw.line() and tw.blame == "agree"
    path = tmp_path / "three.yaml"
    path.write_text(dump_case(CASE))
    assert main(["run", str(path), "--three-way", "--recordings", str(tmp_path / "rec"),
                 "--html", str(tmp_path / "t.html")]) == 0
    assert f"{CARD_B['device']}: ok" in capsys.readouterr().out
    page = (tmp_path / "t.html").read_text()
    assert all(d in page for d in ("ttsim 1.9.0", CARD["device"], CARD_B["device"]))
    assert page.index('class="cards"') < page.index("<h2>") and "<details><summary>1 cases</summary>" in page


def test_two_cards_that_disagree_are_blamed_on_neither_model(tmp_path, capsys):
    store = Store(tmp_path / "rec")
    store.record(CASE, _result(SIM), "all")
    store.record(CASE, _result(CARD), "all")
    store.record(CASE, _result(CARD_B, 9), "all")
    tw = three_way(CASE, GoldenBackend().run(CASE), Store(tmp_path / "rec"))
    assert tw.blame == f"cards differ ({CARD['device']} != {CARD_B['device']})"
    path = tmp_path / "three.yaml"
    path.write_text(dump_case(CASE))
    assert main(["run", str(path), "--three-way", "--recordings", str(tmp_path / "rec")]) == 1
    assert "-> cards differ" in capsys.readouterr().out
