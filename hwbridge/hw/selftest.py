"""The self-check a lab engineer runs first on a card (``tensix-diff selftest``, ``pytest -m selftest``).

Each check runs small cases (hwbridge/hw/selftest_cases.py) through the HwBackend the user's runs go
through, and compares what comes back, bit for bit, with what the case put there (golden runs the same
case; for the RWC layout, the planned values themselves). Where the read-back does not reach (SrcA/SrcB bank
state, the Dest window tt-exalens reads a 32-bit Dest through), a probe (hwbridge/hw/probe.py) reads the
core right after the case. The curated corpus against golden comes last. A check says ok, FAIL or skip
(the platform lacks what it needs), with what differed in a few words.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from golden.core import Tensix
from golden.errors import GoldenError
from golden.state import MATRIX_UNIT
from tensix_diff.assess import assess
from tensix_diff.case import Case, load_each
from tensix_diff.compare import DEVICE_FAILED, DIVERGED, compare
from tensix_diff.golden_run import apply_init, run_golden
from tensix_diff.result import OK, Result

from . import probe
from . import selftest_cases as C
from .backend import HwBackend

OK_, FAIL, SKIP = "ok", "FAIL", "skip"
CORPUS = Path(__file__).resolve().parents[2] / "tests" / "corpus"
SHOWN = 2                # differences named in a FAIL line


@dataclass(frozen=True)
class Outcome:
    name: str
    status: str          # ok | FAIL | skip
    detail: str

    def line(self) -> str:
        return f"{self.name:<14} {self.status:<4} {self.detail}"


class CheckFailed(Exception):
    """A check cannot go on (the device did not answer a case): its FAIL detail."""


def _fmt(v) -> str:
    return f"{v:#x}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


class Selftest:
    """The checks on one HwBackend; ``run`` yields one Outcome per check, in CHECKS order."""

    def __init__(self, hw: HwBackend, corpus: list[str | Path] | None = None):
        self.hw, self.plat = hw, hw.platform
        self.corpus = [str(p) for p in (corpus or [CORPUS])]
        self.settled: dict[str, bool] = {}      # checks that settle the platform table: passed?

    def run(self, names: list[str] | None = None) -> Iterator[Outcome]:
        for name in names or list(CHECKS):
            try:
                status, detail = CHECKS[name](self)
            except CheckFailed as e:
                status, detail = FAIL, str(e)
            if name in SETTLES:
                self.settled[name] = status == OK_
            yield Outcome(name, status, detail)

    # --- running cases ---
    def device_run(self, case: Case) -> Result:
        r = self.hw.run(case)
        if r.status != OK:
            raise CheckFailed(f"{case.name}: {r.status}: {r.message.splitlines()[0] if r.message else ''}".strip())
        return r

    def golden_run(self, case: Case) -> Result:
        r = run_golden(case)
        if r.status != OK:      # the selftest's own case is wrong: never blame the device for it
            raise CheckFailed(f"{case.name}: golden {r.status}: {r.message}")
        return r

    def against_golden(self, cases: list[Case], regions: tuple[str, ...], what: str) -> tuple[str, str]:
        """Run each case on the device and on golden; compare ``regions`` bit for bit (ADC fields masked to
        what the platform's debug bus shows)."""
        compared, diffs = 0, []
        for case in cases:
            actual, expected = self.device_run(case).state, self.golden_run(case).state
            if "adc" in expected:
                expected = {**expected, "adc": self._masked_adc(expected["adc"])}
            c = compare({k: expected[k] for k in regions}, {k: actual[k] for k in regions if k in actual})
            compared += c.compared
            diffs += [(case.name, d) for d in c.diffs]
        if diffs:
            shown = "; ".join(f"{d.region} {d.location}: expected {_fmt(d.expected)}, read {_fmt(d.actual)}"
                              for _, d in diffs[:SHOWN])
            return FAIL, f"{len(diffs)} of {compared} {what} differ ({diffs[0][0]}): {shown}"
        return OK_, f"{compared} {what} in {len(cases)} case{'s' if len(cases) > 1 else ''}"

    def _masked_adc(self, adc: dict) -> dict:
        masks = self.plat.counter_masks()
        return {t: {u: {ch: {f: v & masks[f.removesuffix('_cr')] for f, v in fields.items()}
                        for ch, fields in chans.items()} for u, chans in units.items()} for t, units in adc.items()}

    def probe(self, case: Case, job) -> tuple[Result, list[bytes]]:
        """The case on the device, then ``job`` on the same core before anything else runs there."""
        w = self.hw.worker
        if w.conn is None:
            w.start()
        starts = w.starts
        r = self.device_run(case)
        if w.starts != starts:
            raise CheckFailed(f"{case.name}: the device worker was replaced after the case; nothing left to probe")
        reply = w.run(job)
        if reply.status != "ok":
            raise CheckFailed(f"{job.name} after {case.name}: {reply.status}: {reply.message}")
        return r, reply.blobs


# --- the checks ---------------------------------------------------------------------------------------
def check_device(st: Selftest) -> tuple[str, str]:
    p = st.hw.provenance()
    verified = "verified" if p["platform_verified"] else "unverified: this run settles it"
    return OK_, (f"{p['device']} ({p['device_kind']}), core {p['core']}, platform {p['platform']} ({verified}),"
                 f" tt-exalens {p['exalens']}, tt-umd {p['umd']}, isolation {p['isolation_mode']}")


def check_dest16(st: Selftest) -> tuple[str, str]:
    return st.against_golden(C.dest16_cases(), ("dest",), "Dest cells (DBG_ARRAY_RD)")


def check_dest32(st: Selftest) -> tuple[str, str]:
    return st.against_golden([C.dest32_case()], ("dest",), "DstBits cells of a 32-bit Dest (DBG_ARRAY_RD)")


def check_dest32_window(st: Selftest) -> tuple[str, str]:
    """The 32-bit Dest through the RISC-V Dest window, as tt-exalens reads it (fmt 0, swizzled) and raw
    (no_swizzle), against golden; and whether DBG_ARRAY_RD's cells give the same words."""
    if not st.plat.raw.get("dest_window"):
        return SKIP, (f"platform {st.plat.name} has no RISC-V Dest window (dest_window: false):"
                      " DBG_ARRAY_RD is its only Dest path")
    case = C.dest32_case()
    expected = st.golden_run(case).state["dest"]
    access = case.init.config.get(0, {}).get(probe.REMAP.index, 0)
    same_as_array_rd = True
    for no_swizzle in (False, True):
        r, blobs = st.probe(case, probe.window_job(no_swizzle))
        got, want = probe.words(blobs[0]), probe.window_model(expected, access, no_swizzle)
        bad = (got != want).nonzero()[0]
        if len(bad):
            i = int(bad[0])
            return FAIL, (f"{len(bad)} of {len(want)} words differ ({'raw' if no_swizzle else 'fmt 0, swizzled'}):"
                          f" Dst32b row {i // 16} col {i % 16}: expected {int(want[i]):#x}, read {int(got[i]):#x}")
        same_as_array_rd &= bool((probe.window_model(r.state["dest"], access, no_swizzle) == got).all())
    tail = ("; DBG_ARRAY_RD gives the same words: either path reads a 32-bit Dest" if same_as_array_rd else
            "; DBG_ARRAY_RD differs: read a 32-bit Dest through the window (as tt-exalens does)")
    return OK_, f"{probe.WINDOW_WORDS} words, swizzled and raw{tail}"


def check_gpr(st: Selftest) -> tuple[str, str]:
    return st.against_golden([C.gpr_case()], ("gpr",), "GPR words")


def check_config(st: Selftest) -> tuple[str, str]:
    written, control = C.config_words(st.plat)
    status, detail = st.against_golden(C.config_cases(st.plat), ("config",), "Config words")
    return status, detail + (f" ({len(written)} words written, {len(control)} control words read as reset)"
                             if status == OK_ else "")


def check_l1(st: Selftest) -> tuple[str, str]:
    return st.against_golden(C.l1_cases(), ("l1",), "L1 bytes")


def check_thread_config(st: Selftest) -> tuple[str, str]:
    return st.against_golden([C.thread_config_case()], ("rwc",), "RWC fields after ThreadConfig AddrMods")


def check_rwc_layout(st: Selftest) -> tuple[str, str]:
    """Each RWC field of each thread set to its own value, read back through the platform's rwc_layout."""
    return rwc_layout_result(st.device_run(C.rwc_layout_case()).state["rwc"], st.plat.name)


def rwc_layout_result(rwc: dict, platform: str) -> tuple[str, str]:
    """ok, or FAIL naming each field that read another value, and the field that value was planned for, if
    any (a lead: a misplaced position can also read a mixture of neighbouring fields' bits)."""
    plan = C.rwc_plan()
    owner = {v: f"thread {t} {f}" for t, p in plan.items() for f, v in p.items()}
    wrong = [f"thread {t} {f} read {rwc[str(t)][f]:#x} (expected {v:#x}"
             + (f"; the value planned for {owner[rwc[str(t)][f]]})" if rwc[str(t)][f] in owner else ")")
             for t, p in plan.items() for f, v in p.items() if rwc[str(t)][f] != v]
    if wrong:
        return FAIL, f"{len(wrong)} of 18 fields wrong in rwc_layout of {platform}: " + "; ".join(wrong[:SHOWN])
    return OK_, f"18 fields (6 per thread) read back through rwc_layout of {platform}"


def check_counters(st: Selftest) -> tuple[str, str]:
    return st.against_golden([C.counters_case()], ("rwc", "adc"), "fidelity and ADC fields")


def check_src_bits(st: Selftest) -> tuple[str, str]:
    """SrcA/SrcB bank state after each Src case, through the platform's src_state_bits, against golden's;
    the last case follows the others, so its zeros show the reset prologue cleared their state."""
    job = probe.dbus_job([tuple(st.plat.raw["src_state_group"])])
    seen = 0
    for case in C.src_cases():
        _, blobs = st.probe(case, job)
        got, want = probe.src_bits(probe.words(blobs[0]).tolist(), st.plat), _golden_src_bits(case)
        wrong = [f"{s} {k} read {got[s][k]} (expected {v})" for s, bits in want.items() for k, v in bits.items()
                 if got[s][k] != v]
        if wrong:
            return FAIL, f"{case.name}: " + "; ".join(wrong[:SHOWN + 1])
        seen += 8
    return OK_, f"{seen} bits in {len(C.SRC_STATES)} bank states, the last after the reset prologue"


def _golden_src_bits(case: Case) -> dict[str, dict[str, int]]:
    m = Tensix()
    apply_init(m.s, case)
    try:
        m.run(case.threads, case.actions)
    except GoldenError as e:
        raise CheckFailed(f"{case.name}: golden {e}") from None
    out = {}
    for name in ("srca", "srcb"):
        f = getattr(m.s, name)
        out[name] = {"valid0": int(f.banks[0].allowed_client == MATRIX_UNIT),
                     "valid1": int(f.banks[1].allowed_client == MATRIX_UNIT),
                     "matrix_bank": f.matrix_bank, "unpack_bank": f.unpacker_bank}
    return out


def check_corpus(st: Selftest) -> tuple[str, str]:
    """The curated corpus against golden (tensix_diff.assess: known divergences, expected refusals)."""
    cases, problems = load_each(st.corpus)
    if problems or not cases:
        return FAIL, f"cannot read the corpus: {problems[0] if problems else 'no cases in ' + ' '.join(st.corpus)}"
    outcomes: Counter = Counter()
    bad = []
    for case in cases:
        verdict = assess(case, run_golden(case), st.hw.run(case), ("golden", "hw"), "hw")
        outcomes[verdict.outcome] += 1
        if verdict.outcome in (DIVERGED, DEVICE_FAILED):
            bad.append(case.name)
    counts = ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items()))
    if bad:
        return FAIL, f"{len(cases)} cases: {counts}; first: {', '.join(bad[:3])}"
    return OK_, f"{len(cases)} cases: {counts}"


CHECKS: dict[str, Callable[[Selftest], tuple[str, str]]] = {
    "device": check_device,
    "dest16": check_dest16,
    "dest32": check_dest32,
    "dest32-window": check_dest32_window,
    "gpr": check_gpr,
    "config": check_config,
    "l1": check_l1,
    "thread-config": check_thread_config,
    "rwc-layout": check_rwc_layout,
    "counters": check_counters,
    "src-bits": check_src_bits,
    "corpus": check_corpus,
}
# The checks that settle a platform table's claims (blackhole.yaml ``verified: false``): its debug-bus layouts
# and the Config words it says can be written and read.
SETTLES = ("config", "rwc-layout", "counters", "src-bits")


def platform_note(st: Selftest) -> str | None:
    """What the run says about an unverified platform table, once every check that settles it ran."""
    if st.plat.verified or set(st.settled) != set(SETTLES):
        return None
    path = f"hwbridge/hw/platforms/{st.plat.name}.yaml"
    if all(st.settled.values()):
        return (f"platform {st.plat.name}: its Config words and RWC, fidelity, ADC and Src layouts read back as"
                f" planned on this device: set 'verified: true' in {path} (send this output with the change)")
    failed = [n for n, ok in st.settled.items() if not ok]
    return f"platform {st.plat.name}: {', '.join(failed)} failed: {path} stays unverified (send this output)"
