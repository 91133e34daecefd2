"""The sync unit (isa.yaml unit SYNC, with NOP): semaphores, mutexes, STALLWAIT and the Wait Gate."""
