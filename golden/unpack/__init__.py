"""The unpackers (isa.yaml unit UNPACK): UNPACR, L1 into SrcA, SrcB or Dst."""
