"""The frontend (MOP, REPLAY): the MOP and replay expanders applied to each thread's stream."""
