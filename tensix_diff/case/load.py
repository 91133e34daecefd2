"""Loading cases: text, files, directories and bundles; every problem is one ``CaseError`` line
``FILE:LINE: what is wrong``."""
from __future__ import annotations

import stat
from pathlib import Path
from typing import Iterable

from .bundle import BUNDLE_SUFFIX, load_bundle
from .fast import fast_case
from .model import CASE_SUFFIXES, MAX_CASE_BYTES, Case, CaseError


def parse_case(text: str, source: str = "<text>") -> Case:
    """Parse case YAML text; every problem is one CaseError line ``SOURCE:LINE: what``."""
    if len(text) <= MAX_CASE_BYTES and (case := fast_case(text, source)) is not None:
        return case     # brackets at most 2 deep, lines at most 4 columns in: _check_bounds passes it
    from .yaml_walker import walk_case     # late for start-up cost: a run of dump_case files never imports yaml
    return walk_case(text, source)


def load_case(path: str | Path) -> Case:
    p = Path(path)
    try:
        st = p.stat()
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError
        if not stat.S_ISREG(st.st_mode):
            raise CaseError(f"{p}: not a regular file (a FIFO, device or socket is never read)")
        if st.st_size > MAX_CASE_BYTES:
            raise CaseError(f"{p}: {st.st_size} bytes: a case file holds at most {MAX_CASE_BYTES >> 20} MiB")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CaseError(f"{p}: no such case file") from None
    except IsADirectoryError:
        raise CaseError(f"{p}: is a directory (use load_cases)") from None
    except UnicodeDecodeError as e:
        raise CaseError(f"{p}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise CaseError(f"{p}: cannot read: {e.strerror}") from None
    if len(text) <= MAX_CASE_BYTES and (case := fast_case(text, str(p))) is not None:
        return case
    from .yaml_walker import walked_file   # late for start-up cost (yaml); the walker, its parses cached
    return walked_file(text, str(p))


def case_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, directories expanded to their *.yaml / *.yml files (recursively, sorted)."""
    out: list[Path] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.suffix in CASE_SUFFIXES and f.is_file()))
        elif p.exists():
            out.append(p)
        else:
            raise CaseError(f"{p}: no such case file or directory")
    return out


def load_cases(paths: Iterable[str | Path]) -> list[Case]:
    """Load files and directories; case names must be unique across everything loaded."""
    cases: list[Case] = []
    first: dict[str, str] = {}
    for f in case_files(paths):
        c = load_case(f)
        if c.name in first:
            raise CaseError(f"{c.source}: case name '{c.name}' is already used by {first[c.name]}")
        first[c.name] = c.source
        cases.append(c)
    return cases


def load_each(paths: Iterable[str | Path]) -> tuple[list[Case], list[str]]:
    """Like load_any, but a file that cannot be loaded is reported (its one line) and the rest still load."""
    cases: list[Case] = []
    problems: list[str] = []
    for path in map(Path, paths):
        if path.is_dir():
            files = [f for f in case_files([path])] + sorted(path.rglob(f"*{BUNDLE_SUFFIX}"))
        else:
            files = [path]
        for f in files:
            try:
                cases += load_bundle(f) if f.name.endswith(BUNDLE_SUFFIX) else [load_case(f)]
            except CaseError as e:
                problems.append(str(e))
    return cases, problems


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
