"""`tensix-diff run CASE... [--backend B] [--against A] [--dump OUT.json]`: run cases and compare two backends.

By default the backend under test (``--backend``, default replay) is compared with golden (``--against``);
when both name the same backend the cases are only run. Exit status (contract): 0 every case matched,
1 a divergence, 2 bad input (including a case that could not be compared: missing or stale recording,
golden cannot model it), 3 the device or simulator failed. The worst outcome wins: 3, then 1, then 2.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from hwbridge.registry import BACKENDS, judge_cases, judged_hangs_last, run_case, run_cases, run_last_line
from tensix_diff.case import Case, load_each
from tensix_diff.verdict import DEVICE_FAILED, DIVERGED, KNOWN, MATCHED, UNCOMPARED, Verdict
from tensix_diff.result import DEVICE_ERROR, MISSING, OK, STALE, Result, dump_form

from .backends import open_backend
from .exits import EXIT_DEVICE, EXIT_DIVERGED, EXIT_OK, EXIT_USAGE, BackendFailure
from .hw_options import add_hw_arguments, hw_opts
from .progress import Progress

SOLO_FINE = (OK, "hang")   # a single backend's outcomes that are answers, not failures to answer


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="run case files (or directories of them) and compare two backends")
    p.add_argument("cases", nargs="+", metavar="CASE", help="case YAML files or directories")
    p.add_argument("--backend", default="replay", choices=BACKENDS, help="backend under test (default: replay)")
    p.add_argument("--against", default="golden", choices=BACKENDS,
                   help="reference backend (default: golden); the same as --backend only runs the cases")
    p.add_argument("--dump", metavar="OUT.json", help="write the observed state of the first case (contract dump)")
    p.add_argument("--recordings", metavar="DIR",
                   help="replay store directory (default: $TENSIX_DIFF_RECORDINGS or ./recordings of the repository)")
    p.add_argument("--device", metavar="NAME", help="replay: whose recordings, a device ('ttsim 1.10.0') or kind"
                   " ('ttsim'); default: silicon if recorded, else the newest ttsim")
    p.add_argument("--three-way", action="store_true",
                   help="golden, ttsim and silicon (the store's newest recording of each kind) side by side,"
                        " with the blame for each disagreement")
    p.add_argument("--html", metavar="OUT.html", help="with --three-way: also write the table as a page")
    p.add_argument("--limit", type=int, default=20, metavar="N", help="differences listed per divergent case")
    p.add_argument("-q", "--quiet", action="store_true", help="only problems (diverged, device-failed, missing,"
                   " stale), one line each, and the summary")
    p.add_argument("--effects", action="store_true",
                   help="each matched case's line also counts the instructions whose effect was observed (golden"
                        " ablation: one golden run per instruction)")
    add_hw_arguments(p, jobs=True)
    p.set_defaults(func=run)


def _solo_verdict(r: Result) -> Verdict:
    if r.status == DEVICE_ERROR:
        return Verdict(DEVICE_FAILED, f"device-error: {r.message}")
    if r.status in (MISSING, STALE):
        return Verdict(r.status, f"{r.status}: {r.message}")
    return Verdict("ran" if r.status in SOLO_FINE else "uncompared", f"{r.status}{': ' + r.message if r.message else ''}")


PROBLEMS = (DIVERGED, DEVICE_FAILED, MISSING, STALE)      # what -q still prints, one line each


def record_command(cases: list[Case], args) -> str:
    """The command that records ``cases`` into this run's store (their files, once each)."""
    files = list(dict.fromkeys(c.source for c in cases))
    shown = " ".join(files[:6]) + (" ..." if len(files) > 6 else "")
    store = f" --recordings {args.recordings}" if args.recordings else ""
    return f"tensix-diff record {shown} --simulator PATH{store}   (--simulator for ttsim; without it, a card)"


def _exit_code(outcomes: Counter) -> int:
    if outcomes[DEVICE_FAILED]:
        return EXIT_DEVICE
    if outcomes[DIVERGED]:
        return EXIT_DIVERGED
    if outcomes[MISSING] or outcomes[STALE]:
        return EXIT_USAGE
    if not (outcomes[MATCHED] or outcomes["ran"] or outcomes[KNOWN]):
        return EXIT_USAGE  # nothing was compared at all: fail loudly
    # Cases a backend refused (uncompared) are listed in the output; they do not fail a run that compared others.
    return EXIT_OK


def write_dump(path: str, state: dict) -> None:
    """The contract's state dump as JSON, one Dest row per line."""
    parts = []
    for key, value in dump_form(state).items():
        if key == "dest":       # its rows are lists of ints: a line break after each "]," of the whole list's JSON
            rows = json.dumps(value)[1:-1].replace("], [", "],\n  [")
            parts.append(f'"dest": [\n  {rows}]')
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value, separators=(',', ':'))}")
    Path(path).write_text("{" + ",\n".join(parts) + "}\n")


def run_three_way(cases, args) -> int:
    """``run --three-way``: exit 0 when every case with two or more answers agrees, 1 otherwise."""
    # late for start-up cost: only --three-way needs these
    from tensix_diff import three_way as tw
    from tensix_diff.store import Store
    golden = open_backend("golden")
    store = Store(args.recordings)
    rows = [tw.three_way(case, run_case(golden, case), store) for case in cases]
    blames = Counter(r.blame for r in rows)
    for r in rows:
        if not args.quiet or r.blame != "agree":
            print(r.line())
    print(f"{len(rows)} cases (three-way): " + ", ".join(f"{n} {b}" for b, n in blames.most_common()))
    if args.html:
        Path(args.html).write_text(tw.html(rows))
    bad = [b for b in blames if b not in ("agree", "only golden") and "=" not in b.replace("!=", "")]
    return EXIT_DIVERGED if bad else EXIT_OK


def _judge_chunk(chunk: list, test, ref, names: tuple[str, str], expected: list | None = None, **how):
    """(case, verdict, reference's Result or None, tested Result) for each case of ``chunk``, in order."""
    if ref is None:
        for case, actual in zip(chunk, run_cases(test, chunk)):
            yield case, _solo_verdict(actual), None, actual
        return
    for case, (verdict, exp, actual) in zip(chunk, judge_cases(ref, test, chunk, names, expected, **how)):
        yield case, verdict, exp, actual


def _judged(cases, test, ref, names: tuple[str, str], held: list, **how):
    """_judge_chunk over the cases, the ones known to hang last on a device never replaced
    (hwbridge.registry.judged_hangs_last: ``held`` gets those)."""
    return judged_hangs_last(cases, ref, test, held,
                             lambda chunk, expected: _judge_chunk(chunk, test, ref, names, expected, **how))


def run(args) -> int:
    cases, problems = load_each(args.cases)       # case files, directories, *.cases.jsonl.gz bundles
    if problems and not cases:                     # nothing to run: the reason is the one line
        raise BackendFailure(EXIT_USAGE, problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    for line in problems:                          # a bad file is reported; the others still run
        print(f"ERROR {line}")
    seen: dict[str, str] = {}
    for c in cases:
        if c.name in seen:
            raise BackendFailure(EXIT_USAGE, f"{c.source}: case name '{c.name}' is already used by {seen[c.name]}")
        seen[c.name] = c.source
    if not cases:
        raise BackendFailure(EXIT_USAGE, f"no case files in {' '.join(args.cases)}")
    if args.three_way:
        return run_three_way(cases, args)
    solo = args.backend == args.against
    test = open_backend(args.backend, recordings=args.recordings, hw=hw_opts(args), device=args.device)
    ref = None if solo else open_backend(args.against, recordings=args.recordings, hw=hw_opts(args),
                                         device=args.device)
    races = None                    # a multi-thread case's schedules, tried once per golden revision (judging only)
    if not solo:
        from tensix_diff.result_cache import RaceCache      # late for start-up cost: a solo run judges nothing
        races = RaceCache()
    outcomes: Counter = Counter()
    whys: Counter = Counter()
    devices: Counter = Counter()
    unobserved: Counter = Counter()      # what one side did not observe, said once per run
    unrecorded: list[Case] = []
    stale: list[str] = []
    dumped = args.dump is None
    progress = Progress("run", len(cases), quiet=args.quiet or len(cases) < 50)
    held: list[Case] = []           # known to hang: run after every other case on a device never replaced
    for case, verdict, expected, actual in _judged(cases, test, ref, (args.against, args.backend), held,
                                                    **({} if races is None else {"race_of": races.check})):
        progress.step(note=", ".join(f"{n} {k}" for k, n in sorted(outcomes.items()) if k not in (MATCHED, "ran")))
        replayed = actual if args.backend == "replay" else expected if args.against == "replay" else None
        if replayed is not None and replayed.provenance.get("device") not in (None, "replay"):
            devices[replayed.provenance["device"]] += 1
        if not dumped:
            if actual.state is None:
                raise BackendFailure(EXIT_USAGE, f"--dump: {args.backend} observed no state for {case.name}: {verdict.message}")
            write_dump(args.dump, actual.state)
            dumped = True
        if not solo:
            from tensix_diff import triage          # only a comparison needs it (start-up: issue 12)
            stale += triage.stale_known(case, verdict, args.backend)
        outcomes[verdict.outcome] += 1
        if verdict.outcome == UNCOMPARED:
            whys[verdict.why or "other"] += 1
        if verdict.outcome in (MISSING, STALE):
            unrecorded.append(case)
        if verdict.comparison is not None:
            unobserved.update(verdict.comparison.unobserved)
        if not args.quiet or verdict.outcome in PROBLEMS:
            full = verdict.comparison is not None and verdict.outcome in (DIVERGED, KNOWN) and not args.quiet
            body = verdict.report(args.limit, unobserved=False).splitlines() if full else [verdict.message]
            if verdict.outcome == MATCHED and verdict.comparison is not None and args.effects:
                from tensix_diff.effects import observed_effects    # late for start-up cost: --effects only
                eff = observed_effects(case, actual.state if actual.state is not None else verdict.comparison.regions,
                                       expansions=False)
                body[0] += f"; {eff.count} of {eff.total} instructions with an observed effect"
            progress.clear()
            print(f"{verdict.outcome} {case.name}: {body[0].removeprefix('DIVERGED: ')}")
            for line in body[1:] + ([verdict.message] if verdict.outcome == KNOWN and full else []):
                print(f"    {line}")
    progress.close()
    if races is not None:
        races.save()
    for line in stale:
        print(line)
    pair = args.backend if solo else f"{args.backend} vs {args.against}"
    print(f"{len(cases)} cases ({pair}): " + ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items())))
    if held:
        print(run_last_line(held))
    if whys:
        print("uncompared: " + ", ".join(f"{n} {why}" for why, n in whys.most_common()))
    if devices:
        print("replayed recordings of: " + ", ".join(f"{d} ({n})" for d, n in sorted(devices.items())))
    if unobserved:
        items = [f"{k} ({n} cases)" for k, n in sorted(unobserved.items())]
        print("not compared (one side did not observe): " + ", ".join(items[:8])
              + (f", and {len(items) - 8} more" if len(items) > 8 else ""))
    if unrecorded:
        print(f"{len(unrecorded)} case(s) have no usable recording; record them on a device with:\n"
              f"    {record_command(unrecorded, args)}")
    if problems:
        print(f"{len(problems)} file(s) could not be read (listed above as ERROR)")
        return _exit_code(outcomes) or EXIT_USAGE     # a divergence or device failure still says so first
    return _exit_code(outcomes)
