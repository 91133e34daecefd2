"""Which device and which Tensix cores a backend drives: ``--core`` (one, a list, ``all``), ``--jobs``, xdist.

A core is given in NOC0 coordinates as ``X,Y`` or ``X-Y``; a list separates cores with ``;`` or spaces
(``1,2;2,2``, ``1,2 2,2``), or with commas when each core uses a dash (``1-2,2-2``). ``all`` is every Tensix core the
device's SoC descriptor lists (harvested cores are not in that list). The choice itself (``place``) is
made once the device is open, against the device ids tt-exalens found and the Tensix cores of the chosen
device; bad choices raise PlacementError with one line.
"""
from __future__ import annotations

import os
import re

from .errors import OptionError

ALL = "all"
Core = tuple[int, int]


class PlacementError(OptionError):
    """A --device-id / --core / --jobs choice that is not a core, or that this device cannot honour (one line;
    a usage error)."""


HOW = "give X,Y (NOC0 coordinates), a list 'X,Y;X,Y' or 'all'"


def _one(text: str, given: str) -> Core:
    m = re.fullmatch(r"\s*(\d+)\s*[,-]\s*(\d+)\s*", text)
    if not m:
        what = "" if text.strip() == given.strip() else f"{text.strip()!r} is not a core; "
        raise PlacementError(f"--core {given!r}: {what}{HOW}")
    return int(m.group(1)), int(m.group(2))


def parse_cores(text) -> str | list[Core] | None:
    """``--core``'s value: None (the default), ``"all"``, or a list of distinct (x, y) in the order given."""
    if text is None or text == ALL or (isinstance(text, list) and all(isinstance(c, tuple) for c in text)):
        return text
    if isinstance(text, tuple):
        return [text]
    s = str(text).strip()
    if s.lower() == ALL:
        return ALL
    if ";" in s:
        parts = s.split(";")
    elif "-" in s:
        parts = s.split(",")
    else:
        parts = [s] if re.fullmatch(r"\s*\d+\s*,\s*\d+\s*", s) else s.split()
    cores = [_one(p, s) for p in parts if p.strip()]
    if not cores:
        raise PlacementError(f"--core {s!r}: {HOW}")
    dup = sorted({c for c in cores if cores.count(c) > 1})
    if dup:
        raise PlacementError(f"--core {s!r}: names {dup[0][0]},{dup[0][1]} more than once")
    return cores


def xdist_share(environ=os.environ) -> tuple[int, int] | None:
    """(this worker's index, the number of workers) under pytest-xdist (PYTEST_XDIST_WORKER=gwN), else None."""
    name = environ.get("PYTEST_XDIST_WORKER", "")
    m = re.fullmatch(r"gw(\d+)", name)
    if not m:
        return None
    index = int(m.group(1))
    count = int(environ.get("PYTEST_XDIST_WORKER_COUNT") or index + 1)
    return index, max(count, index + 1)


def _label(c: Core) -> str:
    return f"{c[0]},{c[1]}"


def choose_cores(tensix: list[Core], spec, jobs: int | None) -> list[Core]:
    """The cores to drive: ``jobs`` of them (default: as many as ``spec`` lists, else one), taken from ``spec``
    (default: the device's Tensix cores in its descriptor's order)."""
    spec = parse_cores(spec)
    if jobs is not None and jobs < 1:
        raise PlacementError(f"--jobs must be at least 1 (got {jobs})")
    if isinstance(spec, list):
        bad = [c for c in spec if c not in set(tensix)]
        if bad:
            raise PlacementError(f"core {_label(bad[0])} is not a Tensix core of this device ({len(tensix)} Tensix"
                                 f" cores, e.g. {_label(tensix[0])})" if tensix else "this device lists no Tensix cores")
        pool = spec
    else:
        pool = list(tensix)
    want = jobs if jobs is not None else (len(pool) if spec is not None else 1)
    if want > len(pool):
        where = "--core lists" if isinstance(spec, list) else "the device has"
        raise PlacementError(f"--jobs {want} needs {want} cores; {where} {len(pool)}")
    return pool[:want]


def place(device_ids: list[int], tensix_of, device_id: int | None, spec, jobs: int | None,
          share: tuple[int, int] | None = None) -> tuple[int, list[Core]]:
    """(device id, cores) for one backend. ``tensix_of(id)`` lists a device's Tensix cores. Under xdist
    (``share`` = (index, workers)) each worker takes its own device while there are enough of them (and no
    --device-id pins one), else its own cores of a shared device: worker k gets the k-th group of
    ``jobs or 1`` cores among those ``spec`` allows."""
    ids = sorted(device_ids)
    if not ids:
        raise PlacementError("no device found")
    if device_id is not None and device_id not in ids:
        raise PlacementError(f"no device {device_id} (tt-exalens found {', '.join(map(str, ids))})")
    if share is None:
        dev = ids[0] if device_id is None else device_id
        return dev, choose_cores(tensix_of(dev), spec, jobs)
    index, workers = share
    if device_id is None and len(ids) >= workers:
        dev = ids[index]
        return dev, choose_cores(tensix_of(dev), spec, jobs)
    devices = ids if device_id is None else [device_id]
    dev = devices[index % len(devices)]
    slot = index // len(devices)
    per = jobs or 1
    parsed = parse_cores(spec)
    pool = choose_cores(tensix_of(dev), parsed, len(parsed) if isinstance(parsed, list) else len(tensix_of(dev)))
    mine = pool[slot * per:(slot + 1) * per]
    if len(mine) < per:
        raise PlacementError(f"xdist worker gw{index}: {len(pool)} cores of device {dev} for"
                             f" {-(-workers // len(devices))} workers of {per} core(s) each")
    return dev, mine
