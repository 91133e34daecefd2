"""The packer (isa.yaml unit PACK): PACR, its output addresses and its L1 accumulation."""
