"""Case bundles: many cases in one gzip'd JSON-lines file (``*.cases.jsonl.gz``), one canonical case a line.

A recorded fuzz corpus keeps its cases in bundles, so the replay suite neither depends on the generator
staying byte-for-byte the same nor pays for YAML parsing (JSON loads ~100x faster). Each line is
``canonical(case)``; ``from_canonical`` rebuilds a Case with the same case hash.
"""
from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Iterable

from .checks import validate_shape
from .model import Case, CaseError, Init, Observe, actions_from_json, canonical

BUNDLE_SUFFIX = ".cases.jsonl.gz"


def _int_keys(table: dict) -> dict[int, dict[int, int]]:
    return {int(o): {int(i): int(v) for i, v in regs.items()} for o, regs in table.items()}


def _ints(vals: list) -> list[int]:
    """int() of each value (a list of JSON integers, the usual case, copied whole)."""
    return list(vals) if set(map(type, vals)) == {int} else [int(v) for v in vals]


def from_canonical(d: dict, source: str = "<bundle>") -> Case:
    init, obs = d["init"], d["observe"]
    case = Case(
        name=d["name"], description=d.get("description", ""), source=source, tags=list(d.get("tags", [])),
        threads={int(t): [int(w) for w in ws] for t, ws in d["threads"].items()},
        init=Init(gpr=_int_keys(init["gpr"]), thread_config=_int_keys(init["thread_config"]),
                  config=_int_keys(init["config"]), l1=[(int(a), bytes.fromhex(h)) for a, h in init["l1"]],
                  dest=[(int(r), _ints(vals)) for r, vals in init["dest"]]),
        observe=Observe(l1=[(int(a), int(n)) for a, n in obs["l1"]],
                        config={int(s): [int(i) for i in idx] for s, idx in obs["config"].items()}),
        actions=actions_from_json(d.get("actions", {})),
    )
    validate_shape(case)
    return case


def write_bundle(path: str | Path, cases: Iterable[Case]) -> int:
    import gzip           # late for start-up cost: reading a bundle inflates with zlib; only writing needs gzip
    lines = [json.dumps(canonical(c), sort_keys=True, separators=(",", ":")) for c in cases]
    Path(path).write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), 9, mtime=0))
    return len(lines)


MAX_BUNDLE_INFLATE = 256 << 20     # a bundle of 1,200 cases inflates to a few MB


def _text(p: Path) -> str:
    """A bundle's text; CaseError (one line) for a file that is not one, or inflates too far."""
    try:
        if not p.is_file():
            raise CaseError(f"{p}: no such case bundle (or not a regular file)")
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        data = d.decompress(p.read_bytes(), MAX_BUNDLE_INFLATE + 1)
        if len(data) > MAX_BUNDLE_INFLATE or d.unconsumed_tail:
            raise CaseError(f"{p}: corrupt case bundle: inflates past {MAX_BUNDLE_INFLATE >> 20} MiB")
        text = data.decode()
    except (OSError, zlib.error, UnicodeDecodeError) as e:
        raise CaseError(f"{p}: corrupt case bundle: {type(e).__name__}") from None
    return text


def count_cases(path: str | Path) -> int:
    """How many cases a bundle holds (its non-empty lines), without parsing them."""
    return sum(1 for line in _text(Path(path)).splitlines() if line)


def load_bundle(path: str | Path) -> list[Case]:
    """The cases of a bundle; CaseError (one line) for a file that is not one, or inflates too far."""
    p = Path(path)
    text = _text(p)
    out = []
    for i, line in enumerate(text.splitlines()):
        if line:
            try:
                out.append(from_canonical(json.loads(line), f"{p}:{i + 1}"))
            except CaseError:
                raise
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
                raise CaseError(f"{p}:{i + 1}: corrupt case line ({type(e).__name__})") from None
    return out
