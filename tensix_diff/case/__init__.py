"""Cases (docs/case-format.md): per-thread programs plus explicit initial state; every backend runs the same
``Case``. The model and its identity (``model``), the value checks (``checks``), the fast reader of the layout
``dump_case`` writes (``fast``), the YAML walker for anything else and every error (``yaml_walker``), the writer
(``writer``), bundles of canonical cases (``bundle``) and loading of files, directories and bundles (``load``).
"""
from __future__ import annotations

from .bundle import BUNDLE_SUFFIX, count_cases, from_canonical, load_bundle, write_bundle
from .checks import validate_shape
from .load import case_files, load_any, load_case, load_cases, load_each, parse_case
from .model import (CASE_SUFFIXES, MAX_CASE_BYTES, NAME_RE, OBSERVATION_FORMAT, Case, CaseError, Init, Observe,
                    actions_from_json, canonical, case_hash, content, without)
from .writer import action_text, dump_case

__all__ = ["BUNDLE_SUFFIX", "CASE_SUFFIXES", "MAX_CASE_BYTES", "NAME_RE", "OBSERVATION_FORMAT", "Case", "CaseError",
           "Init", "Observe", "action_text", "actions_from_json", "canonical", "case_files", "case_hash", "content",
           "count_cases", "dump_case", "from_canonical", "load_any", "load_bundle", "load_case", "load_cases",
           "load_each", "parse_case", "validate_shape", "without", "write_bundle"]
