"""The curated corpus (tests/corpus): every file loads, names are unique and say where a case belongs,
every blackhole-deltas row has its case, and golden runs each with the status the case expects.
(conftest.py separately runs each corpus case against the selected backend.)"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from golden import isa
from hwbridge.golden_backend import GoldenBackend
from tensix_diff.case import load_case, load_cases

CORPUS = Path(__file__).parents[1] / "corpus"
DELTAS_MD = Path(__file__).resolve().parents[3] / "shared" / "spec" / "blackhole-deltas.md"
DELTA_ROWS = 20
FOLDERS = {"spec": "spec-", "deltas": "delta-", "kernels": "kernel-"}
STATUSES = ("ok", "not-modelled", "undefined-behaviour", "hang")


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*.yaml"))


def expected_status(case) -> str:
    tags = [t for t in case.tags if t.startswith("expect:")]
    return tags[0].split(":", 1)[1].strip() if tags else "ok"


def test_every_file_loads_with_unique_names():
    files = corpus_files()
    cases = load_cases([CORPUS])          # raises on a malformed file or a repeated name
    assert len(cases) == len(files) >= DELTA_ROWS + 8
    for f, case in zip(files, sorted(cases, key=lambda c: c.source)):
        folder = f.relative_to(CORPUS).parts[0]
        assert folder in FOLDERS, f"{f}: corpus cases live in {', '.join(FOLDERS)}"
        assert case.name.startswith(FOLDERS[folder]), f"{f}: name {case.name} should start {FOLDERS[folder]}"
        assert case.description.startswith("Probes"), f"{case.name}: the description says what it probes"
        assert expected_status(case) in STATUSES


def test_one_case_per_blackhole_delta_row():
    names = [load_case(f).name for f in (CORPUS / "deltas").glob("*.yaml")]
    rows = sorted(int(m.group(1)) for n in names if (m := re.match(r"delta-(\d\d)-[a-z0-9-]+$", n)))
    assert rows == list(range(1, DELTA_ROWS + 1)), rows
    if DELTAS_MD.exists():   # the shared spec sits beside the repository in the team's layout
        table = [ln for ln in DELTAS_MD.read_text().splitlines() if re.match(r"\|\s*\d+\s*\|", ln)]
        assert len(table) == DELTA_ROWS


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.stem)
def test_golden_runs_each_case_as_expected(path):
    case = load_case(path)
    result = GoldenBackend().run(case)
    want = expected_status(case)
    assert result.status == want, f"{case.name}: golden says {result.status}: {result.message}"
    if want == "not-modelled":
        assert any(t.startswith("pending:") for t in case.tags), f"{case.name}: say why it is pending"


# --- worked examples: golden reproduces the numbers the spec documents ------------------------------------

MATMUL_TRACE = [  # rwc-addrmod-adc.txt 4.2: (SrcA, SrcA_Cr, SrcB, SrcB_Cr, Dst, Dst_Cr) after each MVMUL
    (0, 0, 8, 0, 8, 0), (16, 0, 0, 0, 16, 0), (16, 0, 8, 0, 24, 0), (0, 0, 32, 32, 32, 0),
    (0, 0, 40, 32, 40, 0), (16, 0, 32, 32, 48, 0), (16, 0, 40, 32, 56, 0), (32, 32, 16, 16, 0, 0),
    (32, 32, 24, 16, 8, 0), (48, 32, 16, 16, 16, 0), (48, 32, 24, 16, 24, 0), (32, 32, 48, 48, 32, 0),
    (32, 32, 56, 48, 40, 0), (48, 32, 48, 48, 48, 0), (48, 32, 56, 48, 56, 0), (0, 0, 0, 0, 0, 0)]


def test_matmul_trace_matches_the_spec_table_step_by_step():
    case = load_case(CORPUS / "spec" / "matmul-addrmod-trace.yaml")
    words = case.threads[1]
    first = next(i for i, w in enumerate(words) if isa.decode(w)[0].name == "MVMUL")
    g = GoldenBackend()
    for k, row in enumerate(MATMUL_TRACE, start=1):
        prefix = dataclasses.replace(case, threads={1: words[:first + k]})
        r = g.run(prefix)
        assert r.ok, r.message
        rwc = r.state["rwc"]["1"]
        got = tuple(rwc[f] for f in ("srca", "srca_cr", "srcb", "srcb_cr", "dst", "dst_cr"))
        assert got == row, f"after MVMUL {k}: {got} != {row}"
        assert rwc["fidelity"] == (1 if k == 16 else 0)


WORKED = {   # case -> (region, path, expected) read from golden's dump
    "spec-setrwc-loop-boundary": [("rwc", ("1",), {"srca": 0, "srca_cr": 0, "srcb": 0, "srcb_cr": 0, "dst": 0,
                                                     "dst_cr": 0, "fidelity": 0, "bias": 0})],
    "spec-packer-adc-init": [("adc", ("2", "pack", "0"), {"x": 0, "x_cr": 0, "y": 0, "y_cr": 0, "z": 0, "z_cr": 0,
                                                          "w": 0, "w_cr": 0}),
                             ("adc", ("2", "pack", "1"), {"x": 7, "x_cr": 6, "y": 0, "y_cr": 0, "z": 0, "z_cr": 0,
                                                          "w": 0, "w_cr": 0})],
    "spec-scalar-setdmareg-add-mul": [("gpr", ("0",), {4: 0xABCD1234, 6: 0x11110000, 7: 0x10E8A570,
                                                       8: 0xFFFF1111})],
    "spec-scalar-rmwcib": [("config", ("0",), {"70": 0x123F00A8})],
    "spec-scalar-wrcfg-rdcfg": [("gpr", ("0",), {20: 0x00012340, 21: 0xDEADBEEF, 22: 0x89ABCDEF}),
                                ("config", ("1",), {"69": 0x89ABCDEF, "12": 0x11111111})],
    "delta-03-setrwc-bitmask": [("rwc", ("1",), {"dst": 9, "dst_cr": 9, "fidelity": 0})],
    "delta-12-wrcfg-fields": [("gpr", ("0",), {46: 0xC0FFEE11})],
    "delta-14-register-map": [("config", ("0",), {"24": 0x01FFFFFF})],
    "delta-18-replay-len0": [("rwc", ("1",), {"dst": 64})],
    "kernel-pack-adc-sequence": [("adc", ("2", "pack", "1"), {"x": 15, "y": 0, "z": 0, "w": 1, "w_cr": 1})],
}


@pytest.mark.parametrize("name", sorted(WORKED))
def test_worked_example_values(name):
    case = next(c for c in load_cases([CORPUS]) if c.name == name)
    r = GoldenBackend().run(case)
    assert r.ok, r.message
    for region, path, want in WORKED[name]:
        node = r.state[region]
        for key in path:
            node = node[key]
        for k, v in want.items():
            assert node[k] == v, f"{name}: {region} {'/'.join(path)} {k} = {node[k]:#x}, expected {v:#x}"
