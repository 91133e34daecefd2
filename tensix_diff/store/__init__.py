"""The replay store (docs/store.md): what devices returned for cases, by case hash and device, in bundles.
``store`` (Store, Recording, lookups and writes), ``codec`` (a recording's state <-> its stored form),
``bundles`` (the bundle files and their index) and ``upkeep`` (verify, merge, gc, migrate)."""
from __future__ import annotations

from .bundles import BUNDLE_MAX, StoreError
from .codec import PROVENANCE_KEYS
from .store import (ENV_ROOT, RECORD_MODES, REPO_ROOT, Lookup, Recording, Store, choose_device, default_root,
                    device_of, harness_revision, is_golden)
from .upkeep import Merged, gc, merge, migrate, verify

__all__ = ["BUNDLE_MAX", "ENV_ROOT", "PROVENANCE_KEYS", "RECORD_MODES", "REPO_ROOT", "Lookup", "Merged", "Recording",
           "Store", "StoreError", "choose_device", "default_root", "device_of", "gc", "harness_revision",
           "is_golden", "merge", "migrate", "verify"]
