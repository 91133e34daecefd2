"""Which golden this is: a digest of golden's own sources (every .py and .yaml file under golden/)."""
from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def source_digest() -> str:
    """The first 12 hex digits of the SHA-256 over golden's sources, in path order (path and bytes of each)."""
    h = hashlib.sha256()
    for p in sorted(q for q in ROOT.rglob("*") if q.suffix in (".py", ".yaml") and "__pycache__" not in q.parts):
        h.update(str(p.relative_to(ROOT)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:12]
