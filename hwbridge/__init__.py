"""The backends: ``registry`` (each by name; running cases and judging a pair), ``golden_backend`` (the model),
``replay`` (the recordings of the store) and ``hw/`` (a Blackhole card, or ttsim, through tt-exalens)."""
