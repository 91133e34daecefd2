"""Reading the project's YAML tables fast: libyaml (yaml.CSafeLoader) when the wheel has it, and the parsed
table cached under ~/.cache/tensix-diff/tables keyed by the file's length, CRC-32 and Adler-32 (zlib: no
OpenSSL to load at start, as hashlib does), so a command that needs the ISA table does not parse it on every
start. A damaged or concurrent cache is only ever a cache miss."""
from __future__ import annotations

import os
import pickle
import tempfile
import zlib
from pathlib import Path
from typing import Any, Callable


def parse(text: str) -> Any:
    import yaml           # only on a cache miss: a start-up that finds its tables cached never imports it
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tensix-diff"


def pickled(kind: str, key: str, make: Callable[[], Any]) -> Any:
    """``make()``, kept as ~/.cache/tensix-diff/KIND/KEY.pickle for the next call with that key (the caller's
    key names everything the value depends on); a damaged or concurrent cache entry is only ever a miss."""
    cache = _cache_dir() / kind / f"{key}.pickle"
    try:
        with open(cache, "rb") as f:
            return pickle.load(f)
    except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError, IndexError, ImportError):
        pass
    value = make()
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, cache)
    except OSError:
        pass
    return value


def load(path: Path) -> Any:
    """The parsed YAML file at ``path`` (a project table: trusted content, cached by its checksums)."""
    data = Path(path).read_bytes()
    key = f"{len(data):x}-{zlib.crc32(data):08x}-{zlib.adler32(data):08x}"
    return pickled("tables", key, lambda: parse(data.decode("utf-8")))
