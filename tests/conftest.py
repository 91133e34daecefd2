"""Fixtures every test folder shares. The simulator the hw tests run on: ``pytest --simulator=PATH`` or
TENSIX_DIFF_SIMULATOR; tests skip without one."""
from __future__ import annotations

import os

import pytest


def _simulator(config) -> str | None:
    try:
        opt = config.getoption("simulator")
    except ValueError:
        opt = None
    return opt or os.environ.get("TENSIX_DIFF_SIMULATOR")


@pytest.fixture(scope="module")
def sim_path(request):
    path = _simulator(request.config)
    if not path:
        pytest.skip("needs a Blackhole libttsim.so: --simulator=PATH or TENSIX_DIFF_SIMULATOR")
    return path
