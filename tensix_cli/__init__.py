"""The commands layer: the `tensix-diff` console script and everything that drives backends (run, fuzz,
record, minimize, coverage, store, the agreement report). Packages depend one way:
golden <- tensix_diff (cases, results, comparison, store, verdicts) <- generators, hwbridge <- tensix_cli."""
