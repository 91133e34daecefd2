"""Generators: valid, deterministic, inside defined behaviour, inside what hw observes, following the weights."""
from __future__ import annotations

import dataclasses
import json
from collections import Counter

import pytest
from hypothesis import given, settings

from generators.bulk import case_seed, generate, generate_one
from generators.constraints import availability_report, available, rules
from generators.draw import RandomDraw
from generators.profiles import ProfileError, load_profile, parse_profile, profile_names
from generators.program import Builder, NoInstructions, build_case, defined_mask
from generators.strategies import cases
from golden import isa
from golden.registers import thread_config_field
from hwbridge.golden_backend import GoldenBackend
from tensix_cli import cli
from tensix_diff.case import canonical, dump_case, parse_case, validate_shape

PROFILES = ("default", "counters", "scalar", "regfile", "arith")


def handler_profile(name: str):
    """The profile accepting every instruction golden has semantics for, so tests cover the whole mix even
    while isa.yaml statuses lag behind the handlers."""
    return dataclasses.replace(load_profile(name), golden=("modelled", "handler"))


def usable(name: str):
    p = handler_profile(name)
    if not available(p):
        pytest.skip(f"golden models none of profile {name}'s instructions yet")
    return p


def test_profiles_and_constraints_load():
    assert set(PROFILES) <= set(profile_names())
    r = rules()
    for name in PROFILES:
        p = load_profile(name)
        assert p.weights and all(n in isa.table() for n in p.weights)
        assert p.length[1] <= 64
        for n in p.weights:   # every weighted instruction has constraints or is excluded for a reason
            assert r.entry(n) is not None, f"{name}: {n} has no entry in constraints.yaml"
    assert load_profile("default").length == (1, 64)


def test_bad_profiles_are_one_line_errors(tmp_path):
    with pytest.raises(ProfileError, match="no profile 'nope'"):
        load_profile("nope")
    with pytest.raises(ProfileError, match="not an instruction"):
        parse_profile("x", {"weights": {"FROB": 1}}, "x.yaml")
    with pytest.raises(ProfileError, match="unknown key"):
        parse_profile("x", {"weights": {"NOP": 1}, "lenght": [1, 2]}, "x.yaml")


@pytest.mark.parametrize("name", PROFILES)
def test_cases_are_valid_and_round_trip(name):
    p = usable(name)
    for i in range(25):
        case = build_case(RandomDraw(i), p)
        validate_shape(case)
        assert case.instruction_count > 0
        again = parse_case(dump_case(case), "<dump>")
        assert canonical(again) == canonical(case)


def test_bulk_is_deterministic_and_named_by_seed():
    p = usable("default")
    first = [(s, canonical(c)) for s, c in generate(1234, 6, p)]
    second = [(s, canonical(c)) for s, c in generate(1234, 6, p)]
    assert first == second
    assert [c["name"] for _, c in first] == [f"fuzz-default-s1234-{i:05d}" for i in range(6)]
    assert [s for s, _ in first] == [case_seed(1234, i) for i in range(6)]
    assert canonical(generate_one(1234, 4, p)) == first[4][1]   # any case regenerates alone
    other = [canonical(c) for _, c in generate(1235, 6, p)]
    assert all(a["threads"] != b["threads"] for (_, a), b in zip(first, other))
    assert len({json.dumps(c["threads"], sort_keys=True) for _, c in first}) == 6


@pytest.mark.parametrize("name", PROFILES)
def test_golden_runs_generated_cases_without_undefined_behaviour(name):
    p = usable(name)
    g = GoldenBackend()
    statuses = Counter()
    for i in range(40):
        r = g.run(build_case(RandomDraw(1000 + i), p))
        assert r.status in ("ok", "not-modelled"), r.message
        statuses[r.status] += 1
    if name in ("counters", "scalar", "default", "regfile"):
        assert statuses["ok"] == 40, statuses   # fully modelled mixes: every case runs to completion


def test_only_modelled_instructions_by_default():
    for name in PROFILES:
        p = load_profile(name)
        for ins in available(p):
            assert isa.table()[ins].golden in p.golden
            assert not isa.table()[ins].ttsim_unsupported
    report = availability_report(load_profile("arith"))
    assert all(isinstance(v, str) for v in report.values())


def test_distribution_follows_profile_weights():
    """Body instruction counts follow the weights among the instructions eligible for the thread (hw
    observability removes ADC instructions from thread 1); one thread per case, so no shared-state claims."""
    p = dataclasses.replace(usable("counters"), threads={1: 1.0}, templates={})
    counts, expected = Counter(), Counter()
    for i in range(300):
        b = Builder(RandomDraw(i), p)
        b.build()
        for plan in b.built:
            counts.update(plan.counts)
            n_plan, w_plan = sum(plan.counts.values()), sum(plan.candidates.values())
            for n, w in plan.candidates.items():
                expected[n] += n_plan * w / w_plan
    assert sum(counts.values()) > 5000
    for n, e in expected.items():
        assert abs(counts[n] - e) < 0.1 * e + 30, (n, counts[n], e)


def test_program_lengths_are_uniform_and_shrinkable():
    """Draw.repeat gives a uniform length in lo..hi from per-item 'more?' draws (what lets Hypothesis drop
    items), so bulk and Hypothesis share the distribution."""
    d = RandomDraw(3)
    lengths = Counter(sum(1 for _ in d.repeat(1, 8)) for _ in range(8000))
    assert set(lengths) == set(range(1, 9))
    assert all(abs(n - 1000) < 150 for n in lengths.values()), lengths
    assert sum(1 for _ in RandomDraw(0).repeat(5, 5)) == 5


def test_hw_observability_and_thread_independence():
    """ADC instructions only where the hw backend sees the ADCs (T0 unpackers, T2 packer); config, Dest and
    Src banks used by at most one thread per case."""
    p = usable("default")
    adc_names = {n for n in available(p) if any(c.get("role") == "adc_mask" for c in rules().field_spec(n).values())}
    shared = set(rules().shared_state)
    for i in range(150):
        b = Builder(RandomDraw(i), p)
        case = b.build()
        owners = Counter()
        for plan in b.built:
            used = set(plan.counts)
            if plan.thread == 1:
                assert not used & adc_names
            for kind in shared & plan.needs:
                owners[kind] += 1
        assert all(n <= 1 for n in owners.values()), owners
        for t, words in case.threads.items():
            for w in words:
                ins, f = isa.decode(w)
                if "cntsetmask" in f:
                    allowed = {0: 0b011, 2: 0b100}.get(t, 0)
                    assert f["cntsetmask"] and not f["cntsetmask"] & ~allowed, (t, isa.disassemble(w))


def test_explicit_initial_state():
    """Every GPR and config word a body names gets an initial value; AddrMod sections used are written
    (AB, DST and a zero BIAS word) before the body; config values keep to defined bits."""
    p = usable("default")
    for i in range(120):
        b = Builder(RandomDraw(i), p)
        case = b.build()
        for plan in b.built:
            assert plan.gprs <= set(case.init.gpr.get(plan.thread, {}))
            if plan.config:
                state = 0 if 0 in case.init.config and plan.config <= set(case.init.config[0]) else 1
                assert plan.config <= set(case.init.config[state])
            written = {}
            for w in case.threads[plan.thread]:
                ins, f = isa.decode(w)
                if ins.name == "SETC16":
                    written.setdefault(f["setc16_reg"], f["setc16_value"])
            for s in plan.sections:
                for reg in (f"ADDR_MOD_AB_SEC{s}_SrcAIncr", f"ADDR_MOD_DST_SEC{s}_DestIncr",
                            f"ADDR_MOD_BIAS_SEC{s}_BiasIncr"):
                    idx = thread_config_field(reg).index
                    assert idx in written or idx in case.init.thread_config.get(plan.thread, {})
                assert written.get(thread_config_field(f"ADDR_MOD_BIAS_SEC{s}_BiasIncr").index, 0) == 0
        for state, regs in case.init.config.items():
            for idx, v in regs.items():
                assert v & ~defined_mask("config", idx) == 0


def test_no_instructions_is_reported():
    p = dataclasses.replace(load_profile("arith"), weights={"SFPMAD": 1.0}, golden=("modelled",))
    if available(p):
        pytest.skip("SFPMAD is modelled now")
    with pytest.raises(NoInstructions):
        build_case(RandomDraw(0), p)


@settings(max_examples=30)
@given(cases(handler_profile("counters")))
def test_hypothesis_strategy_draws_valid_cases(case):
    validate_shape(case)
    assert case.name.startswith("gen-counters-")
    assert canonical(parse_case(dump_case(case))) == canonical(case)


# --- the fuzz subcommand ------------------------------------------------------------------------------

def test_fuzz_prints_seed_first_summary_and_report(tmp_path, capsys):
    report = tmp_path / "r.json"
    rc = cli.main(["fuzz", "--count", "8", "--seed", "77", "--backend", "golden", "--accept-golden", "modelled,handler",
                   "--report", str(report), "--progress-every", "4"])
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "seed: 77"
    assert "8 cases: 8 matched, 0 diverged, 0 known, 0 errors" in lines
    assert "fuzz: 4/8 cases" in err and "fuzz: 8/8 cases" in err       # asked for: log lines even in a pipe
    cli.main(["fuzz", "--count", "2", "--seed", "77", "--backend", "golden", "--report", str(tmp_path / "q.json")])
    assert capsys.readouterr().err == ""                                # not a terminal, not asked: silent
    assert rc == 0
    data = json.loads(report.read_text())
    assert data["seed"] == 77 and data["summary"] == {"cases": 8, "matched": 8, "diverged": 0, "known": 0, "errors": 0,
                                                     "run": True}
    assert data["divergences"] == [] and data["instructions"]


def test_fuzz_compares_with_the_store_by_default_and_keeps_reports(tmp_path, capsys, monkeypatch):
    """No --backend: the replay store (golden against itself only when named); a report is never overwritten
    without --force, and the default one is named by profile and seed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TENSIX_DIFF_SIMULATOR", raising=False)
    rc = cli.main(["fuzz", "--count", "2", "--seed", "3", "--profile", "scalar"])
    out, err = capsys.readouterr()
    assert rc == 2 and "replay against golden" in out and "nothing was compared (2 missing)" in err
    assert "tensix-diff run tests/fuzz_corpus/NAME.cases.jsonl.gz" in err
    assert (tmp_path / "out" / "fuzz-scalar-s3.json").is_file()
    rc = cli.main(["fuzz", "--count", "2", "--seed", "3", "--profile", "scalar", "--backend", "golden"])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and "fuzz-scalar-s3.json exists" in err and err.count("\n") == 1
    rc = cli.main(["fuzz", "--count", "2", "--seed", "3", "--profile", "scalar", "--backend", "golden", "--force"])
    assert rc == 0 and "2 cases: 2 matched" in capsys.readouterr().out


def test_fuzz_write_cases_without_running(tmp_path, capsys):
    rc = cli.main(["fuzz", "--count", "4", "--seed", "5", "--profile", "scalar", "--accept-golden", "modelled,handler",
                   "--no-run", "--write-cases", str(tmp_path / "c"), "--report", str(tmp_path / "r.json")])
    assert rc == 0
    files = sorted((tmp_path / "c").glob("*.yaml"))
    assert [f.name for f in files] == [f"fuzz-scalar-s5-{i:05d}.yaml" for i in range(4)]
    p = handler_profile("scalar")
    for i, f in enumerate(files):
        assert canonical(parse_case(f.read_text())) == canonical(generate_one(5, i, p))
    assert capsys.readouterr().out.splitlines()[0] == "seed: 5"


def test_fuzz_reports_divergences_with_case_seed(tmp_path, capsys, monkeypatch):
    from tensix_diff.result import Result
    from tensix_cli import fuzz

    class Skewed:
        """A backend that disagrees with golden on thread GPRs of every third case."""
        name = "golden"

        def __init__(self):
            self.g, self.n = GoldenBackend(), 0

        def run(self, case):
            r = self.g.run(case)
            self.n += 1
            if r.ok and self.n % 6 == 0:   # each case runs twice (reference, then test)
                r.state["gpr"]["0"][63] ^= 1
                return Result(r.status, r.state, r.message, r.provenance)
            return r

    skewed = Skewed()
    monkeypatch.setattr(fuzz, "_backend", lambda name, args: skewed)
    report = tmp_path / "out" / "f.json"
    rc = cli.main(["fuzz", "--count", "6", "--seed", "9", "--backend", "replay", "--accept-golden",
                   "modelled,handler", "--report", str(report), "-q"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "6 cases: 4 matched, 2 diverged, 0 known, 0 errors" in out
    data = json.loads(report.read_text())
    assert [d["index"] for d in data["divergences"]] == [2, 5]
    for d in data["divergences"]:
        assert d["case_seed"] == case_seed(9, d["index"])
        assert parse_case(open(d["case_file"]).read()).name == d["name"]


def test_fuzz_bad_input_is_one_line(tmp_path, capsys):
    prof = tmp_path / "only-unmodelled.yaml"
    prof.write_text("weights: {RESOURCEDECL: 1}\n")
    assert cli.main(["fuzz", "--count", "1", "--seed", "1", "--profile", str(prof)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "none of its instructions" in err[0]
    assert cli.main(["fuzz", "--profile", "nope"]) == 2
    assert cli.main(["fuzz", "--accept-golden", "maybe"]) == 2


def test_arith_edges_profile_puts_edge_values_in_dest():
    """Dest data of the arith-edges profile hits the value classes (raw BF16 cells in Dst16b order)."""
    import random
    from generators.values import EDGE_CLASSES, bf16_cell, dest_cell
    assert bf16_cell(0, 127, 0) == 0x007F and bf16_cell(1, 0xFF, 0) == 0x80FF   # 1.0 and -inf
    rng = random.Random(7)
    cells = {dest_cell(rng, 1.0) for _ in range(2000)}
    for name, make in EDGE_CLASSES:
        if name in ("zero", "one", "infinity", "smallest-normal", "largest-normal"):
            assert make(rng, 0) in cells and make(rng, 1) in cells, name
    a, b = random.Random(7), random.Random(7)
    assert [dest_cell(a, 0.0) for _ in range(8)] == [b.getrandbits(16) for _ in range(8)]  # edges off: unchanged


# --- the format matrix (profiles formats, formats-fidelity) -----------------------------------------------

def test_a_formats_profile_draws_one_format_pair_and_dst_width_per_case():
    from golden.registers import config_field
    from tensix_diff.matrix_cells import cells
    seen = Counter()
    for _, case in generate(5, 60, load_profile("formats")):
        words = case.init.config[0]
        a = config_field("ALU_FORMAT_SPEC_REG0_SrcA").get(words[config_field("ALU_FORMAT_SPEC_REG0_SrcA").index])
        b = config_field("ALU_FORMAT_SPEC_REG1_SrcB").get(words[config_field("ALU_FORMAT_SPEC_REG1_SrcB").index])
        out_a = config_field("THCON_SEC0_REG2_Out_data_format")
        assert out_a.get(words[out_a.index]) == a            # the implied format (#17) agrees with ALU_FORMAT_SPEC
        wide = config_field("ALU_ACC_CTRL_Fp32_enabled")
        bits = 32 if wide.get(words[wide.index]) else 16
        if 4 in (a, b):
            assert bits == 32                                # 'A/B/32' pairs fix the Dst width
        for cell in cells(case):                             # golden resolved exactly these formats
            seen[cell[:3]] += 1
    assert len(seen) >= 8


def test_format_pairs_are_checked_when_a_profile_loads():
    base = {"weights": {"MVMUL": 1}}
    for bad in ({"pairs": {"5": 1}}, {"pairs": {"5/5/8": 1}}, {"pairs": {"5/99": 1}}, {"pairs": {"5/5": 1}, "fidelity": [4]}):
        with pytest.raises(ProfileError):
            parse_profile("x", {**base, "formats": bad}, "x.yaml")
    p = parse_profile("x", {**base, "formats": {"pairs": {"4/5/32": 2}, "fp32_dest": 0.5}}, "x.yaml")
    assert p.formats.pairs == {(4, 5, 32): 2.0}


def test_fuzz_writes_case_bundles_that_load_back(tmp_path, capsys):
    from tensix_diff.case import count_cases, load_bundle
    prefix = tmp_path / "b" / "ttsim-formats-s1"
    assert cli.main(["fuzz", "--profile", "formats", "--count", "3", "--seed", "1", "--no-run", "--bundle",
                     str(prefix), "--report", str(tmp_path / "r.json")]) == 0
    assert "bundle: " in capsys.readouterr().out
    cases = load_bundle(tmp_path / "b" / "ttsim-formats-s1-part01.cases.jsonl.gz")
    assert [c.name for c in cases] == [c.name for _, c in generate(1, 3, load_profile("formats"))]
    assert count_cases(tmp_path / "b" / "ttsim-formats-s1-part01.cases.jsonl.gz") == 3


def test_toward_unseen_draws_only_values_the_corpus_has_not_shown():
    from generators.coverage_weights import case_bins, reachable, toward_unseen
    p = load_profile("arith")
    vals = reachable("SFPLOADI", p)["instr_mod0"]
    seen = {("SFPLOADI", "instr_mod0", v) for v in vals[1:]}            # all but the first value seen
    q = toward_unseen(p, seen)
    assert q.overrides["SFPLOADI"]["instr_mod0"] == {"values": vals[:1]}
    assert q.weights["SFPLOADI"] > p.weights["SFPLOADI"] and q.name == "arith-unseen"
    drawn = set()
    for _, case in generate(3, 40, q):
        drawn |= {v for name, f, v in case_bins(case) if (name, f) == ("SFPLOADI", "instr_mod0")}
    assert drawn - {2} == set(vals[:1])       # (instr_mod0 2: the lregs set-up's own SFPLOADIs)


def test_ccstack_blocks_are_balanced_and_nest_at_most_two_deep():
    deepest = 0
    for _, case in generate(2, 60, load_profile("sfpu-cc")):
        for words in case.threads.values():
            depth = 0
            for w in words:
                name = isa.decode(w)[0].name
                depth += (name == "SFPPUSHC") - (name == "SFPPOPC")
                assert 0 <= depth <= 2
                deepest = max(deepest, depth)
            assert depth == 0
    assert deepest == 2


def test_mop_blocks_configure_their_template_and_show_the_zmask():
    """The counters profile's MOP template-0 blocks: MopCfg words 1..8 written by RISC-V actions just before
    MOP_CFG, then MOP type 0 of at most 32 iterations (ttsim's limit); they run on golden, and in some case
    the zmask's top half that MOP_CFG sets changes what the MOP issues (its ablation shows in the state)."""
    from tensix_diff.effects import observed_effects
    golden, with_mop, cfg_seen = GoldenBackend(), 0, 0
    for i in range(40):
        case = generate_one(5101, i, "counters")
        for t, words in case.threads.items():
            for j, w in enumerate(words):
                ins, f = isa.decode(w)
                if ins.name != "MOP_CFG":
                    continue
                mop, fm = isa.decode(words[j + 1])
                assert mop.name == "MOP" and fm["mop_type"] == 0 and fm["loop_count"] <= 31
                before = sorted(a.args[0] for k, a in case.actions[t] if k == j and a.kind == "mop_cfg")
                assert before == list(range(1, 9))
                with_mop += 1
        if not any(a.kind == "mop_cfg" for acts in case.actions.values() for _, a in acts):
            continue
        result = golden.run(case)
        assert result.status == "ok", result.message
        eff = observed_effects(case, result.state, result.state, expansions=False)
        cfg_seen += any(isa.decode(case.threads[t][j])[0].name == "MOP_CFG" for t, j in eff.observed)
    assert with_mop >= 10 and cfg_seen >= 1, (with_mop, cfg_seen)


def test_config_words_named_by_fields_are_observed_and_cfgshiftmask_reads_set_scratch():
    """A generated case observes (observe.config, in the thread's config state) every config word its fields
    name, and CFGSHIFTMASK's SCRATCH_SEC0..2 words (config 209..211) get initial values like named words."""
    seen = 0
    for i in range(30):
        case = generate_one(5201, i, "scalar")
        named = set()
        for words in case.threads.values():
            for w in words:
                ins, f = isa.decode(w)
                if ins.name in ("WRCFG", "RDCFG", "CFGSHIFTMASK"):
                    named.add(f["cfgreg"])
                if ins.name == "CFGSHIFTMASK":
                    seen += 1
                    assert (f["operation"], f["mask_width"], f["right_cshift_amt"]) == (3, 31, 0)
                    assert {209, 210, 211} <= set().union(*(set(r) for r in case.init.config.values()))
        observed = set().union(*(set(v) for v in case.observe.config.values())) if case.observe.config else set()
        assert named <= observed, (case.name, named - observed)
    assert seen >= 10


def test_conditional_follow_ups_come_after_exactly_the_banks_an_instruction_releases():
    """constraints.yaml follow_if: CLEARDVALID (and a matrix op that clears dvalid) is followed by one UNPACR_NOP
    per bank it hands back, unpacker 0 for SrcA (bit 0) and 1 for SrcB (bit 1), in that order."""
    nop = {k: isa.assemble_line(f"UNPACR_NOP unpacker_select={k} set_dvalid=1 unpack_pop=1") for k in (0, 1)}
    seen = Counter()
    for _, case in generate(4711, 150, "regfile"):
        for words in case.threads.values():
            for i, w in enumerate(words):
                ins, f = isa.decode(w)
                if ins.name != "CLEARDVALID":
                    continue
                banks = [k for k in (0, 1) if f["cleardvalid"] >> k & 1]
                assert words[i + 1:i + 1 + len(banks)] == [nop[k] for k in banks], case.name
                seen[f["cleardvalid"]] += 1
    assert set(seen) == {1, 2, 3}, seen


# --- profiles for combinations ttsim runs that the others never draw (issue 28) ----------------------------

def _config(case, name: str) -> int:
    from golden.registers import config_field
    f = config_field(name)
    return f.get(case.init.config[0].get(f.index, 0))


def _words(case, name: str) -> list[dict]:
    return [fields for w in case.threads[min(case.threads)] for ins, fields in [isa.decode(w)] if ins.name == name]


def test_config_fields_set_the_chosen_values_and_are_checked():
    seen = Counter()
    for _, case in generate(28, 30, load_profile("sfpu-formats")):
        if 0 in case.init.config:
            seen[_config(case, "ALU_FORMAT_SPEC_REG1_SrcB"), _config(case, "ALU_ACC_CTRL_SFPU_Fp32_enabled")] += 1
    assert {b for b, _ in seen} <= {0, 1, 5, 6, 7, 9} and (1, 0) in seen and any(f for _, f in seen), seen
    for bad in ({"NO_SUCH_FIELD": [1]}, {"ALU_ACC_CTRL_Zero_Flag_disabled_src": [2]},
                {"ALU_ACC_CTRL_Zero_Flag_disabled_src": []}, [1]):
        with pytest.raises(ProfileError, match="config_fields"):
            parse_profile("x", {"weights": {"NOP": 1}, "config_fields": bad}, "x.yaml")


@pytest.mark.parametrize("name,check", [
    ("elw-unflushed", lambda c: _config(c, "ALU_ACC_CTRL_Zero_Flag_disabled_src") == 1
     and any(n in c.description for n in ("ELWADD", "ELWSUB"))),
    ("zeroacc-dst32", lambda c: all(z["use_32_bit_mode"] == 1 and z["clear_mode"] == 1 and z["clear_zero_flags"] == 1
                                    for z in _words(c, "ZEROACC"))),
    ("zeroacc-dst32-clear", lambda c: _config(c, "ALU_ACC_CTRL_Fp32_enabled") == 1
     and all(z["use_32_bit_mode"] == 1 for z in _words(c, "ZEROACC"))),
    ("sfpu-formats", lambda c: any(s["instr_mod0"] == 0 for s in _words(c, "SFPLOAD") + _words(c, "SFPSTORE"))),
    ("sfpu-dest-index", lambda c: all(s["config_dest"] == 15 and s["imm16_math"] in (0x4, 0x104, 0x100)
                                      for s in _words(c, "SFPCONFIG"))
     and all(s["lreg_dest"] < 4 and s["lreg_src_c"] < 4 for s in _words(c, "SFPSWAP")))])
def test_gap_profiles_draw_their_combination_and_golden_runs_them(name, check):
    g = GoldenBackend()
    statuses, hits = Counter(), 0
    for _, case in generate(28, 30, load_profile(name)):
        hits += bool(check(case))
        statuses[g.run(case).status] += 1
    assert hits >= 20, hits
    assert statuses["ok"] >= 15 and set(statuses) <= {"ok", "not-modelled"}, statuses


def test_sfpu_dest_index_profile_sets_enable_dest_index():
    imm = Counter(s["imm16_math"] for _, c in generate(28, 30, load_profile("sfpu-dest-index"))
                  for s in _words(c, "SFPCONFIG"))
    assert imm[0x4] and imm[0x104], imm
    plain = Counter(s["imm16_math"] for _, c in generate(28, 60, load_profile("sfpu"))
                    for s in _words(c, "SFPCONFIG") if s["config_dest"] == 15)
    assert set(plain) <= {0, 0x100}, plain      # the sfpu profile never sets ENABLE_DEST_INDEX


def test_ttsim_lists_widen_the_accepted_set_and_draw_toward_unseen():
    """A field's `ttsim:` list (constraints.yaml) counts as accepted though the plain draw never picks it, and
    toward_unseen draws its unseen values: SFPLOAD's default format (instr_mod0 0) for the sfpu profile."""
    from generators.coverage_weights import accepted, all_accepted_bins, reachable, toward_unseen
    p = load_profile("sfpu")
    assert 0 not in reachable("SFPLOAD", p)["instr_mod0"] and 0 in accepted("SFPLOAD", p)["instr_mod0"]
    assert ("SFPLOAD", "instr_mod0", 0) in all_accepted_bins() and ("SFPSTORE", "instr_mod0", 0) in all_accepted_bins()
    seen = {("SFPLOAD", "instr_mod0", v) for v in (2, 3, 4, 6, 12, 14, 15)}
    q = toward_unseen(p, seen)
    assert q.overrides["SFPLOAD"]["instr_mod0"]["values"] == [0]
    assert {f["instr_mod0"] for _, c in generate(3, 20, q) for f in _words(c, "SFPLOAD")} == {0}


def test_a_32_bit_dest_gets_initial_values_for_both_src_fills():
    """The Src fills read Dst rows 0..127 (SrcA 0..63, SrcB 64..127); a Dst32b row spans two DstBits rows, so a
    case with a 32-bit Dest initialises DstBits rows 0..255 (with 0..127 only, SrcB was filled from invalid rows:
    all zero)."""
    widths = Counter()
    for _, case in generate(5, 30, load_profile("formats")):
        wide = _config(case, "ALU_ACC_CTRL_Fp32_enabled")
        rows = [r for r, _ in case.init.dest]
        assert (min(rows), max(rows)) == (0, 255 if wide else 127)
        widths[wide] += 1
    assert widths[0] and widths[1], widths
