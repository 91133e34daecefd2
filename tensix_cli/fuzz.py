"""`tensix-diff fuzz --count N --seed S [--backend B] [--profile NAME]`: a generated-case campaign.

Prints ``seed: S`` first (a fresh seed when none is given), runs every generated case on the backend under
test and on golden, shows progress on stderr, prints each divergence, ends with the summary line
``N cases: M matched, D diverged, E errors`` and writes a JSON campaign report listing every divergence
with its case seed (divergent cases are also written as YAML next to the report, ready for `minimize`).
Exit status: 3 the device or simulator failed, else 1 a divergence, else 0; 2 for bad input or a campaign
that compared nothing (e.g. replay of cases never recorded).
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from generators.bulk import generate
from generators.constraints import availability_report, available
from generators.profiles import GOLDEN_ACCEPT, ProfileError, load_profile, profile_names
from generators.program import NoInstructions
from hwbridge.registry import BACKENDS, BackendUnavailable, get_backend, judge_cases, judged_hangs_last, run_last_line
from tensix_diff.case import BUNDLE_SUFFIX, Case, case_hash, dump_case, write_bundle
from tensix_diff.compare import DEVICE_FAILED, DIVERGED, KNOWN, MATCHED, UNCOMPARED, Verdict
from tensix_diff.report_campaign import campaign_html
from tensix_diff.triage import CampaignTriage

from .exits import EXIT_DEVICE, EXIT_DIVERGED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, BackendFailure
from .hw_options import add_hw_arguments, hw_opts
from .progress import Progress
_Fail = BackendFailure   # a one-line failure with its exit status
ERRORS_LISTED = 200


def add_parser(sub) -> None:
    p = sub.add_parser("fuzz", help="run a campaign of generated cases against golden")
    p.add_argument("--count", type=int, default=100, metavar="N", help="cases to generate (default: 100)")
    p.add_argument("--seed", type=int, metavar="S", help="campaign seed (default: a fresh one, printed first)")
    p.add_argument("--start", type=int, default=0, metavar="I", help="first case index (default: 0)")
    p.add_argument("--profile", default="default", metavar="NAME",
                   help=f"generator profile: {', '.join(profile_names())} or a YAML path (default: default)")
    p.add_argument("--backend", choices=BACKENDS, help="backend under test (default: hw with --simulator or"
                   " $TENSIX_DIFF_SIMULATOR, else replay; golden against itself only when both are named golden)")
    p.add_argument("--against", default="golden", choices=BACKENDS, help="reference backend (default: golden)")
    p.add_argument("--accept-golden", metavar="STATUS[,..]",
                   help=f"golden statuses an instruction needs, overriding the profile ({', '.join(GOLDEN_ACCEPT)};"
                        " 'handler': golden has semantics registered)")
    p.add_argument("--report", metavar="PATH", help="campaign report JSON (default: out/fuzz-<profile>-s<seed>.json)")
    p.add_argument("--force", action="store_true", help="overwrite an existing report (default: refuse)")
    p.add_argument("--write-cases", metavar="DIR", help="also write every generated case as DIR/<name>.yaml")
    p.add_argument("--no-run", action="store_true", help="only generate (with --write-cases: dump a corpus)")
    p.add_argument("--bundle", metavar="PREFIX", help="also write every generated case into case bundles "
                   f"PREFIX-partNN.cases.jsonl.gz of at most {BUNDLE_CASES} cases each (what `record` and the "
                   "replay suite read)")
    p.add_argument("--list", action="store_true", help="show which of the profile's instructions are in play, and exit")
    p.add_argument("--progress-every", type=int, metavar="N", help="also a progress line on stderr every N cases, "
                   "in pipes and logs too (a terminal shows a live count anyway; -q: neither)")
    p.add_argument("--recordings", metavar="DIR", help="replay store directory (default: the project's)")
    p.add_argument("--limit", type=int, default=10, metavar="N", help="differences printed per divergence")
    p.add_argument("-q", "--quiet", action="store_true", help="no per-divergence details, only names and summary")
    add_hw_arguments(p, jobs=True)
    p.set_defaults(func=run)


def _profile(args):
    try:
        p = load_profile(args.profile)
    except ProfileError as e:
        raise _Fail(EXIT_USAGE, str(e)) from None
    if args.accept_golden:
        statuses = tuple(s.strip() for s in args.accept_golden.split(",") if s.strip())
        bad = [s for s in statuses if s not in GOLDEN_ACCEPT]
        if bad or not statuses:
            raise _Fail(EXIT_USAGE, f"--accept-golden: unknown status {', '.join(bad) or '(none)'}"
                                    f" (choose from {', '.join(GOLDEN_ACCEPT)})")
        p = dataclasses.replace(p, golden=statuses)
    return p


def _backend(name: str, args):
    """Through this module's ``get_backend`` (tests substitute backends here)."""
    try:
        return get_backend(name, recordings=args.recordings, **(hw_opts(args) if name == "hw" else {}))
    except BackendUnavailable as e:
        raise _Fail(EXIT_USAGE, str(e)) from None
    except Exception as e:  # the device or simulator could not be brought up
        raise _Fail(EXIT_DEVICE, f"{name} backend failed to start: {type(e).__name__}: {e}") from None


def _judged(generated, ref, test, names: tuple[str, str], held: list):
    """(index, case seed, case, verdict or None when nothing runs), the generated cases in order but the ones known
    to hang, which a device never replaced runs last (hwbridge.registry.judged_hangs_last: ``held`` gets them);
    a multi-core backend judges the cases in batches that fill its cores."""
    if ref is None:
        for i, (cs, case) in enumerate(generated):
            yield i, cs, case, None
        return
    made: dict[int, tuple[int, int]] = {}        # id(case) -> (index, case seed), until the case is judged

    def cases():
        for i, (cs, case) in enumerate(generated):
            made[id(case)] = i, cs
            yield case

    def judge(chunk: list, expected: list | None):
        for case, (v, _, _) in zip(chunk, judge_cases(ref, test, chunk, names, expected)):
            yield *made.pop(id(case)), case, v

    yield from judged_hangs_last(cases(), ref, test, held, judge)


def _list(p) -> int:
    report = availability_report(p)
    width = max(map(len, report), default=0)
    print(f"profile {p.name}: {p.description}")
    print(f"accepting golden status: {', '.join(p.golden)}")
    for name, why in report.items():
        print(f"  {name:<{width}}  w={p.weights[name]:g}  {'in play' if why == 'ok' else 'skipped: ' + why}")
    print(f"{sum(v == 'ok' for v in report.values())} of {len(report)} instructions in play")
    return EXIT_OK


def run(args) -> int:
    p = _profile(args)
    if args.list:
        return _list(p)
    if args.count < 0 or args.start < 0:
        raise _Fail(EXIT_USAGE, "--count and --start must be >= 0")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    if args.backend is None:
        args.backend = "hw" if args.simulator or os.environ.get("TENSIX_DIFF_SIMULATOR") else "replay"
    report_path = Path(args.report or f"out/fuzz-{Path(p.name).stem}-s{seed}.json")
    if report_path.exists() and not args.force:
        raise _Fail(EXIT_USAGE, f"{report_path} exists (a campaign's report): give --force to overwrite it,"
                                " or --report PATH")
    print(f"seed: {seed}", flush=True)
    in_play = available(p)
    if not in_play and not p.pipeline:
        raise _Fail(EXIT_USAGE, f"profile '{p.name}': golden models none of its instructions yet"
                                f" (see `tensix-diff fuzz --profile {p.name} --list`)")
    names = (args.against, args.backend)
    what = (f"tt-llk pipelines: {', '.join(k for k, w in p.pipeline.items() if w)}" if p.pipeline
            else f"{len(in_play)} instructions in play")
    print(f"profile: {p.name} ({what}); {args.backend} against {args.against}", flush=True)
    test = ref = None
    if not args.no_run:
        ref = _backend(args.against, args)
        test = ref if args.backend == args.against and args.backend == "golden" else _backend(args.backend, args)
    out_dir = Path(args.write_cases) if args.write_cases else None
    bundled: list[Case] = []
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
    every = 0 if args.quiet else (args.progress_every or 0)
    live = Progress("fuzz", args.count, quiet=args.quiet)
    outcomes: Counter = Counter()
    whys: Counter = Counter()
    statuses: Counter = Counter()
    divergences, errors = [], []
    triage = CampaignTriage(args.backend)   # groups divergences by signature (tensix_diff.triage)
    started, t0 = datetime.now(timezone.utc), time.monotonic()
    done, interrupted = 0, False
    held: list[Case] = []           # golden predicts a hang: run after every other case on a device never replaced
    try:
        for i, cs, case, v in _judged(generate(seed, args.count, p, start=args.start), ref, test, names, held):
            index = args.start + i
            if out_dir:
                (out_dir / f"{case.name}.yaml").write_text(dump_case(case))
            if args.bundle:
                bundled.append(case)
            if not args.no_run:
                outcomes[v.outcome] += 1
                statuses[f"{names[0]}:{v.statuses[0]} {names[1]}:{v.statuses[1]}"] += 1
                entry = {"index": index, "name": case.name, "case_seed": cs, "case_hash": case_hash(case)}
                sig = triage.add(case, v)
                if v.outcome == UNCOMPARED:
                    whys[v.why or "other"] += 1
                if v.outcome == DIVERGED:
                    divergences.append(_divergence(entry, v, case, report_path, args.limit))
                    divergences[-1]["triage_signature"] = str(sig)
                    print(f"FAIL {case.name} (case seed {cs}): {v.report(args.limit).splitlines()[0]}", flush=True)
                    if not args.quiet:
                        for line in v.report(args.limit).splitlines()[1:]:
                            print(f"    {line}")
                elif v.outcome not in (MATCHED, KNOWN) and len(errors) < ERRORS_LISTED:
                    errors.append({**entry, "outcome": v.outcome, "statuses": list(v.statuses), "message": v.message})
            done += 1
            other = done - outcomes[MATCHED] - outcomes[DIVERGED] - outcomes[KNOWN]
            live.step(note=f"{outcomes[DIVERGED]} diverged, {other} not compared")
            if every and (done % every == 0 or done == args.count):
                _progress(done, args.count, outcomes, t0)
    except NoInstructions as e:
        raise _Fail(EXIT_USAGE, str(e)) from None
    except KeyboardInterrupt:
        live.close()
        interrupted = True
        print(f"fuzz: interrupted after {done} of {args.count} cases: the report is partial", file=sys.stderr)
    if args.bundle:
        for line in _write_bundles(args.bundle, bundled):
            print(line)
    matched, diverged, known = outcomes[MATCHED], outcomes[DIVERGED], outcomes[KNOWN]
    n_err = sum(outcomes.values()) - matched - diverged - known
    summary = ("INTERRUPTED, partial: " if interrupted else "") + (
               f"{done} cases generated (not run)" if args.no_run
               else f"{done} cases: {matched} matched, {diverged} diverged, {known} known, {n_err} errors"
                    + (f" ({', '.join(f'{n} {k}' for k, n in sorted(outcomes.items()) if k not in (MATCHED, DIVERGED, KNOWN))})"
                       if n_err else ""))
    report = {
        "tool": "tensix-diff fuzz", "seed": seed, "start": args.start, "count": done, "profile": p.name,
        "backend": args.backend, "against": args.against, "accept_golden": list(p.golden),
        "instructions": in_play, "skipped": {k: v for k, v in availability_report(p).items() if v != "ok"},
        "interrupted": interrupted,
        "started": started.isoformat(timespec="seconds"), "elapsed_s": round(time.monotonic() - t0, 3),
        "summary": {"cases": done, "matched": matched, "diverged": diverged, "known": known, "errors": n_err,
                    "run": not args.no_run},
        "outcomes": dict(outcomes), "uncompared": dict(whys), "statuses": dict(statuses),
        "divergences": divergences, "errors": errors, "errors_listed": len(errors),
        "regenerate": f"tensix-diff fuzz --seed {seed} --start I --count 1 --profile {p.name}"
                      + (f" --accept-golden {','.join(p.golden)}" if args.accept_golden else "") + " --write-cases DIR",
    }
    report["triage"] = triage.report()
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text(json.dumps(report, indent=1) + "\n")
    report_path.with_suffix(".html").write_text(campaign_html(report, triage.smallest))
    if diverged:
        print("\n".join(report["triage"]["lines"]))
    print(summary)
    if held:
        print(run_last_line(held))
    if whys:
        print("uncompared: " + ", ".join(f"{n} {why}" for why, n in whys.most_common()))
    print(f"report: {report_path} (and {report_path.with_suffix('.html').name})")
    if interrupted:
        return EXIT_INTERRUPTED
    if outcomes[DEVICE_FAILED]:
        return EXIT_DEVICE
    if diverged:
        return EXIT_DIVERGED
    if not args.no_run and done and not (matched or known):
        print(f"fuzz: nothing was compared ({', '.join(f'{n} {k}' for k, n in sorted(outcomes.items()))})"
              + ("; replay answers only recorded cases, and a recorded seed gives them again only while the"
                 " profile's generator is unchanged: replay a bundle itself with `tensix-diff run"
                 " tests/fuzz_corpus/NAME.cases.jsonl.gz`" if args.backend == "replay" else ""),
              file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


BUNDLE_CASES = 250      # at most about 1.6 MB of gzip'd JSON (cases with 128 random Dest rows): under 2 MiB a file


def _write_bundles(prefix: str, cases: list[Case]) -> list[str]:
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    out = []
    for k in range(0, len(cases), BUNDLE_CASES):
        path = Path(f"{prefix}-part{k // BUNDLE_CASES + 1:02d}{BUNDLE_SUFFIX}")
        n = write_bundle(path, cases[k:k + BUNDLE_CASES])
        out.append(f"bundle: {path} ({n} cases, {path.stat().st_size} bytes)")
    return out


def _divergence(entry: dict, v: Verdict, case: Case, report_path: Path, limit: int) -> dict:
    case_dir = report_path.with_name(report_path.stem + "-cases")
    case_dir.mkdir(parents=True, exist_ok=True)
    path = case_dir / f"{case.name}.yaml"
    path.write_text(dump_case(case))
    lines = v.report(limit).splitlines()
    return {**entry, "summary": lines[0], "differences": lines[1:], "case_file": str(path),
            "signature": [list(map(str, k)) for k in v.signature()], "statuses": list(v.statuses)}


def _progress(done: int, total: int, outcomes: Counter, t0: float) -> None:
    rate = done / max(time.monotonic() - t0, 1e-9)
    other = sum(outcomes.values()) - outcomes[MATCHED] - outcomes[DIVERGED]
    print(f"fuzz: {done}/{total} cases, {outcomes[DIVERGED]} diverged, {other} errors ({rate:.1f} cases/s)",
          file=sys.stderr, flush=True)
