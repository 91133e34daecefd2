"""The golden backend: run a case on golden's model and observe everything it holds."""
from __future__ import annotations

from golden.core import Tensix
from tensix_diff.case import Case
from tensix_diff.golden_run import apply_init, observe, run_golden  # noqa: F401 (apply_init, observe: re-exported)
from tensix_diff.result import Result


class GoldenBackend:
    name = "golden"

    def __init__(self, machine_factory=Tensix):
        self.machine_factory = machine_factory

    def run(self, case: Case) -> Result:
        return run_golden(case, self.machine_factory)
