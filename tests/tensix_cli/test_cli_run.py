"""`tensix-diff run`: files and directories, two backends side by side, --dump, the contract's exit codes."""
from __future__ import annotations

import copy
import gzip
import json

import pytest

from tensix_diff.result import Result
from hwbridge.golden_backend import GoldenBackend
from tensix_cli import backends, cli
from tensix_diff.case import case_hash, load_case
from tensix_diff.store import Recording, Store

CASE = """\
name: {name}
threads:
  0:
    - SETRWC bitmask=15 rwc_a=3 rwc_b=1
    - INCRWC rwc_a={inc}
init:
  dest: [{{row: 3, values: [0x7f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]}}]
  l1: [{{addr: 0x20000, hex: "00112233"}}]
"""
DEVICE = {"device": "ttsim 1.10.0", "platform": "ttsim", "exalens": "0.4.2", "umd": "0.9.14", "core": "0,0"}


@pytest.fixture
def project(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    for name, inc in (("run-a", 1), ("run-b", 2)):
        (cases / f"{name}.yaml").write_text(CASE.format(name=name, inc=inc))
    return tmp_path


def record(root, path, tamper=None) -> None:
    case = load_case(path)
    state = copy.deepcopy(GoldenBackend().run(case).state)
    if tamper:
        tamper(state)
    Store(root).put(Recording.from_result(case, Result("ok", state, provenance=DEVICE)))


def main(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_golden_alone_runs_and_dumps_the_contract_state(project, capsys):
    dump = project / "out.json"
    code, out, err = main(capsys, "run", project / "cases", "--backend", "golden", "--dump", dump)
    assert code == 0, err
    assert "2 cases (golden): 2 ran" in out
    state = json.loads(dump.read_text())
    assert set(state) == {"dest", "dest_valid", "rwc", "adc", "gpr", "l1", "config"}
    assert len(state["dest"]) == 1024 and all(len(r) == 16 for r in state["dest"])
    assert state["dest"][3][0] == 0x7F
    assert state["l1"] == {"0x20000": "00112233"}
    assert set(state["rwc"]) == {"0", "1", "2"} and set(state["adc"]["0"]) == {"unpack0", "unpack1", "pack"}
    assert state["rwc"]["0"]["srca"] == 4  # the first case (run-a): set to 3, then incremented by 1


def test_replay_against_golden_matches(project, capsys):
    rec = project / "rec"
    for f in sorted((project / "cases").iterdir()):
        record(rec, f)
    code, out, err = main(capsys, "run", project / "cases", "--recordings", rec)
    assert code == 0, out + err
    assert "matched run-a: matched" in out and "2 cases (replay vs golden): 2 matched" in out
    assert "replayed recordings of: ttsim 1.10.0 (2)" in out
    # Side by side the other way round, one file: the replayed side is still the one named.
    code, out, _ = main(capsys, "run", project / "cases" / "run-b.yaml", "--backend", "golden", "--against",
                        "replay", "--recordings", rec)
    assert code == 0 and "1 matched" in out and "replayed recordings of: ttsim 1.10.0 (1)" in out


def test_divergence_exit_1_with_a_readable_report(project, capsys):
    rec = project / "rec"
    record(rec, project / "cases" / "run-a.yaml", tamper=lambda s: s["dest"][3].__setitem__(0, 0x807F))
    record(rec, project / "cases" / "run-b.yaml")
    code, out, _ = main(capsys, "run", project / "cases", "--recordings", rec)
    assert code == 1
    assert "diverged run-a: 1 of" in out
    assert "dest row 3 col 0: golden 0x7f, ttsim 1.10.0 0x807f" in out and "bf16 1 -> -1" in out
    assert "1 diverged, 1 matched" in out


def test_missing_and_stale_recordings_exit_2(project, capsys):
    rec = project / "rec"
    code, out, _ = main(capsys, "run", project / "cases" / "run-a.yaml", "--recordings", rec)
    assert code == 2 and "missing run-a" in out
    assert "record them on a device with:" in out and "tensix-diff record " in out and "run-a.yaml" in out
    record(rec, project / "cases" / "run-a.yaml")
    (project / "cases" / "run-a.yaml").write_text(CASE.format(name="run-a", inc=3))   # the case changed
    code, out, _ = main(capsys, "run", project / "cases" / "run-a.yaml", "--recordings", rec)
    assert code == 2 and "stale run-a" in out and "changed since it was recorded" in out


def test_corrupt_recording_is_one_line_exit_2(project, capsys):
    rec = project / "rec"
    f = project / "cases" / "run-a.yaml"
    record(rec, f)
    p = Store(rec).path(case_hash(load_case(f)))
    p.write_bytes(gzip.compress(b'{"format": 1}'))
    code, out, err = main(capsys, "run", f, "--recordings", rec)
    assert code == 2
    assert err.strip().count("\n") == 0 and str(p) in err and "corrupt bundle" in err


def test_malformed_case_is_one_line_and_the_rest_still_run_exit_2(project, capsys):
    bad = project / "cases" / "bad.yaml"
    bad.write_text("name: bad\nthreads:\n  0:\n    - SETRWC bitmask=99\n")
    code, out, err = main(capsys, "run", project / "cases", "--backend", "golden")
    assert code == 2 and err == ""
    assert f"ERROR {bad}:4: thread 0: SETRWC: field 'bitmask' value 0x63 does not fit in 6 bit(s) [5:0]\n" in out
    assert "2 cases (golden): 2 ran" in out and "1 file(s) could not be read" in out
    code, out, err = main(capsys, "run", bad, "--backend", "golden")
    assert code == 2 and out == "" and err.count("\n") == 1 and f"{bad}:4: thread 0: SETRWC" in err
    code, out, err = main(capsys, "run", project / "nothing-here")
    assert code == 2 and out == "" and err == f"tensix-diff: error: {project / 'nothing-here'}: no such case file\n"


def test_version_names_the_package_golden_and_the_hw_stack(capsys):
    code, out, err = main(capsys, "--version")
    lines = out.splitlines()
    assert code == 0 and err == "" and len(lines) == 4
    assert lines[0].startswith("tensix-diff ") and lines[1].startswith("golden ")
    assert lines[2].startswith("tt-exalens ") and lines[3].startswith("tt-umd ")


@pytest.mark.parametrize("opts, says", [(["--isolation", "replace"], "--isolation=replace needs --simulator"),
                                        (["--simulator", "x.so", "--core", "foo"], "--core 'foo'"),
                                        (["--simulator", "."], "--simulator=.: is a directory"),
                                        (["--simulator", "no.so"], "--simulator=no.so: no such file"),
                                        (["--simulator", __file__], "not a shared library (no ELF header)")])
def test_a_bad_hw_option_is_one_line_and_exit_2(project, capsys, opts, says):
    code, out, err = main(capsys, "run", project / "cases", "--backend", "hw", *opts)
    assert code == 2 and err.count("\n") == 1 and says in err


class _FailingDevice:
    name = "hw"

    def run(self, case):
        return Result("device-error", message="simulator exited with status 134")


class _Unmodelled:
    name = "golden"

    def run(self, case):
        return Result("not-modelled", message="FOO is not modelled")


def test_device_failure_exit_3(project, capsys, monkeypatch):
    real = backends.get_backend
    monkeypatch.setattr(backends, "get_backend", lambda n, **kw: _FailingDevice() if n == "hw" else real(n, **kw))
    code, out, _ = main(capsys, "run", project / "cases", "--backend", "hw")
    assert code == 3 and "device-failed run-a: hw: device-error: simulator exited with status 134" in out


def test_quiet_prints_problems_one_line_each_and_unobserved_once(project, capsys):
    rec = project / "rec"
    record(rec, project / "cases" / "run-a.yaml", tamper=lambda s: s["dest"][3].__setitem__(0, 0x807F))
    record(rec, project / "cases" / "run-b.yaml")
    code, out, _ = main(capsys, "run", project / "cases", "--recordings", rec, "-q")
    lines = out.splitlines()
    assert code == 1 and lines[0].startswith("diverged run-a: 1 of") and not lines[1].startswith(" ")
    assert not any(ln.startswith("matched ") for ln in lines)
    code, out, _ = main(capsys, "run", project / "cases", "--recordings", rec)
    assert out.count("not compared (one side did not observe)") <= 1


def test_device_that_cannot_start_exit_3_and_missing_backend_exit_2(project, capsys, monkeypatch):
    from tensix_cli.backends import BackendUnavailable

    def broken(name, **kw):
        raise OSError("no Tenstorrent device found")
    monkeypatch.setattr(backends, "get_backend", broken)
    code, _, err = main(capsys, "run", project / "cases", "--backend", "hw", "--simulator", "/nope/libttsim.so")
    assert code == 3 and "hw backend failed to start" in err and err.count("\n") == 1

    def unavailable(name, **kw):
        raise BackendUnavailable("hw backend unavailable: hwbridge.hw.backend is not in this tree")
    monkeypatch.setattr(backends, "get_backend", unavailable)
    code, _, err = main(capsys, "run", project / "cases", "--backend", "hw")
    assert code == 2 and err.count("\n") == 1


def test_uncomparable_case_exit_2(project, capsys, monkeypatch):
    rec = project / "rec"
    record(rec, project / "cases" / "run-a.yaml")
    real = backends.get_backend
    monkeypatch.setattr(backends, "get_backend", lambda n, **kw: _Unmodelled() if n == "golden" else real(n, **kw))
    code, out, _ = main(capsys, "run", project / "cases" / "run-a.yaml", "--recordings", rec)
    # golden refusing what the device ran is a failure (a model gap a regression could hide behind) ...
    assert code == 1 and "diverged run-a: golden not-modelled on a case replay ran: FOO is not modelled" in out
    # ... unless configs/expected_refusals.yaml expects it: then uncompared, and nothing compared -> exit 2
    refusals = project / "refusals.yaml"
    refusals.write_text("expected:\n  - id: foo\n    reason: FOO is out of scope\n    status: not-modelled\n"
                        "    message: 'FOO is not modelled'\n")
    monkeypatch.setenv("TENSIX_DIFF_REFUSALS", str(refusals))
    code, out, _ = main(capsys, "run", project / "cases" / "run-a.yaml", "--recordings", rec)
    assert code == 2 and "uncompared run-a: golden not-modelled (expected: foo: FOO is out of scope)" in out
    assert "uncompared: 1 expected golden refusal foo" in out


def test_usage_errors_exit_2(capsys):
    code, _, err = main(capsys, "run")
    assert code == 2 and "error" in err
    code, _, err = main(capsys, "run", "x.yaml", "--backend", "nonsense")
    assert code == 2 and "invalid choice" in err


def _record_refusal(root, path) -> None:
    case = load_case(path)
    Store(root).put(Recording.from_result(case, Result("refused", None, message="simulator refused", provenance=DEVICE)))


def test_a_refused_case_is_listed_but_does_not_fail_a_run_that_compared_others(project, capsys):
    record(project / "rec", project / "cases" / "run-a.yaml")
    _record_refusal(project / "rec", project / "cases" / "run-b.yaml")
    code, out, err = main(capsys, "run", project / "cases", "--recordings", project / "rec")
    assert code == 0, out + err
    assert "uncompared run-b" in out and "1 matched" in out


def test_a_run_that_compared_nothing_fails(project, capsys):
    for name in ("run-a", "run-b"):
        _record_refusal(project / "rec", project / "cases" / f"{name}.yaml")
    code, out, err = main(capsys, "run", project / "cases", "--recordings", project / "rec")
    assert code == 2, out + err


class _Card:
    """A device never replaced (card isolation) that answers golden's result and notes the order it ran cases."""
    name, isolation = "hw", "card"

    def __init__(self):
        self.order = []

    def run(self, case):
        self.order.append(case.name)
        return GoldenBackend().run(case)


HANGS = """\
name: {name}
tags: [{tags}]
threads:
  0:
    - STALLWAIT stall_res=0x1FF wait_res=0x80
    - NOP
"""


@pytest.mark.parametrize("isolation", ["card", "replace"])
def test_on_a_device_never_replaced_cases_known_to_hang_run_after_the_others(project, capsys, monkeypatch, isolation):
    cases = project / "cases"
    (cases / "h-tagged.yaml").write_text(HANGS.format(name="h-tagged", tags='"expect:hang"'))
    (cases / "h-golden.yaml").write_text(HANGS.format(name="h-golden", tags=""))      # golden predicts it
    card = _Card()
    card.isolation = isolation
    real = backends.get_backend
    monkeypatch.setattr(backends, "get_backend", lambda n, **kw: card if n == "hw" else real(n, **kw))
    code, out, _ = main(capsys, "run", cases, "--backend", "hw")
    assert code == 0 and "4 cases (hw vs golden): 4 matched" in out
    if isolation == "card":
        assert card.order == ["run-a", "run-b", "h-golden", "h-tagged"]
        assert "run last (known to hang; the device is never replaced): h-golden, h-tagged" in out
    else:                                   # a device replaced after a hang: case order, nothing said
        assert card.order == ["h-golden", "h-tagged", "run-a", "run-b"] and "run last" not in out
    card.order.clear()
    main(capsys, "run", cases, "--backend", "hw", "--against", "hw")       # no golden: only the tag says it
    assert card.order == (["h-golden", "run-a", "run-b", "h-tagged"] if isolation == "card" else
                          ["h-golden", "h-tagged", "run-a", "run-b"])


@pytest.mark.parametrize("isolation", ["card", "replace"])
def test_fuzz_runs_a_generated_case_golden_predicts_to_hang_last_on_a_device_never_replaced(
        project, capsys, monkeypatch, isolation):
    from tensix_cli import fuzz
    from tensix_diff.case import parse_case
    made = [load_case(project / "cases" / "run-a.yaml"), parse_case(HANGS.format(name="h-golden", tags="")),
            load_case(project / "cases" / "run-b.yaml")]
    monkeypatch.setattr(fuzz, "generate", lambda seed, count, p, start=0: iter(zip((11, 12, 13), made)))
    card = _Card()
    card.isolation = isolation
    golden = GoldenBackend()
    golden_runs = []
    monkeypatch.setattr(golden, "run", lambda case: golden_runs.append(case.name) or GoldenBackend.run(golden, case))
    monkeypatch.setattr(fuzz, "_backend", lambda name, args: card if name == "hw" else golden)
    report = project / "f.json"
    code, out, _ = main(capsys, "fuzz", "--count", 3, "--seed", 1, "--backend", "hw", "--report", report, "-q")
    assert code == 0 and "3 cases: 3 matched" in out, out
    if isolation == "card":
        assert card.order == ["run-a", "run-b", "h-golden"]
        assert "run last (known to hang; the device is never replaced): h-golden" in out
        assert golden_runs.count("h-golden") == 1           # golden's prediction is the hang's reference
    else:
        assert card.order == ["run-a", "h-golden", "run-b"] and "run last" not in out
    statuses = json.loads(report.read_text())["statuses"]
    assert statuses == {"golden:ok hw:ok": 2, "golden:hang hw:hang": 1}
