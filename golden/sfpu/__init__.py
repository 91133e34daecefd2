"""The SFPU (isa.yaml unit SFPU): its instructions by kind, and the lanes, Dest view and arithmetic they share."""
