"""Backends by name: golden (the model), replay (the recordings), hw (a card or ttsim via tt-exalens); running
cases on them and judging a pair (tensix_diff.assess)."""
from __future__ import annotations

from itertools import islice
from pathlib import Path
from typing import Callable, Iterable, Iterator

from tensix_diff.result import DEVICE_ERROR, Result

BACKENDS = ("golden", "replay", "hw")
HANG_TAG = "expect:hang"                   # a curated case golden and the device both hang on


class BackendUnavailable(RuntimeError):
    """The named backend cannot be set up here (unknown name, hw module or device missing): one line."""


class BadOption(BackendUnavailable):
    """An option the user gave the backend cannot be used (a wrong --simulator path, --core, ...): one line."""


def get_backend(name: str, *, store=None, recordings: str | Path | None = None, simulator: str | None = None,
                device: str | None = None, **opts):
    """A backend object with ``.name`` and ``.run(case) -> Result``.

    replay: ``store`` (a Store or a directory) or ``recordings`` (a directory); default the project's store;
    ``device``: whose recordings (default: silicon if recorded, else the newest ttsim).
    hw: ``simulator`` (path of a libttsim.so) or a card; further keyword options go to HwBackend.
    """
    if name == "golden":
        from .golden_backend import GoldenBackend     # late for start-up cost, like each backend below
        return GoldenBackend()
    if name == "replay":
        from tensix_diff.store import Store           # late for start-up cost (the store, its bundles)
        from .replay import ReplayBackend             # late for start-up cost
        if isinstance(store, Store):
            return ReplayBackend(store=store, device=device)
        return ReplayBackend(root=store if store is not None else recordings, device=device)
    if name == "hw":
        try:
            from .hw.backend import HwBackend         # late for start-up cost (tt-exalens), and it may be absent
        except ModuleNotFoundError as e:
            if e.name == "hwbridge.hw.backend":
                raise BackendUnavailable("hw backend unavailable: hwbridge.hw.backend is not in this tree") from None
            if e.name and (e.name.startswith("tt_") or "exalens" in e.name or "umd" in e.name):
                raise BackendUnavailable(f"hw backend unavailable: cannot import {e.name}"
                                         " (install the .[hw] extra)") from None
            raise
        from .hw.errors import OptionError             # late for start-up cost
        if simulator is not None:
            opts["simulator"] = simulator
        try:
            return HwBackend(**opts)
        except OptionError as e:
            raise BadOption(str(e)) from None
    raise BackendUnavailable(f"unknown backend '{name}' (choose from {', '.join(BACKENDS)})")


def run_case(backend, case):
    """backend.run(case): an exception out of the hw backend is that device's failure (a device-error Result);
    anything else (an unusable recording: StoreError) propagates."""
    try:
        return backend.run(case)
    except Exception as e:
        if getattr(backend, "name", "") != "hw":
            raise
        return Result(DEVICE_ERROR, message=f"{type(e).__name__}: {e}")


def run_cases(backend, cases: list) -> list:
    """run_case over ``cases``, in order; a backend that drives several cores (HwBackend.run_many) gets them all at
    once, so they run side by side."""
    if len(getattr(backend, "cores", ())) > 1 and len(cases) > 1:
        try:
            return backend.run_many(cases)
        except Exception as e:  # the device layer failed for the whole batch: each case says so
            return [Result(DEVICE_ERROR, message=f"{type(e).__name__}: {e}") for _ in cases]
    return [run_case(backend, case) for case in cases]


def judge_cases(reference, test, cases: list, names: tuple[str, str], expected: list | None = None, **how) -> list:
    """judge_case over ``cases`` (each side through run_cases, unless the reference's ``expected`` are given), in
    order."""
    from tensix_diff.assess import assess      # late for start-up cost: a run against itself judges nothing
    expected = run_cases(reference, cases) if expected is None else expected
    actual = run_cases(test, cases)
    return [(assess(c, e, a, names, names[1], **how), e, a) for c, e, a in zip(cases, expected, actual)]


def keeps_device(*backends) -> bool:
    """Whether one of ``backends`` runs every case on a device it never replaces (hw under card isolation): there a
    hang the recovery cannot end taints every later case on its core (hwbridge.hw.recovery)."""
    return any(getattr(b, "isolation", None) == "card" for b in backends)


def expects_hang(case, predicted: Result | None = None) -> bool:
    """Whether ``case`` is known to hang before any device runs it: tagged ``expect:hang`` (docs/case-format.md),
    or golden's ``predicted`` Result is a hang."""
    return HANG_TAG in case.tags or (predicted is not None and predicted.status == "hang")


def hangs_last(cases: list, *backends) -> tuple[list, list]:
    """(the cases to run first, the cases known to hang to run after all of them) when a backend keeps its device;
    else (cases, [])."""
    if not keeps_device(*backends):
        return list(cases), []
    return [c for c in cases if not expects_hang(c)], [c for c in cases if expects_hang(c)]


def judged_hangs_last(cases: Iterable, ref, test, held: list, judge: Callable[[list, list | None], Iterator]):
    """``judge(chunk, expected)`` over ``cases`` (a list or a stream) in batches that fill a multi-core backend's
    cores; ``expected`` is the reference's Results when they were already run, else None. On a backend that keeps
    its device (hw, card isolation) the cases known to hang (tagged ``expect:hang``, or golden as the reference
    predicts a hang) run after every other case, so a hang the recovery cannot end taints none of them, judged
    against golden's prediction made once: ``held`` gets those, in case order."""
    size = batch_size(test, ref)
    keep = keeps_device(test, ref)
    predicts = ref is not None and getattr(ref, "name", "") == "golden" and keeps_device(test)
    predicted: dict[int, Result] = {}          # golden's Result of a case held back, by id(case)
    cases = iter(cases)
    while chunk := list(islice(cases, size)):
        hang = [keep and expects_hang(c) for c in chunk]
        expected = None
        if predicts:
            ran = iter(run_cases(ref, [c for c, h in zip(chunk, hang) if not h]))
            results = [None if h else next(ran) for h in hang]
            for i, (c, e) in enumerate(zip(chunk, results)):
                if e is not None and expects_hang(c, e):
                    hang[i], predicted[id(c)] = True, e
            expected = [e for e, h in zip(results, hang) if not h]
        held += [c for c, h in zip(chunk, hang) if h]
        yield from judge([c for c, h in zip(chunk, hang) if not h], expected)
    for k in range(0, len(held), size):
        chunk = held[k:k + size]
        expected = [predicted.get(id(c)) for c in chunk]
        yield from judge(chunk, None if None in expected else expected)


def run_last_line(held: list) -> str:
    """The line a command prints for the cases ``hangs_last`` (or golden's prediction) put after the others."""
    names = ", ".join(c.name for c in held[:4]) + (f" and {len(held) - 4} more" if len(held) > 4 else "")
    return f"run last (known to hang; the device is never replaced): {names}"


def batch_size(*backends) -> int:
    """How many cases a command hands over at once: enough to keep every core of a multi-core backend busy."""
    return max([1] + [4 * len(getattr(b, "cores", ())) for b in backends if len(getattr(b, "cores", ())) > 1])


def judge_case(reference, test, case, names: tuple[str, str], **how):
    """Run a case on both backends and assess the pair (tensix_diff.assess: registry, expected refusals,
    observed effects; ``how``: assess's keyword options); returns (verdict, the reference's Result, the tested
    backend's Result)."""
    from tensix_diff.assess import assess      # late for start-up cost, as in judge_cases
    expected, actual = run_case(reference, case), run_case(test, case)
    return assess(case, expected, actual, names, names[1], **how), expected, actual
