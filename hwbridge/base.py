"""The backend interface: a Backend runs a case and returns a Result (tensix_diff.result, the core layer)."""
from tensix_diff.result import (DEVICE_ERROR, GOLDEN_ERRORS, MISSING, OK, REFUSED, STALE, Backend,  # noqa: F401
                                Result)
