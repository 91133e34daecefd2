"""The tensix-diff pytest plugin (contract: Commands).

Options: ``--backend=golden|replay|hw`` (default replay), ``--record-mode=none|new|all`` (hw only),
``--simulator=PATH`` (hw on a libttsim.so), ``--isolation=card|replace``, ``--device-id``, ``--core`` (hw: one, a
list or ``all``; pytest-xdist workers each take their own device, or their own core of one),
``--recordings=DIR`` (replay store), ``--strict-recordings``.
Fixtures: ``backend`` (the selected Backend), ``golden_backend``, ``check_case`` (a function: run golden and
the selected backend on a case and fail with a readable report unless they agree bit for bit).
Curated cases ``tests/corpus/**/*.yaml`` are collected as tests named by case name. Hypothesis profiles:
``ci`` (default; derandomized so the replay backend meets the same cases every run), ``dev``, ``thorough``,
``hw``; choose with ``--hypothesis-profile`` or ``HYPOTHESIS_PROFILE``. The run ends with one summary line.
"""
from __future__ import annotations

import argparse
import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from hwbridge.hw.cores import xdist_share
from hwbridge.registry import BACKENDS, BackendUnavailable, BadOption, expects_hang, get_backend
from tensix_cli.hw_options import core_arg, device_id_arg
from tensix_diff.case import CASE_SUFFIXES, Case, CaseError, case_hash, load_case
from tensix_diff.assess import assess, registry
from tensix_diff.compare import DEVICE_FAILED, DIVERGED, KNOWN, MATCHED, UNCOMPARED, Verdict
from tensix_cli.minimize import hypothesis_phases, minimize_failure
from tensix_diff.store import RECORD_MODES, Store, StoreError
from tensix_diff.triage import stale_known, unused_entries

# --- Hypothesis profiles -------------------------------------------------------------------------------
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]
# ci and hw draw the very same examples (same settings and phases), so every example a replay run draws
# was recorded by a hw run; neither shrinks (a shrunk example has no recording; on a device the minimiser
# shrinks instead).
settings.register_profile("ci", derandomize=True, database=None, deadline=None, max_examples=50,
                          suppress_health_check=_QUIET, print_blob=True, phases=hypothesis_phases("hw"))
settings.register_profile("dev", deadline=None, max_examples=200, suppress_health_check=_QUIET)
settings.register_profile("thorough", deadline=None, max_examples=2000, suppress_health_check=_QUIET)
settings.register_profile("hw", derandomize=True, database=None, deadline=None, max_examples=50,
                          suppress_health_check=_QUIET, print_blob=True, phases=hypothesis_phases("hw"))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

SUMMARY_KEY = "tensix_diff_summary"
KNOWN_PREFIX = "known: "   # the xfail reason of a known divergence: pytest's own lines say "known" for it


def pytest_addoption(parser):
    g = parser.getgroup("tensix-diff")
    g.addoption("--backend", choices=BACKENDS, default="replay",
                help="backend the differential tests compare with golden (default: replay)")
    g.addoption("--record-mode", choices=RECORD_MODES, default="none",
                help="hw only: write what the device returned into the replay store (none|new|all)")
    g.addoption("--simulator", metavar="PATH", default=None, help="hw backend: a libttsim.so instead of a card")
    g.addoption("--simulator-version", metavar="V", default=None,
                help="ttsim release to label recordings with (default: $TENSIX_DIFF_SIMULATOR_VERSION or a"
                     " version file beside the .so)")
    g.addoption("--isolation", choices=("card", "replace"), default=None,
                help="hw: card (targeted clean-ups, the device is never replaced; the default on a card) or"
                     " replace (a fresh simulator after a case that leaves state; the default on ttsim)")
    g.addoption("--device-id", metavar="N", default=None,
                help="hw: which device (default: the lowest; under xdist each worker its own while there are enough)")
    g.addoption("--core", metavar="X,Y", default=None,
                help="hw: Tensix core(s) in NOC0 coordinates, X,Y, a list 'X,Y;X,Y' or 'all' (default: the first);"
                     " under xdist with one device, worker gwN takes the N-th of them")
    g.addoption("--recordings", metavar="DIR", default=None,
                help="replay store directory (default: $TENSIX_DIFF_RECORDINGS or <repo>/recordings)")
    g.addoption("--allow-no-device", action="store_true",
                help="hw: skip the device tests when no card is found (default: fail with one line)")
    g.addoption("--device", metavar="NAME", default=None,
                help="replay: whose recordings to replay, a device ('ttsim 1.10.0') or kind ('ttsim');"
                     " default: silicon if recorded, else the newest ttsim")
    g.addoption("--strict-recordings", action="store_true",
                help="a missing or stale recording fails instead of being counted and skipped"
                     " (always so when $CI is set)")


class TensixDiffPlugin:
    """Per-process state: the selected backend (built on first use) and the outcome counters."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.backend_name: str = config.getoption("backend")
        self.record_mode: str = config.getoption("record_mode")
        self.simulator: str | None = config.getoption("simulator")
        rec = config.getoption("recordings")
        self.store = Store(Path(rec) if rec else None)
        self.strict = config.getoption("strict_recordings") or bool(os.environ.get("CI"))
        self.outcomes: dict[str, str] = {}   # case hash -> last outcome (a case shrunk or re-run counts once)
        self.why: dict[str, str] = {}        # case hash -> why it was not compared
        self.unrecorded: dict[str, str] = {} # case hash -> "missing|stale: how to record it"
        self.used_known: set[str] = set()    # registry entries that explained a difference
        self.device: str | None = config.getoption("device")
        self.devices: Counter = Counter()    # replay: the devices whose recordings answered
        self._backend = None
        self._golden = None
        self._unavailable: str | None = None
        self._minimized: dict[str, str] = {}
        self.stale: list[str] = []   # known divergences that no longer reproduce

    # --- backends ---
    def golden(self):
        if self._golden is None:
            self._golden = get_backend("golden")
        return self._golden

    def backend(self):
        """The selected backend; skips the calling test with a reason when the device is not configured."""
        if self._unavailable is not None:
            pytest.skip(self._unavailable)
        if self._backend is None:
            try:
                if self.backend_name == "replay":
                    self._backend = get_backend("replay", store=self.store, device=self.device)
                elif self.backend_name == "hw":
                    self._backend = get_backend("hw", simulator=self.simulator, **self.hw_opts())
                else:
                    self._backend = get_backend(self.backend_name)
            except BadOption as e:        # includes a --device-id/--core/--jobs choice this device cannot honour
                pytest.exit(f"tensix-diff: {e}", returncode=2)
            except BackendUnavailable as e:
                self._no_device(f"no device configured: {e}")
            except Exception as e:
                first = (str(e).strip().splitlines() or [""])[0]
                if self.simulator is not None:   # configured, but broken: stop the run with one line
                    bad_path = not Path(self.simulator).expanduser().is_file()
                    pytest.exit(f"tensix-diff: the hw backend could not start on --simulator={self.simulator}:"
                                f" {'no such file' if bad_path else type(e).__name__ + ': ' + first}",
                                returncode=2 if bad_path else 3)
                self._no_device(f"no card found and no --simulator given ({type(e).__name__}: {first})")
        return self._backend

    def hw_opts(self) -> dict:
        """The hw backend's options given on the command line (besides --simulator); under pytest-xdist, which
        worker this is (each takes its own device, or its own core of a shared one: hwbridge.hw.cores.place)."""
        names = ("simulator_version", "isolation", "device_id", "core")
        opts = {n: v for n in names if (v := self.config.getoption(n)) is not None}
        for name, parse in (("device_id", device_id_arg), ("core", core_arg)):
            if name in opts:
                opts[name] = parse(opts[name])
        share = xdist_share()
        return {**opts, "share": share} if share else opts

    def _no_device(self, why: str) -> None:
        """No device: skip when the user asked for that (--allow-no-device), else stop with one line."""
        if self.config.getoption("allow_no_device") or self.backend_name != "hw":
            self._unavailable = why
            pytest.skip(why)
        pytest.exit(f"tensix-diff: --backend=hw: {why} (add --allow-no-device to skip instead)", returncode=3)

    # --- the differential check ---
    def check(self, case: Case, where: str | None = None) -> Verdict:
        """Golden against the selected backend (tensix_diff.assess); ``where`` is the test id that drew the
        case (for the record command listed at the end when its recording is missing)."""
        backend = self.backend()
        expected = self.golden().run(case)
        h = case_hash(case)
        if self.backend_name == "golden":
            self.outcomes[h] = "ran"
            return Verdict("ran", f"golden: {expected.status}")
        try:
            actual = backend.run(case)
            if self.backend_name == "hw" and self.record_mode != "none":
                self.store.record(case, actual, self.record_mode)
        except StoreError as e:
            pytest.fail(str(e), pytrace=False)
        verdict = assess(case, expected, actual, ("golden", self.backend_name), self.backend_name)
        self.note(case, verdict, where, actual.provenance.get("device") if self.backend_name == "replay" else None, h)
        if verdict.outcome == KNOWN:   # configs/known_divergences.yaml explains every difference
            pytest.xfail(KNOWN_PREFIX + verdict.message)
        if verdict.outcome == DIVERGED:
            pytest.fail(f"case {case.name} ({case.source}): golden and {self.backend_name} disagree\n"
                        + verdict.report() + self.minimized(case), pytrace=False)
        if verdict.outcome == DEVICE_FAILED:
            pytest.fail(f"case {case.name}: {verdict.message}", pytrace=False)
        if verdict.outcome in ("missing", "stale") and self.strict:
            pytest.fail(f"case {case.name}: {verdict.message} (strict recordings: $CI is set or"
                        " --strict-recordings)", pytrace=False)
        return verdict

    def note(self, case: Case, verdict: Verdict, where: str | None = None, device: str | None = None,
             h: str | None = None) -> None:
        """Count an assessed verdict in the closing summary (also used by tests that judge many cases); ``h``:
        the case's hash where the caller has it (a replayed Result's provenance "recording")."""
        h = h or case_hash(case)
        self.outcomes[h] = verdict.outcome
        self.used_known.update(verdict.known)
        if device is not None and verdict.outcome not in ("missing", "stale"):
            self.devices[device] += 1
        self.stale += stale_known(case, verdict, self.backend_name)
        if verdict.outcome == UNCOMPARED:
            self.why[h] = verdict.why or "other"
        if verdict.outcome in ("missing", "stale"):
            src = str(case.source) if case.source and not str(case.source).startswith("<") else None
            how = (f"tensix-diff record {src} --simulator=PATH --simulator-version=V" if src else
                   f"pytest --backend=hw --simulator=PATH --record-mode=new '{where}'" if where else
                   "re-record its bundle with tensix-diff record")
            self.unrecorded[h] = f"{verdict.outcome} {case.name}: {how}"

    def minimized(self, case: Case) -> str:
        """Under hw a divergent case goes to the minimiser (each Hypothesis shrink step would be a device
        run); its report and the minimal case's path, once per case."""
        if self.backend_name != "hw":
            return ""
        if case_hash(case) not in self._minimized:
            out = self.config._tmp_path_factory.getbasetemp() / "minimized"   # noqa: SLF001 (pytest's tmp root)
            self._minimized[case_hash(case)] = "\n" + minimize_failure(case, self.backend(), self.golden(), out)
        return self._minimized[case_hash(case)]

    # --- hooks ---
    def pytest_sessionfinish(self, session):
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:   # an xdist worker: hand the counts to the controller
            workeroutput[SUMMARY_KEY] = {"outcomes": dict(self.outcomes), "stale": list(self.stale),
                                         "why": dict(self.why), "unrecorded": dict(self.unrecorded),
                                         "used_known": sorted(self.used_known), "devices": dict(self.devices)}

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        out = getattr(node, "workeroutput", {}).get(SUMMARY_KEY)
        if not out:
            return
        self.outcomes.update(out["outcomes"])
        self.stale += out["stale"]
        self.why.update(out["why"])
        self.unrecorded.update(out["unrecorded"])
        self.used_known.update(out["used_known"])
        self.devices.update(out["devices"])

    def counts(self) -> Counter:
        c = Counter(self.outcomes.values())
        c["compared"] = c[MATCHED] + c[DIVERGED] + c["known"]
        return c

    def pytest_terminal_summary(self, terminalreporter):
        if hasattr(self.config, "workerinput") or not self.outcomes:
            return
        c = self.counts()
        w = terminalreporter.write_line
        if self.backend_name == "golden":
            w(f"tensix-diff (golden only): {c['ran']} cases run on golden, none compared")
            return
        line = (f"tensix-diff (golden vs {self.backend_name}): {c['compared']} cases compared,"
                f" {c['matched']} matched, {c['diverged']} diverged, {c['known']} known,"
                f" {c['missing']} missing recordings, {c['stale']} stale, {c['uncompared']} uncompared")
        w(line + (f", {c['device-failed']} device-failed" if c["device-failed"] else ""))
        for rep in terminalreporter.stats.get("known", [])[:50]:   # pytest_report_teststatus's category
            reason = rep.wasxfail[len(KNOWN_PREFIX):].splitlines()[0]
            w(f"known {rep.nodeid}: " + (reason if len(reason) <= 120 else reason[:117] + "..."))
        if self.devices:
            w("replayed recordings of: " + ", ".join(f"{d} ({n})" for d, n in sorted(self.devices.items()))
              + ("" if self.device else " (choose with --device)"))
        if self.why:
            whys = Counter(self.why[h] for h, o in self.outcomes.items() if o == UNCOMPARED and h in self.why)
            w("uncompared: " + ", ".join(f"{n} {why}" for why, n in whys.most_common()))
        if self.unrecorded:
            w(f"{len(self.unrecorded)} case(s) without a usable recording"
              + (" (these FAILED: strict recordings)" if self.strict else " (skipped; --strict-recordings or"
                 " $CI makes them fail)") + "; record them with:")
            for text in sorted(self.unrecorded.values())[:50]:
                w("  " + text)
            if len(self.unrecorded) > 50:
                w(f"  ... and {len(self.unrecorded) - 50} more")
        for stale in sorted(set(self.stale)):
            w(stale)
        if c["compared"]:
            for k in unused_entries(registry(), self.used_known):
                w(f"known-divergence entry {k.id} explained no difference in this run")


def pytest_report_teststatus(report, config):
    """A known divergence (tensix_diff.assess) is "known" in pytest's own progress, listing and closing line,
    in the vocabulary of `tensix-diff run`, not pytest's "xfailed"."""
    if report.when == "call" and report.skipped and str(getattr(report, "wasxfail", "")).startswith(KNOWN_PREFIX):
        return "known", "k", ("KNOWN", {"yellow": True})
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """How a run spreads over cores (pytest-xdist): the whole suite, or any directory of tests, on one worker
    per logical core (``--dist worksteal``) unless -n, --dist or --tx is given; named test files or ids stay in
    one process. Never by default under --backend=hw (a simulator run keeps one simulator); with -n there each
    worker takes its own device, or its own Tensix core of a shared one (TensixDiffPlugin.hw_opts)."""
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    given = config.option.numprocesses is not None or config.option.dist != "no" or config.option.tx
    if config.getoption("backend") == "hw":
        return
    if given or config.option.usepdb or config.option.collectonly:
        return
    if not all(Path(str(a).split("::")[0]).is_dir() for a in config.args):
        return
    config.option.numprocesses = "logical"
    workers = config.hook.pytest_xdist_auto_num_workers(config=config)
    if workers > 1:
        config.option.numprocesses, config.option.dist = workers, "worksteal"
    else:
        config.option.numprocesses = None


def pytest_configure(config):
    config.addinivalue_line("markers", "hw: needs a card or simulator (runs only with --backend=hw)")
    config.addinivalue_line("markers", "selftest: the hw self-check of tensix-diff selftest (pytest -m selftest"
                            " --backend=hw [--simulator=PATH]); run it first on a card")
    if config.getoption("record_mode") != "none" and config.getoption("backend") != "hw":
        raise pytest.UsageError("--record-mode records what a device returned: it needs --backend=hw")
    if config.getoption("simulator") and config.getoption("backend") != "hw":
        raise pytest.UsageError("--simulator is for the hw backend: add --backend=hw")
    if config.getoption("simulator"):
        from hwbridge.hw.errors import OptionError
        from hwbridge.hw.simdir import check_simulator
        try:
            check_simulator(config.getoption("simulator"))
        except OptionError as e:
            pytest.exit(f"tensix-diff: {e}", returncode=2)
    for name, parse in (("device_id", device_id_arg), ("core", core_arg)):
        if config.getoption(name) is not None:
            try:
                parse(config.getoption(name))
            except argparse.ArgumentTypeError as e:
                pytest.exit(f"tensix-diff: {e}", returncode=2)
    config.pluginmanager.register(TensixDiffPlugin(config), "tensix_diff")
    os.environ["TENSIX_DIFF_BACKEND"] = config.getoption("backend")   # strategies choose what they draw from
    if (config.getoption("backend") == "hw" and "HYPOTHESIS_PROFILE" not in os.environ
            and config.getoption("hypothesis_profile", None) is None):
        settings.load_profile("hw")   # on a device Hypothesis does not shrink; the minimiser does


def pytest_collection_modifyitems(config, items):
    """Under --backend=hw the curated cases known to hang (tagged ``expect:hang``) run after every other test: on
    a device that is never replaced (a card) a hang the recovery cannot end would taint every later case."""
    if config.getoption("backend") == "hw":
        items.sort(key=lambda item: isinstance(item, CaseItem) and expects_hang(item.case))


def _plugin(config: pytest.Config) -> TensixDiffPlugin:
    return config.pluginmanager.get_plugin("tensix_diff")


def pytest_runtest_setup(item):
    if item.get_closest_marker("hw") is not None:
        p = _plugin(item.config)
        if p.backend_name != "hw":
            pytest.skip("needs a card or simulator: run with --backend=hw [--simulator=PATH]")
        p.backend()


@pytest.fixture(scope="session")
def backend(request):
    """The Backend selected with --backend (skips when it needs a device that is not configured)."""
    return _plugin(request.config).backend()


@pytest.fixture(scope="session")
def golden_backend(request):
    return _plugin(request.config).golden()


@pytest.fixture(scope="session")
def check_case(request):
    """``check_case(case) -> Verdict``: golden and the selected backend must agree bit for bit (else the test
    fails with the comparison report). Missing or stale recordings and cases golden cannot model are
    counted in the closing summary (they fail under $CI or --strict-recordings); outside Hypothesis they
    skip the test with the reason."""
    plugin = _plugin(request.config)

    def check(case: Case) -> Verdict:
        from hypothesis.control import currently_in_test_context
        where = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0] or None   # the calling test
        verdict = plugin.check(case, where)
        if verdict.outcome in ("missing", "stale", "uncompared") and not currently_in_test_context():
            pytest.skip(f"{case.name}: {verdict.message}")
        return verdict

    return check


# --- curated cases: tests/corpus/**/*.yaml, one test per case, named by case name ------------------------

def pytest_collect_file(file_path: Path, parent):
    if file_path.suffix in CASE_SUFFIXES and "corpus" in file_path.parts:
        return CaseFile.from_parent(parent, path=file_path)
    return None


class CaseFile(pytest.File):
    def collect(self):
        try:
            case = load_case(self.path)
        except CaseError as e:
            raise self.CollectError(str(e)) from None
        yield CaseItem.from_parent(self, name=case.name, case=case)


class CaseItem(pytest.Item):
    def __init__(self, *, case: Case, **kw):
        super().__init__(**kw)
        self.case = case
        for tag in case.tags:
            if tag == "hw":
                self.add_marker(pytest.mark.hw)

    def runtest(self):
        plugin = _plugin(self.config)
        verdict = plugin.check(self.case, self.nodeid)
        if verdict.outcome in ("missing", "stale", "uncompared"):   # reported at the case file, not here
            raise pytest.skip.Exception(f"{self.case.name}: {verdict.message}", _use_item_location=True)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (StoreError, CaseError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, 0, f"case {self.case.name}"
