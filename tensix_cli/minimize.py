"""`tensix-diff minimize`: the minimiser (tensix_diff/minimizer.py) on a device, the minimal case and the
recording of its last device run written out, and the glue pytest uses under --backend=hw."""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Callable

from hwbridge.registry import run_case
from tensix_diff.case import Case, dump_case, load_case
from tensix_diff.compare import DEVICE_FAILED
from tensix_diff.minimizer import MinReport, Minimizer
from tensix_diff.result import Result
from tensix_diff.store import Recording, Store, StoreError
from tensix_diff.triage import classify as judge_and_name

from .backends import open_backend
from .exits import EXIT_DEVICE, EXIT_DIVERGED, EXIT_OK, EXIT_USAGE, UsageError
from .hw_options import add_hw_arguments, hw_opts
from .progress import Progress


# --- output: the minimal case and the recording of its last device run ------------------------------

def minimal_case(rep: MinReport, original: Case, against: str) -> Case:
    """The minimal case named and described for tests/corpus/."""
    name = original.name if original.name.endswith("-min") else f"{original.name}-min"
    text = (f"Minimised from {original.name} ({rep.original_length} -> {rep.minimal_length} instructions, "
            f"{rep.runs} device runs) against {against}; divergence {rep.minimal_signature}.")
    return dataclasses.replace(rep.case, name=name, description=text, source="<minimised>",
                               tags=sorted(set(rep.case.tags) | {"minimised"}))


def write_bundle(case: Case, device: Result | None, out: Path, store_root: Path | None = None) -> list[str]:
    """Write ``out`` (the case YAML) and the device result as a replay recording: into ``store_root``, by
    default the store directory ``<out>.recordings`` beside it. Returns lines saying what was written."""
    out.write_text(dump_case(case))
    lines = [f"wrote {out}"]
    if device is None:
        return lines + ["no device result to record"]
    root = store_root or out.with_suffix(".recordings")
    try:
        Store(root).put(Recording.from_result(case, device))
    except StoreError as e:
        return lines + [f"recording not written: {e}"]
    return lines + [f"recorded its last device run in {root} "
                    f"(replay: TENSIX_DIFF_RECORDINGS={root} tensix-diff run {out} --backend replay)"]


# --- Hypothesis: shrink with Hypothesis where runs are cheap, with the minimiser on a device -----------

def hypothesis_phases(backend: str) -> tuple:
    """The Hypothesis phases for a fuzz test on ``backend``. Under hw every shrink step would be a device
    run, so Hypothesis does not shrink: the failing case goes to ``check_or_minimize``'s minimiser."""
    from hypothesis import Phase     # late for start-up cost: Hypothesis (a dev extra), only for a fuzz test
    return tuple(p for p in Phase if not (backend == "hw" and p is Phase.shrink))


def minimize_failure(case: Case, device, model, out_dir: Path | None = None, max_runs: int = 200) -> str:
    """Minimise a case that diverged on a device (backends ``device`` and ``model``): the closing report and,
    given ``out_dir``, where the minimal case and its recording were written. For a failing test's message."""
    rep = Minimizer(device.run, model.run, max_runs=max_runs).minimize(case)
    lines = rep.lines()
    if out_dir is not None and rep.status == "minimised":
        small = minimal_case(rep, case, getattr(model, "name", "model"))
        out_dir.mkdir(parents=True, exist_ok=True)
        lines += write_bundle(small, rep.device, out_dir / f"{small.name}.yaml")
    return "\n".join(lines)


def check_or_minimize(case: Case, device, against, backend: str, out_dir: Path | None = None,
                      max_runs: int = 200) -> None:
    """Assert ``device`` and ``against`` (backends) agree on ``case``. On a divergence under hw, minimise
    first and name the minimal case (and its recording) in the assertion message."""
    verdict, sig = judge_and_name(case, device.run(case), against.run(case))
    if sig is None:
        assert verdict.outcome != DEVICE_FAILED, verdict.report()
        return
    message = [f"{case.name}: {sig}", verdict.report()]
    if backend == "hw":
        message.append(minimize_failure(case, device, against, out_dir, max_runs))
    raise AssertionError("\n".join(message))


# --- the command -------------------------------------------------------------------------------------

def add_parser(sub) -> None:
    p = sub.add_parser("minimize", help="shrink a divergent case to a minimal one with the same divergence")
    p.add_argument("case", help="the divergent case file")
    p.add_argument("--backend", required=True, help="the device side whose runs are counted (hw, replay, ...)")
    p.add_argument("--against", default="golden", help="the model side (default: golden)")
    p.add_argument("--out", metavar="MIN.yaml", help="where to write the minimal case (default: CASE-min.yaml)")
    p.add_argument("--max-runs", type=int, default=200, help="budget of device runs (default: 200)")
    p.add_argument("--nop-pad", action="store_true",
                   help="replace instructions by NOP instead of deleting them (distance-dependent divergences)")
    p.add_argument("--strict", action="store_true", help="require the very same signature (default: the same "
                   "primary field and instruction class, downstream symptoms may go)")
    p.add_argument("--recordings", metavar="DIR", help="replay store the replay backend reads (default: the project's)")
    p.add_argument("--record-into", metavar="DIR", help="put the minimal case's recording into this replay store "
                   "(default: a store directory MIN.recordings beside the output)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    add_hw_arguments(p)
    p.set_defaults(func=run)


def _backend(name: str, args) -> Callable[[Case], Result]:
    """The named backend's run, with the commands' one-line failures (tensix_cli.backends)."""
    backend = open_backend(name, recordings=args.recordings, hw=hw_opts(args))
    return lambda case: run_case(backend, case)


def run(args) -> int:
    if args.max_runs < 1:
        raise UsageError("minimize: --max-runs must be at least 1")
    case = load_case(args.case)
    progress = Progress("minimize: device runs (of the budget)", args.max_runs, quiet=args.quiet)
    if progress.on:     # a live count on a terminal; the improvements as lines in pipes and logs
        log = None
    else:
        log = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    device, against = _backend(args.backend, args), _backend(args.against, args)
    try:
        rep = Minimizer(device, against, max_runs=args.max_runs, nop_pad=args.nop_pad, strict=args.strict,
                        log=log, on_run=progress.step).minimize(case)
    finally:
        progress.close()
    print("\n".join(rep.lines()))
    if rep.status == "matched":
        return EXIT_OK
    if rep.status != "minimised":   # nothing to minimise: the device failed, or the pair cannot be compared
        return EXIT_DEVICE if rep.status in (DEVICE_FAILED, "device-error") else EXIT_USAGE
    out = Path(args.out) if args.out else Path(args.case).with_name(Path(args.case).stem + "-min.yaml")
    small = minimal_case(rep, case, args.against)
    for line in write_bundle(small, rep.device, out, Path(args.record_into) if args.record_into else None):
        print(line)
    return EXIT_DIVERGED
