"""The matrix unit, FPU (isa.yaml unit MATH): its operations, row counters, Dst/Src movers and Src banks."""
