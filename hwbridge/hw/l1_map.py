"""Blackhole Tensix-tile addresses the hw backend uses, and the harness's own L1 layout.

MMIO facts are Blackhole's (ttsim data/bh/tile_regs.json; tt-exalens hardware/blackhole); they are the
same on silicon and under ttsim. The L1 layout is this harness's choice: cases must not touch
``RESERVED`` (the backend refuses a case whose L1 regions overlap it).
"""
from __future__ import annotations

# --- per-RISC MMIO (as seen by a TRISC) -----------------------------------------------------------
REGFILE_BASE = 0xFFE00000        # the issuing thread's 64 Tensix GPRs, 4 bytes each
PC_BUF_BASE = 0xFFE80000         # + 4: TENSIX_SYNC, a load stalls until this thread's Tensix FIFO drains
PC_BUF_TENSIX_SYNC = PC_BUF_BASE + 4
CFG_BASE = 0xFFEF0000            # Config state 0, one word per ADDR32 index (RISC loads/stores)
MOP_CFG_BASE = 0xFFB80000        # 9 MOP config words of the issuing thread

# --- RISC debug registers (tile MMIO; reachable from the host over the NOC and from any RISC) ----
DEBUG_REGS = 0xFFB12000
DBG_BUS_CTRL = DEBUG_REGS + 0x54        # signal_sel [15:0], daisy_sel [23:16], read32_sel [26:25], enable [29]
DBG_RD_DATA = DEBUG_REGS + 0x5C
DBG_ARRAY_RD_EN = DEBUG_REGS + 0x60
DBG_ARRAY_RD_CMD = DEBUG_REGS + 0x64    # row [11:0] | sel [15:12] | 2 << 16 (Dest)
DBG_ARRAY_RD_DATA = DEBUG_REGS + 0x6C   # two 16-bit Dest cells: columns 2*sel (low) and 2*sel+1 (high)
SOFT_RESET_0 = DEBUG_REGS + 0x1B0

DBG_BUS_ENABLE = 1 << 29
DEST_ARRAY_SEL = 2 << 16

# SOFT_RESET_0 bits that hold each RISC in reset.
RESET_BRISC, RESET_TRISC = 0x800, (0x1000, 0x2000, 0x4000)
RESET_NCRISC = 0x40000
RESET_ALL = RESET_BRISC | sum(RESET_TRISC) | RESET_NCRISC
TRISC_RESET_PC_REG = (DEBUG_REGS + 0x228, DEBUG_REGS + 0x22C, DEBUG_REGS + 0x230)
TRISC_RESET_PC_OVERRIDE = DEBUG_REGS + 0x234   # bit t: TRISC t starts at its TRISCt_RESET_PC

# --- harness L1 layout: the top 128 KiB of L1 ------------------------------------------------------
RESERVED = (0x160000, 0x180000)  # [lo, hi): code, flags and results; cases keep out
TRISC_RESET_PC = (0x160000, 0x16C000, 0x170000)   # code of TRISC0 (shared-state prologue, collector), 1, 2
CODE_SIZE = (0xC000, 0x4000, 0x4000)

FLAGS = 0x174000                # ready[t] at +4t, done[t] at +0x10+4t, all-done at +0x20
READY = FLAGS
DONE = FLAGS + 0x10
ALL_DONE = FLAGS + 0x20
FLAG_BYTES = 0x40
DONE_TOKEN = 0xD0E

RESULTS = 0x174100
DEST_DUMP = RESULTS
DEST_DUMP_BYTES = 1024 * 8 * 4   # sel-major: word (sel, row) = cells 2*sel (low), 2*sel+1 (high) of the row
GPR_DUMP = DEST_DUMP + DEST_DUMP_BYTES   # 3 threads x 64 words
GPR_DUMP_BYTES = 3 * 64 * 4
DBUS_DUMP = GPR_DUMP + GPR_DUMP_BYTES    # debug-bus words, in the order the platform table lists them
DBUS_DUMP_BYTES = 0x100
CFG_DUMP = DBUS_DUMP + DBUS_DUMP_BYTES   # Config words, in the order the job lists them
CFG_DUMP_BYTES = 2 * 224 * 4
RESULTS_END = CFG_DUMP + CFG_DUMP_BYTES

assert TRISC_RESET_PC[2] + CODE_SIZE[2] <= FLAGS and RESULTS_END <= RESERVED[1]

# RISC-V-side actions of a case (golden.riscv; ttsim v1.10.0 tile_regs.h)
PC_BUF_SEMAPHORE = PC_BUF_BASE + 0x20    # + 4 * i: load reads semaphore i, store 0 posts, store 1 gets
MAILBOX_BASE = 0xFFEC0000                # + 0x1000 * i: mailbox i (0 BRISC, 1..3 TRISC0..2)
MAILBOX_STRIDE = 0x1000
DBG_FEATURE_DISABLE = DEBUG_REGS + 0x68
