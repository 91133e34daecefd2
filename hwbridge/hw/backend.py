"""The hw backend: run a case on a Blackhole Tensix core through tt-exalens (a card, or ttsim).

``HwBackend(simulator=PATH)`` drives ttsim (a libttsim.so built outside this repository);
``HwBackend()`` takes the first card tt-exalens finds. Per-platform differences live in
hwbridge/hw/platforms/*.yaml; the program builder, worker and readback are shared.

Outcomes: ``ok`` with the observed state; ``refused`` when the harness or the platform cannot run the
case (provenance ``refused_by``: ``harness`` before running, ``simulator`` when ttsim stopped on it with
its ERROR line, which is deterministic); ``hang`` when the core did not finish within its budget (simulated
cycles on ttsim, the wall-clock timeout on a card), with the stalled threads named (hwbridge.hw.stall);
``device-error`` for anything else (a worker that died without a word, a simulator too slow to reach its
cycle budget in wall-clock time, an exception in the device layer); ``tainted`` for a case after a hang or
a device error on a core that is never replaced, while no health check has passed on it
(hwbridge.hw.recovery): not run, uncompared.

Isolation (``isolation=``): golden's end state says what a case leaves that the reset prologue cannot reset
(hw/leftovers.py). ``card`` (the default, and the only choice, on a card) never replaces the device: after an
``ok`` case's results are read a small clean-up job clears those leftovers (hw/cleanup.py), a case whose
leftovers nothing documented clears is refused before it runs, with the reason, and a hang is recovered from in
place (the stalled threads unblocked, then a health-check case compared with golden bit for bit). ``replace``
(the default on ttsim) starts a fresh simulator after a case that leaves something, and after anything but
``ok``. Provenance: ``leftovers`` (what golden predicted), ``cleanups`` (each clean-up done after the case),
``isolation`` (how the case was kept from the one before). ``cleanups=False`` runs card isolation without
clean-ups (the leak suite's switched-off check).
"""
from __future__ import annotations

import atexit
import datetime as _dt
import os
import re
from pathlib import Path

from tensix_diff.case import Case
from tensix_diff.store import harness_revision

from . import cleanup as hw_cleanup, leftovers as hw_leftovers, program as hw_program, readback as hw_readback
from tensix_diff.result import DEVICE_ERROR, OK, REFUSED, TAINTED, Result
from .platform import Platform, load
from .errors import OptionError
from . import stall
from .recovery import NOT_YET, Recovery, snapshot_payload, view_of
from .simdir import file_sha256, simulator_path, simulator_version
from .worker import Worker

ENV_SIMULATOR = "TENSIX_DIFF_SIMULATOR"
SIM_ERROR = re.compile(r"ERROR: (\w+)")
ISOLATIONS = ("card", "replace")


def _core(text) -> tuple[int, int] | None:
    if text is None or isinstance(text, tuple):
        return text
    try:
        x, y = (int(v, 0) for v in str(text).replace("-", ",").split(","))
    except ValueError:
        raise OptionError(f"--core {text!r}: give a Tensix core as X,Y in NOC0 coordinates") from None
    return (x, y)


class HwBackend:
    name = "hw"

    def __init__(self, simulator: str | None = None, **opts):
        simulator = simulator or os.environ.get(ENV_SIMULATOR) or None
        core = _core(opts.get("core"))       # the user's options are checked before anything opens
        self.platform: Platform = load(opts.get("platform") or ("ttsim" if simulator else "blackhole"))
        self.timeout = float(opts.get("timeout", 60.0))
        self.max_cycles = int(opts.get("max_cycles", hw_program.MAX_CYCLES))
        self.sim_path = str(simulator_path(simulator)) if simulator else None
        if simulator:
            version = simulator_version(simulator, opts.get("simulator_version"))
            self.device = f"ttsim {version}"
            self.device_extra = {"simulator_sha256": file_sha256(Path(simulator).expanduser().resolve())}
        else:
            self.device = "blackhole silicon"
            self.device_extra = {}
        self.isolation = opts.get("isolation") or ("replace" if simulator else "card")
        if self.isolation not in ISOLATIONS:
            raise OptionError(f"unknown isolation {self.isolation!r} (choose from {', '.join(ISOLATIONS)})")
        if self.isolation == "replace" and not simulator:
            raise OptionError("--isolation=replace needs --simulator: a card cannot be replaced")
        self.cleanups = bool(opts.get("cleanups", True))
        self.device_id = opts.get("device_id")
        self.worker = Worker(self.sim_path, core, self.timeout,
                             replace=self.isolation == "replace", device_id=self.device_id)
        atexit.register(self.close)      # workers, the zygote and its log go when the process ends
        self._pid = self._last_pid = None
        self._after = ""                # what was done about the previous case's leftovers (card isolation)
        self.recovery = Recovery(self.worker, self.platform, self.max_cycles, self.timeout)
        self.taint = ""          # card: why the core cannot be trusted since a hang ('' once a health check passed)
        self.worker.start()      # fail here, once, if the device cannot be opened

    # --- provenance ---
    def provenance(self, job: hw_program.Job | None = None) -> dict:
        info = self.worker.info
        prov = {
            "device": self.device,
            "device_kind": self.platform.device_kind,
            "platform": self.platform.name,
            "platform_verified": self.platform.verified,
            "exalens": info.get("tt_exalens"),
            "umd": info.get("tt_umd"),
            "core": "noc0 {},{}".format(*info["core_noc0"]) if info.get("core_noc0") else None,
            "isolation_mode": self.isolation,
            "harness": harness_revision(),
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            **self.device_extra,
        }
        if job is not None:
            prov["observable"] = ["dest", "rwc", "adc", "gpr"] + [f"l1 {a:#x}+{n}" for a, n in job.l1_regions] \
                + [f"config {s} {i}" for s in sorted(job.cfg_reads) for i in job.cfg_reads[s]]
        return prov

    # --- running ---
    def run(self, case: Case) -> Result:
        try:
            job = hw_program.build(case, self.platform)
        except hw_program.Refusal as e:
            return Result(REFUSED, message=f"harness: {e}", provenance={**self.provenance(), "refused_by": "harness"})
        job.max_cycles = self.max_cycles
        plan = hw_leftovers.plan(case, self.platform)
        if plan.refuse and self.isolation == "card" and self.cleanups:
            return Result(REFUSED, message=f"harness: card isolation: {plan.refuse}",
                          provenance={**self.provenance(job), "refused_by": "harness", "leftovers": plan.predicted})
        try:
            if self.taint:
                self.taint = self.recovery.retry()
            if self.taint:
                return Result(TAINTED, message=self.taint, provenance=self.provenance(job))
            isolation = self._isolation_before()
            reply = self.worker.run(snapshot_payload(job, self.platform))
        except RuntimeError as e:          # a replacement worker could not open the device
            return Result(DEVICE_ERROR, message=str(e), provenance=self.provenance(job))
        prov = self.provenance(job)
        prov["isolation"] = isolation
        if plan is not hw_leftovers.NOTHING:
            prov["leftovers"] = plan.predicted
        cleanups = self._isolate_after(case, plan, reply.status)
        if cleanups:
            prov["cleanups"] = cleanups
        if reply.status == "ok":
            state = hw_readback.decode(job, reply.blobs, self.platform)
            prov["cycles"] = reply.cycles
            return Result(OK, state=state, provenance=prov,
                          unobservable=self.platform.unobservable() + job.unobserved_config)
        if reply.status == "died" and SIM_ERROR.search(reply.message) and self.sim_path:
            return Result(REFUSED, message=f"simulator: {reply.message}", provenance={**prov, "refused_by": "simulator"})
        if reply.status == "hang":
            result = self._hang(case, reply, prov)
            if self.taint and self.isolation == "card":      # the recovery could not drain the core
                prov.setdefault("cleanups", []).extend(self._release_after_hang(case, plan))
            return result
        if self.isolation == "card":         # the core holds whatever the failed run left
            self.taint = NOT_YET
        return Result(DEVICE_ERROR, message=reply.message, provenance=prov)

    def _hang(self, case: Case, reply, prov: dict) -> Result:
        """A hang: on a card (or under its constraints) recovered from in place; the stalled threads named."""
        if (reply.snapshot or {}).get("dbus_error"):
            prov["hang_dbus"] = reply.snapshot["dbus_error"]        # the stall signals could not be read
        if self.isolation == "replace":      # the worker is already replaced: nothing carries over, no probe
            stalled = [s.text() for s in stall.diagnose(case, view_of(reply.snapshot, self.platform))]
            prov["hang"] = {"stalled": stalled, "recovery": ["a fresh simulator"]}
            return Result("hang", message=f"{reply.message}; stalled: {'; '.join(stalled) or 'no thread named'}",
                          provenance=prov)
        try:
            rep = self.recovery.after_hang(case, reply.snapshot)
        except RuntimeError as e:            # the worker could not serve the recovery
            self.taint = NOT_YET
            prov["hang"] = {"recovery": f"could not run: {e}"}
            return Result("hang", message=f"{reply.message}; recovery could not run: {e}", provenance=prov)
        self.taint = rep.taint()
        prov["hang"] = rep.provenance()
        return Result("hang", message=f"{reply.message}; {rep.summary()}", provenance=prov)

    def _isolation_before(self) -> str:
        """How this case is kept from the previous one's leftovers (recorded in its provenance)."""
        if self.worker.conn is None:
            self.worker.start()
        pid, self._pid = self.worker.pid, self.worker.pid
        if self.isolation == "replace" and pid != self._last_pid:
            return "fresh simulator"
        return "reset prologue" + (f"; {self._after}" if self._after else "")

    def _isolate_after(self, case: Case, plan: hw_leftovers.Plan, status: str) -> list[str]:
        """Before the next case: on a card, after an ``ok`` run, the clean-up for what golden predicts this case
        left (the clean-ups done, for its provenance; after a hang the recovery and its health check own the
        core). Under ``replace``, a fresh simulator instead when anything needs clearing or golden could not say."""
        self._last_pid, self._after = self._pid, ""
        if self.isolation == "replace":
            if plan.acting or plan.refuse or plan.golden not in ("ok", hw_leftovers.NOTHING.golden):
                self.worker.stop()
                self.worker.start(wait=False)
            return []
        if not plan.acting:
            return []
        left = ", ".join(f.text for f in plan.acting)
        if not self.cleanups:
            self._after = f"the previous case left {left} (clean-ups disabled)"
            return []
        if status != "ok" or self.worker.conn is None:
            self._after = f"the previous case ended {status} and may have left {left} (not cleaned up)"
            return []
        return self._clean(case, plan)

    def _release_after_hang(self, case: Case, plan: hw_leftovers.Plan) -> list[str]:
        """After a hang the recovery could not end: golden's clean-up for the waits it predicts latched (it may
        know a sequence the recovery does not, e.g. a Src bank handed over to thread 0 by another thread), then
        the recovery's health check again."""
        latched = hw_leftovers.Plan(plan.golden, [f for f in plan.acting if f.kind == "latched-wait"])
        if not latched.found or not self.cleanups:
            return []
        done = self._clean(case, latched)
        self.taint = self.recovery.retry()
        return done + [f"health check after it: {'passed' if not self.taint else self.taint}"]

    def _clean(self, case: Case, plan: hw_leftovers.Plan) -> list[str]:
        """Run ``plan``'s clean-up (unit resets, then the clean-up job): what was done, for provenance; a failure
        taints the core until a health check passes."""
        left = ", ".join(f.text for f in plan.acting)
        done = hw_cleanup.describe(plan)
        try:
            if plan.reset_units():
                self.worker.call("reset_units", plan.reset_units())
            reply = self.worker.run(hw_cleanup.job(case.name, plan), self.timeout) if plan.steps() or plan.regs() \
                else None
            failed = "" if reply is None or reply.status == "ok" else f"{reply.status}: {reply.message}"
        except RuntimeError as e:            # the worker could not serve it
            failed = f"error: {e}"
        if failed:
            self._after = f"the previous case left {left}; its clean-up failed ({failed})"
            self.taint = NOT_YET             # the core holds what the clean-up could not clear: health check first
            return done + [f"clean-up failed ({failed})"]
        self._after = f"after the previous case: {'; '.join(done)}"
        return done

    def close(self) -> None:
        self.worker.close()

    def __enter__(self) -> "HwBackend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
