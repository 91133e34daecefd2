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

Cores (``device_id=``, ``core=`` one, a list or ``all``, ``jobs=``; hwbridge.hw.cores): one worker process drives
every chosen core of one device; ``run_many`` runs cases side by side, one per core, with results in case order.
Each core keeps its own isolation record, clean-ups and hang recovery; a core tainted by a hang gets no case until
its health check passes (the cases go to the other cores; with none left, they are ``tainted``). A card's store
key names the card (hwbridge.hw.identity: ``blackhole silicon <board id>``); ttsim's stays ``ttsim <version>``.
"""
from __future__ import annotations

import atexit
import datetime as _dt
import itertools
import os
import re
from pathlib import Path

from tensix_diff.case import Case
from tensix_diff.store import harness_revision

from . import cleanup as hw_cleanup, leftovers as hw_leftovers, program as hw_program, readback as hw_readback
from tensix_diff.result import DEVICE_ERROR, OK, REFUSED, TAINTED, Result
from .platform import Platform, load
from .cores import parse_cores
from .errors import OptionError
from .identity import device_key
from . import stall
from .recovery import NOT_YET, Recovery, snapshot_payload, view_of
from .simdir import file_sha256, simulator_path, simulator_version
from .worker import CoreWorker, Reply, Worker

ENV_SIMULATOR = "TENSIX_DIFF_SIMULATOR"
SIM_ERROR = re.compile(r"ERROR: (\w+)")
ISOLATIONS = ("card", "replace")


class HwBackend:
    name = "hw"

    def __init__(self, simulator: str | None = None, **opts):
        simulator = simulator or os.environ.get(ENV_SIMULATOR) or None
        core = parse_cores(opts.get("core"))       # the user's options are checked before anything opens
        self.platform: Platform = load(opts.get("platform") or ("ttsim" if simulator else "blackhole"))
        self.timeout = float(opts.get("timeout", 60.0))
        self.max_cycles = int(opts.get("max_cycles", hw_program.MAX_CYCLES))
        self.sim_path = str(simulator_path(simulator)) if simulator else None
        if simulator:
            version = simulator_version(simulator, opts.get("simulator_version"))
            self.device = f"ttsim {version}"
            self.device_extra = {"simulator_sha256": file_sha256(Path(simulator).expanduser().resolve())}
        else:
            self.device = "blackhole silicon"     # until the card's identity is read (below)
            self.device_extra = {}
        self.isolation = opts.get("isolation") or ("replace" if simulator else "card")
        if self.isolation not in ISOLATIONS:
            raise OptionError(f"unknown isolation {self.isolation!r} (choose from {', '.join(ISOLATIONS)})")
        if self.isolation == "replace" and not simulator:
            raise OptionError("--isolation=replace needs --simulator: a card cannot be replaced")
        self.cleanups = bool(opts.get("cleanups", True))
        self.device_id = opts.get("device_id")
        self.worker = Worker(self.sim_path, core, self.timeout,
                             replace=self.isolation == "replace", device_id=self.device_id,
                             jobs=opts.get("jobs"), share=opts.get("share"))
        atexit.register(self.close)      # workers, the zygote and its log go when the process ends
        self._pid = self._last_pid = None
        self._replace = False            # replace isolation: a fresh simulator before the next batch
        self.worker.start()      # fail here, once, if the device cannot be opened
        self.cores: list[tuple[int, int]] = [tuple(c) for c in self.worker.info["cores_noc0"]]
        self._after = ["" for _ in self.cores]  # per core: what was done about its previous case's leftovers (card)
        self.recovery = [Recovery(CoreWorker(self.worker, s), self.platform, self.max_cycles, self.timeout)
                         for s in range(len(self.cores))]
        self.taint = ["" for _ in self.cores]   # card: why a core cannot be trusted since a hang ('' once healthy)
        self.identity: dict = self.worker.info.get("identity", {})
        if not simulator:
            self.device = device_key(self.identity)

    # --- provenance ---
    def provenance(self, job: hw_program.Job | None = None, slot: int = 0) -> dict:
        info = self.worker.info
        prov = {
            "device": self.device,
            "device_kind": self.platform.device_kind,
            "platform": self.platform.name,
            "platform_verified": self.platform.verified,
            "exalens": info.get("tt_exalens"),
            "umd": info.get("tt_umd"),
            "core": "noc0 {},{}".format(*self.cores[slot]),
            "identity": self.identity,
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
        return self.run_many([case])[0]

    def run_many(self, cases: list[Case]) -> list[Result]:
        """One Result per case, in case order; the cases run one per healthy core at a time. While the cores run
        a batch, the host builds the next batch's jobs and decodes the previous batch's results."""
        results: list[Result | None] = [None] * len(cases)
        jobs = self._jobs(cases, results)
        ahead: list = []              # jobs built, not yet started
        done = None                   # the last batch run, its results not yet decoded
        while True:
            ahead += itertools.islice(jobs, len(self.cores) - len(ahead))
            if not ahead:
                break
            slots = self._healthy()
            if not slots:             # every core tainted: this case is not run
                i, _, job, _ = ahead.pop(0)
                results[i] = Result(TAINTED, message=self.taint[0], provenance=self.provenance(job))
                continue
            batch, ahead = ahead[:len(slots)], ahead[len(slots):]
            sent = self._send(batch, slots)
            ahead += itertools.islice(jobs, len(self.cores) - len(ahead))
            if done is not None:
                self._finish(*done, results)
            done = (batch, self._collect(batch, slots, sent))
        if done is not None:
            self._finish(*done, results)
        return results

    def _jobs(self, cases: list[Case], results: list):
        """(index, case, job, leftovers plan) for each case to run; the others' refusals go straight to results
        (the harness's, and card isolation's for a case whose leftovers nothing documented clears)."""
        for i, case in enumerate(cases):
            try:
                job = hw_program.build(case, self.platform)
            except hw_program.Refusal as e:
                results[i] = Result(REFUSED, message=f"harness: {e}",
                                    provenance={**self.provenance(), "refused_by": "harness"})
                continue
            job.max_cycles = self.max_cycles
            plan = hw_leftovers.plan(case, self.platform)
            if plan.refuse and self.isolation == "card" and self.cleanups:
                results[i] = Result(REFUSED, message=f"harness: card isolation: {plan.refuse}",
                                    provenance={**self.provenance(job), "refused_by": "harness",
                                                "leftovers": plan.predicted})
                continue
            yield i, case, job, plan

    def _healthy(self) -> list[int]:
        """The cores a case may run on: every core not tainted by a hang, a tainted one once another recovery and
        health check passed on it (hwbridge.hw.recovery: a limited number of tries)."""
        for s, why in enumerate(self.taint):
            if why:
                try:
                    self.taint[s] = self.recovery[s].retry()
                except RuntimeError as e:      # the worker could not serve the recovery
                    self.taint[s] = f"recovery could not run: {e}"[:160]
        return [s for s, why in enumerate(self.taint) if not why]

    def _send(self, batch: list, slots: list[int]) -> list[str] | str:
        """Case k of ``batch`` started on core ``slots[k]``: how each is isolated from that core's previous case,
        or why nothing started (a replacement worker could not open the device)."""
        try:
            isolation = [self._isolation_before(s) for s in slots[:len(batch)]]
            self.worker.send_many([snapshot_payload(b[2], self.platform) for b in batch], slots=slots[:len(batch)])
        except RuntimeError as e:
            return str(e)
        return isolation

    def _collect(self, batch: list, slots: list[int], sent: list[str] | str) -> list[tuple]:
        """(reply, core slot, isolation, hang report, clean-ups) per case of the batch, with the device work each
        reply calls for done before the next batch starts: the clean-up of what a case left, a hang recovered from
        on its core, a core tainted by a device error. When the simulator died with several cases on it (ttsim
        exits on an ERROR), those run again one at a time, so only the one that brought it down says so."""
        if isinstance(sent, str):
            return [(Reply("error", message=sent), s, "", None, []) for s in slots[:len(batch)]]
        replies = self.worker.collect_many()
        out = []
        for (_, case, _, plan), reply, slot, isolation in zip(batch, replies, slots, sent):
            cleanups = self._isolate_after(case, plan, reply.status, slot)
            hang = None
            if reply.status == "hang":
                hang = self._hang(case, reply, slot)
                if self.taint[slot] and self.isolation == "card":      # the recovery could not drain the core
                    cleanups = cleanups + self._release_after_hang(case, plan, slot)
            elif self.isolation == "card" and reply.status != "ok" and not self._refused(reply):
                self.taint[slot] = NOT_YET         # the core holds whatever the failed run left
            out.append((reply, slot, isolation, hang, cleanups))
        self._replace_if_asked()
        if sum(r.status == "died" for r in replies) > 1:
            for k, r in enumerate(replies):
                if r.status == "died":
                    out[k] = self._collect(batch[k:k + 1], slots[k:k + 1], self._send(batch[k:k + 1], slots[k:k + 1]))[0]
        return out

    def _finish(self, batch: list, answers: list[tuple], results: list) -> None:
        """Each case's Result from its reply (host work only: it runs while the next batch is on the cores)."""
        for (i, _, job, plan), (reply, slot, isolation, hang, cleanups) in zip(batch, answers):
            prov = self.provenance(job, slot)
            prov["isolation"] = isolation
            if plan is not hw_leftovers.NOTHING:
                prov["leftovers"] = plan.predicted
            if cleanups:
                prov["cleanups"] = cleanups
            results[i] = self._result(job, reply, prov, hang)

    def _result(self, job: hw_program.Job, reply: Reply, prov: dict, hang: tuple | None) -> Result:
        if reply.status == "ok":
            state = hw_readback.decode(job, reply.blobs, self.platform)
            prov["cycles"] = reply.cycles
            return Result(OK, state=state, provenance=prov,
                          unobservable=self.platform.unobservable() + job.unobserved_config)
        if self._refused(reply):
            return Result(REFUSED, message=f"simulator: {reply.message}", provenance={**prov, "refused_by": "simulator"})
        if reply.status == "hang":
            if (reply.snapshot or {}).get("dbus_error"):
                prov["hang_dbus"] = reply.snapshot["dbus_error"]        # the stall signals could not be read
            note, prov["hang"] = hang
            return Result("hang", message=f"{reply.message}; {note}", provenance=prov)
        return Result(DEVICE_ERROR, message=reply.message, provenance=prov)

    def _refused(self, reply: Reply) -> bool:
        """ttsim stopped on the case with its ERROR line (deterministic: the case's own doing)."""
        return reply.status == "died" and bool(SIM_ERROR.search(reply.message)) and bool(self.sim_path)

    def _hang(self, case: Case, reply: Reply, slot: int) -> tuple[str, dict]:
        """A hang on core ``slot``: (what the message adds, provenance "hang"). On a card (or under its
        constraints) recovered from in place; the stalled threads named."""
        if self.isolation == "replace":      # the worker is already replaced: nothing carries over, no probe
            stalled = [s.text() for s in stall.diagnose(case, view_of(reply.snapshot, self.platform))]
            return (f"stalled: {'; '.join(stalled) or 'no thread named'}",
                    {"stalled": stalled, "recovery": ["a fresh simulator"]})
        try:
            rep = self.recovery[slot].after_hang(case, reply.snapshot)
        except RuntimeError as e:            # the worker could not serve the recovery
            self.taint[slot] = NOT_YET
            return f"recovery could not run: {e}", {"recovery": f"could not run: {e}"}
        self.taint[slot] = rep.taint()
        return rep.summary(), rep.provenance()

    def _isolation_before(self, slot: int = 0) -> str:
        """How the case about to run on core ``slot`` is kept from that core's previous case's leftovers (recorded
        in its provenance)."""
        if self.worker.conn is None:
            self.worker.start()
        pid, self._pid = self.worker.pid, self.worker.pid
        if self.isolation == "replace" and pid != self._last_pid:
            return "fresh simulator"
        return "reset prologue" + (f"; {self._after[slot]}" if self._after[slot] else "")

    def _isolate_after(self, case: Case, plan: hw_leftovers.Plan, status: str, slot: int = 0) -> list[str]:
        """Before core ``slot``'s next case: on a card, after an ``ok`` run, the clean-up for what golden predicts
        this case left (the clean-ups done, for its provenance; after a hang the recovery and its health check own
        the core). Under ``replace``, a fresh simulator instead (once the batch is over: _replace_if_asked) when
        anything needs clearing or golden could not say."""
        self._last_pid, self._after[slot] = self._pid, ""
        if self.isolation == "replace":
            if plan.acting or plan.refuse or plan.golden not in ("ok", hw_leftovers.NOTHING.golden):
                self._replace = True
            return []
        if not plan.acting:
            return []
        left = ", ".join(f.text for f in plan.acting)
        if not self.cleanups:
            self._after[slot] = f"the previous case left {left} (clean-ups disabled)"
            return []
        if status != "ok" or self.worker.conn is None:
            self._after[slot] = f"the previous case ended {status} and may have left {left} (not cleaned up)"
            return []
        return self._clean(case, plan, slot)

    def _replace_if_asked(self) -> None:
        """replace isolation: the fresh simulator a case of the batch asked for."""
        if self._replace:
            self._replace = False
            self.worker.stop()
            self.worker.start(wait=False)

    def _release_after_hang(self, case: Case, plan: hw_leftovers.Plan, slot: int = 0) -> list[str]:
        """After a hang the recovery could not end: golden's clean-up for the waits it predicts latched (it may
        know a sequence the recovery does not, e.g. a Src bank handed over to thread 0 by another thread), then
        the recovery's health check again."""
        latched = hw_leftovers.Plan(plan.golden, [f for f in plan.acting if f.kind == "latched-wait"])
        if not latched.found or not self.cleanups:
            return []
        done = self._clean(case, latched, slot)
        self.taint[slot] = self.recovery[slot].retry()
        return done + [f"health check after it: {'passed' if not self.taint[slot] else self.taint[slot]}"]

    def _clean(self, case: Case, plan: hw_leftovers.Plan, slot: int = 0) -> list[str]:
        """Run ``plan``'s clean-up (unit resets, then the clean-up job): what was done, for provenance; a failure
        taints the core until a health check passes."""
        left = ", ".join(f.text for f in plan.acting)
        done = hw_cleanup.describe(plan)
        try:
            if plan.reset_units():
                self.worker.call("reset_units", plan.reset_units(), slot=slot)
            reply = self.worker.run(hw_cleanup.job(case.name, plan), self.timeout, slot) \
                if plan.steps() or plan.regs() else None
            failed = "" if reply is None or reply.status == "ok" else f"{reply.status}: {reply.message}"
        except RuntimeError as e:            # the worker could not serve it
            failed = f"error: {e}"
        if failed:
            self._after[slot] = f"the previous case left {left}; its clean-up failed ({failed})"
            self.taint[slot] = NOT_YET       # the core holds what the clean-up could not clear: health check first
            return done + [f"clean-up failed ({failed})"]
        self._after[slot] = f"after the previous case: {'; '.join(done)}"
        return done

    def close(self) -> None:
        self.worker.close()

    def __enter__(self) -> "HwBackend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
