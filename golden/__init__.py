"""Golden reference model of the Blackhole Tensix coprocessor."""
