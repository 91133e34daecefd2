"""The scalar unit, ThCon (isa.yaml units THCON and TDMA): GPR arithmetic, REG2FLOP and the ADCs."""
