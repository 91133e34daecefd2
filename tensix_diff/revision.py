"""Where results derived from the project's sources are cached, and the source revision they hold for."""
from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cache_root() -> Path:
    """The project's cache directory: $TENSIX_DIFF_CACHE/tensix-diff, else $XDG_CACHE_HOME's, else ~/.cache's."""
    base = os.environ.get("TENSIX_DIFF_CACHE") or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tensix-diff"


@cache
def sources_hash(modules: tuple[str, ...]) -> str:
    """A hash of golden's sources (Python and YAML) and of tensix_diff's ``modules`` (a package: its modules)."""
    h = hashlib.sha256()
    sources = [p for p in (ROOT / "golden").rglob("*") if p.suffix in (".py", ".yaml")]
    for n in modules:
        p = ROOT / "tensix_diff" / n
        sources += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    for p in sorted(sources):
        h.update(p.read_bytes())
    return h.hexdigest()[:16]
