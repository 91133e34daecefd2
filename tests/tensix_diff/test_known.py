"""The known-divergence registry explains exact differences, never whole cases, and cannot hide another bug
in the same fields (tensix_diff.known, tensix_diff.assess)."""
from __future__ import annotations

import copy
from functools import cache
from pathlib import Path

import pytest

import golden.sfpu.mem as sfpu_mem
import golden.sync.sync as sync
import golden.thcon.adc as adc
import golden.thcon.scalar as scalar
from golden import isa
from tensix_diff.result import OK, Result
from hwbridge.golden_backend import GoldenBackend
from tensix_diff.case import load_bundle
from hwbridge.replay import ReplayBackend
from tensix_diff.assess import assess
from tensix_diff.case import Case, load_case
from tensix_diff.compare import DIVERGED, KNOWN, MATCHED, Diff
from tensix_diff.known import KnownError, diff_path, explain_diffs, load_known
from tensix_diff.known_conditions import GoldenFacts, parse_condition

ROOT = Path(__file__).resolve().parents[2]
DELTA06 = ROOT / "tests" / "corpus" / "deltas" / "delta-06-adc-zw-width.yaml"
INCADCZW = isa.lookup("INCADCZW").opcode
FRESH = ROOT / "tests" / "known_cases"      # cases no registry entry names, recorded on ttsim 1.10.0 beside them


def _known(tmp_path, text: str):
    p = tmp_path / "known.yaml"
    p.write_text(text)
    return load_known(p)


def _adc(field: str, e: int, a: int) -> Diff:
    return Diff("adc", f"thread 0 unpack0 channel 0 {field}", e, a, ("adc", "0", "unpack0", "0", field))


def test_item_paths_name_every_region():
    assert diff_path(_adc("w", 1, 2)) == "adc.0.unpack0.0.w"
    assert diff_path(Diff("dest", "row 5 col 3", 1, 2, ("dest",))) == "dest.5.3"
    assert diff_path(Diff("l1", "0x20003", 1, 2, ("l1", "0x20000"))) == "l1.0x20003"
    assert diff_path(Diff("config", "state 0 [70]", 1, 2, ("config", "0", "70"))) == "config.0.70"
    assert diff_path(Diff("gpr", "thread 1 r9", 1, 2, ("gpr", "1", 9))) == "gpr.1.9"
    assert diff_path(Diff("rwc", "x (shape)", "list", "int", ("rwc", "shape"))) == "rwc.shape"


def test_a_predicate_explains_only_the_difference_it_states(tmp_path):
    known = _known(tmp_path, "- id: zw\n  reason: r\n  explains:\n"
                             "    - {fields: ['adc.*.*.*.w'], when: {low_bits_agree: 8}}\n")
    width = _adc("w", 0x1FFF, 0xFF)            # only bits above 7 differ: explained
    other = _adc("w", 0x101, 0x00)             # low bits differ: a different bug in the same field
    wrong_field = _adc("x", 0x1FF, 0xFF)       # same kind of difference in a field the entry does not cover
    ex = explain_diffs([width, other, wrong_field], "c", "replay", known)
    assert ex.explained == 1 and ex.unexplained == [other, wrong_field] and not ex.complete
    assert explain_diffs([width], "c", "replay", known).complete


def test_pairs_cases_and_backend_restrict_an_entry(tmp_path):
    known = _known(tmp_path, "- id: p\n  reason: r\n  cases: [only-me]\n  backend: hw\n  explains:\n"
                             "    - {fields: ['adc.*'], when: {pairs: [[1, 2]]}}\n")
    d = _adc("z", 2, 1)
    assert explain_diffs([d], "only-me", "hw", known).complete
    assert not explain_diffs([d], "another", "hw", known).entries
    assert not explain_diffs([d], "only-me", "replay", known).entries
    assert not explain_diffs([_adc("z", 2, 3)], "only-me", "hw", known).entries


@pytest.mark.parametrize("text, message", [
    ("- reason: r\n  explains: []\n", "entry 0 needs 'id' and 'reason'"),
    ("- id: a\n  reason: r\n", "needs exactly one of 'explains' or 'statuses'"),
    ("- id: a\n  reason: r\n  explains: [{fields: ['adc.*'], when: any}]\n", "allowed only with 'cases'"),
    ("- id: a\n  reason: r\n  explains: [{fields: ['adc.*'], when: {glob: 1}}]\n", "'when' must be one of"),
    ("- id: a\n  reason: r\n  explains: [{fields: ['adc.*'], when: {low_bits_agree: 0}}]\n", "bit count"),
    ("- id: a\n  reason: r\n  statuses: {golden: ok, device: hang}\n", "needs 'cases'"),
    ("- id: a\n  reason: r\n  explains: [{fields: ['x'], when: {low_bits_agree: 1}}]\n"
     "- id: a\n  reason: r\n  explains: [{fields: ['x'], when: {low_bits_agree: 1}}]\n", "duplicate entry ids a"),
    ("- signature: 'gpr @*'\n  reason: old format\n", "entry 0 needs 'id' and 'reason'"),
])
def test_a_malformed_registry_is_one_clear_error(tmp_path, text, message):
    with pytest.raises(KnownError, match=message):
        _known(tmp_path, text)


def test_a_status_entry_needs_the_named_case(tmp_path):
    known = _known(tmp_path, "- id: hang\n  reason: r\n  cases: [c]\n  statuses: {golden: ok, device: hang}\n")
    case = Case("c", "", {0: [isa.assemble_line("NOP")]})
    g, d = GoldenBackend().run(case), Result("hang", message="1M cycles")
    assert assess(case, g, d, ("golden", "ttsim"), known=known).outcome == KNOWN
    other = Case("d", "", case.threads)
    assert assess(other, g, d, ("golden", "ttsim"), known=known).outcome == DIVERGED


def test_partly_explained_divergence_reports_only_what_is_left(tmp_path):
    known = _known(tmp_path, "- id: zw\n  reason: r\n  explains:\n"
                             "    - {fields: ['adc.*.*.*.z'], when: {low_bits_agree: 8}}\n")
    case = load_case(DELTA06)
    g = GoldenBackend().run(case)
    dev = copy.deepcopy(g.state)
    dev["adc"]["0"]["unpack0"]["0"]["z"] &= 0xFF      # explained
    dev["gpr"]["0"][3] = 7                             # not
    v = assess(case, g, Result(OK, dev), ("golden", "ttsim"), known=known)
    assert v.outcome == DIVERGED and v.known == ("zw",)
    assert [d.region for d in v.comparison.diffs] == ["gpr"] and "1 more explained by zw" in v.message


# --- the real registry against a planted bug in the very fields it covers --------------------------------

@cache
def _incadczw_cases(limit: int = 60) -> list[Case]:
    """delta-06 and the first ``limit`` recorded counters-profile fuzz cases that use INCADCZW."""
    out = [load_case(DELTA06)]
    for bundle in sorted((ROOT / "tests" / "fuzz_corpus").glob("ttsim-counters-*.cases.jsonl.gz")):
        out += [c for c in load_bundle(bundle)
                if any(w >> 24 == INCADCZW for ws in c.threads.values() for w in ws)][:limit + 1 - len(out)]
    return out


def _outcomes(cases) -> dict[str, str]:
    golden, replay = GoldenBackend(), ReplayBackend()
    return {c.name: assess(c, golden.run(c), replay.run(c), ("golden", "ttsim"), "replay").outcome for c in cases}


def test_the_adc_width_entry_xfails_its_cases_and_a_planted_w_increment_bug_still_fails(monkeypatch):
    cases = _incadczw_cases()
    assert len(cases) > 20, "the corpus should hold INCADCZW cases"
    clean = _outcomes(cases)
    assert clean["delta-06-adc-zw-width"] == KNOWN
    assert set(clean.values()) <= {MATCHED, KNOWN, "uncompared"}, clean

    def planted_inc(ch, dim, inc):          # the bug: W advances by inc + 1
        setattr(ch, dim, (getattr(ch, dim) + inc + (dim == "w")) & adc.WIDTH[dim])
    monkeypatch.setattr(adc, "_inc", planted_inc)
    planted = _outcomes(cases)
    assert planted["delta-06-adc-zw-width"] == DIVERGED        # the width entry does not cover this bug
    diverged = [n for n, o in planted.items() if o == DIVERGED]
    assert len(diverged) >= len(cases) // 2, planted           # the replay suite would fail on each of them
    assert KNOWN not in {planted[n] for n in diverged}


def _remapped_dests():
    """Golden's Dest (logical row R at DstBits row Adj16(R), Dst.md) and a device's that ignores the remapping."""
    from golden.dest_view import adj16
    logical = [[(r * 16 + c) & 0xFFFF for c in range(16)] for r in range(128)]
    golden = [[0] * 16 for _ in range(128)]
    for r in range(128):
        golden[adj16(r, True)] = logical[r]
    return golden, logical


def _dest_diffs(e, a):
    return [Diff("dest", f"row {r} col {c}", e[r][c], a[r][c], ("dest",))
            for r in range(len(e)) for c in range(16) if e[r][c] != a[r][c]]


def test_rows_remapped_explains_exactly_the_adj16_permutation(tmp_path):
    known = _known(tmp_path, "- id: remap\n  reason: r\n  tags: [dest-remap]\n  explains:\n"
                             "    - {fields: ['dest.*'], when: {rows_remapped: adj16}}\n")
    golden, device = _remapped_dests()
    diffs = _dest_diffs(golden, device)
    assert diffs
    for e, a in ((golden, device), (device, golden)):     # either side may be the expected one
        assert explain_diffs(_dest_diffs(e, a), "c", "hw", known, ("dest-remap",), (golden, device)).complete
    # golden's rows in the inverse permutation (a golden bug), or the device remapping and golden not: unexplained
    assert not explain_diffs(diffs, "c", "hw", known, ("dest-remap",), (device, golden)).complete
    assert not explain_diffs(diffs, "c", "hw", known, (), (golden, device)).entries    # untagged case
    assert not explain_diffs(diffs, "c", "hw", known, ("dest-remap",), None).entries   # no Dest to look at
    wrong = copy.deepcopy(device)
    wrong[40][3] ^= 1                                       # one more bit wrong in a remapped row
    ex = explain_diffs(_dest_diffs(golden, wrong), "c", "hw", known, ("dest-remap",), (golden, wrong))
    assert [d.location for d in ex.unexplained] == ["row 40 col 3"]
    shifted = device[1:] + device[:1]                       # another permutation is not this one
    assert explain_diffs(_dest_diffs(golden, shifted), "c", "hw", known, ("dest-remap",),
                         (golden, shifted)).unexplained


def test_rows_remapped_needs_a_scoped_entry(tmp_path):
    with pytest.raises(KnownError, match="needs an entry limited by 'cases', 'tags' or 'condition'"):
        _known(tmp_path, "- id: a\n  reason: r\n  explains: [{fields: ['dest.*'], when: {rows_remapped: adj16}}]\n")
    with pytest.raises(KnownError, match="names the remapping"):
        _known(tmp_path, "- id: a\n  reason: r\n  tags: [x]\n"
                         "  explains: [{fields: ['dest.*'], when: {rows_remapped: adj32}}]\n")


# --- entries scoped by a condition golden checks: fresh instances are known without being named -------------

def _case(text: str) -> Case:
    return Case("c", "", {1: [isa.assemble_line(x) for x in text.split(";")]})


@pytest.mark.parametrize("text, message", [
    ("  condition: {remap_addrs_during: [SFPSTORE], glob: 1}\n", "'condition' maps checks"),
    ("  condition: {remap_addrs_during: SFPSTORE}\n", "remap_addrs_during needs a list of instruction names"),
    ("  condition: {remap_addrs_during: [SFPSTOR]}\n", "remap_addrs_during: unknown mnemonic 'SFPSTOR'"),
    ("  condition: {wait_latched_at_thread_end: [NOP]}\n",
     "wait_latched_at_thread_end takes SEMWAIT, STALLWAIT only, not NOP"),
])
def test_a_malformed_condition_is_one_clear_error(tmp_path, text, message):
    with pytest.raises(KnownError, match=r"entry 0 \(a\): " + message):
        _known(tmp_path, "- id: a\n  reason: r\n  statuses: {golden: ok, device: hang}\n" + text)


def test_a_condition_scopes_a_status_entry_and_a_state_wide_predicate(tmp_path):
    known = _known(tmp_path, "- id: w\n  reason: r\n  statuses: {golden: ok, device: hang}\n"
                             "  condition: {wait_latched_at_thread_end: [SEMWAIT]}\n"
                             "- id: d\n  reason: r\n  condition: {remap_addrs_during: [SFPSTORE]}\n"
                             "  explains: [{fields: ['dest.*'], when: {rows_remapped: adj16}}]\n")
    assert [k.condition.text for k in known] == ["wait_latched_at_thread_end SEMWAIT",
                                                 "remap_addrs_during SFPSTORE"]


def test_a_condition_is_checked_only_for_a_difference_its_entry_covers(tmp_path):
    known = _known(tmp_path, "- id: d\n  reason: r\n  condition: {remap_addrs_during: [SFPSTORE]}\n"
                             "  explains: [{fields: ['dest.*'], when: {pairs: [[1, 2]]}}]\n")
    facts = GoldenFacts(_case("NOP"))
    assert not explain_diffs([_adc("z", 1, 2)], "c", "hw", known, (), None, facts).entries
    assert not facts._ran                                 # no golden run for a diff outside dest.*
    dest = Diff("dest", "row 5 col 3", 1, 2, ("dest",))
    assert not explain_diffs([dest], "c", "hw", known, (), None, facts).entries and facts._ran


def test_remap_condition_reads_the_config_each_instruction_saw():
    cond = parse_condition({"remap_addrs_during": ["SFPSTORE"]})
    store = "SFPSTORE lreg_ind=0 instr_mod0=6 sfpu_addr_mode=0 dest_reg_addr=8"
    remap = "RMWCIB0 mask=2 data=2 cfgregaddr=220"        # DEST_ACCESS_CFG_remap_addrs (Config word 220 bit 1)
    assert cond.holds(GoldenFacts(_case(f"{remap}; {store}")))
    assert not cond.holds(GoldenFacts(_case(f"{store}; {remap}")))     # set only after the store
    assert not parse_condition({"remap_addrs_during": ["PACR"]}).holds(GoldenFacts(_case(f"{remap}; {store}")))
    assert not cond.holds(None)                           # no golden run: no condition holds


@pytest.mark.parametrize("program, holds", [
    ("SEMWAIT stall_res=0x40 sem_sel=2 wait_sem_cond=1", True),                     # last, semaphore 1 is 0
    ("SEMWAIT stall_res=0x40 sem_sel=2 wait_sem_cond=1; SEMPOST sem_sel=2", False),  # met before the end
    ("SEMWAIT stall_res=0x40 sem_sel=2 wait_sem_cond=1; SETDMAREG payload_sigselsize=0 payload_sigsel=1"
     " setsignalsmode=0 regindex16b=2", False),                                      # not its thread's last
    ("SEMINIT max_value=1 init_value=1 sem_sel=2; SEMWAIT stall_res=0x40 sem_sel=2 wait_sem_cond=1", False),
    ("STALLWAIT stall_res=0x40 wait_res=0x80", True),                                # SrcA never valid
    ("SEMWAIT stall_res=0x40 sem_sel=2 wait_sem_cond=0", False),                     # golden refuses
])
def test_wait_condition_needs_the_wait_last_and_unmet_when_the_run_ends(program, holds):
    cond = parse_condition({"wait_latched_at_thread_end": ["SEMWAIT", "STALLWAIT"]})
    assert cond.holds(GoldenFacts(_case(program))) is holds
    assert not parse_condition({"wait_latched_at_thread_end": ["SEMWAIT"]}).holds(
        GoldenFacts(_case("STALLWAIT stall_res=0x40 wait_res=0x80")))


def _fresh(name: str):
    """A fresh case, golden's result and its ttsim 1.10.0 recording (tests/known_cases/recordings)."""
    case = load_case(FRESH / name)
    return case, GoldenBackend().run(case), ReplayBackend(FRESH / "recordings", device="ttsim 1.10.0").run(case)


FRESH_CASES = {"sfpstore-remap-fresh.yaml": "dest-remap-addrs-ignored",
               "semwait-at-max-thread-end.yaml": "semwait-blocks-itself",
               "stallwait-srca-thread-end.yaml": "semwait-blocks-itself"}


@pytest.mark.parametrize("name, entry", FRESH_CASES.items())
def test_a_fresh_instance_of_a_registered_deviation_is_known_without_being_named(name, entry):
    case, g, dev = _fresh(name)
    registry = load_known()
    assert all(case.name not in (k.cases or ()) and k.case != case.name and not k.tags for k in registry
               if k.id == entry)
    assert dev.provenance.get("device") == "ttsim 1.10.0" and g.status == OK
    v = assess(case, g, dev, ("golden", "ttsim"), "replay", known=registry)
    assert v.outcome == KNOWN and v.known == (entry,), v.message
    unscoped = [k for k in registry if k.condition is None]     # the entries as they stood, named or tagged
    assert assess(case, g, dev, ("golden", "ttsim"), "replay", known=unscoped).outcome == DIVERGED


def test_fresh_remap_case_with_a_planted_golden_bug_still_fails(monkeypatch):
    case, _, dev = _fresh("sfpstore-remap-fresh.yaml")
    write_half = scalar._write_half
    monkeypatch.setattr(scalar, "_write_half", lambda g, h, v: write_half(g, h, v ^ 0x10))   # SETDMAREG: GPRs
    v = assess(case, GoldenBackend().run(case), dev, ("golden", "ttsim"), "replay")
    assert v.outcome == DIVERGED and v.known == ("dest-remap-addrs-ignored",)
    assert [d.region for d in v.comparison.diffs] == ["gpr"], v.message     # only the planted bug is left
    monkeypatch.undo()
    loadi = sfpu_mem._loadi_value
    monkeypatch.setattr(sfpu_mem, "_loadi_value", lambda mod0, imm, old: loadi(mod0, imm, old) ^ (mod0 == 2))
    v = assess(case, GoldenBackend().run(case), dev, ("golden", "ttsim"), "replay")   # the value it remaps
    assert v.outcome == DIVERGED and {d.region for d in v.comparison.diffs} == {"dest"}, v.message


@pytest.mark.parametrize("name, planted", [
    ("semwait-at-max-thread-end.yaml", "max"), ("stallwait-srca-thread-end.yaml", "srca"),
    ("semwait-then-math.yaml", "gate")])
def test_fresh_wait_cases_with_a_planted_golden_bug_still_fail(monkeypatch, name, planted):
    """Against a hang only the statuses are compared, so the bugs planted are those that change whether golden
    completes: the wait's own condition, or the Wait Gate letting the instruction it blocks through."""
    case, g, dev = _fresh(name)
    if planted == "max":      # "at Max" tested as Value > Max
        waits = sync._semaphore_waits
        monkeypatch.setattr(sync, "_semaphore_waits", lambda m, w: [x for x in waits(m, w) if "max" not in x])
    elif planted == "srca":   # SrcA reported valid
        banks = sync._bank_waits
        monkeypatch.setattr(sync, "_bank_waits", lambda m: {**banks(m), sync.C_SRCA_VALID: (False, "")})
    else:                     # SETRWC not held by a math block mask
        assert g.status == "hang" and assess(case, g, dev, ("golden", "ttsim"), "replay").outcome == MATCHED
        monkeypatch.setitem(sync.BLOCKED_BY, "SETRWC", 0)
    planted_golden = GoldenBackend().run(case)
    assert planted_golden.status == OK and dev.status == "hang"
    v = assess(case, planted_golden, dev, ("golden", "ttsim"), "replay")
    assert v.outcome == DIVERGED and not v.known, v.message


def test_a_case_meeting_the_condition_with_an_unexplained_difference_is_diverged():
    case, g, dev = _fresh("sfpstore-remap-fresh.yaml")
    state = copy.deepcopy(dev.state)
    state["dest"][16][0] ^= 0x100                # the value ttsim stored at row 16, one bit off golden's row 8
    state["gpr"]["1"][0] = 3                     # and a GPR golden does not write
    v = assess(case, g, Result(OK, state, provenance=dev.provenance), ("golden", "ttsim"), "replay")
    assert v.outcome == DIVERGED and v.known == ("dest-remap-addrs-ignored",)
    # both ends of that store are left: golden's row 8 no longer holds what the device holds at row 16
    left = sorted(d.location for d in v.comparison.diffs)
    assert left == ["row 16 col 0", "row 8 col 0", "thread 1 r0"], v.message
    case, g, dev = _fresh("semwait-at-max-thread-end.yaml")
    state = copy.deepcopy(g.state)               # the device completes (no hang) but with another GPR
    state["gpr"]["2"][12] ^= 1
    v = assess(case, g, Result(OK, state, provenance=dev.provenance), ("golden", "ttsim"), "replay")
    assert v.outcome == DIVERGED and not v.known, v.message


# --- the packer's strided read under remap_addrs: an L1 predicate from a second golden run ----------------

PACR_ADJ16 = ROOT / "tests" / "corpus" / "spec" / "pacr-dst-access-mode-adj16.yaml"


def _pacr_adj16():
    case = load_case(PACR_ADJ16)
    return case, GoldenBackend().run(case), ReplayBackend(device="ttsim 1.10.0").run(case)


def test_pack_unremapped_explains_the_strided_pack_and_nothing_else():
    case, g, dev = _pacr_adj16()
    registry = load_known()
    v = assess(case, g, dev, ("golden", "ttsim"), "replay", known=registry)
    assert v.outcome == KNOWN and v.known == ("pack-strided-unremapped",), v.message
    others = [k for k in registry if k.id != "pack-strided-unremapped"]
    v = assess(case, g, dev, ("golden", "ttsim"), "replay", known=others)
    assert v.outcome == DIVERGED and {d.region for d in v.comparison.diffs} == {"l1"}
    assert min(int(d.location, 16) for d in v.comparison.diffs) >= 0x10030    # interface 0 reads row 0 on both
    facts = GoldenFacts(case)
    assert facts.machine.s.l1.read(0x10030, 32) != facts.unremapped_pack.s.l1.read(0x10030, 32)
    assert facts.machine.s.l1.read(0x10010, 32) == facts.unremapped_pack.s.l1.read(0x10010, 32)


def test_the_strided_pack_with_a_planted_golden_bug_still_fails(monkeypatch):
    """A conversion bug in datum 40 (read interface 2, which the entry covers) changes both golden runs alike,
    so the device's byte there matches neither: that byte alone is left."""
    import numpy as np
    import golden.pack.pacr as pacr
    case, _, dev = _pacr_adj16()
    datums = pacr._l1_datums
    monkeypatch.setattr(pacr, "_l1_datums", lambda *a: np.where(np.arange(a[-1].size) == 40, 1, 0) ^ datums(*a))
    v = assess(case, GoldenBackend().run(case), dev, ("golden", "ttsim"), "replay")
    assert v.outcome == DIVERGED and v.known == ("pack-strided-unremapped",), v.message
    assert [d.location for d in v.comparison.diffs] == ["0x10060"], v.message


def test_pack_unremapped_needs_a_scope_and_the_l1_region(tmp_path):
    with pytest.raises(KnownError, match="needs an entry limited by 'cases', 'tags' or 'condition'"):
        _known(tmp_path, "- id: a\n  reason: r\n  explains: [{fields: ['l1.*'], when: {pack_unremapped: l1}}]\n")
    with pytest.raises(KnownError, match="names the region PACR writes"):
        _known(tmp_path, "- id: a\n  reason: r\n  tags: [x]\n"
                         "  explains: [{fields: ['dest.*'], when: {pack_unremapped: dest}}]\n")
    known = _known(tmp_path, "- id: a\n  reason: r\n  tags: [x]\n"
                             "  explains: [{fields: ['l1.*'], when: {pack_unremapped: l1}}]\n")
    l1 = Diff("l1", "0x10030", 1, 2, ("l1", "0x10000"))
    assert not explain_diffs([l1], "c", "hw", known, ("x",), None, None).entries          # no golden run
    assert not explain_diffs([l1], "c", "hw", known, ("x",), None, GoldenFacts(_case("NOP"))).entries
