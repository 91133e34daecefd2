"""The minimiser: delta debugging, simplification, the device-run budget, NOP padding, the repro bundle."""
from __future__ import annotations

import dataclasses
import re

import pytest

from golden import isa
from hwbridge.golden_backend import GoldenBackend
from hwbridge.replay import ReplayBackend
from planted_bug import DistanceTensix, FixtureDevice, planted_addrmod_bug, planted_golden, SECTION
from tensix_diff.case import Case, Init, load_case
from tensix_diff.compare import judge
from tensix_cli.minimize import check_or_minimize, hypothesis_phases, minimal_case, write_bundle
from tensix_diff.minimizer import NOP, Minimizer, ddmin
from tensix_diff.triage import classify

AB = 12   # ThreadConfig ADDR32 index of AddrMod AB section 0


@pytest.fixture
def planted():
    with planted_addrmod_bug():
        yield planted_golden()


def asm(*lines: str) -> list[int]:
    return [isa.assemble_line(x) for x in lines]


def zeroacc(addr_mode: int, where: int = 0) -> str:
    return f"ZEROACC clear_mode=0 addr_mode={addr_mode} where={where}"


def test_the_minimal_case_is_one_minimal(planted):
    """Removing any one instruction, action or init entry of the result loses the divergence (checked here
    directly, outside the minimiser), and the report says so."""
    from tensix_diff.case import without
    from tensix_diff.minimizer import _init_entries, _init_keeping
    body = ["SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=3 rwc_b=5 rwc_a=1 bitmask=7", zeroacc(1, 9),
            "INCRWC rwc_cr=0 rwc_d=2 rwc_b=0 rwc_a=1", zeroacc(SECTION, 37), zeroacc(0, 3)]
    case = Case("noisy2", "", {0: asm(*body), 2: asm("INCRWC rwc_cr=0 rwc_d=8 rwc_b=0 rwc_a=0")},
                Init(gpr={1: {3: 7}}, thread_config={0: {AB + SECTION: 0x3B07, AB + 1: 0x0202}}))
    device = FixtureDevice()
    rep = Minimizer(device.run, planted.run).minimize(case)
    assert rep.status == "minimised" and rep.one_minimal and "1-minimal" in "\n".join(rep.lines())
    small = rep.case

    def diverges(c) -> bool:
        return classify(c, device.run(c), planted.run(c))[0].outcome == "diverged"
    assert diverges(small)
    slots = [(t, i) for t, ws in small.threads.items() for i in range(len(ws))]
    entries = _init_entries(small.init)
    assert slots
    for s in slots:
        assert not diverges(without(small, {s}))
    for e in entries:
        assert not diverges(dataclasses.replace(small, init=_init_keeping(small.init, set(entries) - {e})))


def test_ddmin_finds_the_two_items_that_matter_and_is_one_minimal():
    tests = []

    def needs_7_and_23(kept):
        tests.append(kept)
        return 7 in kept and 23 in kept

    assert ddmin(list(range(40)), needs_7_and_23) == [7, 23]
    assert len(tests) < 60


def test_noise_init_and_operands_are_simplified_away(planted):
    body = ["SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=3 rwc_b=5 rwc_a=1 bitmask=7", "INCRWC rwc_cr=0 rwc_d=1 rwc_b=2 rwc_a=3",
            zeroacc(1, 9), zeroacc(SECTION, 37), "INCRWC rwc_cr=0 rwc_d=2 rwc_b=0 rwc_a=1", zeroacc(0, 3)]
    case = Case("noisy", "", {0: asm(*body), 1: asm(zeroacc(3, 5))},
                Init(gpr={0: {5: 0x1234}}, thread_config={0: {AB + SECTION: 0x3B07, AB + 1: 0x0202}},
                     dest=[(4, [0x3F80] * 16)]))
    device = FixtureDevice()
    rep = Minimizer(device.run, planted.run).minimize(case)
    assert rep.status == "minimised" and not rep.budget_exhausted
    assert str(rep.original_signature) == "rwc.srcb @MATH"
    small = rep.case
    assert [isa.disassemble(w).split()[0] for ws in small.threads.values() for w in ws] == ["ZEROACC"]
    (word,) = small.threads[0]
    _, fields = isa.decode(word)
    assert fields["addr_mode"] == SECTION and fields["where"] == 0
    # only the AddrMod section the bug needs survives, with one SrcBIncr bit
    assert small.init.gpr == {} and small.init.dest == [] and list(small.init.thread_config[0]) == [AB + SECTION]
    value = small.init.thread_config[0][AB + SECTION]
    assert bin(value).count("1") == 1 and (value >> 8) & 0x3F
    assert rep.runs == device.runs <= 60
    assert rep.original_length == 7 and rep.minimal_length == 1


def test_the_budget_caps_device_runs_and_keeps_the_smallest_divergent_case(planted):
    body = [zeroacc(i % 8, i) for i in range(40)]
    case = Case("long", "", {0: asm(*body)}, Init(thread_config={0: {AB + s: 0x0101 for s in range(8)}}))
    device = FixtureDevice()
    rep = Minimizer(device.run, planted.run, max_runs=6).minimize(case)
    assert rep.budget_exhausted and rep.runs == device.runs == 6
    assert rep.case.instruction_count < 40
    verdict, sig = classify(rep.case, GoldenBackend().run(rep.case), planted.run(rep.case))
    assert str(sig) == "rwc.srcb @MATH"


def test_nop_padding_keeps_the_distance_a_divergence_depends_on():
    tc = {0: {AB + s: 0x0101 for s in range(8)}}
    body = asm("INCRWC rwc_cr=0 rwc_d=1 rwc_b=0 rwc_a=1", zeroacc(0), "INCRWC rwc_cr=0 rwc_d=0 rwc_b=1 rwc_a=0",
               zeroacc(1), zeroacc(2), zeroacc(3), zeroacc(4), "INCRWC rwc_cr=0 rwc_d=2 rwc_b=2 rwc_a=2")
    case = Case("distance", "", {0: body}, Init(thread_config=tc))
    distance_bug = GoldenBackend(machine_factory=DistanceTensix)
    deleting = Minimizer(FixtureDevice().run, distance_bug.run).minimize(case)
    padding = Minimizer(FixtureDevice().run, distance_bug.run, nop_pad=True).minimize(case)
    assert deleting.status == padding.status == "minimised"
    # deleting must keep five real instructions in front of the ZEROACC; padding keeps NOPs instead
    assert deleting.minimal_length == 6
    assert padding.minimal_length == 1 and padding.minimal_total == 6
    assert padding.case.threads[0][:5] == [NOP] * 5 and isa.decode(padding.case.threads[0][5])[0].name == "ZEROACC"
    assert "6 with NOP padding" in "\n".join(padding.lines())


def test_a_matching_case_is_reported_and_not_shrunk(planted):
    case = Case("fine", "", {0: asm(zeroacc(0), zeroacc(1))})
    rep = Minimizer(FixtureDevice().run, planted.run).minimize(case)
    assert rep.status == "matched" and rep.runs == 1 and rep.case is case


def test_the_model_side_runs_first_and_spares_the_device(planted):
    case = Case("unmodelled", "", {0: asm("ZEROACC clear_mode=4 addr_mode=0 where=0")})
    device = FixtureDevice()
    rep = Minimizer(device.run, planted.run).minimize(case)
    assert rep.status == "not-modelled" and device.runs == 0


def test_the_repro_bundle_replays_on_every_backend(planted, tmp_path):
    case = Case("bundle", "", {0: asm(zeroacc(1, 2), zeroacc(SECTION, 4))},
                Init(thread_config={0: {AB + SECTION: 0x0300}}))
    rep = Minimizer(FixtureDevice().run, planted.run).minimize(case)
    small = minimal_case(rep, case, "golden-planted")
    assert small.name == "bundle-min" and "rwc.srcb @MATH" in small.description
    out = tmp_path / "bundle-min.yaml"
    lines = write_bundle(small, rep.device, out)
    assert any("recorded its last device run" in x for x in lines)
    loaded = load_case(out)
    recorded = ReplayBackend(root=tmp_path / "bundle-min.recordings").run(loaded)
    assert recorded.ok and recorded.provenance["device"].startswith("test-fixture")
    assert judge(recorded, GoldenBackend().run(loaded)).matched           # the fixed model agrees
    _, sig = classify(loaded, recorded, planted.run(loaded))              # the planted copy still diverges
    assert str(sig) == "rwc.srcb @MATH"


def test_hypothesis_does_not_shrink_on_a_device():
    from hypothesis import Phase
    assert Phase.shrink not in hypothesis_phases("hw")
    assert Phase.shrink in hypothesis_phases("golden") and Phase.shrink in hypothesis_phases("replay")


def test_under_hw_a_failing_case_goes_to_the_minimiser(planted, tmp_path):
    case = Case("hw-fail", "", {0: asm(zeroacc(0), zeroacc(SECTION, 3), zeroacc(1))},
                Init(thread_config={0: {AB + SECTION: 0x0500}}))
    device = FixtureDevice()
    check_or_minimize(Case("ok", "", {0: asm(zeroacc(0))}), device, planted, "hw", tmp_path)
    with pytest.raises(AssertionError) as e:
        check_or_minimize(case, device, planted, "hw", tmp_path)
    assert "instructions: 3 -> 1" in str(e.value)
    assert (tmp_path / "hw-fail-min.yaml").exists()


def test_the_command_replays_a_recorded_minimisation_and_writes_the_bundle(planted, tmp_path, capsys):
    from tensix_cli.cli import main
    from tensix_diff.case import dump_case
    from tensix_diff.store import Store
    case = Case("cli-case", "", {0: asm(zeroacc(0, 1), "INCRWC rwc_cr=0 rwc_d=1 rwc_b=2 rwc_a=3", zeroacc(SECTION, 3),
                                       zeroacc(1, 2))}, Init(thread_config={0: {AB + SECTION: 0x0D00}}))
    path = tmp_path / "cli-case.yaml"
    path.write_text(dump_case(case))
    store = tmp_path / "recordings"
    # a "device" whose AddrMod is the planted copy, recorded as it goes; golden (unmodified) is the model
    device = FixtureDevice(Store(store), model=planted)
    live = Minimizer(device.run, GoldenBackend().run).minimize(load_case(path))
    out = tmp_path / "small.yaml"
    code = main(["minimize", str(path), "--backend", "replay", "--recordings", str(store), "--out", str(out), "-q"])
    text = capsys.readouterr().out
    assert code == 1
    assert f"minimize: minimised; {live.runs}/200 device runs" in text and "instructions: 4 -> 1" in text
    assert re.search(r"rwc thread 0 srcb: \S+ 0x\w+, .+ 0x\w+", text)   # the one-line diff of the minimal case, sides named
    small = load_case(out)
    assert small.threads == live.case.threads and small.name == "cli-case-min"
    assert ReplayBackend(root=tmp_path / "small.recordings").run(small).ok
    # nothing recorded for an edited case: nothing to minimise, one line, exit 2
    path.write_text(dump_case(Case("cli-case", "", {0: asm(zeroacc(1))})))
    assert main(["minimize", str(path), "--backend", "replay", "--recordings", str(store), "-q"]) == 2
    assert main(["minimize", str(path), "--backend", "golden", "-q"]) == 0      # golden against itself matches
    assert main(["minimize", str(path), "--backend", "nosuch"]) == 2


def first_name(report: dict) -> str:
    return report["divergences"][0]["name"]


def test_a_planted_bug_found_by_a_campaign_against_recordings_minimises_to_four_instructions(tmp_path, monkeypatch,
                                                                                             capsys):
    """Done criterion: golden with an off-by-one in one AddrMod field, fuzzed against recordings of the
    unmodified model; the first divergence shrinks to at most 4 instructions within 200 device runs."""
    import json

    from generators.bulk import generate
    from tensix_cli import fuzz
    from tensix_cli.cli import main
    from tensix_diff.store import Store
    seed, count = 2, 60
    device = FixtureDevice(Store(tmp_path / "recordings"))
    for _, case in generate(seed, count, "counters"):
        device.run(case)                                   # the "device" side, recorded once
    with planted_addrmod_bug():
        planted = planted_golden()
        real = fuzz.get_backend
        monkeypatch.setattr(fuzz, "get_backend", lambda name, **kw: planted if name == "golden" else real(name, **kw))
        code = main(["fuzz", "--seed", str(seed), "--count", str(count), "--profile", "counters", "--backend", "replay",
                     "--recordings", str(tmp_path / "recordings"), "--report", str(tmp_path / "campaign.json"), "-q"])
        out = capsys.readouterr().out
        assert code == 1 and out.startswith(f"seed: {seed}\n")
        report = json.loads((tmp_path / "campaign.json").read_text())
        assert report["summary"]["diverged"] >= 1 and report["summary"]["errors"] == 0
        groups = report["triage"]["groups"]
        assert {g["signature"] for g in groups} <= {"rwc.srcb @MATH", "rwc.srcb+rwc.srcb_cr @MATH"}
        assert f"{groups[0]['count']:5d} x {groups[0]['signature']}" in out
        page = (tmp_path / "campaign.html").read_text()
        assert groups[0]["signature"] in page and first_name(report) in page and "http" not in page
        first = load_case(report["divergences"][0]["case_file"])
        device.runs = 0
        rep = Minimizer(device.run, planted.run, max_runs=200).minimize(first)
        assert rep.status == "minimised" and not rep.budget_exhausted
        assert rep.runs == device.runs <= 200
        assert rep.minimal_length <= 4 < rep.original_length
        small = minimal_case(rep, first, "golden-planted")
        write_bundle(small, rep.device, tmp_path / "small.yaml")
        again = ReplayBackend(root=tmp_path / "small.recordings").run(load_case(tmp_path / "small.yaml"))
        assert classify(small, again, planted.run(small))[1] == rep.minimal_signature
    print(f"planted bug: {first.name}: {rep.original_length} -> {rep.minimal_length} instructions in {rep.runs} "
          f"device runs; {report['summary']['diverged']} of {count} cases diverged")


def test_candidates_the_model_hangs_on_never_reach_the_device(planted):
    """Deleting the SEMPOST leaves thread 0 waiting forever: golden says hang, and a device would time out.
    The divergence kept is not one of statuses, so such candidates are dropped without a device run."""
    case = Case("sync", "", {0: asm("SEMWAIT stall_res=2 sem_sel=1 wait_sem_cond=1", "SEMGET sem_sel=1",
                                    zeroacc(SECTION, 1)),
                             1: asm("INCRWC rwc_cr=0 rwc_d=1 rwc_b=0 rwc_a=0", "SEMPOST sem_sel=1")},
                Init(thread_config={0: {AB + SECTION: 0x0100}}))
    hung_on_device = []

    class Watchful(FixtureDevice):
        def run(self, c):
            if planted.run(c).status == "hang":
                hung_on_device.append(c)
            return super().run(c)

    rep = Minimizer(Watchful().run, planted.run).minimize(case)
    assert rep.status == "minimised" and rep.minimal_length == 1 and hung_on_device == []


@pytest.mark.hw
def test_on_the_device_the_planted_bug_minimises_within_budget(backend, planted):
    """With --backend=hw (a card or ttsim): the same planted bug, the device as the reference."""
    from generators.bulk import generate_one
    case = generate_one(2, 14, "counters")        # 71 instructions; the planted bug shows in rwc.srcb
    rep = Minimizer(backend.run, planted.run).minimize(case)
    assert rep.status == "minimised" and rep.runs <= 200 and rep.minimal_length <= 4
    assert rep.minimal_signature.fields == ("rwc.srcb",)


def test_a_replay_bracket_goes_as_a_pair(planted):
    """REPLAY (load) records the next four instructions without running them; REPLAY (run) plays them.
    Deleting either alone changes what runs; ddmin's contiguous chunks cannot take both without the
    ZEROACC between them, so the pair pass removes the two REPLAYs together."""
    body = asm("REPLAY start_idx=25 len=4 execute_while_loading=0 load_mode=1",
               "INCRWC rwc_cr=0 rwc_d=0 rwc_b=1 rwc_a=0", "SETRWC clear_ab_vld=0 rwc_cr=0 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=1",
               zeroacc(SECTION), "SETRWC clear_ab_vld=0 rwc_cr=2 rwc_d=0 rwc_b=0 rwc_a=0 bitmask=0",
               "REPLAY start_idx=25 len=4 execute_while_loading=0 load_mode=0")
    case = Case("replayed", "", {1: body}, Init(thread_config={1: {AB + SECTION: 0x2000}}))
    rep = Minimizer(FixtureDevice().run, planted.run).minimize(case)
    assert rep.status == "minimised" and rep.minimal_length == 1
    assert isa.decode(rep.case.threads[1][0])[0].name == "ZEROACC"
