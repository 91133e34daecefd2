"""Analyses of a golden run built on the machine and its units: data provenance."""
