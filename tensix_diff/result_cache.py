"""Results of pure functions of a case (observed effects, the race check) kept on disk between runs.

Each kind is one JSON file under ``$XDG_CACHE_HOME/tensix-diff/KIND/`` (default ``~/.cache``), named by a
hash of the sources that compute it (golden, and the modules given), so a changed model or accounting never
answers from an old file. Only a cache: unreadable or unwritable files cost time, never a result.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict
from typing import Any

from .case import Case, case_hash
from .race import RaceReport, check as race_check
from .revision import cache_root, sources_hash


class ResultCache:
    """key -> JSON value for one kind of result, valid for one revision of its sources."""

    def __init__(self, kind: str, modules: tuple[str, ...]):
        self.path = cache_root() / kind / f"{sources_hash(modules)}.json"
        try:
            self.data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.data = {}
        if not isinstance(self.data, dict):
            self.data = {}
        self.dirty = False

    def get(self, key: str) -> Any:
        return self.data.get(key)

    def put(self, key: str, value: Any) -> None:
        self.data[key] = value
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self.data))
            tmp.replace(self.path)
            self.dirty = False
        except OSError:
            pass      # a cache that cannot be written only costs time


class RaceCache(ResultCache):
    """tensix_diff.race.check per case (default schedules), for commands that judge the same cases again."""

    def __init__(self):
        super().__init__("race", ("race.py", "happens_before.py", "golden_run.py", "case",
                                  "compare.py"))

    def check(self, case: Case) -> RaceReport:
        key = case_hash(case)
        got = self.get(key)
        if isinstance(got, dict):
            try:
                return RaceReport(**{**got, "case": case.name})
            except TypeError:
                pass
        report = race_check(case)
        self.put(key, asdict(report))
        return report
