"""Case bundles: many cases in one gzip'd file (``*.cases.gz``), each the contract's case YAML text.

A recorded fuzz corpus keeps its cases in bundles so the replay suite does not depend on the generator
staying byte-for-byte the same; documents are separated by ``---`` lines.
"""
from __future__ import annotations

import gzip
from pathlib import Path
from typing import Iterable

from tensix_diff.case import Case, case_files, dump_case, load_case, parse_case

BUNDLE_SUFFIX = ".cases.gz"
SEPARATOR = "\n---\n"


def write_bundle(path: str | Path, cases: Iterable[Case]) -> int:
    texts = [dump_case(c).strip() for c in cases]
    Path(path).write_bytes(gzip.compress(SEPARATOR.join(texts).encode() + b"\n", 9, mtime=0))
    return len(texts)


def load_bundle(path: str | Path) -> list[Case]:
    text = gzip.decompress(Path(path).read_bytes()).decode()
    return [parse_case(doc, f"{path}#{i}") for i, doc in enumerate(text.split(SEPARATOR)) if doc.strip()]


def load_any(paths: Iterable[str | Path]) -> list[Case]:
    """Case files, directories of them, and bundles (a directory's bundles are included)."""
    out: list[Case] = []
    for p in map(Path, paths):
        if p.is_file() and p.name.endswith(BUNDLE_SUFFIX):
            out += load_bundle(p)
        elif p.is_dir():
            out += [load_case(f) for f in case_files([p])]
            out += [c for b in sorted(p.rglob(f"*{BUNDLE_SUFFIX}")) for c in load_bundle(b)]
        else:
            out += [load_case(f) for f in case_files([p])]
    return out
